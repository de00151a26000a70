"""Input devices, operator mapping, model-mediated teleoperation, the demo and the CLI (top layer)."""
