"""Bad robot, experiment and recorded-input files: each case of issue 16 refused with its message pinned.

Loaders only (no simulation): every case raises a :class:`PccBulletError` subclass naming file, field,
value (capped at ~80 characters) and what is allowed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pccbullet.core.errors import ConfigurationError, PccBulletError, SpecError, cap
from pccbullet.core.fields import MAX_TOML_BYTES
from pccbullet.sim.experiments.design import set_dotted
from pccbullet.sim.experiments.inputs import MAX_CSV_BYTES
from pccbullet.sim.experiments.spec import (
    MAX_RECORD_BYTES,
    experiment_from_table,
    load_experiment,
    record_bytes,
)
from pccbullet.urdf_gen.spec_loader import load_robot


def _robot(ursula_text: str, write_toml, old: str, new: str, count: int = 1) -> Path:
    assert old in ursula_text
    return write_toml(ursula_text.replace(old, new, count))


ROBOT_CASES = [
    (  # a misspelled required key: the message names the typo and the right key
        "length_mm = 600\n",
        "lenght_mm = 600\n",
        r"field 'limbs\[2\]\.segments\[0\]\.length_mm' = None is invalid; allowed: a value \(the field is "
        r"required\); found 'limbs\[2\]\.segments\[0\]\.lenght_mm': did you mean 'length_mm'\?",
    ),
    (  # an unknown optional key close to a known one
        "plane_max_deg = 360\n",
        "plane_max_dge = 360\n",
        r"field 'limbs\[0\]\.segments\[0\]\.plane_max_dge' = 360 is invalid; allowed: a known key .*; "
        r"did you mean 'plane_max_deg'\?",
    ),
    (  # an int of 401 digits (OverflowError in float() before)
        "length_mm = 600\n",
        "length_mm = 1" + "0" * 400 + "\n",
        r"field 'limbs\[2\]\.segments\[0\]\.length_mm' = <int of 1329 bits> is invalid; allowed: a number in "
        r"\[0\.001, 100000\]",
    ),
    (  # a 300-character name (file names over 255 bytes before)
        'name = "ursula"',
        'name = "' + "u" * 300 + '"',
        r"field 'name' = 'u{40,}'\.\.\. \(300 characters\) is invalid; allowed: letters, digits and '_', "
        r"starting with a letter, <= 64 characters",
    ),
    (  # a mount 1e300 mm below the head (a non-finite tip before)
        "mount_xyz_mm = [125, -60, -60]",
        "mount_xyz_mm = [125, -60, -1e300]",
        r"field 'limbs\[0\]\.mount_xyz_mm' = \[125, -60, -1e\+300\] is invalid; allowed: a list of 3 finite "
        r"numbers in \[-10000, 10000\]",
    ),
    (
        "mount_rpy_deg = [0, 90, 0]",
        "mount_rpy_deg = [0, nan, 0]",
        r"field 'limbs\[0\]\.mount_rpy_deg' = \[0, nan, 0\] is invalid; allowed: a list of 3 finite numbers in "
        r"\[-360, 360\]",
    ),
    (  # a 0.9 MB value is echoed capped (files are at most 1 MB)
        'kind = "pcc"',
        'kind = "' + "z" * 900_000 + '"',
        r"field 'kind' = 'z{40,}'\.\.\. \(900000 characters\) is invalid; allowed: one of 'pcc'",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    ROBOT_CASES,
    ids=["typo-required", "typo-optional", "huge-int", "long-name", "mount-1e300", "rpy-nan", "900kB-echo"],
)
def test_bad_robot_file(ursula_text: str, write_toml, old: str, new: str, message: str) -> None:
    path = _robot(ursula_text, write_toml, old, new)
    with pytest.raises(SpecError, match=r"robot\.toml: " + message) as info:
        load_robot(path)
    assert len(str(info.value)) < 600


def test_ten_megabyte_value_is_not_echoed_whole(tmp_path: Path) -> None:
    table = {**BASE, "mode": "x" * 10_000_000}
    with pytest.raises(
        SpecError, match=r"field 'mode' = 'x+'\.\.\. \(10000000 characters\) is invalid"
    ) as info:
        experiment_from_table(table, "big.toml", base_dir=tmp_path)
    assert len(str(info.value)) < 200


def test_long_unicode_name_is_not_echoed_whole(ursula_text: str, write_toml) -> None:
    path = write_toml(ursula_text.replace('name = "ursula"', 'name = "' + "é" * 400_000 + '"'))
    with pytest.raises(SpecError, match=r"field 'name' = 'é+'\.\.\. \(400000 characters\)") as info:
        load_robot(path)
    assert len(str(info.value)) < 300


def test_duplicate_limb_names(ursula_text: str, write_toml) -> None:
    path = _robot(ursula_text, write_toml, 'name = "light"', 'name = "camera"')
    with pytest.raises(
        SpecError, match=r"field 'limbs\[3\]\.name' = 'camera' is invalid; allowed: a name not"
    ):
        load_robot(path)


def test_too_many_limbs(ursula_text: str, write_toml) -> None:
    head, first = ursula_text.split("[[limbs]]", 1)
    block = "[[limbs]]" + first.split("[[limbs]]")[0]
    blocks = "".join(block.replace('name = "grasper"', f'name = "g{i}"') for i in range(40))
    with pytest.raises(
        SpecError,
        match=r"field 'limbs' = \[\{'name': 'g0', .*\.\.\. \(\d+ characters\) is invalid; allowed: at most 32 limbs",
    ):
        load_robot(write_toml(head + blocks))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'name = "\xff"\n', r"allowed: UTF-8 text"),
        (b"x = " + b"{a = " * 500 + b"1" + b"}" * 500, r"allowed: tables and arrays nested at most 32 deep"),
        (
            b"x = " + b"[" * 40 + b"1" + b"]" * 40,
            r"allowed: tables and arrays nested at most 32 deep",
        ),
        (
            b"x = 1\n" + b"#" * (MAX_TOML_BYTES + 10),
            rf"allowed: a TOML file of at most {MAX_TOML_BYTES} bytes",
        ),
    ],
    ids=["not-utf8", "nested-500", "nested-40", "over-1MB"],
)
def test_bad_toml_bytes(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    with pytest.raises(SpecError, match=r"bad\.toml: field '<file>' = .* is invalid; " + message):
        load_robot(path)
    with pytest.raises(SpecError, match=r"bad\.toml: field '<file>' = .* is invalid; " + message):
        load_experiment(path)


def test_special_files_are_refused_before_reading(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"'/dev/zero' is invalid; allowed: a regular TOML file"):
        load_experiment("/dev/zero")
    with pytest.raises(PccBulletError, match=r"robot file '/dev/zero\.toml' does not exist"):
        load_robot("/dev/zero.toml")
    with pytest.raises(SpecError, match=r"allowed: a regular TOML file \(not a folder or special file\)"):
        load_experiment(tmp_path)


# --- experiments -------------------------------------------------------------------------------------

BASE = {
    "name": "t",
    "robot": "ursula",
    "duration_s": 0.1,
    "record_hz": 100,
    "sections": 2,
    "limbs": ["camera"],
}
BEND = {"target": "camera.s1.bend_deg", "kind": "ramp", "t1_s": 0.1, "start": 0, "end": 10}


def _toml(table: dict, inputs: dict | None) -> str:
    lines = [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    for name, inp in (inputs or {}).items():
        lines.append(f"[inputs.{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in inp.items()]
    return "\n".join(lines) + "\n"


def _experiment(
    tmp_path: Path, change: dict | None = None, inputs: dict | None = None, raw: str = ""
) -> Path:
    table = {**BASE, **(change or {})}
    path = tmp_path / "exp.toml"
    path.write_text(_toml({k: v for k, v in table.items() if v is not None}, inputs or {"bend": BEND}) + raw)
    return path


def test_base_experiment_loads(tmp_path: Path) -> None:
    spec = load_experiment(_experiment(tmp_path))
    assert (spec.n_steps, spec.substeps, spec.limbs) == (100, 10, ("camera",))


EXPERIMENT_CASES = [
    (
        {"limbs": ["camera"] * 20_000},
        None,
        r"field 'limbs' = <list of 20000 items> is invalid; allowed: a non-empty list of distinct names out of "
        r"'grasper', 'palpation', 'camera', 'light'; 'camera' is listed more than once",
    ),
    (
        {"limbs": ["camera", "camera"]},
        None,
        r"field 'limbs' = \['camera', 'camera'\] is invalid.*listed more",
    ),
    ({"limbs": []}, None, r"field 'limbs' = \[\] is invalid; allowed: a non-empty list"),
    (
        {"outputs": ["csv", "csv"]},
        None,
        r"field 'outputs' = \['csv', 'csv'\].*'csv' is listed more than once",
    ),
    (
        {"duration_s": 1e-300},
        None,
        r"field 'duration_s' = 1e-300 is invalid; allowed: a whole number >= 1 of recording periods \(1/100 s",
    ),
    (
        {"duration_s": 3600, "record_hz": 1000, "sections": 20, "limbs": None},
        {},
        r"field 'record_hz' = 1000 is invalid; allowed: at most 1\.07 GB of recorded samples; this run would "
        r"record 3600001 samples of 4 limbs = 56\.7 GB \(lower record_hz",
    ),
    (
        {"duration_s": 1e308},
        None,
        r"field 'duration_s' = 1e\+308 is invalid; allowed: a number in \(0, 3600\]",
    ),
    (
        {},
        {"bend": {**BEND, "target": "grasper.s1.bend_deg"}},
        r"field 'inputs\.bend\.target' = 'grasper\.s1' is invalid; allowed: a limb recorded by the experiment "
        r"\(limbs = \['camera'\]\); add 'grasper' to limbs",
    ),
    (
        {},
        {"bend": {"target": "camera.s1.bend", "kind": "ramp", "t1_s": 1, "start": 0, "end": 1e308}},
        r"field 'inputs\.bend\.end' = 1e\+308 is invalid; allowed: a number in \[-1e\+09, 1e\+09\]",
    ),
    (
        {},
        {"bend": {"target": "camera.s1.bend", "kind": "sine", "amplitude": 1, "frequency_hz": 1e6}},
        r"field 'inputs\.bend\.frequency_hz' = 1000000\.0 is invalid; allowed: a number in \[0, 500\]",
    ),
    (
        {},
        {"bend": {"target": "camera.s1.bend", "kind": "recorded", "file": "/dev/zero"}},
        r"field 'inputs\.bend\.file' = '/dev/zero' is invalid; allowed: a regular CSV file",
    ),
    (
        {"robot": "r" * 300},
        None,
        r"field 'robot' = 'r{40,}'\.\.\. \(300 characters\) is invalid; allowed: a bundled robot name or a "
        r"robot TOML path \(robot 'r+'\.\.\. \(300 characters\) is not a usable file name \(OSError\)\)",
    ),
    (
        {"durration_s": 1.0, "duration_s": None},
        None,
        r"field 'duration_s' = None.*did you mean 'duration_s'\?",
    ),
]


@pytest.mark.parametrize(
    ("change", "inputs", "message"),
    EXPERIMENT_CASES,
    ids=[
        "20000-duplicate-limbs",
        "camera-camera",
        "no-limbs",
        "duplicate-outputs",
        "duration-1e-300",
        "55GB-of-samples",
        "duration-1e308",
        "input-on-unrecorded-limb",
        "ramp-end-1e308",
        "sine-1MHz",
        "recorded-dev-zero",
        "300-char-robot",
        "typo-required",
    ],
)
def test_bad_experiment(tmp_path: Path, change: dict, inputs: dict | None, message: str) -> None:
    path = _experiment(tmp_path, change, inputs)
    with pytest.raises(SpecError, match=r"exp\.toml: " + message) as info:
        load_experiment(path)
    assert len(str(info.value)) < 700


def test_record_budget_is_the_documented_size() -> None:
    robot = load_robot("ursula", sections=20)
    names = tuple(limb.name for limb in robot.limbs)
    # 1 time + per limb 3 tip + 6 per segment + 16 per section: 1 + 2 * (3 + 12 + 640) + 2 * (3 + 6 + 320)
    assert record_bytes(robot, names, 1) == 8 * 1969
    assert record_bytes(robot, names, 3_600_001) == pytest.approx(56.7e9, rel=1e-2)
    assert MAX_RECORD_BYTES == 2**30


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "time_s,val\xe9\n0,0\n1,1\n".encode("latin-1"),
            r"allowed: a UTF-8 CSV file \(bad byte at offset 10\)",
        ),
        (b"time_s,value\n0,0\x00\n1,1\n", r"allowed: numeric CSV rows"),
        (b"time_s,value\n0," + b"1" * 200_000 + b"\n1,1\n", r"allowed: a plain CSV file \(field larger than"),
        (b"time_s,value\n0,nan\n1,1\n", r"allowed: values within \+-1e\+09 and strictly increasing times"),
        (b"time_s,value\n0,0\n", r"allowed: a CSV with a header and at least 2 rows"),
    ],
    ids=["not-utf8", "nul", "huge-field", "nan", "one-row"],
)
def test_bad_recorded_csv(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "in.csv").write_bytes(content)
    inputs = {"bend": {"target": "camera.s1.bend", "kind": "recorded", "file": "in.csv"}}
    with pytest.raises(
        SpecError, match=r"exp\.toml: field 'inputs\.bend\.file' = '.*in\.csv' is invalid; " + message
    ):
        load_experiment(_experiment(tmp_path, {}, inputs))


def test_recorded_csv_over_the_size_cap(tmp_path: Path) -> None:
    with (tmp_path / "in.csv").open("wb") as fh:
        fh.truncate(MAX_CSV_BYTES + 1)  # sparse: no disk used
    inputs = {"bend": {"target": "camera.s1.bend", "kind": "recorded", "file": "in.csv"}}
    with pytest.raises(SpecError, match=rf"allowed: a CSV file of at most {MAX_CSV_BYTES} bytes"):
        load_experiment(_experiment(tmp_path, {}, inputs))


def test_sweep_path_into_a_string() -> None:
    table = {"name": "x", "inputs": {"bend": {"end": 1}}}
    with pytest.raises(ConfigurationError, match=r"path 'name\.x': 'name' holds a str, not a table"):
        set_dotted(table, "name.x", 1)
    with pytest.raises(ConfigurationError, match=r"path 'inputs\.bend\.end\.x': 'end' holds a int"):
        set_dotted(table, "inputs.bend.end.x", 1)
    set_dotted(table, "inputs.bend.end", 2)
    assert table["inputs"]["bend"]["end"] == 2


def test_cap_bounds_every_echo() -> None:
    assert cap("a" * 10_000_000).endswith("... (10000000 characters)") and len(cap("a" * 10_000_000)) < 90
    assert cap(list(range(10**5))) == "<list of 100000 items>"
    assert cap(10**400) == "<int of 1329 bits>"
    assert cap(1.5) == "1.5"


@pytest.mark.parametrize(
    ("name", "key"), [("pneunet_2", "chamber_length_mm"), ("seed004_spatial", "initial_length_mm")]
)
def test_huge_int_in_other_robot_kinds(tmp_path: Path, name: str, key: str) -> None:
    from pccbullet.urdf_gen.pneunet import load_pneunet
    from pccbullet.urdf_gen.spec_loader import robots_dir
    from pccbullet.urdf_gen.three_actuator import load_three_actuator

    text = (robots_dir() / f"{name}.toml").read_text()
    path = tmp_path / f"{name}.toml"
    path.write_text(re.sub(rf"(?m)^{key} = [0-9.]+", f"{key} = 1" + "0" * 400, text, count=1))
    loader = load_pneunet if name.startswith("pneunet") else load_three_actuator
    with pytest.raises(
        SpecError, match=rf"field '{key}' = <int of 1329 bits> is invalid; allowed: a number in"
    ):
        loader(path)


def _sweep(tmp_path: Path, body: str) -> Path:
    exp = Path(__file__).resolve().parent.parent / "assets" / "experiments" / "camera_sweep.toml"
    path = tmp_path / "sweep.toml"
    path.write_text(f'experiment = "{exp}"\n' + body)
    return path


def test_sweep_grid_over_the_run_cap(tmp_path: Path) -> None:
    from pccbullet.sim.experiments.design import plan_sweep

    values = ", ".join(["1"] * 2000)
    body = "".join(
        f'[[parameters]]\npath = "{p}"\nvalues = [{values}]\n' for p in ("seed", "duration_s", "x")
    )
    with pytest.raises(
        SpecError,
        match=r"sweep\.toml: field 'parameters' = '8000000000 runs' is invalid; allowed: a sweep of at most 100000",
    ):
        plan_sweep(_sweep(tmp_path, body), tmp_path / "out")


def test_sweep_file_with_a_path_into_a_string(tmp_path: Path) -> None:
    from pccbullet.sim.experiments.design import plan_sweep

    body = '[[parameters]]\npath = "name.x"\nvalues = [1]\n'
    with pytest.raises(
        SpecError,
        match=r"field 'parameters\.path' = 'name\.x' is invalid; allowed: a path in camera_sweep\.toml \(path "
        r"'name\.x': 'name' holds a str, not a table\)",
    ):
        plan_sweep(_sweep(tmp_path, body), tmp_path / "out")


def test_sweep_experiment_path_with_a_nul(tmp_path: Path) -> None:
    from pccbullet.sim.experiments.design import plan_sweep

    path = tmp_path / "sweep.toml"
    path.write_text('experiment = "a\\u0000b.toml"\n[[parameters]]\npath = "x"\nvalues = [1]\n')
    with pytest.raises(
        SpecError, match=r"field 'experiment' = 'a\\x00b\.toml' is invalid; allowed: an experiment"
    ):
        plan_sweep(path, tmp_path / "out")


def test_a_long_path_in_a_message_keeps_its_file_name(tmp_path: Path) -> None:
    """Messages cap echoed values at ~80 characters; for a path the end (the file name) is what tells."""
    from pccbullet.core.errors import SpecError

    deep = tmp_path / ("d" * 120) / "recorded_input.csv"
    msg = str(SpecError("exp.toml", "inputs.bend.file", deep, "a UTF-8 CSV file"))
    assert "recorded_input.csv'" in msg and len(msg) < 200


ABSURD = [  # (robot file, key, value): sizes and masses beyond any robot, subnormal or zero
    ("pneunet_2", "chamber_length_mm", "1e308"),
    ("pneunet_2", "width_mm", "5e-324"),
    ("pneunet_2", "mass_g", "1e308"),
    ("pneunet_2", "angle_coeff_linear_deg_per_kpa", "1e308"),
    ("pneunet_2", "youngs_modulus_mpa", "5e-324"),
    ("seed004_spatial", "initial_length_mm", "1e308"),
    ("seed004_spatial", "body_radius_mm", "5e-324"),
    ("seed004_spatial", "mass_g", "1e308"),
    ("snake003_sim_steel", "link_length_mm", "1e308"),
    ("snake003_sim_steel", "density_g_cm3", "5e-324"),
    ("snake003_sim_steel", "density_g_cm3", "0"),
    ("snake003_sim_steel", "link_volume_mm3", "1e308"),
    ("snake003_exp", "link_mass_g", "0"),
    ("ursula", "length_mm", "5e-324"),
    ("ursula", "density_kg_m3", "5e-324"),
    ("ursula", "youngs_modulus_pa", "5e-324"),
    ("ursula", "base_diameter_mm", "5e-324"),
]


@pytest.mark.parametrize(("name", "key", "value"), ABSURD, ids=[f"{n}-{k}-{v}" for n, k, v in ABSURD])
def test_absurd_sizes_and_masses_are_refused_for_every_robot_kind(
    tmp_path: Path, name: str, key: str, value: str
) -> None:
    """Refused at loading: 1e308 mm would write ``ixx="inf"``, a subnormal density divide by zero, 0 g make a
    static link."""
    from pccbullet.urdf_gen.catalog import write_robot_urdf
    from pccbullet.urdf_gen.spec_loader import robots_dir

    text = (robots_dir() / f"{name}.toml").read_text()
    path = tmp_path / f"{name}.toml"
    changed = re.sub(rf"(?m)^(\s*){key} = [0-9.eE+-]+", rf"\g<1>{key} = {value}", text, count=1)
    assert changed != text
    path.write_text(changed)
    shown = re.escape(cap(float(value)) if value != "0" else "0")
    with pytest.raises(SpecError, match=rf"{key}' = {shown} is invalid; allowed: a number in \["):
        write_robot_urdf(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()
