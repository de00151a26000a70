"""What moves a compliant limb, as one typed value: its drive.

:attr:`Drive.JOINTS`: the springs' targets (:attr:`pccbullet.sim.limb.dynamics.CompliantLimb.target`) move
to each command; the tendons stay slack unless commanded. :attr:`Drive.TENDONS`: the limb's tendons
(:class:`pccbullet.sim.limb.tendons.TendonDrive`) follow each command, the springs keep the rest shape as
their targets. :attr:`Drive.CHAMBERS`: the limb's pressurized chambers
(:class:`pccbullet.sim.limb.chambers.ChamberDrive`) take the pressures that hold each command statically,
or the pressures a user sets; the springs keep the rest shape as their targets. A drive checks that a
limb can take it (:meth:`Drive.check`) and turns the limb's commands into what its implicit step applies
(:meth:`Drive.start`, :meth:`Drive.command`, :meth:`Drive.command_pcc`), so that no caller branches on a
drive's name: a new drive is a member here with its branch in these few methods. Users still write
``"joints"``, ``"tendons"`` or ``"chambers"`` (``World.load_robot(drive=...)``, TOML, CLI flags):
:meth:`Drive.of` parses a name once, at that edge. A ``Drive`` is a :class:`~pccbullet.core.types.Choice`,
a ``str``: it prints and serializes as its name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import Choice, FloatArray
from pccbullet.sim.limb.chambers import ChamberDrive
from pccbullet.sim.limb.tendons import TendonDrive
from pccbullet.sim.limb.topology import LIMB_TOPOLOGIES, limb_topology
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.topology import Topology


class DrivenLimb(Protocol):
    """What a drive sets of a compliant limb (:class:`pccbullet.sim.limb.dynamics.CompliantLimb`)."""

    target: FloatArray
    """The springs' targets, a joint vector."""

    @property
    def rest(self) -> FloatArray:
        """The joint vector of the limb's rest shape."""
        ...

    @property
    def tendons(self) -> TendonDrive | None:
        """The limb's tendons and their actuators (``None``: it has none)."""
        ...

    @property
    def chambers(self) -> ChamberDrive | None:
        """The limb's chambers and their lines (``None``: not driven by them)."""
        ...


class Drive(Choice):
    """How a compliant limb is driven; see the module docstring. Parse a user's name with :meth:`of`."""

    JOINTS = "joints"
    """Spring targets on its joints."""
    TENDONS = "tendons"
    """Its tendons, through their controller."""
    CHAMBERS = "chambers"
    """Its chambers' pressures (:mod:`pccbullet.sim.limb.chambers`)."""

    def check(
        self, limb: str, declares_tendons: bool, chain: Topology, declares_chambers: bool = False
    ) -> None:
        """Raise :class:`ConfigurationError` (one line) unless limb ``limb`` (on the ``chain`` chain,
        ``declares_tendons`` whether its file has ``[[limbs.tendons]]``, ``declares_chambers`` whether it
        has chambers with an area) can take this drive: tendons and chambers need to be declared, on a
        chain they can drive (the rod chain)."""
        if self is Drive.CHAMBERS and not (declares_chambers and limb_topology(chain).tendons):
            on = f"is on the {chain} chain (chambers: rod)"
            why = (
                "declares no chambers ([limbs.actuators] kind 'chamber' with area_mm2)"
                if not declares_chambers
                else on
            )
            raise ConfigurationError(f"limb '{limb}' {why}; drive = {self.value!r} is not allowed")
        if self is Drive.TENDONS and not (declares_tendons and limb_topology(chain).tendons):
            chains = ", ".join(t.value for t, row in LIMB_TOPOLOGIES.items() if row.tendons)
            on = f"is on the {chain} chain (tendons: {chains})"
            why = "declares no tendons" if not declares_tendons else on
            raise ConfigurationError(f"limb '{limb}' {why}; drive = {self.value!r} is not allowed")

    def start(self, limb: DrivenLimb) -> None:
        """Hold ``limb``'s rest shape (its springs' targets are the rest shape already); chambers start
        at zero pressure."""
        if self is Drive.TENDONS:
            _tendons(limb).command_vector(limb.rest)

    def command(self, limb: DrivenLimb, vector: FloatArray) -> None:
        """Move ``limb`` towards the joint vector ``vector``: the springs' targets (joints) or the tendons'
        lengths at it with the statics' tensions (tendons,
        :meth:`~pccbullet.sim.limb.tendons.TendonDrive.command_vector`)."""
        if self is Drive.TENDONS:
            _tendons(limb).command_vector(vector)
        elif self is Drive.CHAMBERS:
            _chambers(limb).command_vector(vector)
        else:
            limb.target = vector

    def command_pcc(self, limb: DrivenLimb, configs: Sequence[PccConfig], vector: FloatArray) -> None:
        """Move ``limb`` towards the per-segment PCC ``configs`` (``vector``: their joint vector): the
        springs' targets (joints) or the tendon controller's goal, the goal of its shape loop too
        (tendons, :meth:`~pccbullet.sim.limb.tendons.TendonDrive.set_pcc`)."""
        if self is Drive.TENDONS:
            _tendons(limb).set_pcc(configs)
        elif self is Drive.CHAMBERS:
            _chambers(limb).command_vector(vector)
        else:
            limb.target = vector


def _tendons(limb: DrivenLimb) -> TendonDrive:
    """``limb``'s tendons (:meth:`Drive.check` let only a limb with tendons take the tendon drive)."""
    if limb.tendons is None:
        raise ConfigurationError("drive = 'tendons' needs a limb with tendons on the rod chain")
    return limb.tendons


def _chambers(limb: DrivenLimb) -> ChamberDrive:
    """``limb``'s chambers (:meth:`Drive.check` let only a limb with chambers take the chamber drive)."""
    if limb.chambers is None:
        raise ConfigurationError("drive = 'chambers' needs a limb with chambers on the rod chain")
    return limb.chambers
