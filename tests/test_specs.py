"""Robot descriptions: the bundled URSULA values and every bad-input case with its message pinned."""

from __future__ import annotations

import math

import pytest

from pccbullet.core.errors import PccBulletError, RobotNotFoundError, SpecError
from pccbullet.urdf_gen.spec_loader import bundled_robots, load_robot


def test_ursula_matches_seed001() -> None:
    spec = load_robot("ursula")
    assert [limb.name for limb in spec.limbs] == ["grasper", "palpation", "camera", "light"]
    assert [len(limb.segments) for limb in spec.limbs] == [2, 2, 1, 1]
    assert spec.head.diameter == pytest.approx(0.250)
    for limb in spec.limbs:
        assert limb.rest_length == pytest.approx(0.600)
        assert limb.segments[0].radius_base == pytest.approx(0.030)
        assert limb.segments[-1].radius_tip == pytest.approx(0.010)
        assert limb.material.density == 1070.0
        assert limb.material.youngs_modulus == 69e3
        assert limb.actuators is not None and limb.actuators.kind == "tendon" and limb.actuators.count == 4
        assert all(seg.sections == 10 for seg in limb.segments)
        assert all(seg.bend_max == pytest.approx(math.pi) for seg in limb.segments)  # paper theta <= pi/2
        assert all(seg.plane_max == pytest.approx(2 * math.pi) for seg in limb.segments)
    grasper, palpation, camera, light = spec.limbs
    assert (grasper.segments[0].length_min, grasper.segments[0].length_max) == pytest.approx((0.290, 0.300))
    assert (camera.segments[0].length_min, camera.segments[0].length_max) == pytest.approx((0.580, 0.600))
    assert grasper.segments[0].radius_tip == pytest.approx(0.020)  # linear taper: 40 mm at mid-length
    assert camera.payload.kind == "camera" and light.payload.kind == "light"
    assert palpation.payload.kind == "force_sensor" and grasper.payload is None


def test_sections_override_and_listing() -> None:
    spec = load_robot("ursula", sections=4)
    assert all(seg.sections == 4 for limb in spec.limbs for seg in limb.segments)
    assert "ursula" in bundled_robots()


BAD_CASES = [
    # (replace old -> new, match)
    (
        "density_kg_m3 = 1070",
        "density_kg_m3 = 1070\ncolour = 'red'",
        r"field 'materials\.ecoflex_00_30\.colour' = 'red' is invalid; allowed: a known key",
    ),
    (
        'name = "grasper"\n',
        "",
        r"field 'limbs\[0\]\.name' = None is invalid; allowed: a value \(the field is required\)",
    ),
    (
        "length_mm = 600\nlength_min_mm = 580",
        "length_mm = -600\nlength_min_mm = 580",
        r"field 'limbs\[2\]\.segments\[0\]\.length_mm' = -600 is invalid; allowed: a number in \[0\.001, 100000\]",
    ),
    (
        "length_min_mm = 580\nlength_max_mm = 600",
        "length_min_mm = 620\nlength_max_mm = 600",
        r"field 'limbs\[2\]\.segments\[0\]\.length_min_mm' = 620.0 is invalid; allowed: a number <= length_max_mm = 600",
    ),
    (
        "sections_per_segment = 10",
        "sections_per_segment = 0",
        r"field 'sections_per_segment' = 0 is invalid; allowed: an integer in \[1, 200\]",
    ),
    (
        "youngs_modulus_pa = 69e3",
        'youngs_modulus_pa = "soft"',
        r"field 'materials\.ecoflex_00_30\.youngs_modulus_pa' = 'soft' is invalid; allowed: a number in \[1, 1e\+12\]",
    ),
    (
        'material = "ecoflex_00_30"\nbase',
        'material = "unobtainium"\nbase',
        r"field 'limbs\[0\]\.material' = 'unobtainium' is invalid; allowed: one of the \[materials\] tables: ecoflex_00_30",
    ),
    (
        'bend_max_deg = 180\nplane_max_deg = 360\n\n[[limbs]]\nname = "palpation"',
        'bend_max_deg = 400\nplane_max_deg = 360\n\n[[limbs]]\nname = "palpation"',
        r"field 'limbs\[0\]\.segments\[1\]\.bend_max_deg' = 400 is invalid; allowed: a number in \[0\.001, 360\]",
    ),
    (
        'name = "light"',
        'name = "camera"',
        r"field 'limbs\[3\]\.name' = 'camera' is invalid; allowed: a name not used by another limb",
    ),
    (
        "mount_xyz_mm = [125, -60, -60]",
        "mount_xyz_mm = [125, -60]",
        r"field 'limbs\[0\]\.mount_xyz_mm' = \[125, -60\] is invalid; allowed: a list of 3 finite numbers",
    ),
    (
        "offset_mm = 7\n",
        "offset_mm = 12\n",
        r"field 'limbs\[0\]\.actuators\.offset_mm' = 12 is invalid; allowed: a number in \(0, 10\]",
    ),
    (
        'kind = "camera"',
        'kind = "periscope"',
        r"field 'limbs\[2\]\.payload\.kind' = 'periscope' is invalid; allowed: one of 'camera', 'light', 'force_sensor'",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "match"),
    BAD_CASES,
    ids=[
        "unknown-key",
        "missing-field",
        "negative-length",
        "min-above-max",
        "zero-sections",
        "non-numeric",
        "unknown-material",
        "bend-limit-too-large",
        "duplicate-limb",
        "short-vector",
        "tendon-outside-tip",
        "unknown-payload-kind",
    ],
)
def test_bad_input_names_file_field_value_and_range(ursula_text, write_toml, old, new, match) -> None:
    assert old in ursula_text, "test case must edit an existing line"
    path = write_toml(ursula_text.replace(old, new, 1))
    with pytest.raises(SpecError, match=match) as info:
        load_robot(path)
    assert str(info.value).startswith(str(path))
    assert isinstance(info.value, PccBulletError)


def test_sections_argument_is_validated() -> None:
    with pytest.raises(
        SpecError, match=r"field 'sections' = 0 is invalid; allowed: an integer in \[1, 200\]"
    ):
        load_robot("ursula", sections=0)


def test_syntax_error_and_unknown_robot(write_toml) -> None:
    path = write_toml("name = [unclosed")
    with pytest.raises(SpecError, match=r"robot\.toml: field '<file>' = .* allowed: valid TOML"):
        load_robot(path)
    with pytest.raises(
        RobotNotFoundError, match=r"unknown robot 'octopus': not a TOML file and not bundled \(.*ursula"
    ):
        load_robot("octopus")
    with pytest.raises(RobotNotFoundError, match=r"robot file '.*missing\.toml' does not exist"):
        load_robot("/nonexistent/missing.toml")
