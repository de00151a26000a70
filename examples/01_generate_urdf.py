"""Generate URSULA's URDFs and print each limb's joint count and mass against the analytic frustum.

Usage: python examples/01_generate_urdf.py OUT_DIR [SECTIONS]
"""

import sys
import xml.etree.ElementTree as ET

from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.urdf_writer import write_urdf

out_dir = sys.argv[1]
sections = int(sys.argv[2]) if len(sys.argv) > 2 else None
spec = load_robot("ursula", sections=sections)
out = write_urdf(spec, out_dir)
for limb in spec.limbs:
    root = ET.parse(out.limbs[limb.name]).getroot()
    movable = sum(j.get("type") != "fixed" for j in root.findall("joint"))
    total = sum(float(link.find("inertial/mass").get("value")) for link in root.findall("link"))
    payload = limb.payload.mass if limb.payload else 0.0
    print(
        f"{limb.name:10s} joints={movable:3d} links total={total:.6f} kg "
        f"(frustum {limb.mass:.6f} kg + payload {payload:.3f} kg + 2 markers 0.0002 kg)"
    )
