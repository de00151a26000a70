"""The dynamic chain and the Newton-Euler model against the PyElastica golden data (no PyElastica needed).

Prints, for the URSULA camera tentacle clamped horizontally in air and in water, the settled tip of the
dynamic chain (pccbullet.sim.world, N sections, critical damping for a fast settle: the rod chain, whose
chords shear in its step, and the RRP chain without and with its opt-in shear,
pccbullet.sim.limb.shear.ChainShear) and the static tip of the Newton-Euler model
(pccbullet.sim.models.newton_euler.statics, without and with static_equilibrium(shear=True)) at N = 5, 10, 20,
and their distance from Elastica's extrapolated limit in tests/data/elastica_camera_tentacle.json (written by
60_elastica_reference.py).

Usage: python examples/61_elastica_comparison.py
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from pccbullet.sim.limb.shear import ChainShear
from pccbullet.sim.medium import medium as medium_by_name
from pccbullet.sim.models.newton_euler.model import LimbModel, gravity_in_limb_base
from pccbullet.sim.models.newton_euler.statics import TimoshenkoShear, static_equilibrium
from pccbullet.sim.world import STANDARD_GRAVITY, World
from pccbullet.urdf_gen.spec_loader import load_robot

ROOT = Path(__file__).resolve().parents[1]

DATA = json.loads((ROOT / "tests" / "data" / "elastica_camera_tentacle.json").read_text())


def reference(medium: str) -> np.ndarray:
    """Elastica's limit in the limb base frame (x down, z along the rod) (m)."""
    x, _, z = DATA["media"][medium]["extrapolated"]["tip_m"]
    return np.array([-z, 0.0, x])


def chain_tip(n: int, medium: str, shear: bool = False, chain: str = "rrp") -> np.ndarray:
    spec = load_robot("ursula", sections=n)
    limb = spec.limb("camera")
    limb = dataclasses.replace(limb, material=dataclasses.replace(limb.material, damping_ratio=1.0))
    with World(medium=medium, chain=chain) as world:
        robot = world.load_robot(dataclasses.replace(spec, limbs=(limb,)))
        T = np.linalg.inv(robot.T_world_limbbase("camera"))
        sh = ChainShear(robot, "camera") if shear else None
        tip = np.zeros(3)
        for _ in range(60):
            for _ in range(10):
                if sh is not None:
                    sh.update()
                world.step(100)
            new = (T @ robot.tip_pose("camera")[:, 3])[:3]
            if np.linalg.norm(new - tip) < 1e-5:
                break
            tip = new
        return new


def rod_tip(n: int, medium: str, shear: bool = False) -> np.ndarray:  # shear unused: the rod has its own
    return chain_tip(n, medium, chain="rod")


def model_tip(n: int, medium: str, shear: bool = False) -> np.ndarray:
    limb = load_robot("ursula").limb("camera")
    g = gravity_in_limb_base(limb, (0.0, 0.0, -STANDARD_GRAVITY))
    model = LimbModel(limb, n, gravity=g, medium=medium_by_name(medium))
    q = static_equilibrium(model, shear=shear)
    return TimoshenkoShear(model).tip_position(q) if shear else model.tip_position(q)


def main() -> None:
    length = DATA["length_m"]
    print("tip (down, along) in mm; error = distance from Elastica's limit")
    for medium in ("air", "water"):
        ref = reference(medium)
        print(f"{medium}: Elastica limit {np.round(ref[[0, 2]] * 1e3, 2)}")
        for n in (5, 10, 20):
            for name, fn, shear in (
                ("rod chain", rod_tip, False),
                ("RRP chain", chain_tip, False),
                ("model", model_tip, False),
                ("RRP + shear", chain_tip, True),
                ("model + shear", model_tip, True),
            ):
                tip = fn(n, medium, shear)
                err = float(np.linalg.norm(tip - ref))
                print(
                    f"  {name:13s} N={n:2d}: {np.round(tip[[0, 2]] * 1e3, 2)}  error {err * 1e3:6.2f} mm"
                    f" = {100 * err / length:.2f} % of L"
                )


if __name__ == "__main__":
    main()
