"""What a host does by itself to be reached from elsewhere, once it listens: a port
mapped on the router (:mod:`p2pcards.net.portmap`) and, with ``--tor``, an onion
service (:mod:`p2pcards.net.tor`); then the invite's addresses and the line that says
how the table can be reached (:mod:`p2pcards.net.reach`).

- **An IPv6 pinhole** is asked for at the same time, by PCP to the IPv6 default
  route's gateway, when the machine has a global IPv6 address: a router that
  filters IPv6 coming in opens the port for it (many need it, some do it
  anyway, some do not speak PCP: only an opened pinhole is said).
- **The mapping** is asked for when the host listens on every address and this
  machine's route goes through a LAN address (a machine with a public address, a
  host bound to one address and one given ``--address`` need none): PCP with
  NAT-PMP as its fallback and UPnP IGD at once, at most about 2 s, so a router
  that says nothing never holds the table up.  It is renewed at half its
  lifetime and deleted when the table ends, however it ends.  A router behind
  carrier-grade NAT, or behind another router, is said as such.
- **The onion service** lives as long as the table, leads to the host's listener
  on 127.0.0.1 and is deleted at the end; the host waits until tor has published
  it (up to two minutes) before it shows the invite, so that no joiner dials a
  service not there yet.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

import trio

from p2pcards.net import tor
from p2pcards.net.invite import Address, show_address
from p2pcards.net.portmap.common import PCP
from p2pcards.net.portmap.mapper import MAPPED, PortmapConfig, PortMapper, PortmapResult
from p2pcards.net.reach import Found, Mapped, Plan, Reach, discover, ipv6_gateway, kind, plan
from p2pcards.table.kinds import printable

MAX_REASONS = 600
"""The most characters of the reasons no port is mapped (a router's words among them)."""
PASSWORD_VARIABLE = "P2PCARDS_TOR_PASSWORD"
"""The environment variable that holds tor's control-port password, where tor asks for
one (a password on the command line would show in the list of processes)."""


@dataclass
class Reaching:
    """How a host makes itself reachable: the settings of ``host``."""

    bind: str | None = "127.0.0.1"
    """The address it listens on (None: every address, IPv4 and IPv6)."""
    address: str | None = None
    """The one address its invite names (``--address``), whatever the machine has."""
    portmap: PortmapConfig | None = None
    """How to ask the router for a mapping (None: not at all, ``--no-map``)."""
    tor: tuple[tor.ControlAddress, ...] | None = None
    """Tor's control port to ask for an onion service (None: no ``--tor``)."""
    found: Found | None = None
    """This machine's addresses (None: read them when the table is hosted)."""


@dataclass
class Outreach:
    """A host's mapping and onion service while its table lasts, and its invite's
    addresses."""

    reaching: Reaching
    say: Callable[[str], None] = print
    found: Found | None = None
    mapped: Mapped | None = None
    onion: Address | None = None
    publishing: bool = False
    """Whether tor is publishing the onion service (the invite does not name it yet)."""
    unmapped: str | None = None
    """Why no port is mapped, where one was asked for (None: mapped, or not asked)."""
    pinhole: Mapped | None = None
    """The port the router opened for this machine's global IPv6 address (PCP), if any."""
    gateway6: str | None = None
    """The IPv6 default route's gateway (None: read it when needed)."""

    def machine(self) -> Found:
        """This machine's addresses, read once."""
        if self.found is None:
            bind = self.reaching.bind
            self.found = self.reaching.found or (Found() if bind and kind(bind) else
                                                 discover())
        return self.found

    def mappable(self) -> bool:
        """Whether a mapping is worth asking for (see the module's docstring)."""
        reaching = self.reaching
        if reaching.portmap is None or reaching.address is not None \
                or reaching.bind not in (None, "0.0.0.0"):
            return False
        route = self.machine().route4
        return route is not None and kind(route) is Reach.LAN

    async def start(self, nursery: trio.Nursery, port: int) -> None:
        """Ask for what the settings say, for a host listening on ``port``, all at once;
        what comes is kept (and given up when ``nursery`` ends)."""
        reaching = self.reaching
        async with trio.open_nursery() as each:
            if reaching.tor is not None:
                self.publishing = True
                self.say("publishing the table as an onion service through tor (this takes"
                         " up to two minutes)...")
                each.start_soon(self._tor, nursery, port, reaching.tor)
            if self.mappable():
                each.start_soon(self._map4, nursery, port)
            if self.pinholed():
                each.start_soon(self._map6, nursery, port)

    async def _tor(self, nursery: trio.Nursery, port: int,
                   control: tuple[tor.ControlAddress, ...]) -> None:
        try:
            self.onion = await nursery.start(self._onion, port, control)
        finally:
            self.publishing = False

    async def _map4(self, nursery: trio.Nursery, port: int) -> None:
        assert self.reaching.portmap is not None
        mapper = PortMapper(port, self.reaching.portmap, changed=self._changed)
        self._take(await nursery.start(mapper.run))

    def pinholed(self) -> bool:
        """Whether to ask the router to open the port for this machine's global IPv6
        address (PCP: a router that filters IPv6 coming in opens a pinhole)."""
        reaching = self.reaching
        if reaching.portmap is None or reaching.address is not None \
                or reaching.bind not in (None, "::"):
            return False
        route = self.machine().route6
        if route is None or kind(route) is not Reach.INTERNET:
            return False
        if self.gateway6 is None:
            self.gateway6 = ipv6_gateway()
        return self.gateway6 is not None

    async def _map6(self, nursery: trio.Nursery, port: int) -> None:
        assert self.reaching.portmap is not None and self.gateway6 is not None
        config = replace(self.reaching.portmap, gateway=self.gateway6, methods=(PCP,),
                         client=self.machine().route6)
        self._pinholed(await nursery.start(PortMapper(port, config,
                                                      changed=self._pinhole_changed).run))

    def _pinholed(self, result: PortmapResult) -> None:
        self.pinhole = None
        if result.outcome == MAPPED and result.external_address and result.external_port:
            self.pinhole = Mapped(result.external_address, result.external_port, PCP)

    def _pinhole_changed(self, result: PortmapResult) -> None:
        """A renewal lost the pinhole, or moved it: said (the invite is unchanged)."""
        had = self.pinhole
        self._pinholed(result)
        if had is not None and self.pinhole is None:
            self.say("the router closed the table's IPv6 port again: friends may not reach"
                     " it over IPv6 (type invite)")

    async def _onion(self, port: int, control: tuple[tor.ControlAddress, ...], *,
                     task_status: trio.TaskStatus[Address]) -> None:
        async with tor.onion_service(port, control=control, wait=True,
                                     password=os.environ.get(PASSWORD_VARIABLE)) as onion:
            task_status.started((onion.address, onion.port))
            await trio.sleep_forever()

    def _take(self, result: PortmapResult) -> None:
        if result.outcome == MAPPED and result.external_address and result.external_port:
            self.mapped = Mapped(result.external_address, result.external_port,
                                 result.method or "")
            self.unmapped = None
            return
        self.mapped = None
        self.unmapped = printable("; ".join(f"{method}: {why}" for method, why  # (a router's
                                            in result.failures.items()), MAX_REASONS)  # words)

    def _changed(self, result: PortmapResult) -> None:
        """A renewal moved the mapping or lost it: the new invite is said."""
        self._take(result)
        if self.mapped is not None:
            at = show_address(self.mapped.address, self.mapped.port)
            self.say(f"the router mapped the table's port anew: {at} (type invite for the new"
                     " invite)")
        else:
            self.say(f"the router's port mapping is lost ({self.unmapped}); friends elsewhere"
                     " cannot reach the table (type invite)")

    def plan(self, port: int) -> Plan:
        """The invite's addresses and how the table can be reached, as things stand."""
        reaching = self.reaching
        made = plan(port, self.machine(), bind=reaching.bind, address=reaching.address,
                    mapped=self.mapped, onion=self.onion, pinhole=self.pinhole)
        if self.publishing:
            made.warnings.append("tor is still publishing the onion service: the invite"
                                 " names it once it is published")
        elif self.unmapped is not None and self.onion is None:
            made.warnings.append(f"no port mapped on the router ({self.unmapped}): host with"
                                 " --tor to be reached from anywhere")
        return made
