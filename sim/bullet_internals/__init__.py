"""PyBullet's private internals: the only code in pccbullet that goes past PyBullet's Python API.

What it touches (all inside PyBullet's extension module, ``pybullet.cpython-*.so``, in this process):

* :mod:`.symbols` reads the extension file's ELF64 symbol table and ``/proc/self/maps`` to find data
  objects by name (``gDbvtMargin``, ``gContactBreakingThreshold``, ``sPhysicsClients1``). Read only.
* :mod:`.process_globals` writes Bullet's two process-wide tuning doubles, the broadphase margin
  ``gDbvtMargin`` (PyBullet has no API for it and zeroes it on every ``connect``) and the
  contact-breaking threshold ``gContactBreakingThreshold``, with ``ctypes``. A
  :class:`~pccbullet.sim.world.World` holds its 5 mm values only during its own physics calls
  (:class:`.process_globals.BulletGlobals`) and puts back what it found.
* :mod:`.capi` calls Bullet's C client API exported by the extension (``b3RequestActualStateCommandInit``,
  ``b3GetStatusActualState``, ``b3JointControlSetDesiredForceTorque``, ...) from a numba kernel, and
  reads the client handle out of ``sPhysicsClients1``: the dynamic mode's joint I/O.

On which builds: Linux, 64-bit, an extension with its symbol table (PyPI's manylinux wheels). The C
API is used only on the PyBullet releases in :data:`.capi.PINNED_VERSIONS`, whose
signatures and layout it was written and tested against; the globals are written only where the
symbol is an 8-byte object in a writable mapping holding a value in [0, 1] m. Anything else falls back
to PyBullet's public API by itself (a debug log line says why).

How it is switched off: ``PCCBULLET_SAFE=1`` in the environment (read when a world or limb is built):
no symbol is looked up, no global is read or written, the joint I/O goes through ``getJointStates`` /
``setJointMotorControlArray``, the contact threshold is set with
``setPhysicsEngineParameter(contactBreakingThreshold=...)`` (process-wide, PyBullet's own way) and the
broadphase margin stays PyBullet's 0. ``PCCBULLET_C_API=0`` switches off the C API only. An
experiment run records the switch in its metadata (``bullet_internals``, next to ``joint_io``).

How the safe path is tested to give the same numbers: ``tests/test_capi.py`` (URSULA's trajectories
bit-identical with and without ``PCCBULLET_SAFE=1``; the C API alone against the Python functions, also
under a faked unpinned version) and ``tests/test_bullet.py`` (no Bullet global written in safe mode).
Only the C API is bit-identical in every scene: the broadphase margin changes the order in which Bullet
finds overlapping pairs, and in a contact-rich scene that order reaches the solver's rounding.

No other module imports ``ctypes`` for PyBullet or parses ELF; ``pccbullet.sim.bullet`` only imports PyBullet.
"""
