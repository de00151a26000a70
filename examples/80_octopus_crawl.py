"""The bundled eight-arm octopus (``octopus8``) walking on the seabed on its tendons.

    python examples/80_octopus_crawl.py --seconds 8 --picture docs/images/octopus_crawl.png

Its body is free (``[head] base = "free"`` in the robot file): its mass, buoyancy, drag and added mass in
water (a tank), carried by its arms and the ground. It settles on its eight arms for 1 s, then every arm runs
:class:`pccbullet.sim.body.gait.CrawlGait` (press and sweep back, lift and swing forward; neighbouring arms
half a cycle apart). Prints the body's position every second and the speed; ``--picture`` writes four
moments side by side, rendered with PyBullet's software renderer.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pybullet as pb
from PIL import Image, ImageDraw

from pccbullet.sim.body.gait import CrawlGait
from pccbullet.sim.objects.environment import add_seabed
from pccbullet.sim.world import World

SETTLE = 1.0  # s on its arms before the gait starts
SEABED_FRICTION = 1.0  # -, PyBullet's coefficient of the seabed (a limb's is 0.5: 0.5 combined)
SIZE = 360  # px, one moment's picture


def snapshot(world: World, target: np.ndarray) -> Image.Image:
    """The scene seen from the side and above, the camera following the body."""
    look = np.array([target[0], target[1], 0.1])  # between the body and the seabed
    eye = look + np.array([0.3, -1.1, 0.25])
    view = pb.computeViewMatrix(eye.tolist(), look.tolist(), [0, 0, 1])
    proj = pb.computeProjectionMatrixFOV(40, 1.0, 0.01, 10.0)
    rgba = pb.getCameraImage(SIZE, SIZE, view, proj, physicsClientId=world.client)[2]
    return Image.fromarray(np.asarray(rgba, dtype=np.uint8).reshape(SIZE, SIZE, 4)[:, :, :3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="walking time (simulated s)")
    parser.add_argument("--picture", type=Path, help="write four moments side by side to this PNG")
    args = parser.parse_args()
    gait = CrawlGait()
    moments = np.linspace(0.0, args.seconds, 4)
    pictures: list[tuple[str, Image.Image]] = []
    with World(medium="water") as world:
        seabed = add_seabed(world, z=0.0)
        pb.changeDynamics(seabed, -1, lateralFriction=SEABED_FRICTION, physicsClientId=world.client)
        robot = world.load_robot("octopus8", drive="tendons", position=(0.0, 0.0, 0.3))
        world.step(round(SETTLE / world.dt))
        start = robot.head_pose()[:3, 3].copy()
        every = 10  # steps between tension updates (10 ms)
        for k in range(round(args.seconds / world.dt / every) + 1):
            t = k * every * world.dt
            for name, tensions in gait.tensions(robot.spec, t).items():
                robot.compliant[name].tendons.set_tensions(tensions)
            here = robot.head_pose()[:3, 3]
            if args.picture is not None and np.isclose(t, moments, atol=0.5 * every * world.dt).any():
                caption = f"t = {t:.1f} s: {100 * (here[0] - start[0]):.1f} cm"
                pictures.append((caption, snapshot(world, here)))
            if k % 100 == 0:
                print(f"t = {t:5.2f} s  body at {np.round(here - start, 3)} m")
            world.step(every)
        moved = robot.head_pose()[:3, 3] - start
    print(f"walked {moved[0]:.3f} m in {args.seconds:g} s: {moved[0] / args.seconds * 100:.1f} cm/s")
    if args.picture is not None:
        sheet = Image.new("RGB", (SIZE * len(pictures), SIZE + 24), "white")
        draw = ImageDraw.Draw(sheet)
        for i, (caption, image) in enumerate(pictures):
            sheet.paste(image, (i * SIZE, 24))
            draw.text((i * SIZE + 8, 6), caption, fill="black")
        args.picture.parent.mkdir(parents=True, exist_ok=True)
        sheet.save(args.picture)
        print(f"wrote {args.picture}")


if __name__ == "__main__":
    main()
