"""Compiled rigid-body dynamics of one limb's URDF chain, for the dynamic mode's 1 kHz controller.

PyBullet can compute a chain's inverse dynamics, mass matrix and link velocities, but each call from
Python costs 20-40 us (argument lists, result tuples), and the dynamic mode needs all of them every
step for every limb. This module reads the limb's URDF (the same file PyBullet loaded) into flat arrays
and evaluates, in ``numba`` kernels:

* :func:`bias_and_fluid`: recursive Newton-Euler with ``qdd = 0``: the Coriolis, centrifugal and gravity
  torques ``h(q, qd)`` (what ``calculateInverseDynamics`` returns), and in the same backward pass the
  generalized forces ``J^T f`` of the fluid on every link: buoyancy ``-rho_w / rho m g`` at the centre
  of mass and Morison drag on the slices;
* :func:`mass_matrix`: the joint-space inertia ``M(q)`` by the composite-rigid-body algorithm;
* :func:`spring_torques`: one step of the implicit spring-damper of :mod:`sim.dynamics`, its linear
  system ``(M + dt C + dt^2 K) qdd = b`` solved by the articulated-body algorithm with the diagonal
  terms as joint armature (:func:`implicit_solve`): exact ``M`` every step, O(n), nothing to refresh.

Everything is expressed in the limb's base frame (fixed), with gravity given in base axes; link
frames are URDF link frames (joint frame = child link frame), each link's inertia is about its centre
of mass. Joint types: fixed, revolute, prismatic (what the PCC chains use).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

from urdf_gen.errors import ConfigurationError
from urdf_gen.types import FloatArray

FIXED, REVOLUTE, PRISMATIC = 0, 1, 2
_JOINT_TYPES = {"fixed": FIXED, "revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}

# Columns of ChainModel.params (one row per link):
_R_PJ = slice(0, 9)  # rotation parent link frame -> joint frame, row-major
_P_PJ = slice(9, 12)  # joint origin in the parent link frame
_AXIS = slice(12, 15)  # joint axis in the joint frame (unit)
_MASS = 15
MASS_COLUMN = _MASS
_COM = slice(16, 19)  # centre of mass in the link frame
_INERTIA = slice(19, 28)  # inertia about the centre of mass, link axes, row-major
_BUOY = 28  # buoyancy force per unit gravity (kg): rho_w / rho * mass for elastomer links
_DRAG_N = 29  # 1/2 rho_w Cd d l (kg/m): drag across the slice axis (link z)
_DRAG_A = 30  # 1/2 rho_w Cd_axial pi d l (kg/m): drag along it
N_PARAMS = 31


def _rpy_matrix(rpy: Sequence[float]) -> FloatArray:
    """URDF roll-pitch-yaw -> rotation matrix ``Rz(y) Ry(p) Rx(r)``."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _floats(text: str | None, n: int, where: str) -> list[float]:
    values = [float(v) for v in (text or " ".join(["0"] * n)).split()]
    if len(values) != n:
        raise ConfigurationError(f"{where}: expected {n} numbers, got {text!r}")
    return values


@dataclass(frozen=True)
class ChainModel:
    """A fixed-base URDF tree as flat arrays, links ordered parents first.

    Attributes:
        links: child link names, one per non-root link.
        parent: index of each link's parent in ``links``, -1 for the root, ``(n,) int``.
        jtype: joint type per link (``FIXED``, ``REVOLUTE``, ``PRISMATIC``), ``(n,) int``.
        dof: index of the link's joint in the joint vector, -1 for fixed joints, ``(n,) int``.
        params: per-link numbers, ``(n, N_PARAMS) float`` (see the column slices in this module);
            the fluid columns are zero until :meth:`with_fluid`.
        n_dof: length of the joint vector.
    """

    links: tuple[str, ...]
    parent: np.ndarray
    jtype: np.ndarray
    dof: np.ndarray
    params: np.ndarray
    n_dof: int

    @classmethod
    def from_urdf(cls, path: str | Path, joint_order: Sequence[str]) -> ChainModel:
        """Read ``path``; ``joint_order`` names the movable joints in joint-vector order (all of them)."""
        root = ET.parse(path).getroot()
        link_inertia: dict[str, tuple[float, FloatArray, FloatArray]] = {}
        for link in root.findall("link"):
            name = link.get("name", "")
            inertial = link.find("inertial")
            if inertial is None:
                link_inertia[name] = (0.0, np.zeros(3), np.zeros((3, 3)))
                continue
            where = f"{path}: link {name!r} inertial"
            origin = inertial.find("origin")
            xyz = _floats(origin.get("xyz") if origin is not None else None, 3, where)
            rpy = _floats(origin.get("rpy") if origin is not None else None, 3, where)
            mass_el, inertia_el = inertial.find("mass"), inertial.find("inertia")
            mass = float(mass_el.get("value", "0")) if mass_el is not None else 0.0
            i_attr = dict(inertia_el.attrib) if inertia_el is not None else {}
            xx, xy, xz, yy, yz, zz = (
                float(i_attr.get(k, "0")) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
            )
            I_frame = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            R = _rpy_matrix(rpy)
            link_inertia[name] = (mass, np.array(xyz), R @ I_frame @ R.T)
        joints = {}
        for joint in root.findall("joint"):
            parent_el, child_el = joint.find("parent"), joint.find("child")
            if parent_el is None or child_el is None:
                raise ConfigurationError(f"{path}: joint {joint.get('name')!r} lacks a parent or child")
            joints[child_el.get("link", "")] = joint
        children: dict[str, list[str]] = {}
        for child, joint in joints.items():
            children.setdefault(joint.find("parent").get("link", ""), []).append(child)  # type: ignore[union-attr]
        roots = [name for name in link_inertia if name not in joints]
        if len(roots) != 1:
            raise ConfigurationError(f"{path}: expected one root link, found {roots}")
        order: list[str] = []
        stack = list(reversed(children.get(roots[0], [])))
        while stack:  # depth first, parents before children
            name = stack.pop()
            order.append(name)
            stack.extend(reversed(children.get(name, [])))
        dof_of = {name: i for i, name in enumerate(joint_order)}
        n = len(order)
        parent = np.full(n, -1, dtype=np.int64)
        jtype = np.zeros(n, dtype=np.int64)
        dof = np.full(n, -1, dtype=np.int64)
        params = np.zeros((n, N_PARAMS))
        index = {name: i for i, name in enumerate(order)}
        seen = set()
        for i, name in enumerate(order):
            joint = joints[name]
            jname, kind = joint.get("name", ""), joint.get("type", "")
            if kind not in _JOINT_TYPES:
                raise ConfigurationError(
                    f"{path}: joint {jname!r} type = {kind!r} is not supported; "
                    f"allowed: {', '.join(_JOINT_TYPES)}"
                )
            jtype[i] = _JOINT_TYPES[kind]
            parent[i] = index.get(joint.find("parent").get("link", ""), -1)  # type: ignore[union-attr]
            if jtype[i] != FIXED:
                if jname not in dof_of:
                    raise ConfigurationError(f"{path}: movable joint {jname!r} is not in the joint order")
                dof[i] = dof_of[jname]
                seen.add(jname)
            where = f"{path}: joint {jname!r}"
            origin = joint.find("origin")
            xyz = _floats(origin.get("xyz") if origin is not None else None, 3, where)
            rpy = _floats(origin.get("rpy") if origin is not None else None, 3, where)
            axis_el = joint.find("axis")
            axis = np.array(_floats(axis_el.get("xyz") if axis_el is not None else "1 0 0", 3, where))
            params[i, _R_PJ] = _rpy_matrix(rpy).ravel()
            params[i, _P_PJ] = xyz
            norm = float(np.linalg.norm(axis))
            if jtype[i] != FIXED and not norm > 0.0:
                raise ConfigurationError(
                    f"{where}: axis = {axis.tolist()} is invalid; allowed: a nonzero vector"
                )
            params[i, _AXIS] = axis / norm if norm > 0.0 else axis
            mass, com, inertia = link_inertia[name]
            params[i, _MASS] = mass
            params[i, _COM] = com
            params[i, _INERTIA] = inertia.ravel()
        missing = [j for j in joint_order if j not in seen]
        if missing:
            raise ConfigurationError(f"{path}: joints {missing} of the joint order are not in the file")
        return cls(tuple(order), parent, jtype, dof, params, len(joint_order))

    def with_fluid(
        self, buoyancy: dict[str, float], drag_normal: dict[str, float], drag_axial: dict[str, float]
    ) -> ChainModel:
        """A copy with fluid coefficients per link name (links not named get none).

        Args:
            buoyancy: buoyancy force per unit gravity (kg), i.e. displaced fluid mass.
            drag_normal: ``1/2 rho_w Cd d l`` (kg/m), drag across the link's z axis.
            drag_axial: ``1/2 rho_w Cd_a pi d l`` (kg/m), drag along it.
        """
        params = self.params.copy()
        index = {name: i for i, name in enumerate(self.links)}
        for column, values in ((_BUOY, buoyancy), (_DRAG_N, drag_normal), (_DRAG_A, drag_axial)):
            for name, value in values.items():
                if name not in index:
                    raise ConfigurationError(f"chain has no link {name!r}")
                params[index[name], column] = value
        return ChainModel(self.links, self.parent, self.jtype, self.dof, params, self.n_dof)

    def bias_and_fluid(
        self, q: FloatArray, qd: FloatArray, gravity: Sequence[float]
    ) -> tuple[FloatArray, FloatArray]:
        """``(h, tau_fluid)``: Coriolis+gravity torques and fluid generalized forces, each ``(n_dof,)``."""
        h, tau_f = np.zeros(self.n_dof), np.zeros(self.n_dof)
        g = np.asarray(gravity, float)
        bias_and_fluid(self.parent, self.jtype, self.dof, self.params, q, qd, g, h, tau_f)
        return h, tau_f

    def mass_matrix(self, q: FloatArray) -> FloatArray:
        """Joint-space inertia at ``q``, ``(n_dof, n_dof)``."""
        M = np.zeros((self.n_dof, self.n_dof))
        mass_matrix(self.parent, self.jtype, self.dof, self.params, q, M)
        return M

    def com_positions(self, q: FloatArray) -> FloatArray:
        """Centres of mass of the links in the base frame, ``(n, 3)``."""
        R = np.zeros((len(self.links), 3, 3))
        p = np.zeros((len(self.links), 3))
        _kinematics(self.parent, self.jtype, self.dof, self.params, q, R, p)
        return p + np.einsum("nij,nj->ni", R, self.params[:, _COM])


@numba.njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):  # type: ignore[no-untyped-def]
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@numba.njit(cache=True)
def _kinematics(parent, jtype, dof, params, q, R, p) -> None:  # type: ignore[no-untyped-def]
    """Link frames in the base frame: rotations ``R (n, 3, 3)`` and origins ``p (n, 3)``."""
    n = parent.shape[0]
    R_j = np.empty((3, 3))
    rot = np.empty((3, 3))
    for i in range(n):
        pa = parent[i]
        for a in range(3):
            for b in range(3):
                if pa < 0:
                    R_j[a, b] = params[i, 3 * a + b]
                else:
                    R_j[a, b] = (
                        R[pa, a, 0] * params[i, b]
                        + R[pa, a, 1] * params[i, 3 + b]
                        + R[pa, a, 2] * params[i, 6 + b]
                    )
            if pa < 0:
                p[i, a] = params[i, 9 + a]
            else:
                p[i, a] = p[pa, a] + (
                    R[pa, a, 0] * params[i, 9] + R[pa, a, 1] * params[i, 10] + R[pa, a, 2] * params[i, 11]
                )
        x, y, z = params[i, 12], params[i, 13], params[i, 14]
        if jtype[i] == 1:  # R = R_j Rot(axis, q) (Rodrigues)
            angle = q[dof[i]]
            c, s = math.cos(angle), math.sin(angle)
            t = 1.0 - c
            rot[0, 0] = c + x * x * t
            rot[0, 1] = x * y * t - z * s
            rot[0, 2] = x * z * t + y * s
            rot[1, 0] = y * x * t + z * s
            rot[1, 1] = c + y * y * t
            rot[1, 2] = y * z * t - x * s
            rot[2, 0] = z * x * t - y * s
            rot[2, 1] = z * y * t + x * s
            rot[2, 2] = c + z * z * t
            for a in range(3):
                for b in range(3):
                    R[i, a, b] = R_j[a, 0] * rot[0, b] + R_j[a, 1] * rot[1, b] + R_j[a, 2] * rot[2, b]
        else:
            for a in range(3):
                for b in range(3):
                    R[i, a, b] = R_j[a, b]
            if jtype[i] == 2:
                qi = q[dof[i]]
                for a in range(3):
                    p[i, a] += (R_j[a, 0] * x + R_j[a, 1] * y + R_j[a, 2] * z) * qi


@numba.njit(cache=True)
def bias_and_fluid(parent, jtype, dof, params, q, qd, gravity, h, tau_f) -> None:  # type: ignore[no-untyped-def]
    """Recursive Newton-Euler (``qdd = 0``) with fluid loads; writes ``h`` and ``tau_f`` (``(n_dof,)``).

    ``h`` is the torque that holds the chain at ``qdd = 0`` against gravity and velocity products (the
    fluid excluded); ``tau_f`` the generalized force the fluid exerts (buoyancy up, drag against the
    centre-of-mass velocity of each link, split into its z-axis and normal parts).
    """
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f)


@numba.njit(cache=True)
def _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f) -> None:  # type: ignore[no-untyped-def]
    """:func:`bias_and_fluid` on link frames ``R``, ``p`` from :func:`_kinematics`."""
    n = parent.shape[0]
    work = np.empty((13, n, 3))  # one allocation for all per-link vectors
    w = work[0]  # angular velocity
    v = work[1]  # velocity of the link origin
    al = work[2]  # angular acceleration
    a = work[3]  # acceleration of the link origin (gravity as a base acceleration)
    aw = work[4]  # joint axis, base axes
    d = work[5]  # link origin -> centre of mass, base axes
    F = work[6]  # force on the link (about its centre of mass: N)
    N = work[7]
    Fe = work[8]  # fluid force at the centre of mass
    for i in range(n):
        pa = parent[i]
        axis = params[i, 12:15]
        for k in range(3):
            aw[i, k] = R[i, k, 0] * axis[0] + R[i, k, 1] * axis[1] + R[i, k, 2] * axis[2]
        if pa < 0:
            wp0, wp1, wp2 = 0.0, 0.0, 0.0
            vp0, vp1, vp2 = 0.0, 0.0, 0.0
            lp0, lp1, lp2 = 0.0, 0.0, 0.0
            ap0, ap1, ap2 = -gravity[0], -gravity[1], -gravity[2]
            r0, r1, r2 = p[i, 0], p[i, 1], p[i, 2]
        else:
            wp0, wp1, wp2 = w[pa, 0], w[pa, 1], w[pa, 2]
            vp0, vp1, vp2 = v[pa, 0], v[pa, 1], v[pa, 2]
            lp0, lp1, lp2 = al[pa, 0], al[pa, 1], al[pa, 2]
            ap0, ap1, ap2 = a[pa, 0], a[pa, 1], a[pa, 2]
            r0, r1, r2 = p[i, 0] - p[pa, 0], p[i, 1] - p[pa, 1], p[i, 2] - p[pa, 2]
        # origin velocity and acceleration carried from the parent
        c0, c1, c2 = _cross(wp0, wp1, wp2, r0, r1, r2)
        v0, v1, v2 = vp0 + c0, vp1 + c1, vp2 + c2
        x0, x1, x2 = _cross(lp0, lp1, lp2, r0, r1, r2)
        y0, y1, y2 = _cross(wp0, wp1, wp2, c0, c1, c2)
        a0, a1, a2 = ap0 + x0 + y0, ap1 + x1 + y1, ap2 + x2 + y2
        w0, w1, w2 = wp0, wp1, wp2
        l0, l1, l2 = lp0, lp1, lp2
        if jtype[i] != 0:
            u = qd[dof[i]]
            u0, u1, u2 = aw[i, 0] * u, aw[i, 1] * u, aw[i, 2] * u
            z0, z1, z2 = _cross(wp0, wp1, wp2, u0, u1, u2)
            if jtype[i] == 1:
                w0, w1, w2 = w0 + u0, w1 + u1, w2 + u2
                l0, l1, l2 = l0 + z0, l1 + z1, l2 + z2
            else:
                v0, v1, v2 = v0 + u0, v1 + u1, v2 + u2
                a0, a1, a2 = a0 + 2.0 * z0, a1 + 2.0 * z1, a2 + 2.0 * z2
        w[i, 0], w[i, 1], w[i, 2] = w0, w1, w2
        v[i, 0], v[i, 1], v[i, 2] = v0, v1, v2
        al[i, 0], al[i, 1], al[i, 2] = l0, l1, l2
        a[i, 0], a[i, 1], a[i, 2] = a0, a1, a2
        # centre of mass
        com = params[i, 16:19]
        for k in range(3):
            d[i, k] = R[i, k, 0] * com[0] + R[i, k, 1] * com[1] + R[i, k, 2] * com[2]
        d0, d1, d2 = d[i, 0], d[i, 1], d[i, 2]
        e0, e1, e2 = _cross(w0, w1, w2, d0, d1, d2)
        vc0, vc1, vc2 = v0 + e0, v1 + e1, v2 + e2
        f0, f1, f2 = _cross(l0, l1, l2, d0, d1, d2)
        g0, g1, g2 = _cross(w0, w1, w2, e0, e1, e2)
        m = params[i, 15]
        F[i, 0], F[i, 1], F[i, 2] = m * (a0 + f0 + g0), m * (a1 + f1 + g1), m * (a2 + f2 + g2)
        # rotational: I_w al + w x (I_w w), I_w = R I R^T, evaluated in link axes then rotated back
        Ic = params[i, 19:28]
        bl0 = R[i, 0, 0] * l0 + R[i, 1, 0] * l1 + R[i, 2, 0] * l2  # R^T al
        bl1 = R[i, 0, 1] * l0 + R[i, 1, 1] * l1 + R[i, 2, 1] * l2
        bl2 = R[i, 0, 2] * l0 + R[i, 1, 2] * l1 + R[i, 2, 2] * l2
        bw0 = R[i, 0, 0] * w0 + R[i, 1, 0] * w1 + R[i, 2, 0] * w2  # R^T w
        bw1 = R[i, 0, 1] * w0 + R[i, 1, 1] * w1 + R[i, 2, 1] * w2
        bw2 = R[i, 0, 2] * w0 + R[i, 1, 2] * w1 + R[i, 2, 2] * w2
        Iw0 = Ic[0] * bw0 + Ic[1] * bw1 + Ic[2] * bw2
        Iw1 = Ic[3] * bw0 + Ic[4] * bw1 + Ic[5] * bw2
        Iw2 = Ic[6] * bw0 + Ic[7] * bw1 + Ic[8] * bw2
        gw0, gw1, gw2 = _cross(bw0, bw1, bw2, Iw0, Iw1, Iw2)
        nl0 = Ic[0] * bl0 + Ic[1] * bl1 + Ic[2] * bl2 + gw0
        nl1 = Ic[3] * bl0 + Ic[4] * bl1 + Ic[5] * bl2 + gw1
        nl2 = Ic[6] * bl0 + Ic[7] * bl1 + Ic[8] * bl2 + gw2
        for k in range(3):
            N[i, k] = R[i, k, 0] * nl0 + R[i, k, 1] * nl1 + R[i, k, 2] * nl2
        # fluid: buoyancy against gravity, drag against the centre-of-mass velocity
        buoy = params[i, 28]
        fe0, fe1, fe2 = -buoy * gravity[0], -buoy * gravity[1], -buoy * gravity[2]
        cn, ca = params[i, 29], params[i, 30]
        if cn != 0.0 or ca != 0.0:
            t0, t1, t2 = R[i, 0, 2], R[i, 1, 2], R[i, 2, 2]
            va = vc0 * t0 + vc1 * t1 + vc2 * t2
            n0, n1, n2 = vc0 - va * t0, vc1 - va * t1, vc2 - va * t2
            vn = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
            fe0 -= cn * vn * n0 + ca * abs(va) * va * t0
            fe1 -= cn * vn * n1 + ca * abs(va) * va * t1
            fe2 -= cn * vn * n2 + ca * abs(va) * va * t2
        Fe[i, 0], Fe[i, 1], Fe[i, 2] = fe0, fe1, fe2
    # backward: forces and moments (about the link origin) through each joint
    work[9:13] = 0.0
    f = work[9]  # force through the joint (from the parent)
    mo = work[10]  # its moment about the link origin
    ff = work[11]  # the same for the fluid loads alone
    mf = work[12]
    for i in range(n - 1, -1, -1):
        d0, d1, d2 = d[i, 0], d[i, 1], d[i, 2]
        c0, c1, c2 = _cross(d0, d1, d2, F[i, 0], F[i, 1], F[i, 2])
        e0, e1, e2 = _cross(d0, d1, d2, Fe[i, 0], Fe[i, 1], Fe[i, 2])
        mo[i, 0] += N[i, 0] + c0
        mo[i, 1] += N[i, 1] + c1
        mo[i, 2] += N[i, 2] + c2
        mf[i, 0] += e0
        mf[i, 1] += e1
        mf[i, 2] += e2
        for k in range(3):
            f[i, k] += F[i, k]
            ff[i, k] += Fe[i, k]
        j = dof[i]
        if j >= 0:
            if jtype[i] == 1:
                h[j] = aw[i, 0] * mo[i, 0] + aw[i, 1] * mo[i, 1] + aw[i, 2] * mo[i, 2]
                tau_f[j] = aw[i, 0] * mf[i, 0] + aw[i, 1] * mf[i, 1] + aw[i, 2] * mf[i, 2]
            else:
                h[j] = aw[i, 0] * f[i, 0] + aw[i, 1] * f[i, 1] + aw[i, 2] * f[i, 2]
                tau_f[j] = aw[i, 0] * ff[i, 0] + aw[i, 1] * ff[i, 1] + aw[i, 2] * ff[i, 2]
        pa = parent[i]
        if pa >= 0:
            r0, r1, r2 = p[i, 0] - p[pa, 0], p[i, 1] - p[pa, 1], p[i, 2] - p[pa, 2]
            c0, c1, c2 = _cross(r0, r1, r2, f[i, 0], f[i, 1], f[i, 2])
            e0, e1, e2 = _cross(r0, r1, r2, ff[i, 0], ff[i, 1], ff[i, 2])
            mo[pa, 0] += mo[i, 0] + c0
            mo[pa, 1] += mo[i, 1] + c1
            mo[pa, 2] += mo[i, 2] + c2
            mf[pa, 0] += mf[i, 0] + e0
            mf[pa, 1] += mf[i, 1] + e1
            mf[pa, 2] += mf[i, 2] + e2
            for k in range(3):
                f[pa, k] += f[i, k]
                ff[pa, k] += ff[i, k]


@numba.njit(cache=True)
def _inertia_about_origin(params, R, p, i, out):  # type: ignore[no-untyped-def]
    """Link ``i``'s rotational inertia about the base origin, base axes, into ``out (3, 3)``:
    ``R Ic R^T + m (|c|^2 E - c c^T)``; returns its centre of mass ``c``."""
    m = params[i, 15]
    com = params[i, 16:19]
    Ic = params[i, 19:28]
    c0 = p[i, 0] + R[i, 0, 0] * com[0] + R[i, 0, 1] * com[1] + R[i, 0, 2] * com[2]
    c1 = p[i, 1] + R[i, 1, 0] * com[0] + R[i, 1, 1] * com[1] + R[i, 1, 2] * com[2]
    c2 = p[i, 2] + R[i, 2, 0] * com[0] + R[i, 2, 1] * com[1] + R[i, 2, 2] * com[2]
    cc = c0 * c0 + c1 * c1 + c2 * c2
    for a in range(3):
        ca = c0 if a == 0 else (c1 if a == 1 else c2)
        for b in range(3):
            cb = c0 if b == 0 else (c1 if b == 1 else c2)
            acc = 0.0
            for k in range(3):
                acc += R[i, a, k] * (
                    Ic[3 * k] * R[i, b, 0] + Ic[3 * k + 1] * R[i, b, 1] + Ic[3 * k + 2] * R[i, b, 2]
                )
            out[a, b] = acc + m * ((cc if a == b else 0.0) - ca * cb)
    return c0, c1, c2


@numba.njit(cache=True)
def mass_matrix(parent, jtype, dof, params, q, M) -> None:  # type: ignore[no-untyped-def]
    """Composite-rigid-body joint-space inertia; writes ``M (n_dof, n_dof)``."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    m_c = np.zeros(n)  # subtree mass
    s_c = np.zeros((n, 3))  # subtree first moment about the base origin
    J_c = np.zeros((n, 3, 3))  # subtree inertia about the base origin
    for i in range(n):
        m = params[i, 15]
        c0, c1, c2 = _inertia_about_origin(params, R, p, i, J_c[i])
        s_c[i, 0], s_c[i, 1], s_c[i, 2] = m * c0, m * c1, m * c2
        m_c[i] = m
    for i in range(n - 1, -1, -1):
        pa = parent[i]
        if pa >= 0:
            m_c[pa] += m_c[i]
            s_c[pa] += s_c[i]
            J_c[pa] += J_c[i]
    for i in range(n):
        di = dof[i]
        if di < 0 or m_c[i] <= 0.0:
            continue
        mt = m_c[i]
        g0, g1, g2 = s_c[i, 0] / mt, s_c[i, 1] / mt, s_c[i, 2] / mt  # subtree centre of mass
        axis = params[i, 12:15]
        u0 = R[i, 0, 0] * axis[0] + R[i, 0, 1] * axis[1] + R[i, 0, 2] * axis[2]
        u1 = R[i, 1, 0] * axis[0] + R[i, 1, 1] * axis[1] + R[i, 1, 2] * axis[2]
        u2 = R[i, 2, 0] * axis[0] + R[i, 2, 1] * axis[1] + R[i, 2, 2] * axis[2]
        # force F and moment Nc (about the subtree's centre of mass) for a unit joint acceleration
        if jtype[i] == 1:
            x0, x1, x2 = _cross(u0, u1, u2, g0 - p[i, 0], g1 - p[i, 1], g2 - p[i, 2])
            F0, F1, F2 = mt * x0, mt * x1, mt * x2
            # inertia about the subtree's centre of mass: J_c - m (|g|^2 E - g g^T)
            gg = g0 * g0 + g1 * g1 + g2 * g2
            J = J_c[i]
            gu = g0 * u0 + g1 * u1 + g2 * u2
            Nc0 = J[0, 0] * u0 + J[0, 1] * u1 + J[0, 2] * u2 - mt * (gg * u0 - g0 * gu)
            Nc1 = J[1, 0] * u0 + J[1, 1] * u1 + J[1, 2] * u2 - mt * (gg * u1 - g1 * gu)
            Nc2 = J[2, 0] * u0 + J[2, 1] * u1 + J[2, 2] * u2 - mt * (gg * u2 - g2 * gu)
        else:
            F0, F1, F2 = mt * u0, mt * u1, mt * u2
            Nc0, Nc1, Nc2 = 0.0, 0.0, 0.0
        j = i
        while j >= 0:  # the joint itself and its ancestors
            dj = dof[j]
            if dj >= 0:
                axis_j = params[j, 12:15]
                b0 = R[j, 0, 0] * axis_j[0] + R[j, 0, 1] * axis_j[1] + R[j, 0, 2] * axis_j[2]
                b1 = R[j, 1, 0] * axis_j[0] + R[j, 1, 1] * axis_j[1] + R[j, 1, 2] * axis_j[2]
                b2 = R[j, 2, 0] * axis_j[0] + R[j, 2, 1] * axis_j[1] + R[j, 2, 2] * axis_j[2]
                if jtype[j] == 1:
                    c0, c1, c2 = _cross(g0 - p[j, 0], g1 - p[j, 1], g2 - p[j, 2], F0, F1, F2)
                    val = b0 * (Nc0 + c0) + b1 * (Nc1 + c1) + b2 * (Nc2 + c2)
                else:
                    val = b0 * F0 + b1 * F1 + b2 * F2
                M[dj, di] = val
                M[di, dj] = val
            j = parent[j]


@numba.njit(cache=True)
def spring_torques(  # type: ignore[no-untyped-def]
    parent, jtype, dof, params, q, qd, gravity, target, offset, K, C, dt, tau
) -> None:
    """One implicit spring-damper step (see :mod:`sim.dynamics`); writes the joint torques ``tau``.

    ``(M + dt C + dt^2 K) qdd = s + offset + tau_fluid - h`` with ``s = -K (q + dt qd - q*) - C qd``,
    solved by :func:`_articulated_solve` at the current ``q`` (exact ``M``, O(n));
    ``tau = s - dt (C + dt K) qdd + offset + tau_fluid``.
    """
    n = parent.shape[0]
    nd = q.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    h = np.zeros(nd)
    tau_f = np.zeros(nd)
    _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f)
    ext = np.empty(nd)
    x = np.empty(nd)
    arm = np.empty(nd)
    for k in range(nd):
        s = -K[k] * (q[k] + dt * qd[k] - target[k]) - C[k] * qd[k]
        ext[k] = s + offset[k] + tau_f[k]
        x[k] = ext[k] - h[k]
        arm[k] = dt * (C[k] + dt * K[k])
    _articulated_solve(parent, jtype, dof, params, R, p, arm, x)
    for k in range(nd):
        tau[k] = ext[k] - arm[k] * x[k]


@numba.njit(cache=True)
def implicit_solve(parent, jtype, dof, params, q, armature, b) -> FloatArray:  # type: ignore[no-untyped-def]
    """``(M(q) + diag(armature))^-1 b`` by the articulated-body recursion, ``(n_dof,)``."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    x = b.copy()
    _articulated_solve(parent, jtype, dof, params, R, p, armature, x)
    return x


@numba.njit(cache=True)
def _articulated_solve(parent, jtype, dof, params, R, p, armature, x) -> None:  # type: ignore[no-untyped-def]
    """Solve ``(M + diag(armature)) y = x`` in place: Featherstone's articulated-body algorithm at rest
    without gravity, the diagonal terms as joint armature.

    Spatial vectors ``[angular; linear]`` about the base origin in base axes, so no frame changes
    between links: rigid-body inertia ``[[Ic + m [c]x [c]x^T, m [c]x], [m [c]x^T, m 1]]``, motion
    subspace ``[u; p x u]`` (revolute about ``u`` through ``p``) or ``[0; u]`` (prismatic). Exact for any
    configuration, O(n), no factorization to keep.
    """
    n = parent.shape[0]
    IA = np.zeros((n, 6, 6))  # articulated inertias
    pA = np.zeros((n, 6))  # articulated bias forces (from the right-hand side)
    S = np.zeros((n, 6))
    U = np.zeros((n, 6))
    dd = np.zeros(n)
    uu = np.zeros(n)
    for i in range(n):  # rigid-body spatial inertias and motion subspaces
        m = params[i, 15]
        c0, c1, c2 = _inertia_about_origin(params, R, p, i, IA[i, :3, :3])
        for a in range(3):
            IA[i, 3 + a, 3 + a] = m
        # m [c]x (upper right) and its transpose (lower left)
        IA[i, 0, 4], IA[i, 0, 5] = -m * c2, m * c1
        IA[i, 1, 3], IA[i, 1, 5] = m * c2, -m * c0
        IA[i, 2, 3], IA[i, 2, 4] = -m * c1, m * c0
        for a in range(3):
            for b in range(3):
                IA[i, 3 + b, a] = IA[i, a, 3 + b]
        if jtype[i] != 0:
            axis = params[i, 12:15]
            u0 = R[i, 0, 0] * axis[0] + R[i, 0, 1] * axis[1] + R[i, 0, 2] * axis[2]
            u1 = R[i, 1, 0] * axis[0] + R[i, 1, 1] * axis[1] + R[i, 1, 2] * axis[2]
            u2 = R[i, 2, 0] * axis[0] + R[i, 2, 1] * axis[1] + R[i, 2, 2] * axis[2]
            if jtype[i] == 1:
                S[i, 0], S[i, 1], S[i, 2] = u0, u1, u2
                S[i, 3], S[i, 4], S[i, 5] = _cross(p[i, 0], p[i, 1], p[i, 2], u0, u1, u2)
            else:
                S[i, 3], S[i, 4], S[i, 5] = u0, u1, u2
    for i in range(n - 1, -1, -1):  # tip to base: articulated inertias
        pa = parent[i]
        j = dof[i]
        if j >= 0:
            d = armature[j]
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += IA[i, a, b] * S[i, b]
                U[i, a] = acc
                d += S[i, a] * acc
            u = x[j]
            for a in range(6):
                u -= S[i, a] * pA[i, a]
            dd[i], uu[i] = d, u
            if pa >= 0:
                r = u / d
                inv = 1.0 / d
                for a in range(6):
                    pA[pa, a] += pA[i, a] + U[i, a] * r
                    Ua = U[i, a] * inv
                    for b in range(a, 6):  # symmetric: the upper triangle, mirrored below
                        IA[pa, a, b] += IA[i, a, b] - Ua * U[i, b]
                for a in range(1, 6):
                    for b in range(a):
                        IA[pa, a, b] = IA[pa, b, a]
        elif pa >= 0:  # fixed joint: rigidly part of the parent
            for a in range(6):
                pA[pa, a] += pA[i, a]
                for b in range(6):
                    IA[pa, a, b] += IA[i, a, b]
    acc6 = np.zeros((n, 6))  # base to tip: spatial accelerations
    for i in range(n):
        pa = parent[i]
        j = dof[i]
        for a in range(6):
            acc6[i, a] = acc6[pa, a] if pa >= 0 else 0.0
        if j >= 0:
            y = uu[i]
            for a in range(6):
                y -= U[i, a] * acc6[i, a]
            y /= dd[i]
            x[j] = y
            for a in range(6):
                acc6[i, a] += S[i, a] * y
