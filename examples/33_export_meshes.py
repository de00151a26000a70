"""Meshes of a bent URSULA grasper: skin and rigid sections in every format, a render, a GIF, a workspace.

python examples/33_export_meshes.py [OUT_DIR]
"""

import math
import sys
from pathlib import Path

from pccbullet.sim.export.formats import FORMATS, write_mesh, write_series
from pccbullet.sim.export.render import render_png, write_gif
from pccbullet.sim.export.rigid import limb_base_pose, rigid_mesh, section_poses
from pccbullet.sim.export.skin import frustum_volume, skin_mesh
from pccbullet.sim.export.workspace import workspace_hull, workspace_points
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot

out = Path(sys.argv[1] if len(sys.argv) > 1 else "out_33_meshes")
spec = load_robot("ursula")
limb = spec.limb("grasper")
T = limb_base_pose(spec, "grasper")
frames, rigid = [], []
for k in range(10):
    a = k / 9
    configs = [PccConfig(a * math.pi / 2, 0.0, 0.3), PccConfig(-a * math.pi / 3, a * math.pi / 2, 0.3)]
    frames.append(skin_mesh(limb, configs, T))
    rigid.append(rigid_mesh(limb, section_poses(limb, configs, T)))
err = frames[-1].volume / frustum_volume(limb) - 1.0
print(f"skin watertight: {frames[-1].is_watertight}, volume error {err:.2e}")
for fmt in FORMATS:
    write_series(frames, out / fmt, "skin", fmt, times=[0.1 * k for k in range(10)])
    write_series(rigid, out / fmt, "rigid", fmt, times=[0.1 * k for k in range(10)])
print(render_png([frames[-1], rigid[-1]], out / "grasper.png"))
print(write_gif(frames, out / "grasper.gif"))
points = workspace_points(limb, 2000, seed=0, T_world_base=T)
hull = workspace_hull(points)
print(f"grasper tip workspace hull: {hull.volume * 1e3:.1f} litres")
print(write_mesh(hull, out / "grasper_workspace.stl"))
