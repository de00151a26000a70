"""How a robot's body is held in a world: :class:`BaseMode`."""

from __future__ import annotations

from pccbullet.core.types import Choice


class BaseMode(Choice):
    """How a robot's body (its head) moves; parse a user's name with :meth:`of`. A ``str``: it prints and
    serializes as its name."""

    FIXED = "fixed"
    """Welded to the world where it is loaded (the limbs' bases do not move)."""
    FREE = "free"
    """A rigid body of its own mass, with buoyancy, drag and added mass in the world's medium: it rests,
    tips over and is pushed by its limbs and whatever it touches."""
    MOVED = "moved"
    """Carried along a prescribed trajectory (:class:`~pccbullet.sim.body.trajectory.Trajectory`), its limbs
    swinging on it."""

    @classmethod
    def field(cls) -> str:
        """``base``: the name users write it under."""
        return "base"

    @property
    def moves(self) -> bool:
        """Whether the limbs' bases move (their dynamics take the base's motion)."""
        return self is not BaseMode.FIXED
