"""The one key table of every keyboard-like device: the GUI window's keys and the terminal's.

``pccbullet demo --help-keys`` prints it, the GUI shows it, the terminal prints it at start. Rate keys
(:data:`RATE_KEYS`) move the selected segment while held (a terminal has no key-up events: each press
holds its action for a fixed time, and presses add up); the others act once per press
(:data:`PRESS_KEYS`; digits select a limb in the robot file's order; ``g`` closes or opens the selected
limb's grasp, :mod:`pccbullet.teleop.mapping`).
"""

from __future__ import annotations

from collections.abc import Sequence

RATE_KEYS = {
    "w": "bend+",
    "s": "bend-",
    "a": "plane+",
    "d": "plane-",
    "e": "length+",
    "q": "length-",
}
PRESS_KEYS = {"n": "next_segment", "l": "next_limb", "f": "follow", "g": "grasp", "x": "quit"}
QUIT = "quit"  # the action that ends an interactive session
TARGET_ACTIONS = ("next_segment", "next_limb")  # besides "select:<limb>": they change what keys move


def limb_keys(limbs: Sequence[str]) -> dict[str, str]:
    """Digit keys 1-9 -> ``select:<limb>`` for the robot's limbs in file order."""
    return {str(i + 1): f"select:{limb}" for i, limb in enumerate(limbs[:9])}


def key_table(limbs: Sequence[str] = ("grasper", "palpation", "camera", "light")) -> list[str]:
    """The key table as text lines (the same for every keyboard-like device)."""
    digits = f"1-{min(len(limbs), 9)}" if limbs else "1-9"
    return [
        "w/s: bend the selected segment + / -     a/d: turn its bending plane     e/q: stretch / shorten it",
        f"{digits}: select a limb ({', '.join(limbs[:9])})     n: next segment     l: next limb",
        "f: the light follows the camera (toggle)     g: close / open the selected limb's grasp (tendons)",
        "x: end the session (or Ctrl-C)",
    ]


def changes_target(action: str) -> bool:
    """Whether a one-shot action changes which segment the rate keys move."""
    return action in TARGET_ACTIONS or action.startswith("select:")
