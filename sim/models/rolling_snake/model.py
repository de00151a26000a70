"""Static model of a stiffness-adjustable rolling-joint snake robot with gravity compensation (seed 003).

Given the four cable tensions, the model returns the bending angle of every rolling joint, the link
and joint positions and the tip position (Hu et al., Robotics 12(1):2, 2023):

* **without gravity** every joint solves ``tan(theta/2) = sum_j T_j d_j / sum_j T_j h_j`` on its own
  (constant curvature per joint family);
* **with gravity** a nonlinear Gauss-Seidel iteration (Algorithm 4) alternates the gravity update
  (Algorithm 1: the link weight in every link frame from the previous angles) and a backward sweep
  (Algorithm 2: joint ``n-1`` down to ``1``, each solving eq. (16) ``a sin(theta/2) + b cos(theta/2) +
  c = 0`` analytically), relaxes the angles with ``omega`` and stops when the tip moves less than
  ``eps`` (Algorithm 3 gives the tip). When an iteration fails (no admissible root, non-finite values,
  or the tip change keeps growing) ``omega`` is halved and the iteration continues from the last
  angles.

Conventions (see :mod:`pccbullet.urdf_gen.rolling_snake.spec`): the paper's world frame (WCS), z along the
straight robot towards the tip, link 1's mass centre at ``d_1`` (default ``(0, 0, L/2)``: origin at the
centre of the base link's bottom face); a ground mount has gravity ``-g z``, a ceiling mount ``+g z``.
The odd joints bend in the x-z plane, the even joints in the plane at ``-alpha`` and the cables run
counter-clockwise at ``[0, pi - alpha, pi, -alpha]``, as the paper's base transform and phases give.
Angles in rad, positions in m.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.models.rolling_snake.solve import Kernel, cable_sums, joint_offset, rot_about
from pccbullet.urdf_gen.rolling_snake.spec import RollingSnakeSpec, default_cable_phases, load_rolling_snake
from pccbullet.urdf_gen.spec_loader import robots_dir

__all__ = [
    "RollingSnakeResult",
    "bench_rolling_snake",
    "gravity_vector",
    "snake_forward_kinematics",
    "solve_rolling_snake",
    "solve_rolling_snake_no_gravity",
]

GravityLike = str | Sequence[float] | FloatArray | None


@dataclass(frozen=True, slots=True)
class RollingSnakeResult:
    """Static equilibrium of a rolling snake.

    Attributes:
        angles: bending angle of joints 1..n-1 (rad), ``(n - 1,) float``.
        link_positions: centre (mass centre) of links 1..n in the world frame (m), ``(n, 3) float``.
        joint_positions: contact point of joints 1..n-1 in the world frame (m), ``(n - 1, 3) float``.
        tip: the tip point ``P_n^tip`` of the distal link (default the centre of its free end) in the
            world frame (m), ``(3,) float``.
        iterations: Gauss-Seidel iterations done (0 for the model without gravity).
        converged: whether the tip change fell below ``eps``.
        omega: relaxation parameter in use at the end (halved on every failure).
        tip_change: last change of the tip position (m).
    """

    angles: FloatArray
    link_positions: FloatArray
    joint_positions: FloatArray
    tip: FloatArray
    iterations: int
    converged: bool
    omega: float
    tip_change: float


def gravity_vector(spec: RollingSnakeSpec, gravity: GravityLike = None) -> tuple[float, float, float]:
    """Gravitational acceleration in the world frame (m/s^2), ``(3,)``.

    Args:
        spec: the robot (gives the default mount and magnitude).
        gravity: ``None`` (use ``spec.mount``), ``"ground"``, ``"ceiling"``, ``"none"`` or a vector
            ``(3,)`` in m/s^2 in the world frame (z along the straight robot).
    """
    if gravity is None:
        gravity = spec.mount
    if isinstance(gravity, str):
        if gravity == "ground":
            return (0.0, 0.0, -spec.gravity)
        if gravity == "ceiling":
            return (0.0, 0.0, spec.gravity)
        if gravity == "none":
            return (0.0, 0.0, 0.0)
        raise ConfigurationError(
            f"gravity = {gravity!r} is invalid; allowed: 'ground', 'ceiling', 'none' or a 3-vector in m/s^2"
        )
    vec = tuple(float(v) for v in np.asarray(gravity, dtype=float).ravel())
    if len(vec) != 3 or not all(math.isfinite(v) for v in vec):
        raise ConfigurationError(f"gravity = {gravity!r} is invalid; allowed: a finite 3-vector in m/s^2")
    return vec


def _tensions(tensions: Sequence[float] | FloatArray) -> tuple[float, float, float, float]:
    vals = tuple(float(t) for t in np.asarray(tensions, dtype=float).ravel())
    if len(vals) != 4 or not all(math.isfinite(t) and t >= 0.0 for t in vals):
        raise ConfigurationError(f"tensions = {tensions!r} are invalid; allowed: 4 finite values >= 0 N")
    return vals


def _kernel(
    spec: RollingSnakeSpec,
    tensions: Sequence[float] | FloatArray,
    g: tuple[float, float, float],
    max_bend: float,
) -> Kernel:
    t = _tensions(tensions)
    psis = [spec.joint_plane(k) for k in range(1, spec.n_links)]
    cache: dict[float, tuple[float, float]] = {}
    sums = []
    for psi in psis:
        if psi not in cache:
            cache[psi] = cable_sums(spec.cable_phases, t, psi, spec.cable_radius, spec.contact_radius)
        sums.append(cache[psi])
    m = spec.link_mass
    return Kernel(
        spec.n_links,
        spec.link_length,
        spec.contact_radius,
        psis,
        sums,
        (m * g[0], m * g[1], m * g[2]),
        max_bend,
    )


def snake_forward_kinematics(
    spec: RollingSnakeSpec, angles: Sequence[float] | FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Link centres ``(n, 3)``, joint contact points ``(n - 1, 3)`` and tip ``(3,)`` in the world (m).

    Args:
        spec: the robot.
        angles: bending angles of joints 1..n-1 (rad), ``(n - 1,)``.
    """
    th = [float(a) for a in np.asarray(angles, dtype=float).ravel()]
    n = spec.n_links
    if len(th) != n - 1:
        raise ConfigurationError(f"angles has {len(th)} values; allowed: n_links - 1 = {n - 1}")
    half = 0.5 * spec.link_length
    big_r = spec.contact_radius
    h0 = half - big_r
    # columns of the rotation world <- link, as plain tuples (faster than numpy for 3-vectors)
    ex, ey, ez = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
    pos = spec.d1
    links = [pos]
    joints = []

    def to_world(v: tuple[float, float, float]) -> tuple[float, float, float]:
        return (
            pos[0] + ex[0] * v[0] + ey[0] * v[1] + ez[0] * v[2],
            pos[1] + ex[1] * v[0] + ey[1] * v[1] + ez[1] * v[2],
            pos[2] + ex[2] * v[0] + ey[2] * v[1] + ez[2] * v[2],
        )

    for k in range(n - 1):
        psi = spec.joint_plane(k + 1)
        cp, sp = math.cos(psi), math.sin(psi)
        s2, c2 = math.sin(0.5 * th[k]), math.cos(0.5 * th[k])
        joints.append(to_world((big_r * s2 * cp, big_r * s2 * sp, h0 + big_r * c2)))
        pos = to_world(joint_offset(cp, sp, h0, big_r, th[k]))
        links.append(pos)
        ct, st = math.cos(th[k]), math.sin(th[k])
        # new columns: R_old @ Ra(theta) e_i, and R_old @ v = v0 ex + v1 ey + v2 ez
        cols = []
        for e in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)):
            v = rot_about(cp, sp, ct, st, e)
            c = [ex[i] * v[0] + ey[i] * v[1] + ez[i] * v[2] for i in range(3)]
            cols.append((c[0], c[1], c[2]))
        ex, ey, ez = cols
    off = spec.tip_offset()
    tip = np.array([pos[i] + ex[i] * off[0] + ey[i] * off[1] + ez[i] * off[2] for i in range(3)])
    return np.array(links), np.array(joints).reshape(n - 1, 3), tip


def _result(
    spec: RollingSnakeSpec, angles: list[float], iterations: int, converged: bool, omega: float, change: float
) -> RollingSnakeResult:
    links, joints, tip = snake_forward_kinematics(spec, angles)
    return RollingSnakeResult(
        np.asarray(angles, dtype=float), links, joints, tip, iterations, converged, omega, change
    )


def solve_rolling_snake_no_gravity(
    spec: RollingSnakeSpec, tensions: Sequence[float] | FloatArray
) -> RollingSnakeResult:
    """The model without gravity (seed 003, ref. [22]): every joint from its own cable balance.

    Args:
        spec: the robot.
        tensions: cable tensions ``[T1, T2, T3, T4]`` (N), ``(4,)``.
    """
    kernel = _kernel(spec, tensions, (0.0, 0.0, 0.0), math.pi)
    return _result(spec, kernel.no_gravity(), 0, True, 1.0, 0.0)


def _gauss_seidel(
    kernel: Kernel,
    theta: list[float],
    eps: float,
    omega: float,
    max_iter: int,
    min_omega: float,
    patience: int = 8,
) -> tuple[list[float], int, bool, float, float]:
    """Algorithm 4 on plain floats; returns (angles, iterations, converged, omega, last tip change).

    An iteration fails when the tip is not finite or the tip change has not reached a new minimum for
    ``patience`` iterations (divergence or a limit cycle). A joint without an admissible root of eq. (16)
    is set to the angle closest to balance; such an iteration never counts as converged. On failure
    omega is halved and the iteration restarts from the angles with the smallest tip change so far.
    """
    m = len(theta)
    star = list(theta)
    best = list(theta)
    tip = kernel.tip(theta)
    best_tip = tip
    change = best_change = math.inf
    stall = 0
    it = 0
    while it < max_iter:
        it += 1
        grav = kernel.gravity_in_links(theta)
        new_tip = kernel.sweep(theta, grav, star)
        if omega != 1.0:
            for k in range(m):
                star[k] = theta[k] + omega * (star[k] - theta[k])
            new_tip = kernel.tip(star)
        change = math.dist(new_tip, tip)
        failed = False
        if not math.isfinite(change):
            failed = True
        elif change < best_change:
            stall = 0
        else:
            stall += 1
            failed = stall >= patience
        if failed:
            omega *= 0.5
            stall = 0
            change = best_change = math.inf
            theta = list(best)
            tip = best_tip
            if omega < min_omega:
                return theta, it, False, omega, change
            continue
        theta, star = star, theta
        tip = new_tip
        if change < best_change:
            best_change = change
            best[:] = theta
            best_tip = tip
        if change < eps and not kernel.clamped:
            return theta, it, True, omega, change
    return theta, it, False, omega, change


def solve_rolling_snake(
    spec: RollingSnakeSpec,
    tensions: Sequence[float] | FloatArray,
    gravity: GravityLike = None,
    *,
    eps: float = 1e-12,
    omega: float = 1.0,
    initial: Sequence[float] | FloatArray | None = None,
    max_iter: int = 10_000,
    max_bend: float = 0.5 * math.pi,
    min_omega: float = 1e-6,
) -> RollingSnakeResult:
    """Static shape with gravity compensation (seed 003, Algorithms 1-4).

    Args:
        spec: the robot.
        tensions: cable tensions ``[T1, T2, T3, T4]`` (N), ``(4,)``.
        gravity: ``None`` (``spec.mount``), ``"ground"``, ``"ceiling"``, ``"none"`` or a gravitational
            acceleration vector ``(3,)`` in the world frame (m/s^2).
        eps: stop when the tip moves less than this between iterations (m); the paper uses 1e-12.
        omega: initial relaxation parameter in ``(0, 1]``; halved whenever an iteration fails.
        initial: initial joint angles ``(n - 1,)`` (rad); default the solution without gravity.
        max_iter: maximum number of Gauss-Seidel iterations.
        max_bend: admissible joint angles are ``|theta| < max_bend`` (rad); the paper uses pi/2.
        min_omega: give up (``converged = False``) when omega falls below this.

    Returns:
        The equilibrium; ``converged`` is False if ``max_iter`` or ``min_omega`` was hit.
    """
    if not 0.0 < omega <= 1.0:
        raise ConfigurationError(f"omega = {omega!r} is invalid; allowed: a number in (0, 1]")
    if not eps > 0.0:
        raise ConfigurationError(f"eps = {eps!r} is invalid; allowed: a number > 0 (m)")
    kernel = _kernel(spec, tensions, gravity_vector(spec, gravity), max_bend)
    if initial is None:
        theta = kernel.no_gravity()
    else:
        theta = [float(a) for a in np.asarray(initial, dtype=float).ravel()]
        if len(theta) != spec.n_links - 1:
            raise ConfigurationError(f"initial has {len(theta)} values; allowed: {spec.n_links - 1}")
    theta, it, ok, omega, change = _gauss_seidel(kernel, theta, eps, omega, max_iter, min_omega)
    return _result(spec, theta, it, ok, omega, change)


def bench_rolling_snake(runs: int = 200, spec_path: str | Path | None = None) -> dict[str, float]:
    """Time the static solve of the paper's steel, ground-mounted spatial case.

    alpha = 90 deg, tensions [3.7, 2.4, 1.8, 5.1] N, eps = 1e-12, omega = 1 (seed 003 reports 8.5 ms
    mean in MATLAB). Each run includes building the kernel and the result arrays.

    Returns:
        ``{"median_s", "p90_s", "mean_s", "min_s", "runs", "iterations"}`` (seconds, counts).
    """
    if spec_path is None:
        spec_path = robots_dir() / "snake003_sim_steel.toml"
    alpha = 0.5 * math.pi  # rad
    spec = load_rolling_snake(spec_path).with_changes(
        orientation=alpha, cable_phases=default_cable_phases(alpha)
    )
    tensions = (3.7, 2.4, 1.8, 5.1)
    res = solve_rolling_snake(spec, tensions, "ground", eps=1e-12)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        solve_rolling_snake(spec, tensions, "ground", eps=1e-12)
        times.append(time.perf_counter() - t0)
    times.sort()
    return {
        "median_s": statistics.median(times),
        "p90_s": times[min(len(times) - 1, int(math.ceil(0.9 * len(times))) - 1)],
        "mean_s": statistics.fmean(times),
        "min_s": times[0],
        "runs": float(runs),
        "iterations": float(res.iterations),
    }
