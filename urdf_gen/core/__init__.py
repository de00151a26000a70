"""The common ground of every layer (installed as ``pccbullet.core``): the exceptions with their one-line
messages (:mod:`.errors`), the array type aliases (:mod:`.types`), atomic file writes (:mod:`.atomic`), the
strict TOML field reader (:mod:`.fields`), standard JSON out and in (:mod:`.strict_json`) and the checks
of command-line arguments (:mod:`.cli_args`). It imports nothing else of pccbullet; every other package may
import it. Its folder sits in ``urdf_gen/``, the lowest of the four homes, and its import name says what it
holds (ARCHITECTURE.md says why)."""
