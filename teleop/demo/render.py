"""The headless GIF's scenes rendered with pyvista, lit by the light arm's spot light.

PyBullet's renderers (TinyRenderer headless, OpenGL in the GUI) have one directional light and no spot
light. pyvista (VTK) has positional spot lights: each frame puts one at the light arm's spotlight frame,
pointing along its z axis (a 25° cone), in dark water with a dim head light, so the lamp lights what the
camera arm looks at. The limbs are the URDF's frustum slices at their link poses (as
:func:`pccbullet.sim.export.rigid.rigid_mesh`: each slice's mesh is built once, and every frame only
moves its points), the head a cylinder, the seabed a plane, the rock a sphere and the placed objects
(:mod:`pccbullet.teleop.mmt.objects`) their shapes in their material's colour, at the poses given per
frame. One render per frame.
Without a display VTK is told to use its EGL window (``VTK_DEFAULT_OPENGL_WINDOW``) rather than try an X
server first and warn.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from pccbullet.sim.export.rigid import slice_dimensions
from pccbullet.urdf_gen.geometry import frustum_mesh

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pccbullet.sim.objects.spec import ObjectSpec
    from pccbullet.sim.robot import Robot

WATER_RGB = (0.02, 0.07, 0.11)  # background: dark sea water
SAND_RGB = (0.76, 0.70, 0.50)
ROCK_RGB = (0.45, 0.45, 0.50)
HEAD_RGB = (0.17, 0.22, 0.30)
LIMB_RGB = (0.80, 0.45, 0.25)
SPOT_CONE_DEG = 25.0  # half angle of the lamp's cone
SPOT_INTENSITY = 1.6
AMBIENT_INTENSITY = 0.45  # the head light standing in for the daylight left at depth
HEAD_RADIUS = 0.125  # m, the head cylinder drawn (along world x)
HEAD_LENGTH = 0.25  # m


class SpotlitRenderer:
    """Offscreen renders ``(h, w, 3) uint8`` of a world's robot, seabed and rock with the lamp on.

    Args:
        size: image (width, height) in px. view: (eye, target, up) of the camera (m, world).
        seabed_z: (m). rock_radius: (m). head_radius, head_length: the head cylinder (m, along world x).
        objects: the placed objects, shown where they were placed until :meth:`render` is given poses.
    """

    def __init__(
        self,
        size: tuple[int, int],
        view: tuple[Any, Any, Any],
        seabed_z: float,
        rock_radius: float,
        head_radius: float = HEAD_RADIUS,
        head_length: float = HEAD_LENGTH,
        objects: Sequence[ObjectSpec] = (),
    ) -> None:
        if not os.environ.get("DISPLAY"):
            os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
        import pyvista as pv

        self._pv = pv
        self._limbs: dict[str, tuple[Any, np.ndarray]] = {}  # limb -> (mesh shown, slice-local points)
        self.plotter = pv.Plotter(off_screen=True, window_size=list(size), lighting="none")
        p = self.plotter
        p.set_background(WATER_RGB)  # type: ignore[arg-type]
        p.add_mesh(
            pv.Plane(center=(0.4, 0.0, seabed_z), i_size=3.0, j_size=3.0, i_resolution=80, j_resolution=80),
            color=SAND_RGB,
        )
        p.add_mesh(
            pv.Cylinder(center=(0, 0, 0), direction=(1, 0, 0), radius=head_radius, height=head_length),
            color=HEAD_RGB,
            ambient=0.35,
        )
        self._rock = pv.Sphere(radius=rock_radius, theta_resolution=32, phi_resolution=32)
        self._rock_actor = p.add_mesh(self._rock, color=ROCK_RGB)
        self._objects = [self._add_object(o) for o in objects]
        p.add_light(pv.Light(light_type="headlight", intensity=AMBIENT_INTENSITY))
        self.spot = pv.Light(light_type="scene light", intensity=SPOT_INTENSITY, positional=True)
        self.spot.cone_angle = SPOT_CONE_DEG
        self.spot.exponent = 6.0
        p.add_light(self.spot)
        self._view = view
        self.reset_view()

    def reset_view(self) -> None:
        """Put the camera back at its view (:meth:`set_view`; the one it was built with until then), with
        the GIF's vertical field of view (:data:`~pccbullet.teleop.demo.outputs.VIEW_ANGLE_DEG`)."""
        from pccbullet.teleop.demo.outputs import VIEW_ANGLE_DEG

        eye, target, up = self._view
        self.plotter.camera_position = [tuple(eye), tuple(target), tuple(up)]
        self.plotter.camera.view_angle = VIEW_ANGLE_DEG

    def set_view(self, view: tuple[Any, Any, Any]) -> None:
        """Look from ``view`` (eye, target, up; m, world) from now on."""
        self._view = view
        self.reset_view()

    def _add_object(self, o: ObjectSpec) -> Any:
        """A placed object's mesh (body frame) in its material's colour, at its placed pose."""
        from pccbullet.sim.objects.friction import MATERIALS
        from pccbullet.sim.robot import pose_matrix

        pv = self._pv
        if o.shape == "sphere":
            mesh = pv.Sphere(radius=o.size[0], theta_resolution=32, phi_resolution=32)
        elif o.shape == "cylinder":
            mesh = pv.Cylinder(center=(0, 0, 0), direction=(0, 0, 1), radius=o.size[0], height=o.size[1])
        else:
            mesh = pv.Cube(x_length=o.size[0], y_length=o.size[1], z_length=o.size[2])
        actor = self.plotter.add_mesh(mesh, color=MATERIALS[o.material].rgba[:3], ambient=0.35, render=False)
        actor.user_matrix = pose_matrix(o.position, o.orientation)
        return actor

    def render(
        self, robot: Robot, rock_centre: Any, object_poses: Sequence[np.ndarray] | None = None
    ) -> np.ndarray:
        """The scene as ``robot``, the rock and the placed objects (``(4, 4)`` world poses, in the order
        they were given; ``None``: where they last were) stand now."""
        p = self.plotter
        for limb in robot.spec.limbs:
            poses = robot.section_poses(limb.name)  # (n, 4, 4)
            if limb.name not in self._limbs:
                self._add_limb(limb)
            mesh, local = self._limbs[limb.name]  # local: (n, m, 4), one slice's m points per pose
            mesh.points = np.einsum("nij,nmj->nmi", poses[:, :3, :], local).reshape(-1, 3)
        self._rock_actor.SetPosition(*map(float, rock_centre))
        for actor, pose in zip(self._objects, object_poses or (), strict=False):
            actor.user_matrix = pose
        lamp = next(
            (b.payload.frame for b in robot.spec.limbs if b.payload and b.payload.kind == "light"), None
        )
        if lamp is not None:  # the light arm's lamp (URSULA's spotlight_frame), along its z axis
            T = robot.link_pose(lamp)
            self.spot.position, self.spot.focal_point = tuple(T[:3, 3]), tuple(T[:3, 3] + T[:3, 2])
        else:  # a robot without a lamp: a light 1 m above the rock, shining down on it
            c = np.asarray(rock_centre, dtype=float)
            self.spot.position, self.spot.focal_point = tuple(c + [0.0, 0.0, 1.0]), tuple(c)
        p.render()  # the screenshot must show this frame's actors and light, not the last rendered frame
        return np.array(p.screenshot(return_img=True))[:, :, :3]

    def _add_limb(self, limb: Any) -> None:
        """The limb's slices (the URDF's frustums, 24 around) as one mesh, added once."""
        pv = self._pv
        points, faces, n = [], [], 0
        for r0, r1, h in slice_dimensions(limb):
            m = frustum_mesh(r0, r1, h, z0=-h, sections=24)
            points.append(np.hstack([m.vertices, np.ones((len(m.vertices), 1))]))
            faces.append(np.hstack([np.full((len(m.faces), 1), 3), m.faces + n]))
            n += len(m.vertices)
        if len({len(v) for v in points}) != 1:  # one array of equal slices: every frustum the same mesh
            raise ValueError(f"limb '{limb.name}': frustum meshes of different sizes")
        mesh = pv.PolyData(np.vstack(points)[:, :3], np.vstack(faces).astype(np.int64).ravel())
        # some ambient light: lit only by the lamp and a dim head light the slices showed black
        self.plotter.add_mesh(mesh, color=LIMB_RGB, name=f"limb_{limb.name}", ambient=0.35, render=False)
        self._limbs[limb.name] = (mesh, np.stack(points))

    def close(self) -> None:
        """Release the render window."""
        self.plotter.close()
