"""The host's door: the links still in their handshake, and how often one comes back.

No sockets, no Trio, no clock: the relay (:mod:`p2pcards.net.host`) asks, then
acts (the time is handed in).

Until its ``auth`` frame has been checked a link is nobody's, and costs the
host a file and some memory.  The door bounds that:

* A link's frames are capped at :data:`PREAUTH_FRAME` bytes until it is
  authenticated (its ``hello`` and ``auth`` are small), and it must have sent
  its ``auth`` within :data:`AUTH_SECONDS` of connecting.
* At most :data:`MAX_UNAUTHENTICATED` links are in their handshake at once, at
  most :data:`MAX_PER_ADDRESS` of them from one address (an IPv6 address counts
  by its /64).  A link over its address's share is closed at once; a link that
  finds every slot taken takes the oldest one (:meth:`Gate.enter` names the
  link to close), so idle links cannot keep the door shut: to keep a joiner
  out, a flood must open links from many addresses faster than the joiner
  finishes its handshake.
* Each seated identity has one slot more, reserved for links from the address
  it was last seated from: a player whose link dropped comes back even while
  the door is crowded, and no link from elsewhere takes that slot.

:class:`Rejoins` paces a seated identity's returns: :data:`REJOIN_BURST` in
any :data:`REJOIN_WINDOW` seconds; one more is held, at most
:data:`REJOIN_HOLD` seconds, until the window lets it in.
"""

from __future__ import annotations

import ipaddress
from collections import Counter, deque
from dataclasses import dataclass, field

PREAUTH_FRAME = 4096
"""Bytes in a frame before the link is authenticated.  A joiner's ``hello`` is under 60
bytes and its ``auth`` at most about 1.2 KiB (a name, a key, the token, the proof, and
eight bots of a kind, a key and a signature); 4 KiB leaves room for fields a later
version may add, and decoding 4 KiB of the worst msgpack costs well under a
millisecond (the 320 KiB cap of a seated link's frame allows about 100 ms)."""
AUTH_SECONDS = 5.0
"""Seconds from connecting to the ``auth`` frame: a TLS handshake, the two hellos and
the ``auth``, about three round trips.  Even at a satellite link's 600 ms a round
trip that is under 2 s; 5 s leaves room for a loaded machine, and an idle link holds
its slot no longer than that."""
MAX_UNAUTHENTICATED = 32
"""Links in their handshake at once.  A table has at most 7 joiners; 32 lets every one
of them connect together several times over, and is far below the 1,024 open files a
desktop allows a process (each link is one file)."""
MAX_PER_ADDRESS = 8
"""Links in their handshake at once from one address: every joiner of the largest table
(7) behind one router, and one to spare.  One address alone cannot fill the door."""


@dataclass(eq=False)
class Ticket:
    """One link's slot at the door (held until it is authenticated, or gone)."""

    address: str
    reserved: bool
    evicted: bool = False
    """Another link took this slot (the oldest) when the door was full: close it."""


@dataclass
class Gate:
    """The slots of the links still in their handshake."""

    total: int = MAX_UNAUTHENTICATED
    per_address: int = MAX_PER_ADDRESS
    pool: deque[Ticket] = field(default_factory=deque)
    """The links holding an ordinary slot, the oldest first."""
    reserve: Counter[str] = field(default_factory=Counter)
    """Reserved slots taken, by address."""
    seated: dict[bytes, str] = field(default_factory=dict)
    """The address each seated identity was last seated from."""
    refused: int = 0
    """Links closed at the door, over their address's share."""
    evicted: int = 0
    """Links whose slot a newer one took."""

    def enter(self, address: str) -> tuple[Ticket | None, Ticket | None]:
        """A slot for a new link from ``address`` (None: close it at once), and the link
        whose slot it took (None if no other link loses one)."""
        if self.reserve[address] < sum(a == address for a in self.seated.values()):
            self.reserve[address] += 1
            return Ticket(address, reserved=True), None
        if sum(t.address == address for t in self.pool) >= self.per_address:
            self.refused += 1
            return None, None
        ticket = Ticket(address, reserved=False)
        oldest = None
        if len(self.pool) >= self.total:
            oldest = self.pool.popleft()
            oldest.evicted = True
            self.evicted += 1
        self.pool.append(ticket)
        return ticket, oldest

    def leave(self, ticket: Ticket) -> None:
        """The link of ``ticket`` is authenticated, or gone: its slot is free."""
        if ticket.reserved:
            self.reserve[ticket.address] -= 1
            if not self.reserve[ticket.address]:
                del self.reserve[ticket.address]
        elif not ticket.evicted:
            self.pool.remove(ticket)

    def sat(self, key: bytes, address: str) -> None:
        """Identity ``key`` is seated from ``address``: its reserved slot is there."""
        self.seated[key] = address

    @property
    def waiting(self) -> int:
        """Links in their handshake now."""
        return len(self.pool) + sum(self.reserve.values())


def address_of(host: str) -> str:
    """What the door counts a link by: its IP address, or an IPv6 address's /64 (one
    subscriber's share, which a single attacker may hold whole)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


# ------------------------------------------------------------------ coming back

REJOIN_BURST = 5
"""Times a seated identity may come back in REJOIN_WINDOW seconds.  A joiner whose link
drops dials again after 0.2 s, then with a pause growing to 5 s; five returns a minute
is more than a bad connection makes, and each return costs the host every table
message so far (sent again) and the joiner's resent messages (checked again)."""
REJOIN_WINDOW = 60.0
REJOIN_HOLD = 10.0
"""Most seconds a return over the pace is held before it is seated (or, if the window
is still full, closed without a reason: the joiner dials again, as after any lost
link).  Below the joiner's own 15 s wait for its welcome."""


@dataclass
class Rejoins:
    """When each seated identity came back, its last REJOIN_BURST times."""

    burst: int = REJOIN_BURST
    window: float = REJOIN_WINDOW
    times: dict[bytes, deque[float]] = field(default_factory=dict)

    def wait(self, key: bytes, now: float) -> float:
        """Seconds until identity ``key`` may be seated again (0: now)."""
        times = self.times.get(key)
        if times is None or len(times) < self.burst:
            return 0.0
        return max(0.0, times[0] + self.window - now)

    def seated(self, key: bytes, now: float) -> None:
        self.times.setdefault(key, deque(maxlen=self.burst)).append(now)
