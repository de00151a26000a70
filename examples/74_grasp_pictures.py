"""Pictures of the bundled grasp (``grasper_grasp``): the scene at five moments, side by side, captioned.

    python examples/74_grasp_pictures.py --out docs/images/grasp_scene.png

Runs the experiment as ``pccbullet run grasper_grasp`` does (the same spec and steps) with a step hook that
renders the scene with PyBullet's software renderer at the given times; prints the run's metrics.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pybullet as pb
from PIL import Image, ImageDraw

import pccbullet.sim.experiments.grasp as grasp
from pccbullet.sim.experiments.spec import experiments_dir
from pccbullet.sim.world import World

MOMENTS = {  # physics step (settle 2 s, then approach 4 s, close 5 s, lift 5 s, hold 3 s) -> caption
    5500: "approach: straight over the bar",
    9000: "close: segment 2 curls round it",
    10500: "the bar off its posts",
    14500: "lift: segment 1 bends up",
    18900: "hold",
}
SIZE = 400


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("grasp_scene.png"))
    args = parser.parse_args()
    frames: list[Image.Image] = []

    class Filmed(World):
        def __init__(self, *a, **k) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*a, **k)
            self._n = 0
            self.step_hooks.append(self._film)

        def _film(self) -> None:
            self._n += 1
            if self._n not in MOMENTS:
                return
            view = pb.computeViewMatrixFromYawPitchRoll([0.47, -0.06, -0.12], 0.42, -30, -20, 0, 2)
            proj = pb.computeProjectionMatrixFOV(50, 1.0, 0.05, 5)
            w, h, rgb, *_ = pb.getCameraImage(
                SIZE, SIZE, view, proj, renderer=pb.ER_TINY_RENDERER, physicsClientId=self.client
            )
            image = Image.fromarray(np.reshape(np.asarray(rgb, np.uint8), (h, w, 4))[:, :, :3])
            caption = f"{self._n / 1000 - 2:.1f} s: {MOMENTS[self._n]}"
            ImageDraw.Draw(image).text((8, 8), caption, fill=(0, 0, 0))
            frames.append(image)

    grasp.World = Filmed  # type: ignore[misc]
    spec = grasp.load_grasp(experiments_dir() / "grasper_grasp.toml")
    cols, facts = grasp.simulate_grasp(spec)
    metrics = grasp.grasp_metrics(cols, facts)
    print({k: v for k, v in metrics.items() if not isinstance(v, dict)})
    sheet = Image.new("RGB", (SIZE * len(frames), SIZE), "white")
    for i, frame in enumerate(frames):
        sheet.paste(frame, (i * SIZE, 0))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out)
    print(args.out)


if __name__ == "__main__":
    main()
