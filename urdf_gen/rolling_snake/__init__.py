"""The rolling-joint snake robot (seed 003): its TOML spec and its URDF."""
