"""Mesh export: rigid sections as posed, a smooth skin along the backbone, files, renders, workspaces.

Modules: :mod:`.skin` (smooth skin along the backbone), :mod:`.rigid` (rigid sections as posed),
:mod:`.formats` (mesh files and VTK series), :mod:`.render` (offscreen PNG, GIF, MP4), :mod:`.workspace`
(sampled tip workspaces), :mod:`.urdf_meshes` (a URDF's visuals at rest), :mod:`.register` and :mod:`.cli`
(the ``pccbullet export`` command).

Example::

    from pccbullet.sim.export.formats import write_series
    from pccbullet.sim.export.skin import skin_mesh
    from pccbullet.urdf_gen.spec_loader import load_robot
    from pccbullet.urdf_gen.pcc import PccConfig

    limb = load_robot("ursula").limb("camera")
    skin = skin_mesh(limb, [PccConfig(bend=1.0, plane=0.0, length=0.6)])
    write_series([skin], "out", "skin", "vtk")   # out/skin_0000.vtp + out/skin.pvd
"""
