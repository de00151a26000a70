"""One URDF of the whole robot (``write_urdf(..., combined=True)``): loads in yourdfpy, Pinocchio and
MuJoCo, and a random configuration's tips agree with the exact chain and with PyBullet's ``tip_pose``.

Tolerances: yourdfpy, Pinocchio and MuJoCo compose the same doubles as :func:`pccbullet.urdf_gen.pcc.chain_transform`
and agree with it to ~1e-11, the 12 significant digits the file is written with (1e-10 asserted). PyBullet's link frames differ from the exact chain by up to
~1e-8 m and ~2e-7 rad (measured on this configuration; its own rounding of link frames), so the PyBullet
comparison allows 5e-8 m in position and 1e-6 in the rotation entries.
"""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.sim.world import World
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.catalog import write_robot_urdf
from pccbullet.urdf_gen.pcc import PccConfig, chain_transform
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_writer import write_urdf

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")
yourdfpy = pytest.importorskip("yourdfpy")

SECTIONS = 4


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """The combined URSULA file, a random joint configuration by name and PyBullet's head-frame tips."""
    spec = load_robot("ursula", sections=SECTIONS)
    out = write_urdf(spec, tmp_path_factory.mktemp("combined"), combined=True)
    rng = np.random.default_rng(18)
    q: dict[str, float] = {}
    tips = {}
    with World(mode="kinematic") as world:
        robot = world.load_robot(spec)
        for limb in spec.limbs:
            cfg = [
                PccConfig(
                    rng.uniform(-0.9, 0.9) * s.bend_max,
                    rng.uniform(-np.pi, np.pi),
                    rng.uniform(s.length_min, s.length_max),
                )
                for s in limb.segments
            ]
            values = robot.pcc_joints(limb.name, cfg)
            robot.set_joints(limb.name, values)
            q.update(zip(Topology.RRP.joint_names(limb), values.tolist(), strict=True))
            tips[limb.name] = np.linalg.inv(robot.T_world_head) @ robot.tip_pose(limb.name)
    exact = {}
    for limb in spec.limbs:
        T, values = limb.T_head_base(), [q[n] for n in Topology.RRP.joint_names(limb)]
        i = 0
        for seg in limb.segments:
            T = T @ chain_transform(np.array(values[i : i + 3 * seg.sections + 1]))
            i += 3 * seg.sections + 1
        exact[limb.name] = T
    return spec, out, q, tips, exact


def _check(spec, T_head_tip, tips, exact) -> None:
    for limb in spec.limbs:
        T = T_head_tip(naming.tip_link(limb.name))
        np.testing.assert_allclose(T, exact[limb.name], rtol=0, atol=1e-10)
        np.testing.assert_allclose(T[:3, 3], tips[limb.name][:3, 3], rtol=0, atol=5e-8)
        np.testing.assert_allclose(T[:3, :3], tips[limb.name][:3, :3], rtol=0, atol=1e-6)


def test_combined_file_tree(scene) -> None:
    spec, out, q, _, _ = scene
    assert out.combined == out.head.parent / "ursula.urdf"
    assert out.urdfs[-1] == out.combined
    u = yourdfpy.URDF.load(str(out.combined), load_meshes=False, build_collision_scene_graph=False)
    assert u.base_link == naming.HEAD_LINK
    assert sorted(u.actuated_joint_names) == sorted(q)
    mounts = {j.name: j for j in u.robot.joints if j.name.endswith("_mount")}
    assert sorted(mounts) == sorted(f"{limb.name}_mount" for limb in spec.limbs)
    assert all(j.type == "fixed" and j.parent == "head" for j in mounts.values())


def test_combined_in_yourdfpy(scene) -> None:
    spec, out, q, tips, exact = scene
    u = yourdfpy.URDF.load(str(out.combined), load_meshes=False, build_collision_scene_graph=False)
    u.update_cfg(q)
    _check(spec, lambda link: u.get_transform(link, naming.HEAD_LINK), tips, exact)


def test_combined_in_pinocchio(scene) -> None:
    spec, out, q, tips, exact = scene
    model = pin.buildModelFromUrdf(str(out.combined))
    assert model.nq == len(q) == sum(3 * s.sections + 1 for limb in spec.limbs for s in limb.segments)
    data = model.createData()
    qv = pin.neutral(model)
    for name, value in q.items():
        qv[model.joints[model.getJointId(name)].idx_q] = value
    pin.framesForwardKinematics(model, data, qv)
    _check(spec, lambda link: data.oMf[model.getFrameId(link)].homogeneous, tips, exact)


def test_combined_in_mujoco(scene) -> None:
    spec, out, q, tips, exact = scene
    model = mujoco.MjModel.from_xml_path(str(out.combined))
    assert model.nq == len(q)
    data = mujoco.MjData(model)
    for name, value in q.items():
        data.qpos[model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)]] = value
    mujoco.mj_kinematics(model, data)

    def pose(link: str) -> np.ndarray:
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, link)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = data.xmat[b].reshape(3, 3), data.xpos[b]
        return T

    np.testing.assert_array_equal(pose(naming.HEAD_LINK), np.eye(4))  # the root sits at the world origin
    _check(spec, pose, tips, exact)


def test_rolling_snake_mimic_in_mujoco_and_yourdfpy(tmp_path) -> None:
    """MuJoCo turns every ``<mimic>`` into a joint equality ``roll_k_b = roll_k_a``; with the mimic
    honoured (yourdfpy applies it, MuJoCo is given both joints) both give the same tip."""
    (path,) = write_robot_urdf("snake003_exp", tmp_path)
    model = mujoco.MjModel.from_xml_path(str(path))
    pairs = []
    for e in range(model.neq):
        assert model.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT
        np.testing.assert_array_equal(model.eq_data[e, :5], [0.0, 1.0, 0.0, 0.0, 0.0])
        names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, model.eq_obj1id[e])]
        names.append(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, model.eq_obj2id[e]))
        pairs.append(tuple(names))
    n = model.njnt // 2
    assert sorted(pairs) == sorted((f"roll_{k}_b", f"roll_{k}_a") for k in range(1, n + 1))

    rng = np.random.default_rng(3)
    a = {f"roll_{k}_a": float(rng.uniform(-0.3, 0.3)) for k in range(1, n + 1)}
    u = yourdfpy.URDF.load(str(path), load_meshes=False, build_collision_scene_graph=False)
    u.update_cfg(a)  # the b joints follow through their <mimic>
    data = mujoco.MjData(model)
    for name, value in a.items():
        for joint in (name, name.replace("_a", "_b")):
            data.qpos[model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)]] = value
    mujoco.mj_kinematics(model, data)
    last = f"link_{n + 1}"  # MuJoCo fuses the fixed tip link into it (fusestatic)
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, last)
    assert body > 0
    T = u.get_transform(last, "snake_base")
    np.testing.assert_allclose(data.xpos[body], T[:3, 3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(data.xmat[body].reshape(3, 3), T[:3, :3], rtol=0, atol=1e-12)
