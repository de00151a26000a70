"""Compiled rigid-body dynamics of one limb's URDF chain, for the dynamic mode's 1 kHz controller.

PyBullet can compute a chain's inverse dynamics, mass matrix and link velocities, but each call from
Python costs 20-40 us (argument lists, result tuples), and the dynamic mode needs all of them every
step for every limb. This module reads the limb's URDF (the same file PyBullet loaded) into flat arrays
and evaluates, in ``numba`` kernels:

* :func:`~pccbullet.sim.limb.chain.kernels.bias_and_fluid`: recursive Newton-Euler with ``qdd = 0``: the
  Coriolis, centrifugal and gravity torques ``h(q, qd)`` (what ``calculateInverseDynamics`` returns), and
  in the same backward pass the generalized forces ``J^T f`` of the fluid on every link: buoyancy
  ``-rho_w / rho m g`` at the centre of mass and Morison drag on the slices;
* :func:`~pccbullet.sim.limb.chain.kernels.mass_matrix`: the joint-space inertia ``M(q)`` by the
  composite-rigid-body algorithm;
* :func:`~pccbullet.sim.limb.chain.solve.spring_torques`: one step of the implicit spring-damper of
  :mod:`pccbullet.sim.limb.dynamics`, its linear system ``(M + dt C + dt^2 K) qdd = b`` solved by the
  articulated-body algorithm with the diagonal terms as joint armature
  (:func:`~pccbullet.sim.limb.chain.solve.implicit_solve`): exact ``M`` every step, O(n), nothing to refresh.

Everything is expressed in the limb's base frame (fixed), with gravity given in base axes; link
frames are URDF link frames (joint frame = child link frame), each link's inertia is about its centre
of mass. Joint types: fixed, revolute, prismatic (the RRP chain) and spherical (the rod chain's nodes;
four position entries, a quaternion, and three velocity entries, PyBullet's layout).

Where things live: this module reads the URDF (:class:`ChainModel`); the kernels are in
:mod:`pccbullet.sim.limb.chain.kernels` (kinematics, bias and fluid forces, mass matrix) and
:mod:`pccbullet.sim.limb.chain.solve` (implicit spring-damper step, articulated-body solve).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.chain.inertia import mass_matrix
from pccbullet.sim.limb.chain.kernels import (
    ADDED_INERTIA,
    ADDED_MASS,
    FIXED,
    PRISMATIC,
    REVOLUTE,
    SHEAR,
    SPHERICAL,
    _kinematics,
    bias_and_fluid,
    bias_and_fluid_moving,
    joint_axes,
)
from pccbullet.sim.limb.chain.positions import positions_from_vector

_JOINT_TYPES = {
    "fixed": FIXED,
    "revolute": REVOLUTE,
    "continuous": REVOLUTE,
    "prismatic": PRISMATIC,
    "spherical": SPHERICAL,
}
_VELOCITIES = {FIXED: 0, REVOLUTE: 1, PRISMATIC: 1, SPHERICAL: 3}  # entries per joint type
_POSITIONS = {FIXED: 0, REVOLUTE: 1, PRISMATIC: 1, SPHERICAL: 4}

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
_ADDED = ADDED_MASS  # C_a rho_w V (kg): added mass across the link's z axis, at its centre of mass
_ADDED_ROT = ADDED_INERTIA  # C_a rho_w V l^2 / 12 (kg m^2): added rotary inertia about its transverse axes
_SHEAR = SHEAR  # 1 / (kappa G A) (1/N): a chord joint's shear compliance (rod chains; solve.py)
N_PARAMS = 34

__all__ = [
    "MASS_COLUMN",
    "N_PARAMS",
    "ChainModel",
]


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
        jtype: joint type per link (``FIXED``, ``REVOLUTE``, ``PRISMATIC``, ``SPHERICAL``), ``(n,) int``.
        dof: index of the link's joint in the velocity vector (its first of three for a spherical joint),
            -1 for fixed joints, ``(n,) int``.
        qpos: index of the link's joint in the position vector (the first of a spherical joint's four
            quaternion entries ``x, y, z, w``), -1 for fixed joints, ``(n,) int``.
        params: per-link numbers, ``(n, N_PARAMS) float`` (see the column slices in this module);
            the fluid and shear columns are zero until :meth:`with_fluid` / :meth:`with_shear`.
        n_dof: length of the velocity vector (and of the joint torques).
        n_q: length of the position vector (``n_dof`` plus one per spherical joint).
    """

    links: tuple[str, ...]
    parent: np.ndarray
    jtype: np.ndarray
    dof: np.ndarray
    qpos: np.ndarray
    params: np.ndarray
    n_dof: int
    n_q: int

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
        kinds = {j.get("name", ""): j.get("type", "") for j in joints.values()}
        for jname, kind in kinds.items():
            if kind not in _JOINT_TYPES:
                raise ConfigurationError(
                    f"{path}: joint {jname!r} type = {kind!r} is not supported; "
                    f"allowed: {', '.join(_JOINT_TYPES)}"
                )
        offsets: dict[str, tuple[int, int]] = {}  # joint -> (velocity index, position index)
        n_dof = n_q = 0
        for jname in joint_order:
            offsets[jname] = (n_dof, n_q)
            kind_id = _JOINT_TYPES.get(kinds.get(jname, "fixed"), FIXED)
            n_dof += _VELOCITIES[kind_id]
            n_q += _POSITIONS[kind_id]
        n = len(order)
        parent = np.full(n, -1, dtype=np.int64)
        jtype = np.zeros(n, dtype=np.int64)
        dof = np.full(n, -1, dtype=np.int64)
        qpos = np.full(n, -1, dtype=np.int64)
        params = np.zeros((n, N_PARAMS))
        index = {name: i for i, name in enumerate(order)}
        seen = set()
        for i, name in enumerate(order):
            joint = joints[name]
            jname = joint.get("name", "")
            jtype[i] = _JOINT_TYPES[joint.get("type", "")]
            parent[i] = index.get(joint.find("parent").get("link", ""), -1)  # type: ignore[union-attr]
            if jtype[i] != FIXED:
                if jname not in offsets:
                    raise ConfigurationError(f"{path}: movable joint {jname!r} is not in the joint order")
                dof[i], qpos[i] = offsets[jname]
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
            if jtype[i] in (REVOLUTE, PRISMATIC) and not norm > 0.0:
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
        return cls(tuple(order), parent, jtype, dof, qpos, params, n_dof, n_q)

    def _with_columns(self, columns: Sequence[tuple[int, dict[str, float]]]) -> ChainModel:
        """A copy with the given params columns set per link name (links not named keep theirs)."""
        params = self.params.copy()
        index = {name: i for i, name in enumerate(self.links)}
        for column, values in columns:
            for name, value in values.items():
                if name not in index:
                    raise ConfigurationError(f"chain has no link {name!r}")
                params[index[name], column] = value
        return replace(self, params=params)

    def with_fluid(
        self,
        buoyancy: dict[str, float],
        drag_normal: dict[str, float],
        drag_axial: dict[str, float],
        added_mass: dict[str, float] | None = None,
        added_inertia: dict[str, float] | None = None,
    ) -> ChainModel:
        """A copy with fluid coefficients per link name (links not named get none).

        Args:
            buoyancy: buoyancy force per unit gravity (kg), i.e. displaced fluid mass.
            drag_normal: ``1/2 rho_w Cd d l`` (kg/m), drag across the link's z axis.
            drag_axial: ``1/2 rho_w Cd_a pi d l`` (kg/m), drag along it.
            added_mass: ``C_a rho_w V`` (kg), added mass across the link's z axis at its centre of mass
                (:mod:`pccbullet.sim.limb.chain.solve`).
            added_inertia: ``C_a rho_w V l^2 / 12`` (kg m^2), added rotary inertia about the link's
                transverse axes through its centre of mass.
        """
        cleared = self.params.copy()
        cleared[:, [_BUOY, _DRAG_N, _DRAG_A, _ADDED, _ADDED_ROT]] = 0.0
        return replace(self, params=cleared)._with_columns(
            (
                (_BUOY, buoyancy),
                (_DRAG_N, drag_normal),
                (_DRAG_A, drag_axial),
                (_ADDED, added_mass or {}),
                (_ADDED_ROT, added_inertia or {}),
            )
        )

    def with_shear(self, compliance: dict[str, float]) -> ChainModel:
        """A copy with the shear compliance ``1 / (kappa G A)`` (1/N) of the chord links named (prismatic
        joints of a rod chain; :mod:`pccbullet.sim.limb.chain.solve`); links not named get none."""
        cleared = self.params.copy()
        cleared[:, _SHEAR] = 0.0
        for name in compliance:
            if name in self.links and self.jtype[self.links.index(name)] != PRISMATIC:
                raise ConfigurationError(f"link {name!r} has no chord joint; shear needs a prismatic joint")
        return replace(self, params=cleared)._with_columns(((_SHEAR, compliance),))

    def positions(self, vector: FloatArray) -> FloatArray:
        """The position vector ``(n_q,)`` of a joint vector ``(n_dof,)`` whose spherical joints are given
        as x-y-z Euler angles (:mod:`pccbullet.urdf_gen.rod`): their quaternions in their place."""
        out = np.empty(self.n_q)
        positions_from_vector(self.jtype, self.dof, self.qpos, np.asarray(vector, float), out)
        return out

    def bias_and_fluid(
        self, q: FloatArray, qd: FloatArray, gravity: Sequence[float], base: FloatArray | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """``(h, tau_fluid)``: Coriolis+gravity torques and fluid generalized forces, each ``(n_dof,)``;
        ``q`` is the position vector ``(n_q,)``, ``qd`` the velocities ``(n_dof,)``; ``base (4, 3)`` the
        base's motion if it moves (:func:`~pccbullet.sim.limb.chain.kernels._moving_bias_and_fluid`)."""
        h, tau_f = np.zeros(self.n_dof), np.zeros(self.n_dof)
        g = np.asarray(gravity, float)
        args = (self.parent, self.jtype, self.dof, self.qpos, self.params, q, qd, g)
        if base is None:
            bias_and_fluid(*args, h, tau_f)
        else:
            bias_and_fluid_moving(*args, np.asarray(base, float), h, tau_f)
        return h, tau_f

    def mass_matrix(self, q: FloatArray) -> FloatArray:
        """Joint-space inertia at the position vector ``q``, ``(n_dof, n_dof)``."""
        M = np.zeros((self.n_dof, self.n_dof))
        mass_matrix(self.parent, self.jtype, self.dof, self.qpos, self.params, q, M)
        return M

    def _frames(self, q: FloatArray) -> tuple[FloatArray, FloatArray]:
        n = len(self.links)
        R = np.zeros((n, 3, 3))
        p = np.zeros((n, 3))
        _kinematics(self.parent, self.jtype, self.qpos, self.params, q, R, p)
        return R, p

    def added_mass_matrix(self, q: FloatArray) -> FloatArray:
        """Joint-space added mass ``M_a(q)`` of the fluid, ``(n_dof, n_dof)``: ``sum J_v^T m_a P J_v +
        J_w^T j_a P J_w`` over the links (``P = 1 - t t^T``, ``t`` the link's z axis, ``J_v`` the Jacobian
        of its centre of mass, ``J_w`` of its rotation); zero where :meth:`with_fluid` set none."""
        R, p = self._frames(q)
        S = np.zeros((self.n_dof, 6))
        joint_axes(self.jtype, self.dof, self.params, R, p, S)
        com = p + np.einsum("nij,nj->ni", R, self.params[:, _COM])
        M = np.zeros((self.n_dof, self.n_dof))
        for i in np.flatnonzero(self.params[:, _ADDED] ** 2 + self.params[:, _ADDED_ROT] ** 2 > 0.0):
            Jv = np.zeros((3, self.n_dof))
            Jw = np.zeros((3, self.n_dof))
            j = int(i)
            while j >= 0:  # the link's joint and its ancestors': spatial columns at the centre of mass
                if self.jtype[j] != FIXED:
                    d = int(self.dof[j])
                    cols = range(d, d + _VELOCITIES[int(self.jtype[j])])
                    for c in cols:
                        Jw[:, c] = S[c, :3]
                        Jv[:, c] = S[c, 3:] + np.cross(S[c, :3], com[i])
                j = int(self.parent[j])
            t = R[i, :, 2]
            P = np.eye(3) - np.outer(t, t)
            M += self.params[i, _ADDED] * Jv.T @ P @ Jv + self.params[i, _ADDED_ROT] * Jw.T @ P @ Jw
        return M

    def generalized_force(
        self,
        q: FloatArray,
        link: str,
        force: Sequence[float] = (0.0, 0.0, 0.0),
        torque: Sequence[float] = (0.0, 0.0, 0.0),
        point: Sequence[float] | None = None,
    ) -> FloatArray:
        """``J^T [torque; force]`` ``(n_dof,)``: the generalized force of a load on ``link`` at the position
        vector ``q``: ``force`` (N) at ``point`` (m; default the link's origin) and a ``torque`` (N m), all
        in the base frame. What a dead load adds to a compliant limb's ``offset``."""
        if link not in self.links:
            raise ConfigurationError(f"chain has no link {link!r}")
        R, p = self._frames(q)
        i = self.links.index(link)
        at = p[i] if point is None else np.asarray(point, float)
        f = np.asarray(force, float)
        wrench = np.concatenate([np.asarray(torque, float) + np.cross(at, f), f])  # moment about the origin
        S = np.zeros((self.n_dof, 6))
        joint_axes(self.jtype, self.dof, self.params, R, p, S)
        out = np.zeros(self.n_dof)
        j = i
        while j >= 0:
            if self.jtype[j] != FIXED:
                d = int(self.dof[j])
                cols = slice(d, d + _VELOCITIES[int(self.jtype[j])])
                out[cols] = S[cols] @ wrench
            j = int(self.parent[j])
        return out

    def com_positions(self, q: FloatArray) -> FloatArray:
        """Centres of mass of the links in the base frame at the position vector ``q``, ``(n, 3)``."""
        R, p = self._frames(q)
        return p + np.einsum("nij,nj->ni", R, self.params[:, _COM])
