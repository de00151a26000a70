"""Limbs larger than a PyBullet body holds (pccbullet.sim.limb.parts): loaded as parts joined by fixed
constraints, cut inside slices. PyBullet's state holds 127 links, 121 joint positions and 122 velocities
per body; a joint beyond them is neither read nor driven."""

from __future__ import annotations

import numpy as np
import pytest

import pccbullet.sim.limb.parts as limb_parts
from pccbullet.sim.world import World
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.rod import pcc_frame
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.urdf_writer import write_urdf


@pytest.mark.parametrize(
    ("chain", "sections", "limb", "cuts"),
    [
        ("rod", 11, "grasper", []),  # 2 (5 N + 4) = 118 positions: one body
        ("rod", 12, "grasper", ["grasper_s2_k11"]),  # 64 + 5 k <= 121
        ("rod", 20, "grasper", ["grasper_s2_k3"]),
        ("rod", 30, "camera", ["camera_s1_k24"]),  # one segment of 154 positions
        ("rrp", 19, "palpation", []),
        ("rrp", 20, "palpation", ["palpation_s2_k20"]),  # 122 joints: one beyond
        ("rrp", 50, "grasper", ["grasper_s1_k40", "grasper_s2_k30"]),
    ],
)
def test_cuts_fall_inside_slices_as_late_as_fit(
    tmp_path, chain: str, sections: int, limb: str, cuts: list[str]
) -> None:
    spec = load_robot("ursula", sections=sections)
    urdf = write_urdf(spec, tmp_path, chain=chain).limbs[limb]
    assert limb_parts.plan_cuts(urdf, spec.limb(limb)) == cuts


@pytest.mark.parametrize("chain", ["rod", "rrp"])
def test_ursula_at_n_20_loads_in_parts_and_poses_exactly(chain: str) -> None:
    """Every limb of URSULA at N = 20 (two-segment limbs in two parts): the PCC pose read back and the tip
    on the PCC arc; every joint reachable (a joint beyond a body's state would read 0)."""
    configs = [PccConfig(0.9, -0.7, 0.29), PccConfig(-1.3, 2.2, 0.3)]
    with World(chain=chain, medium="water") as world:
        robot = world.load_robot("ursula", sections=20)
        joints = robot.limb_joints("grasper")
        assert len(joints.parts) == 2 and len(robot.limb_joints("camera").parts) == 1
        robot.set_pcc("grasper", configs)
        q = robot.pcc_joints("grasper", configs)
        assert np.abs(robot.joints("grasper") - q).max() < 1e-12
        T = np.linalg.solve(robot.T_world_limbbase("grasper"), robot.tip_pose("grasper"))
        T = pcc_frame(T, configs) if chain == "rod" else T
        assert np.abs(T - limb_transform(configs)).max() < 1e-6
        world.step(200)
        assert np.isfinite(robot.joints("grasper")).all()
        assert all(len(c.read_state()[0]) == c.chain.n_q for c in robot.compliant.values())


def _sag(limb: str, sections: int) -> tuple[int, np.ndarray, float]:
    """``limb`` alone in water, 0.3 s after its start at its rest shape: its parts, its tip and the fastest
    joint speed over the run."""
    with World(medium="water") as world:
        robot = world.load_robot("ursula", sections=sections, limbs=[limb])
        speed = 0.0
        for _ in range(30):
            world.step(10)
            speed = max(speed, float(np.abs(robot.joint_velocities(limb)).max()))
        return len(robot.limb_joints(limb).parts), robot.tip_pose(limb)[:3, 3], speed


@pytest.mark.parametrize("limb", ["grasper", "palpation"])
def test_a_limb_in_parts_sags_in_water_as_in_one_body(limb: str) -> None:
    """A two-segment limb at N = 20 (two parts) settling in water from its rest shape: its tip where the same
    limb at N = 11 (one body) puts it, within 1 mm (measured 0.01-0.2 mm), and no joint faster than 1 rad/s.
    Bullet's velocity clamp (100 units) once broke the fixed constraint's impulse on the second part's
    floating base in the first step: joints at 100-830 rad/s, the tip metres away after 0.3 s."""
    parts, tip, speed = _sag(limb, 20)
    one, reference, _ = _sag(limb, 11)
    assert (parts, one) == (2, 1)
    assert speed < 1.0
    assert np.linalg.norm(tip - reference) < 1e-3


def _tips(chain: str, medium: str, cut: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[int, np.ndarray]:
    """The grasper at N = 10 following a target for 2 s: its parts and its tip every 0.25 s. ``cut``: as
    if PyBullet held fewer joints a body, so that it is cut in two."""
    if cut:
        monkeypatch.setattr(limb_parts, "MAX_POSITIONS", 60 if chain == "rod" else 35)
    with World(chain=chain, medium=medium) as world:
        robot = world.load_robot("ursula", sections=10, limbs=["grasper"])
        robot.set_pcc("grasper", [PccConfig(0.8, 0.5, 0.29), PccConfig(0.9, -1.0, 0.3)], mode="target")
        tips = []
        for _ in range(8):
            world.step(250)
            tips.append(robot.tip_pose("grasper")[:3, 3])
        return len(robot.limb_joints("grasper").parts), np.array(tips)


@pytest.mark.parametrize(("chain", "medium"), [("rod", "water"), ("rod", "air"), ("rrp", "water")])
def test_a_limb_cut_in_two_moves_as_the_whole_limb(chain: str, medium: str, monkeypatch) -> None:
    """The same motion with the limb in one body and cut in two (at a size one body holds): the tips
    within 0.5 mm over 2 s while the limb swings through ~0.4 m (measured 0.003-0.47 mm, the most in air
    where the arm whips)."""
    one, whole = _tips(chain, medium, False, monkeypatch)
    two, cut = _tips(chain, medium, True, monkeypatch)
    assert (one, two) == (1, 2)
    assert np.linalg.norm(whole[-1] - whole[0]) > 0.05  # it moved
    assert np.linalg.norm(cut - whole, axis=1).max() < 5e-4


def test_cut_halves_carry_the_slice_and_nothing_collides_within_a_limb(tmp_path) -> None:
    import xml.etree.ElementTree as ET

    spec = load_robot("ursula", sections=20)
    urdf = write_urdf(spec, tmp_path, chain="rod").limbs["grasper"]
    files = limb_parts.split_urdf(urdf, ["grasper_s2_k3"], tmp_path)
    masses = []
    for f in (urdf, *files):
        root = ET.parse(f).getroot()
        masses.append(
            {ln.get("name"): float(ln.find("inertial/mass").get("value")) for ln in root.findall("link")}
        )
    whole, first, second = masses
    assert set(first) | set(second) == set(whole) | {"grasper_s2_k3_b"}
    assert first["grasper_s2_k3"] + second["grasper_s2_k3_b"] == pytest.approx(
        whole["grasper_s2_k3"], rel=1e-12
    )
    assert sum(first.values()) + sum(second.values()) == pytest.approx(sum(whole.values()), rel=1e-12)
    assert ET.parse(files[1]).getroot().find("link[@name='grasper_s2_k3_b']/collision") is None
    with World(chain="rod") as world:
        from pccbullet.sim.bullet import pb

        robot = world.load_robot("ursula", sections=20, limbs=["grasper"])
        robot.set_pcc("grasper", [PccConfig(3.0, 0.0, 0.29), PccConfig(3.0, 0.0, 0.3)])  # curled on itself
        world.step(1)
        a, b = robot.limb_joints("grasper").bodies
        assert pb.getContactPoints(a, b, physicsClientId=world.client) == ()
        assert naming.section_prefix("grasper", 2, 4) in robot._links
