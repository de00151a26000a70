"""Joint I/O of the dynamic mode straight through PyBullet's C API, from compiled code.

Per step and limb the dynamic mode reads every joint's position and velocity and sends every joint's
torque. Through PyBullet's Python functions that costs ~25 us a limb at N = 10 (62 joints):
``getJointStates`` builds a tuple of nine floats per joint, ``setJointMotorControlArray`` parses a
list, and the states are then copied into arrays. The C functions behind them are exported by
PyBullet's extension module (``b3RequestActualStateCommandInit``, ``b3GetStatusActualState``,
``b3JointControlCommandInit2``, ``b3JointControlSetDesiredForceTorque``, ... of Bullet's
``PhysicsClientC_API.h``); :func:`limb_step` calls them from a numba kernel, reads ``q`` and ``qd``
from the state arrays PyBullet hands back, computes the spring torques
(:func:`pccbullet.sim.limb.chain.solve.spring_torques`) and sends them, in one call of ~7 us plus the torque
kernel.

The physics-client handle behind a ``physicsClientId`` lives in the extension's static array
``sPhysicsClients1``, found by its symbol like Bullet's globals (:mod:`.symbols`). Every call
reads the slot again and refuses to run (:data:`ERR_CLIENT`) if the client was disconnected. The
function signatures and the layout read here are those of the PyBullet releases in
:data:`PINNED_VERSIONS` (checked against each); any other version uses the Python functions (a debug
log line says so). Where anything is missing (no symbol table, another platform), the version is not
pinned, ``PCCBULLET_C_API=0`` (this path only) or ``PCCBULLET_SAFE=1`` (every internal) is set,
:func:`c_api` returns ``None``; a limb whose first read or command through it disagrees with PyBullet's
Python functions does not use it either. Those limbs call the Python functions: the same numbers, bit
for bit (``tests/test_capi.py``).

Compiled-code cache: numba keys each cached kernel to its own source file only, and :func:`limb_step`
compiles the chain kernels (:mod:`pccbullet.sim.limb.chain`) into itself. So that a change to them is not
hidden behind an old cache entry, this module keeps a digest of their sources beside its cache
(``__pycache__/capi.chain-digest``) and drops its own entries when the digest changes
(:func:`_drop_stale_cache`). ``tests/test_capi.py`` compares this path with the Python one bit for bit.
"""

from __future__ import annotations

import ctypes
import logging
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

from pccbullet.sim.bullet import pb
from pccbullet.sim.bullet_internals.symbols import enabled, extension_object
from pccbullet.sim.limb.chain.tendons import limb_torques

log = logging.getLogger(__name__)


def _drop_stale_cache() -> None:
    """Remove this module's numba cache entries if the chain kernels' sources changed since they were
    written (:func:`pccbullet.sim.limb.chain.drop_stale_cache`)."""
    from pccbullet.sim.limb.chain import drop_stale_cache

    drop_stale_cache(__file__, (Path(__file__).stem,))


_drop_stale_cache()

ENV_SWITCH = "PCCBULLET_C_API"  # "0": use PyBullet's Python functions only
# PyBullet releases whose C API this module was written and tested against (bit-identical
# trajectories, tests/test_capi.py); add a release here only after those tests pass with it.
PINNED_VERSIONS = ("3.2.7",)
CLIENTS_SYMBOL = "sPhysicsClients1"

# EnumSharedMemoryServerStatus (SharedMemoryPublic.h); a limb checks both with a real read and a real
# command before it uses this path (pccbullet.sim.limb.dynamics.CompliantLimb)
STATUS_ACTUAL_STATE = 21  # CMD_ACTUAL_STATE_UPDATE_COMPLETED
STATUS_DESIRED_STATE = 25  # CMD_DESIRED_STATE_RECEIVED_COMPLETED
CONTROL_MODE_TORQUE = int(pb.TORQUE_CONTROL)

# limb_step's return codes
OK, ERR_CLIENT, ERR_STATE, ERR_CONTROL, ERR_NOT_FINITE = 0, 1, 2, 3, 4
ERRORS = {
    ERR_CLIENT: "the physics client is no longer connected",
    ERR_STATE: "PyBullet did not return the joint state",
    ERR_CONTROL: "PyBullet did not accept the joint torques",
    ERR_NOT_FINITE: "the joint torques are not finite (the state has a NaN: the simulation diverged)",
}

_FUNCTIONS = (
    "b3RequestActualStateCommandInit",
    "b3SubmitClientCommandAndWaitStatus",
    "b3GetStatusType",
    "b3GetStatusActualState",
    "b3JointControlCommandInit2",
    "b3JointControlSetDesiredForceTorque",
)
F_REQUEST, F_SUBMIT, F_STATUS, F_ACTUAL, F_CONTROL, F_TORQUE = range(len(_FUNCTIONS))
OUT_SLOTS = 8  # scratch words for b3GetStatusActualState's seven out-pointers


# --- calls through a function address (numba intrinsics) -----------------------------------------
# Arguments are passed as 64-bit integers (pointers, handles) or doubles; "i" marks a C ``int``
# parameter (truncated to 32 bits). Results are returned as int64 (C ``int``) or uint64 (pointers).

_I64, _I32, _F64 = ir.IntType(64), ir.IntType(32), ir.DoubleType()


def _c_call(result: str, params: str):
    """An intrinsic ``call(address, *args)`` for a C function ``result f(params)``; ``params`` is a
    string of ``p`` (pointer), ``i`` (int) and ``d`` (double), ``result`` is ``p`` or ``i``."""
    ir_params = [{"p": _I64, "i": _I32, "d": _F64}[c] for c in params]
    ir_result = _I64 if result == "p" else _I32
    nb_result = types.uint64 if result == "p" else types.int64

    def typer(address, args):
        if not isinstance(address, types.Integer):
            return None
        for kind, ty in zip(params, args, strict=True):
            if not (isinstance(ty, types.Float) if kind == "d" else isinstance(ty, types.Integer)):
                return None

        def codegen(context, builder, sig, llargs):
            values = []
            for kind, ty, value, want in zip(params, sig.args[1:], llargs[1:], ir_params, strict=True):
                if kind == "d":
                    values.append(context.cast(builder, value, ty, types.float64))
                elif kind == "i":
                    values.append(builder.trunc(context.cast(builder, value, ty, types.int64), want))
                else:
                    values.append(context.cast(builder, value, ty, types.uint64))
            fnty = ir.FunctionType(ir_result, ir_params)
            fn = builder.inttoptr(llargs[0], fnty.as_pointer())
            out = builder.call(fn, values)
            return builder.sext(out, _I64) if result == "i" else out

        return nb_result(address, *args), codegen

    # numba's intrinsics take no *args: one definition per arity used here
    n = len(params)
    if n == 1:

        def call(typingctx, address, a):
            return typer(address, (a,))
    elif n == 2:

        def call(typingctx, address, a, b):  # type: ignore[misc]
            return typer(address, (a, b))
    elif n == 3:

        def call(typingctx, address, a, b, c):  # type: ignore[misc]
            return typer(address, (a, b, c))
    elif n == 8:

        def call(typingctx, address, a, b, c, d, e, f, g, h):  # type: ignore[misc]
            return typer(address, (a, b, c, d, e, f, g, h))
    else:
        raise ValueError(f"{n} parameters: no intrinsic of that arity")
    return intrinsic(call)


_call_request = _c_call("p", "pi")  # b3RequestActualStateCommandInit(client, body)
_call_submit = _c_call("p", "pp")  # b3SubmitClientCommandAndWaitStatus(client, command)
_call_status = _c_call("i", "p")  # b3GetStatusType(status)
_call_actual = _c_call("i", "pppppppp")  # b3GetStatusActualState(status, 7 out-pointers)
_call_control = _c_call("p", "pii")  # b3JointControlCommandInit2(client, body, mode)
_call_torque = _c_call("i", "pid")  # b3JointControlSetDesiredForceTorque(command, dof, value)


def _c_load(value: str):
    """An intrinsic ``load(address)`` reading a ``u`` (uint64) or ``d`` (double) from memory."""
    ir_type, nb_type = (_I64, types.uint64) if value == "u" else (_F64, types.float64)

    @intrinsic
    def load(typingctx, address):
        if not isinstance(address, types.Integer):
            return None

        def codegen(context, builder, sig, llargs):
            where = context.cast(builder, llargs[0], sig.args[0], types.uint64)
            return builder.load(builder.inttoptr(where, ir_type.as_pointer()))

        return nb_type(address), codegen

    return load


_load_u64 = _c_load("u")
_load_f64 = _c_load("d")
_LOW32 = np.uint64(0xFFFFFFFF)
_WORD = np.uint64(8)
_NULL = np.uint64(0)


# --- kernels ---------------------------------------------------------------------------------------


@numba.njit(cache=True)
def read_joint_state(fns, slot, client, bodies, qidx, uidx, qsplit, usplit, out, q, qd):
    """Position entries ``q`` and velocity entries ``qd`` of a limb's joints over its bodies ``bodies (P,)``
    (PyBullet state indices ``qidx`` per position entry, ``uidx`` per velocity entry: a spherical joint has
    four and three; part ``p``'s entries are ``qsplit[p]:qsplit[p + 1]`` and ``usplit[p]:usplit[p + 1]``),
    as ``getJointStates(MultiDof)`` would return them. ``out``: ``(OUT_SLOTS,) uint64`` scratch.
    Returns :data:`OK` or an error code."""
    if _load_u64(slot) != client:
        return ERR_CLIENT
    w = _WORD
    a0 = np.uint64(out.ctypes.data)  # uint64 arithmetic throughout (mixed with int64, numba gives floats)
    a1 = a0 + w
    a2 = a1 + w
    a3 = a2 + w
    a4 = a3 + w
    a5 = a4 + w
    for part in range(bodies.shape[0]):
        body = bodies[part]
        status = _call_submit(fns[F_SUBMIT], client, _call_request(fns[F_REQUEST], client, body))
        if status == _NULL or _call_status(fns[F_STATUS], status) != STATUS_ACTUAL_STATE:
            return ERR_STATE
        if _call_actual(fns[F_ACTUAL], status, a0, a1, a2, a3, a4, a5, a5 + w) == 0:
            return ERR_STATE
        # out[0]: body id, out[1], out[2]: numbers of position and velocity entries (C ints);
        # out[4], out[5]: addresses of the position and velocity arrays
        if np.int64(out[0] & _LOW32) != body:
            return ERR_STATE
        nq = np.int64(out[1] & _LOW32)
        nu = np.int64(out[2] & _LOW32)
        positions = out[4]
        velocities = out[5]
        for j in range(qsplit[part], qsplit[part + 1]):
            if qidx[j] >= nq:
                return ERR_STATE
            q[j] = _load_f64(positions + w * np.uint64(qidx[j]))
        for j in range(usplit[part], usplit[part + 1]):
            if uidx[j] >= nu:
                return ERR_STATE
            qd[j] = _load_f64(velocities + w * np.uint64(uidx[j]))
    return OK


@numba.njit(cache=True)
def send_joint_torques(fns, slot, client, bodies, uidx, usplit, tau):
    """``setJointMotorControlArray(body, joints, TORQUE_CONTROL, forces=tau)`` for each of a limb's bodies
    (one entry per velocity entry, PyBullet's ``uidx``; part ``p``'s are ``usplit[p]:usplit[p + 1]``);
    returns a code."""
    if _load_u64(slot) != client:
        return ERR_CLIENT
    for part in range(bodies.shape[0]):
        command = _call_control(fns[F_CONTROL], client, bodies[part], CONTROL_MODE_TORQUE)
        for j in range(usplit[part], usplit[part + 1]):
            _call_torque(fns[F_TORQUE], command, uidx[j], tau[j])
        status = _call_submit(fns[F_SUBMIT], client, command)
        if status == _NULL or _call_status(fns[F_STATUS], status) != STATUS_DESIRED_STATE:
            return ERR_CONTROL
    return OK


@numba.njit(cache=True)
def limb_step(
    fns, slot, client, bodies, qidx, uidx, qsplit, usplit, out,
    parent, jtype, dof, qpos, params, gravity, target, offset, K, C, dt, q, qd, tau, qdd, memory, td,
):  # fmt: skip
    """One controller step of a compliant limb: read ``q``, ``qd``; :func:`limb_torques` (tendons, springs);
    send ``tau``.

    The arguments after ``out`` are those of :func:`pccbullet.sim.limb.chain.tendons.limb_torques`. Returns a
    code (:data:`ERR_NOT_FINITE`, nothing sent: torques that are not finite).
    """
    code = read_joint_state(fns, slot, client, bodies, qidx, uidx, qsplit, usplit, out, q, qd)
    if code != OK:
        return code
    limb_torques(
        parent, jtype, dof, qpos, params, q, qd, gravity, target, offset, K, C, dt, tau, qdd, memory, td
    )
    total = 0.0
    for i in range(tau.size):  # a NaN or an infinity anywhere in the state reaches the torques
        total += tau[i]
    if not np.isfinite(total):
        return ERR_NOT_FINITE
    return send_joint_torques(fns, slot, client, bodies, uidx, usplit, tau)


# --- lookup ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CApi:
    """PyBullet's C functions (``functions``: their addresses, in :data:`_FUNCTIONS` order) and the
    address of its client table (``clients``, ``capacity`` slots of 8 bytes)."""

    functions: np.ndarray
    clients: int
    capacity: int

    def slot(self, client_id: int) -> int:
        """Address of the slot holding the C handle of PyBullet client ``client_id``."""
        if not 0 <= client_id < self.capacity:
            raise ValueError(f"physicsClientId = {client_id!r} is invalid; allowed: 0..{self.capacity - 1}")
        return self.clients + 8 * client_id

    def handle(self, client_id: int) -> int:
        """The C handle (``b3PhysicsClientHandle``) of client ``client_id`` now, 0 if not connected."""
        return int(ctypes.c_uint64.from_address(self.slot(client_id)).value)


_api: CApi | None | bool = False  # False: not looked up yet


def pybullet_version() -> str | None:
    """The installed PyBullet distribution's version, or ``None`` if its metadata is missing."""
    try:
        return metadata.version("pybullet")
    except metadata.PackageNotFoundError:
        return None


def _lookup() -> CApi | None:
    version = pybullet_version()
    if version not in PINNED_VERSIONS:
        log.debug(
            "PyBullet %s is not one of the C API's pinned versions (%s): joint I/O through PyBullet's "
            "Python functions",
            version,
            ", ".join(PINNED_VERSIONS),
        )
        return None
    found = extension_object(CLIENTS_SYMBOL)
    if found is None or found[1] < 8 or found[1] % 8:
        return None
    clients, size = found
    try:
        lib = ctypes.CDLL(pb.__file__)  # the module already loaded: the same copy, the same globals
        addresses = [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in _FUNCTIONS]
        functions = np.array(addresses, np.uint64)
    except (OSError, AttributeError):
        return None
    return CApi(functions, clients, size // 8)


def c_api() -> CApi | None:
    """PyBullet's C API for :func:`limb_step`, or ``None`` (unavailable, a PyBullet version not in
    :data:`PINNED_VERSIONS`, ``PCCBULLET_C_API=0`` or ``PCCBULLET_SAFE=1``)."""
    global _api
    if os.environ.get(ENV_SWITCH, "1").strip() == "0" or not enabled():
        return None
    if _api is False:
        _api = _lookup()
    return _api  # type: ignore[return-value]
