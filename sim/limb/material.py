"""A limb's material in the dynamic chain: the chords' shear compliance, the first natural frequency and
the Rayleigh damping tied to it, the slices' volumes and the medium's loads on them (buoyancy, Morison
drag, added mass): what :class:`pccbullet.sim.limb.dynamics.CompliantLimb` and the MJCF export
(:mod:`pccbullet.sim.mjcf.material`) build a limb's chain with. The physics:
:mod:`pccbullet.sim.limb.dynamics`.
"""

from __future__ import annotations

import math

import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.chain.rigid import MASS_COLUMN, ChainModel
from pccbullet.sim.medium import Medium
from pccbullet.sim.models.newton_euler.statics import shear_coefficient
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.geometry import frustum_mass_properties
from pccbullet.urdf_gen.specs import LimbSpec


def chord_shear_compliance(limb: LimbSpec) -> dict[str, float]:
    """Shear compliance ``1 / (kappa G A)`` (1/N) of every chord of ``limb``'s rod chain, by slice link name:
    ``A`` at the chord's mid radius, ``kappa = 6 (1 + nu) / (7 + 6 nu)`` (Cowper, solid circle)."""
    mat = limb.material
    kappa = shear_coefficient(mat.poisson_ratio)
    out = {}
    for s, seg in enumerate(limb.segments, start=1):
        n = seg.sections
        for k in range(1, n + 1):
            area = math.pi * seg.radius_at((k - 0.5) / n) ** 2
            out[naming.section_prefix(limb.name, s, k)] = 1.0 / (kappa * mat.shear_modulus * area)
    return out


def first_natural_frequency(K: FloatArray, M: FloatArray) -> float:
    """Lowest ``omega`` (rad/s) of ``M q'' + diag(K) q = 0``; ``K`` ``(n,)``, ``M`` ``(n, n)``."""
    from scipy.linalg import eigh

    ev = eigh(np.diag(K), M, eigvals_only=True, subset_by_index=[0, 0])
    return float(math.sqrt(max(ev[0], 1e-12)))


def slice_volumes(limb: LimbSpec) -> FloatArray:
    """Volume of each slice body of ``limb``, base to tip, ``(N_total,) float`` (m^3)."""
    vols = []
    for seg in limb.segments:
        n, L = seg.sections, seg.length
        for k in range(n):
            r0, r1 = seg.radius_at(k / n), seg.radius_at((k + 1) / n)
            vols.append(frustum_mass_properties(r0, r1, L / n, 1.0).mass)
    return np.array(vols)


def fluid_chain(chain: ChainModel, limb: LimbSpec, medium_: Medium) -> ChainModel:
    """``chain`` (``limb``'s URDF as a :class:`~pccbullet.sim.limb.chain.rigid.ChainModel`) with ``medium_``'s
    buoyancy on every link but the payload, Morison drag and added mass on the slices (see the module
    docstring of :mod:`pccbullet.sim.limb.dynamics`): what a
    :class:`~pccbullet.sim.limb.dynamics.CompliantLimb` solves with."""
    ratio = medium_.density / limb.material.density
    payload = limb.payload  # payloads get no buoyancy (their volume is unknown), as in Newton-Euler
    buoyancy = {
        name: ratio * float(chain.params[i, MASS_COLUMN])
        for i, name in enumerate(chain.links)
        if payload is None or name != payload.frame
    }
    slices = naming.section_body_links(limb)
    volumes = slice_volumes(limb)
    lengths = np.concatenate([[s.length / s.sections] * s.sections for s in limb.segments])
    diameters = 2.0 * np.sqrt(volumes / (math.pi * lengths))
    drag_n = 0.5 * medium_.density * medium_.drag_normal * diameters * lengths
    drag_a = 0.5 * medium_.density * medium_.drag_axial * math.pi * diameters * lengths
    added = medium_.added_mass_coefficient * medium_.density * volumes
    return chain.with_fluid(
        buoyancy,
        dict(zip(slices, drag_n.tolist(), strict=True)),
        dict(zip(slices, drag_a.tolist(), strict=True)),
        dict(zip(slices, added.tolist(), strict=True)),
        dict(zip(slices, (added * lengths**2 / 12.0).tolist(), strict=True)),
    )


def rayleigh_damping(
    limb: LimbSpec, chain: ChainModel, K: FloatArray, rest: FloatArray
) -> tuple[float, FloatArray]:
    """``(omega_1, C)``: the first natural frequency (rad/s) of ``chain`` (with its added mass) at the joint
    vector ``rest`` ``(n_dof,)`` with the joint stiffness ``K`` ``(n_dof,)``, and the Rayleigh damping
    ``C = (2 zeta / omega_1) K`` ``(n_dof,)`` that gives that mode the material's damping ratio."""
    q_rest = chain.positions(rest)
    M_rest = chain.mass_matrix(q_rest) + chain.added_mass_matrix(q_rest)
    omega_1 = first_natural_frequency(K, M_rest)
    return omega_1, (2.0 * limb.material.damping_ratio / omega_1) * K
