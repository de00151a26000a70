"""Mesh export: rigid sections as posed, a smooth skin along the backbone, files, renders, workspaces.

Example::

    from sim.export import skin_mesh, write_series
    from urdf_gen.spec_loader import load_robot
    from urdf_gen.pcc import PccConfig

    limb = load_robot("ursula").limb("camera")
    skin = skin_mesh(limb, [PccConfig(bend=1.0, plane=0.0, length=0.6)])
    write_series([skin], "out", "skin", "vtk")   # out/skin_0000.vtp + out/skin.pvd
"""

from sim.export.formats import FORMATS, load_mesh, read_pvd, write_mesh, write_pvd, write_series
from sim.export.rigid import limb_base_pose, rigid_mesh, robot_rigid_meshes, section_poses, slice_dimensions
from sim.export.skin import Backbone, backbone, frustum_volume, skin_mesh, tube_mesh
from sim.export.workspace import point_cloud, sample_configs, workspace_hull, workspace_points

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
