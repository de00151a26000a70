"""Our material on anyone's body (pccbullet.sim.attach): a limb or a robot in a user's PyBullet client on a
body that may move, and the chain kernels on a moving base.

* the kernels against PyBullet's own forward dynamics of a floating-base limb: its accelerations after one
  step equal ``M^-1 (tau - h)`` with ``h`` from :func:`_moving_bias_and_fluid` at the base's motion;
* a limb on a still body sags as in a World (measured 0.005 mm at 1 ms, 0.006 mm at 1/240 s);
* a limb on a cart accelerating sideways settles as in a World whose gravity is ``g - a`` (0.14 mm: the air's
  buoyancy and added mass differ there by ``2 rho V a``);
* a limb hanging from a turntable swings out 79.7 mm, as the MJCF export does in MuJoCo (within 0.05 mm in the
  plane of the swing; MuJoCo trails by 0.76 mm across it, its integration error: 0.38 mm at half the step);
* a whole robot in air on a box: every limb as in a World (within 0.02 mm); bad input; detach.
"""

from __future__ import annotations

import dataclasses
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.attach import attach
from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.chain.rigid import ChainModel
from pccbullet.sim.limb.joints import LimbJoints
from pccbullet.sim.medium import AIR, VACUUM
from pccbullet.sim.robot import limit_free_urdf
from pccbullet.sim.world import STANDARD_GRAVITY, World
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.pcc import rot_y
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_writer import write_urdf
from tests.test_rod_chain import CAMERA, _camera_only, rod_static


@pytest.fixture
def client():
    cid = pb.connect(pb.DIRECT)
    pb.setGravity(0.0, 0.0, -STANDARD_GRAVITY, physicsClientId=cid)
    pb.setTimeStep(1e-3, physicsClientId=cid)
    yield cid
    pb.disconnect(cid)


def _fixed_box(cid: int, mass: float = 5.0, at: tuple[float, float, float] = (0.0, 0.0, 1.0)) -> int:
    """A box held in the world by a fixed constraint (a body of the user's, not a fixed base)."""
    shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=cid)
    box = pb.createMultiBody(mass, shape, -1, list(at), physicsClientId=cid)
    pb.createConstraint(box, -1, -1, -1, pb.JOINT_FIXED, [0, 0, 0], [0, 0, 0], list(at), physicsClientId=cid)
    return box


def _on_a_joint(cid: int, kind: int, axis: tuple[float, float, float], mass: float) -> int:
    """A fixed-base body with one moving link (``kind``: prismatic or revolute about ``axis``) at 1 m."""
    shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.05, 0.05, 0.05], physicsClientId=cid)
    return pb.createMultiBody(
        0, -1, -1, [0, 0, 1], linkMasses=[mass], linkCollisionShapeIndices=[shape], linkVisualShapeIndices=[-1],
        linkPositions=[[0, 0, 0]], linkOrientations=[[0, 0, 0, 1]], linkInertialFramePositions=[[0, 0, 0]],
        linkInertialFrameOrientations=[[0, 0, 0, 1]], linkParentIndices=[0], linkJointTypes=[kind],
        linkJointAxis=[list(axis)], physicsClientId=cid,
    )  # fmt: skip


def _tip_in_base(attached) -> np.ndarray:
    return np.linalg.solve(attached.T_world_limbbase(CAMERA), attached.tip_pose(CAMERA))[:3, 3]


MOUNT = Rotation.from_euler("xyz", load_robot("ursula").limb(CAMERA).mount_rpy).as_quat().tolist()


@pytest.mark.parametrize("limb", [pytest.param("camera", marks=pytest.mark.slow), "grasper"])
def test_moving_base_kernels_match_pybullets_forward_dynamics(client, tmp_path, limb: str) -> None:
    """A limb with a floating base, spinning and moving, random joint state and torques: PyBullet's joint
    accelerations after one step are ``M^-1 (tau - h)`` with ``h`` on the moving base, to 1e-9 of their size
    (measured 2e-13); the base's acceleration is its world velocity change over the step. Taking it for a
    spatial acceleration instead is 30-150 % off: the check sees the base's terms."""
    spec = load_robot("ursula", sections=3)
    (tmp_path / "free").mkdir()
    path = limit_free_urdf(write_urdf(spec, tmp_path, chain="rod").limbs[limb], tmp_path / "free")
    rng = np.random.default_rng(3)
    orn = Rotation.from_rotvec(rng.normal(size=3)).as_quat().tolist()
    g = np.array([0.3, -2.0, -9.6])
    pb.setGravity(*g, physicsClientId=client)
    body = pb.loadURDF(str(path), [0, 0, 1], orn, useFixedBase=False, physicsClientId=client,
                       flags=pb.URDF_USE_INERTIA_FROM_FILE)  # fmt: skip
    pb.changeDynamics(body, -1, mass=0.3, localInertiaDiagonal=[2e-4, 2e-4, 3e-4], physicsClientId=client)
    for j in range(-1, pb.getNumJoints(body, physicsClientId=client)):
        pb.changeDynamics(body, j, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
        pb.setCollisionFilterGroupMask(body, j, 0, 0, physicsClientId=client)
    names = Topology.ROD.joint_names(spec.limb(limb))
    count = pb.getNumJoints(body, physicsClientId=client)
    index = {pb.getJointInfo(body, j, physicsClientId=client)[1].decode(): j for j in range(count)}
    idx = tuple(index[n] for n in names)
    spherical = tuple(k == "spherical" for k in Topology.ROD.joint_kinds(spec.limb(limb)))
    joints = LimbJoints(client, ((body, idx),), spherical)
    joints.release_motors()
    chain = ChainModel.from_urdf(path, names)
    R = Rotation.from_quat(orn).as_matrix()
    for _ in range(3):
        joints.reset(np.concatenate([rng.normal(0.0, 0.2, 3) if s else [0.1] for s in spherical]))
        q, _ = joints.read()
        positions = [list(s[0]) for s in pb.getJointStatesMultiDof(body, idx, physicsClientId=client)]
        rates = [rng.normal(0.0, 0.5, 3).tolist() if s else [rng.normal(0.0, 0.01)] for s in spherical]
        v, w = rng.normal(0.0, 0.3, 3), rng.normal(0.0, 1.0, 3)
        pb.resetBasePositionAndOrientation(body, [0, 0, 1], orn, physicsClientId=client)
        pb.resetBaseVelocity(body, v.tolist(), w.tolist(), physicsClientId=client)
        pb.resetJointStatesMultiDof(body, idx, positions, rates, physicsClientId=client)
        _, qd0 = joints.read()
        tau = 1e-6 * rng.normal(size=chain.n_dof)  # small: PyBullet clamps joint speeds at 100 rad/s
        joints.send_torques(tau)
        pb.stepSimulation(physicsClientId=client)
        _, qd1 = joints.read()
        v1, w1 = (np.asarray(x) for x in pb.getBaseVelocity(body, physicsClientId=client))
        qdd_pb = (qd1 - qd0) / 1e-3
        base = np.stack([R.T @ w, R.T @ v, R.T @ (w1 - w) / 1e-3, R.T @ (v1 - v) / 1e-3])
        h, _ = chain.bias_and_fluid(q, qd0, R.T @ g, base)
        qdd = np.linalg.solve(chain.mass_matrix(q), tau - h)
        assert np.abs(qdd - qdd_pb).max() < 1e-9 * np.abs(qdd_pb).max()
        base[3] += R.T @ np.cross(w, v)  # as if PyBullet's base acceleration were a spatial one
        h, _ = chain.bias_and_fluid(q, qd0, R.T @ g, base)
        assert (
            np.abs(np.linalg.solve(chain.mass_matrix(q), tau - h) - qdd_pb).max() > 0.1 * np.abs(qdd_pb).max()
        )


@pytest.mark.parametrize("dt", [pytest.param(1e-3, marks=pytest.mark.slow), 1 / 240])
def test_a_limb_on_a_still_body_sags_as_in_a_world(client, dt: float) -> None:
    """The camera tentacle on a box of the user's (held by a constraint), the URSULA mount's orientation,
    critical damping: its settled tip in its base frame within 1 mm of a World's (measured 0.005 mm at 1 ms,
    0.006 mm at PyBullet's default 1/240 s, where the flange carries ``FLANGE_INERTIA_RATE dt``)."""
    pb.setTimeStep(dt, physicsClientId=client)
    world_tip, _ = rod_static(10, "air")
    box = _fixed_box(client)
    attached = attach(
        client, _camera_only(10, 1.0), box, -1, limb=CAMERA, position=(0.05, 0, 0), orientation=MOUNT
    )
    assert attached.dt == dt and pb.getNumBodies(physicsClientId=client) == 2
    attached.step(int(round(15.0 / dt)))
    assert np.linalg.norm(_tip_in_base(attached) - world_tip) < 1e-3
    attached.detach()
    assert pb.getNumBodies(physicsClientId=client) == 1


@pytest.mark.slow
def test_a_limb_on_an_accelerating_cart_bends_as_under_the_gravity_it_feels(client) -> None:
    """A 20 kg cart on a rail along world y, its velocity motor accelerating it at 1.5 m/s^2 for 15 s (22.5
    m/s; air without drag): the camera tentacle settles in its base frame as in a World with gravity ``g -
    a``, within 0.5 mm (measured 0.14 mm: in the cart the air's buoyancy ``rho V g`` and added mass ``-C_a rho
    V a`` act, in the World buoyancy ``rho V (g - a)``); it swings back 89 mm."""
    acc = 1.5
    still_air = dataclasses.replace(AIR, drag_normal=0.0, drag_axial=0.0)
    cart = _on_a_joint(client, pb.JOINT_PRISMATIC, (0.0, 1.0, 0.0), 20.0)
    spec = _camera_only(10, 1.0)
    attached = attach(
        client, spec, cart, 0, limb=CAMERA, position=(0.1, 0, 0), orientation=MOUNT, medium=still_air
    )
    for k in range(15000):
        pb.setJointMotorControl2(
            cart, 0, pb.VELOCITY_CONTROL, targetVelocity=acc * k * 1e-3, force=1e5, physicsClientId=client
        )
        attached.step()
    tip = _tip_in_base(attached)
    with World(gravity=(0.0, -acc, -STANDARD_GRAVITY)) as world:
        robot = world.load_robot(spec)
        world.step(15000)
        expected = np.linalg.solve(robot.T_world_limbbase(CAMERA), robot.tip_pose(CAMERA))[:3, 3]
    assert np.linalg.norm(tip - expected) < 0.5e-3
    assert tip[1] == pytest.approx(-0.0889, abs=0.001)


def _mujoco_turntable_tip(spec, T_link_base: np.ndarray, omega, seconds: float) -> np.ndarray:
    """The MJCF export (vacuum) with its head under a body turning about world z at 1 m at ``omega(t)``:
    the camera tip in the turning frame after ``seconds``."""
    mujoco = pytest.importorskip("mujoco")
    from pccbullet.sim.mjcf.writer import build_mjcf

    root, _ = build_mjcf(spec, tendons=False, medium=VACUUM)
    worldbody = root.find("worldbody")
    head = worldbody.find("body")
    worldbody.remove(head)
    table = ET.SubElement(worldbody, "body", name="table", pos="0 0 1")
    ET.SubElement(table, "joint", name="turn", type="hinge", axis="0 0 1", armature="1e4")
    ET.SubElement(table, "inertial", pos="0 0 0", mass="50", diaginertia="1 1 1")
    T_table_head = T_link_base @ np.linalg.inv(spec.limb(CAMERA).T_head_base())
    x, y, z, w = Rotation.from_matrix(T_table_head[:3, :3]).as_quat()
    head.set("pos", ux.fmt(T_table_head[:3, 3]))
    head.set("quat", ux.fmt([w, x, y, z]))
    table.append(head)
    for geom in root.iter("geom"):  # no mesh files: the visual meshes as points
        if geom.get("type") == "mesh":
            geom.attrib.update(type="sphere", size="0.001")
            del geom.attrib["mesh"]
    root.remove(root.find("asset"))
    model = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    data = mujoco.MjData(model)
    dof = model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "turn")]
    for k in range(int(round(seconds / 1e-3))):
        data.qvel[dof] = omega(k * 1e-3)
        mujoco.mj_step(model, data)
    angle = data.qpos[model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "turn")]]
    tip = data.xpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "camera_tip")] - [0.0, 0.0, 1.0]
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]) @ tip


@pytest.mark.slow
def test_a_limb_on_a_turntable_swings_out_as_in_mujoco(client) -> None:
    """The camera tentacle hanging from a turntable arm at 0.3 m, the table spun up to 2 rad/s over 2 s
    (vacuum: no drag): it swings out 79.7 mm and settles, stable, where the MJCF export settles in MuJoCo on
    a turning body, within 0.05 mm in the plane of the swing (measured 0.01 mm; with the base's motion left
    out of our kernels, 0.23 mm). Across it our limb stays in the plane (no drag, no motion: symmetric); MuJoCo
    trails by 0.76 mm (0.38 mm at half the step: its integration error)."""
    omega_max, r0, ramp, seconds = 2.0, 0.3, 2.0, 14.0

    def omega(t: float) -> float:
        x = min(t / ramp, 1.0)
        return omega_max * x * x * (3.0 - 2.0 * x)

    spec = _camera_only(10, 1.0)
    T_link_base = np.eye(4)
    T_link_base[:3, :3] = rot_y(math.pi)  # base z down
    T_link_base[:3, 3] = [r0, 0.0, 0.0]
    table = _on_a_joint(client, pb.JOINT_REVOLUTE, (0.0, 0.0, 1.0), 50.0)
    orientation = Rotation.from_matrix(T_link_base[:3, :3]).as_quat().tolist()
    attached = attach(
        client, spec, table, 0, limb=CAMERA, position=(r0, 0, 0), orientation=orientation, medium=VACUUM
    )
    for k in range(int(round(seconds / 1e-3))):
        pb.setJointMotorControl2(
            table, 0, pb.VELOCITY_CONTROL, targetVelocity=omega(k * 1e-3), force=1e6, physicsClientId=client
        )
        attached.step()
    angle = pb.getJointState(table, 0, physicsClientId=client)[0]
    c, s = math.cos(angle), math.sin(angle)
    tip = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]) @ (
        attached.tip_pose(CAMERA)[:3, 3] - [0, 0, 1]
    )
    assert tip[0] - r0 == pytest.approx(0.0797, abs=0.001) and abs(tip[1]) < 1e-5
    reference = _mujoco_turntable_tip(spec, T_link_base, omega, seconds)
    assert np.abs(tip[[0, 2]] - reference[[0, 2]]).max() < 0.05e-3
    assert reference[1] == pytest.approx(-0.76e-3, abs=0.1e-3)


@pytest.mark.slow
def test_a_whole_robot_on_a_box_holds_its_limbs_as_in_a_world(client) -> None:
    """URSULA (N = 3, critical damping, air) welded by its head to a box of the user's: every limb's tip in its
    base frame within 1 mm of a World's (measured 0.003-0.019 mm; 0.003-0.03 mm at N = 5)."""
    spec = load_robot("ursula", sections=3)
    limbs = tuple(
        dataclasses.replace(lb, material=dataclasses.replace(lb.material, damping_ratio=1.0))
        for lb in spec.limbs
    )
    spec = dataclasses.replace(spec, limbs=limbs)
    with World() as world:
        robot = world.load_robot(spec)
        world.step(12000)
        expected = {
            lb.name: np.linalg.solve(robot.T_world_limbbase(lb.name), robot.tip_pose(lb.name)) for lb in limbs
        }
    box = _fixed_box(client, 50.0, (0.0, 0.0, 2.0))
    attached = attach(client, spec, box, -1, position=(0.6, 0.0, 0.0))
    assert attached.head is not None and len(attached.constraints) == 5
    attached.step(12000)
    for lb in limbs:
        tip = np.linalg.solve(attached.T_world_limbbase(lb.name), attached.tip_pose(lb.name))
        assert np.linalg.norm(tip[:3, 3] - expected[lb.name][:3, 3]) < 1e-3


@pytest.mark.parametrize(
    ("parent", "link", "options", "message"),
    [
        (99, -1, {}, "parent = 99 is invalid; allowed: a body of client"),
        (-1, 0, {}, "link = 0 is invalid with parent -1 (the world); allowed: -1"),
        ("box", 3, {}, "link = 3 is invalid for body"),
        ("box", -1, {"flange_mass": 0.0}, "flange_mass = 0.0 kg is invalid; allowed: a mass > 0"),
        ("box", -1, {"limb": "tail"}, "robot 'ursula' has no limb 'tail'"),
        ("box", -1, {"medium": "honey"}, "medium = 'honey' is invalid"),
        ("box", -1, {"chain": "spring"}, "chain = 'spring' is invalid"),
    ],
)
def test_attach_refuses_bad_input(client, parent, link, options, message) -> None:
    box = _fixed_box(client)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        attach(client, "ursula", box if parent == "box" else parent, link, **options)
    assert pb.getNumBodies(physicsClientId=client) == 1  # nothing was loaded


def test_attach_to_a_closed_client_is_refused() -> None:
    cid = pb.connect(pb.DIRECT)
    pb.disconnect(cid)
    with pytest.raises(ConfigurationError, match=f"client = {cid} is invalid; allowed: a connected PyBullet"):
        attach(cid, "ursula", -1, limb=CAMERA)
