"""The Newton–Euler soft-limb model (seed 000): the limb model (:mod:`.model`), its parameters, piece
kinematics, compiled kernels, multi-limb batches, articulated-body solve, statics and integrators."""
