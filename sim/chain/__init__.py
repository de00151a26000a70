"""Compiled rigid-chain dynamics of a loaded limb URDF: recursive Newton–Euler and composite-rigid-body
kernels (:mod:`.kernels`), the implicit spring solve (:mod:`.solve`) and the chain read from the URDF
(:mod:`.rigid`)."""
