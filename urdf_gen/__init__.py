"""Robot descriptions -> PCC discretization -> URDF + meshes (the bottom layer of pccbullet)."""
