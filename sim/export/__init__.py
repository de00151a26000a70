"""Mesh export: rigid sections as posed, a smooth skin along the backbone, files, renders, workspaces.

Example::

    from pccbullet.sim.export import skin_mesh, write_series
    from pccbullet.urdf_gen.spec_loader import load_robot
    from pccbullet.urdf_gen.pcc import PccConfig

    limb = load_robot("ursula").limb("camera")
    skin = skin_mesh(limb, [PccConfig(bend=1.0, plane=0.0, length=0.6)])
    write_series([skin], "out", "skin", "vtk")   # out/skin_0000.vtp + out/skin.pvd
"""

from pccbullet.sim.lazy import lazy_attributes

# Names resolved on first use (PEP 562): registering the command line must not load trimesh and PyBullet.
_LAZY = {
    "Backbone": "pccbullet.sim.export.skin",
    "FORMATS": "pccbullet.sim.export.formats",
    "backbone": "pccbullet.sim.export.skin",
    "frustum_volume": "pccbullet.sim.export.skin",
    "limb_base_pose": "pccbullet.sim.export.rigid",
    "load_mesh": "pccbullet.sim.export.formats",
    "point_cloud": "pccbullet.sim.export.workspace",
    "read_pvd": "pccbullet.sim.export.formats",
    "rigid_mesh": "pccbullet.sim.export.rigid",
    "robot_rigid_meshes": "pccbullet.sim.export.rigid",
    "sample_configs": "pccbullet.sim.export.workspace",
    "section_poses": "pccbullet.sim.export.rigid",
    "skin_mesh": "pccbullet.sim.export.skin",
    "slice_dimensions": "pccbullet.sim.export.rigid",
    "tube_mesh": "pccbullet.sim.export.skin",
    "workspace_hull": "pccbullet.sim.export.workspace",
    "workspace_points": "pccbullet.sim.export.workspace",
    "write_mesh": "pccbullet.sim.export.formats",
    "write_pvd": "pccbullet.sim.export.formats",
    "write_series": "pccbullet.sim.export.formats",
}


__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = [
    "FORMATS",
    "Backbone",
    "backbone",
    "frustum_volume",
    "limb_base_pose",
    "load_mesh",
    "point_cloud",
    "read_pvd",
    "rigid_mesh",
    "robot_rigid_meshes",
    "sample_configs",
    "section_poses",
    "skin_mesh",
    "slice_dimensions",
    "tube_mesh",
    "workspace_hull",
    "workspace_points",
    "write_mesh",
    "write_pvd",
    "write_series",
]
