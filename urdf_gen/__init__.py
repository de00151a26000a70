"""Robot descriptions -> PCC discretization -> URDF + meshes (the bottom layer of pccbullet)."""

from urdf_gen.errors import ConfigurationError, PccBulletError, RobotNotFoundError, SpecError

__version__ = "0.1.0"

__all__ = ["ConfigurationError", "PccBulletError", "RobotNotFoundError", "SpecError", "__version__"]
