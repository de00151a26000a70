"""Statics of the cable-driven rolling-joint snake robot (seed 003): the model and its solver."""
