"""PyBullet world, the 1 kHz loop, soft-arm models, experiments and export (middle layer)."""
