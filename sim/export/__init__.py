"""Mesh export: rigid sections as posed, a smooth skin along the backbone, files, renders, workspaces.

Example::

    from sim.export import skin_mesh, write_series
    from urdf_gen.spec_loader import load_robot
    from urdf_gen.pcc import PccConfig

    limb = load_robot("ursula").limb("camera")
    skin = skin_mesh(limb, [PccConfig(bend=1.0, plane=0.0, length=0.6)])
    write_series([skin], "out", "skin", "vtk")   # out/skin_0000.vtp + out/skin.pvd
"""

from sim.lazy import lazy_attributes

# Names resolved on first use (PEP 562): registering the command line must not load trimesh and PyBullet.
_LAZY = {
    "Backbone": "sim.export.skin",
    "FORMATS": "sim.export.formats",
    "backbone": "sim.export.skin",
    "frustum_volume": "sim.export.skin",
    "limb_base_pose": "sim.export.rigid",
    "load_mesh": "sim.export.formats",
    "point_cloud": "sim.export.workspace",
    "read_pvd": "sim.export.formats",
    "rigid_mesh": "sim.export.rigid",
    "robot_rigid_meshes": "sim.export.rigid",
    "sample_configs": "sim.export.workspace",
    "section_poses": "sim.export.rigid",
    "skin_mesh": "sim.export.skin",
    "slice_dimensions": "sim.export.rigid",
    "tube_mesh": "sim.export.skin",
    "workspace_hull": "sim.export.workspace",
    "workspace_points": "sim.export.workspace",
    "write_mesh": "sim.export.formats",
    "write_pvd": "sim.export.formats",
    "write_series": "sim.export.formats",
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
