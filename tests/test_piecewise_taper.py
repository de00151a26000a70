"""Per-segment diameters (a piecewise taper, continuous or stepped): the loader, the URDF's masses and
inertias against the frustum integrals, a stepped cantilever against the piecewise beam, the skin, the
stiffness at a step, the fluid volume and the checks on tendons that must fit inside."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

from pccbullet.core.errors import SpecError
from pccbullet.sim.bullet import pb
from pccbullet.sim.export.skin import frustum_volume, skin_mesh
from pccbullet.sim.limb.material import slice_volumes
from pccbullet.sim.limb.topology import joint_stiffness
from pccbullet.sim.world import World
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import rest_configs
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import LimbSpec
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_writer import write_urdf

STEPPED = Path(__file__).parent / "data" / "stepped_rod.toml"
G = 9.80665
HEADER = """kind = "pcc"
name = "piecewise"
sections_per_segment = 8
[materials.m]
density_kg_m3 = 1100
youngs_modulus_pa = 2e6
poisson_ratio = 0.45
[head]
diameter_mm = 150
length_mm = 50
mass_kg = 2.0
[[limbs]]
name = "arm"
material = "m"
mount_xyz_mm = [0, 0, -25]
mount_rpy_deg = [180, 0, 0]
"""
# three segments: a continuous taper 51 -> 45, a step to 40 -> 36, a step to 30 -> 30 (mm)
SEGMENTS = ((200.0, 51.0, 45.0), (150.0, 40.0, 36.0), (120.0, 30.0, 30.0))


def _piecewise(extra: str = "", segments=SEGMENTS, tendons: str = "") -> str:
    text = HEADER + extra + tendons
    for length, d0, d1 in segments:
        text += f"[[limbs.segments]]\nlength_mm = {length}\ndiameter_mm = [{d0}, {d1}]\nbend_max_deg = 120\n"
    return text


def _radius(z: float) -> float:
    """The piecewise radius (m) at ``z`` (m) from the limb base."""
    s0 = 0.0
    for length, d0, d1 in SEGMENTS:
        if z <= (s0 + length) * 1e-3 + 1e-15:
            return 0.5e-3 * (d0 + (d1 - d0) * (z * 1e3 - s0) / length)
        s0 += length
    raise ValueError(z)


def _integral(f) -> float:
    """``int_0^L f(z) dz`` over the limb, split at the segment junctions (smooth on each piece)."""
    out, s0 = 0.0, 0.0
    for length, _, _ in SEGMENTS:
        out += quad(f, s0 * 1e-3, (s0 + length) * 1e-3, epsabs=0.0, epsrel=1e-13)[0]
        s0 += length
    return out


def test_segments_take_their_own_diameters(write_toml) -> None:
    limb = load_robot(write_toml(_piecewise())).limbs[0]
    radii = [r for s in limb.segments for r in (s.radius_base, s.radius_tip)]
    assert radii == pytest.approx([0.0255, 0.0225, 0.020, 0.018, 0.015, 0.015])
    rho = 1100.0
    analytic = rho * _integral(lambda z: math.pi * _radius(z) ** 2)
    assert limb.mass == pytest.approx(analytic, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            _piecewise("base_diameter_mm = 51\n"),
            r"base_diameter_mm.*absent when the segments give diameter_mm",
        ),
        (
            _piecewise().replace("diameter_mm = [40.0, 36.0]\n", ""),
            r"limbs\[0\]\.segments\[1\]\.diameter_mm.*in every segment once one segment gives it",
        ),
        (_piecewise().replace("[40.0, 36.0]", "[40.0]"), r"segments\[1\]\.diameter_mm.*a list of 2"),
        (_piecewise().replace("[40.0, 36.0]", "[40.0, -1]"), r"segments\[1\]\.diameter_mm.*\(mm\)"),
        (
            _piecewise('[limbs.actuators]\nkind = "chamber"\ncount = 3\noffset_mm = 16\narea_mm2 = 100\n'),
            r"offset_mm' = 16 .*\(0, 15\]",
        ),
    ],
    ids=["both_tapers", "one_missing", "one_number", "negative", "chamber_outside_the_narrowest"],
)
def test_bad_diameters_are_one_line_errors(write_toml, text, match) -> None:
    with pytest.raises(SpecError, match=match):
        load_robot(write_toml(text))


def test_a_linear_tendon_offset_must_fit_a_stepped_limb(write_toml) -> None:
    group = "[[limbs.tendons]]\nanchor_segment = 3\ncount = 3\n{offset}\nmax_tension_n = 10\nmax_speed_mm_s = 50\n"
    # 0.9 of the base and tip radii, linear in between: 15.9 mm at the step to 30 mm, over 0.95 x 15 mm
    with pytest.raises(SpecError, match=r"offset_fraction' = 0\.9 .*15\.9 mm at segment 3 \(radius 15 mm\)"):
        load_robot(write_toml(_piecewise(tendons=group.format(offset="offset_fraction = 0.9"))))
    with pytest.raises(SpecError, match=r"offset_mm' = 15 .*\(0, 14\.25\]"):
        load_robot(write_toml(_piecewise(tendons=group.format(offset="offset_mm = 15"))))
    limb = load_robot(write_toml(_piecewise(tendons=group.format(offset="offset_mm = 14")))).limbs[0]
    assert [t.offset_base for t in limb.tendons] == pytest.approx([0.014] * 3)


def _composite(urdf: Path, limb: LimbSpec, chain: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass (kg), centre of mass (m) and inertia about the limb base (kg m^2) of the elastomer links of a
    limb URDF loaded in PyBullet, straight at rest length (markers and payload left out)."""
    limb_name = limb.name
    q = Topology(chain).joint_vector(rest_configs(limb.segments), [s.sections for s in limb.segments])
    cid = pb.connect(pb.DIRECT)
    try:
        body = pb.loadURDF(str(urdf), useFixedBase=True, physicsClientId=cid)
        i = 0
        for j in range(pb.getNumJoints(body, physicsClientId=cid)):
            kind = pb.getJointInfo(body, j, physicsClientId=cid)[2]
            if kind == pb.JOINT_SPHERICAL:
                assert not np.any(q[i : i + 3])  # straight: every ball joint at rest
                i += 3
            elif kind != pb.JOINT_FIXED:
                pb.resetJointState(body, j, float(q[i]), physicsClientId=cid)
                i += 1
        assert i == len(q)
        markers = {naming.base_link(limb_name), naming.tip_link(limb_name)}
        mass, first, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        for j in range(pb.getNumJoints(body, physicsClientId=cid)):
            if pb.getJointInfo(body, j, physicsClientId=cid)[12].decode() in markers:
                continue
            info = pb.getDynamicsInfo(body, j, physicsClientId=cid)
            state = pb.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=cid)
            p = np.array(state[0])
            R = np.array(pb.getMatrixFromQuaternion(state[1], physicsClientId=cid)).reshape(3, 3)
            m = info[0]
            mass += m
            first += m * p
            inertia += R @ np.diag(info[2]) @ R.T + m * (p @ p * np.eye(3) - np.outer(p, p))
        return mass, first / mass, inertia
    finally:
        pb.disconnect(cid)


@pytest.mark.parametrize("chain", ["rrp", "rod"])
def test_urdf_masses_and_inertias_match_the_piecewise_frustum_integrals(write_toml, tmp_path, chain) -> None:
    """The straight limb's links sum to the integral of the piecewise cross-section's mass to round-off
    (both chains), and its centre of mass is the integral's (RRP chain; the rod chain's nearly massless
    links sit at its nodes, which moves its centre by ~0.3 %, a property of that chain, not of the taper).
    Every slice body's inertia about its centre, per unit mass, is the frustum integral over its own
    stretch of the piecewise radius (the slice bodies carry all but 1 % shares of their slice's mass):
    measured < 1e-9 relative."""
    spec = load_robot(write_toml(_piecewise()))
    limb = spec.limbs[0]
    out = write_urdf(spec, tmp_path / "urdf", chain=chain)
    mass, com, _ = _composite(out.limbs["arm"], limb, chain)
    rho = 1100.0
    m = rho * _integral(lambda z: math.pi * _radius(z) ** 2)
    z_com = rho * _integral(lambda z: math.pi * _radius(z) ** 2 * z) / m
    assert mass == pytest.approx(m, rel=1e-9)
    if chain == "rrp":
        np.testing.assert_allclose(com, [0.0, 0.0, z_com], rtol=0, atol=1e-9 * z_com)
    links = {
        link.get("name"): link.find("inertial") for link in ET.parse(out.limbs["arm"]).getroot().iter("link")
    }
    s0 = 0.0
    for s, seg in enumerate(limb.segments, start=1):
        h = seg.length / seg.sections
        for k in range(1, seg.sections + 1):
            a, b = s0 + (k - 1) * h, s0 + k * h
            ms = rho * quad(lambda z: math.pi * _radius(z) ** 2, a, b, epsrel=1e-13)[0]
            zc = rho * quad(lambda z: math.pi * _radius(z) ** 2 * z, a, b, epsrel=1e-13)[0] / ms
            izz = rho * quad(lambda z: math.pi * _radius(z) ** 4 / 2, a, b, epsrel=1e-13)[0]
            ixx = (
                rho
                * quad(
                    lambda z, zc=zc: math.pi * _radius(z) ** 2 * (_radius(z) ** 2 / 4 + (z - zc) ** 2),
                    a,
                    b,
                    epsrel=1e-13,
                )[0]
            )
            inertial = links[naming.section_prefix("arm", s, k)]
            m_body = float(inertial.find("mass").get("value"))
            share = m_body / ms
            assert round((1.0 - share) / 0.01) == pytest.approx((1.0 - share) / 0.01, abs=1e-6)  # 1 % shares
            got = inertial.find("inertia").attrib
            assert float(got["ixx"]) / m_body == pytest.approx(ixx / ms, rel=1e-9)
            assert float(got["izz"]) / m_body == pytest.approx(izz / ms, rel=1e-9)
        s0 += seg.length


def _stepped_beam(chain: str) -> tuple[float, float]:
    """Settled tip sag (m) of the stepped rod in air, and the piecewise beam's (Euler–Bernoulli for the
    RRP chain, Timoshenko with Cowper's kappa for the rod chain) from the integrals of the unit-load
    method: ``delta = int M (L - x) / EI dx + int V / (kappa G A) dx``, split at the step."""
    E, nu, L1, L = 1e7, 0.49, 0.15, 0.30
    w_density = (1070.0 - 1.204) * G

    def r(x: float) -> float:
        return 0.03 if x < L1 else 0.02

    def w(x: float) -> float:
        return w_density * math.pi * r(x) ** 2

    def pieces(f, a: float, b: float) -> float:
        cuts = [a] + [c for c in (L1,) if a < c < b] + [b]
        return sum(
            quad(f, lo, hi, epsabs=0.0, epsrel=1e-12)[0] for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)
        )

    def shear(x: float) -> float:
        return pieces(w, x, L)

    def moment(x: float) -> float:
        return pieces(lambda s: w(s) * (s - x), x, L)

    bending = pieces(lambda x: moment(x) * (L - x) / (E * math.pi * r(x) ** 4 / 4), 0.0, L)
    kappa, g_mod = 6 * (1 + nu) / (7 + 6 * nu), E / (2 * (1 + nu))
    shearing = pieces(lambda x: shear(x) / (kappa * g_mod * math.pi * r(x) ** 2), 0.0, L)
    with World(medium="air", chain=chain) as world:
        robot = world.load_robot(load_robot(STEPPED))
        z0 = robot.tip_pose("rod")[2, 3]
        world.step(1500)
        sag = z0 - robot.tip_pose("rod")[2, 3]
    return sag, bending + (shearing if chain == "rod" else 0.0)


@pytest.mark.parametrize(("chain", "error"), [("rod", -0.00195), ("rrp", 0.00099)])
def test_stepped_cantilever_matches_the_piecewise_beam(chain, error) -> None:
    """A 300 mm rod, 60 mm thick over its first half and 40 mm over its second, sagging under its weight:
    the chain's stiffness and weight follow the step. 20 sections a segment: measured -0.195 % (rod chain
    vs Timoshenko) and +0.099 % (RRP chain vs Euler–Bernoulli), the midpoint rule's O(1/N^2); the tip
    frame carries no mass (the reference has none either)."""
    sag, beam = _stepped_beam(chain)
    assert sag == pytest.approx(beam, rel=0.005)
    assert sag / beam - 1 == pytest.approx(error, abs=5e-4)
    assert sag / 0.3 < 0.02  # small deflection, where the linear theory holds


def test_the_joints_at_a_step_take_each_side_s_radius() -> None:
    """The rod chain's last node of segment 1 and first node of segment 2 are two half-section springs in
    series at the step: E I / (h / 2) with I of the 60 mm and of the 40 mm section."""
    limb = load_robot(STEPPED).limbs[0]
    K = joint_stiffness(limb, chain="rod")
    E, h = 1e7, 0.15 / 20
    per_node = 4  # two bending, torsion, then the chord's axial spring (none after the tip node)
    tip1 = 20 * per_node  # node 20 of segment 1: its tip node
    base2 = tip1 + 3  # node 0 of segment 2
    assert K[tip1] == pytest.approx(E * math.pi * 0.03**4 / 4 / (h / 2))
    assert K[base2] == pytest.approx(E * math.pi * 0.02**4 / 4 / (h / 2))


def test_fluid_volume_and_skin_follow_the_steps(write_toml) -> None:
    """Buoyancy, drag and added mass act on the slices' volumes: they sum to the piecewise integral. The
    skin steps with two rings at each junction: watertight, its volume the frustums' up to the ring
    polygon's area correction and the taper's sampling, O(1/n^2) (measured < 1e-3)."""
    limb = load_robot(write_toml(_piecewise())).limbs[0]
    analytic = _integral(lambda z: math.pi * _radius(z) ** 2)
    assert slice_volumes(limb).sum() == pytest.approx(analytic, rel=1e-12)
    assert frustum_volume(limb) == pytest.approx(analytic, rel=1e-12)
    skin = skin_mesh(limb, rest_configs(limb.segments), ring=64)
    assert skin.is_watertight
    assert skin.volume == pytest.approx(analytic, rel=1e-3)
