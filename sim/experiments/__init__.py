"""Virtual experiments: TOML experiment files, input profiles, runs, seed-000 metrics, plots and sweeps.

Modules: :mod:`.spec` (experiment files -> :class:`~.spec.ExperimentSpec`), :mod:`.inputs` (input
profiles), :mod:`.runner` (one run in a world or a model), :mod:`.outputs` (CSV, NPZ, metadata, manifest),
:mod:`.metrics` (seed-000 section and tip errors), :mod:`.plots`, and the sweeps: :mod:`.design` (sweep
files -> runs), :mod:`.engines` (one run in its folder; serial, pool and Ray), :mod:`.sweep`
(:func:`~.sweep.run_sweep`: resume, summary); :mod:`.cli` registers ``pccbullet run`` and ``pccbullet
sweep``.

Example::

    from pccbullet.sim.experiments.metrics import section_tip_errors
    from pccbullet.sim.experiments.runner import run_experiment

    result = run_experiment("assets/experiments/camera_sweep.toml", "out/camera")
    errors = section_tip_errors("out/camera/run.csv", "out/camera/run.csv", "camera")  # zero
"""
