"""Import PyBullet without its build banner on stdout (it would corrupt ``--json`` output).

PyBullet's C extension prints "pybullet build time: ..." to file descriptor 1 when imported; this
module sends that line to stderr instead. Use ``from pccbullet.sim.bullet import pb``.

Only PyBullet's public Python API is used through ``pb`` elsewhere; the code that relies on the
extension's private internals (symbol tables, Bullet's globals, the C client API) lives in
:mod:`pccbullet.sim.bullet_internals`, behind the ``PCCBULLET_SAFE=1`` switch.
"""

from __future__ import annotations

import os
import sys


def _quiet_import():
    if "pybullet" in sys.modules:
        return sys.modules["pybullet"]
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        import pybullet
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return pybullet


pb = _quiet_import()
