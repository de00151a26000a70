"""Soft-arm models: Newton-Euler dynamics, statics, actuators, hydraulics."""
