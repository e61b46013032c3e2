"""What the port-mapping methods share: the mapping they return, their error, the
judgement of an external address, the gateway read from the routing table, and the
retransmission of one UDP request under a deadline.

Nothing here sends a packet but :func:`exchange` (to the address it is given);
:func:`default_gateway` only reads ``/proc/net/route``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import trio

T = TypeVar("T")

RandomBytes = Callable[[int], bytes]
"""A source of random bytes (``secrets.token_bytes`` in production, a seeded one in tests)."""

PCP, NAT_PMP, UPNP = "pcp", "nat-pmp", "upnp"
"""The names of the methods, as a :class:`Mapping` and a failure name them."""

CARRIER_GRADE = "carrier-grade NAT"
DOUBLE_NAT = "double NAT"
SHARED = ipaddress.ip_network("100.64.0.0/10")
"""RFC 6598's shared address space, used between a carrier's NAT and its customers
(imported by this name elsewhere: p2pcards.net.reach)."""
RFC1918 = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12",
                                                   "192.168.0.0/16"))
ROUTE_TABLE = Path("/proc/net/route")
RTF_UP, RTF_GATEWAY = 0x1, 0x2
MAX_DATAGRAM = 1100
"""The most a PCP or NAT-PMP answer is read (RFC 6887 caps a PCP message at 1100 bytes)."""


class MapError(Exception):
    """One method could not map the port; the message says why, in words."""


class Unsupported(MapError):
    """The device does not speak this version (PCP's cue to try NAT-PMP)."""


@dataclass(frozen=True)
class Mapping:
    """A port the router forwards to us: ``external_address:external_port`` reaches
    ``internal_port`` for ``lifetime`` seconds (0: until deleted)."""

    method: str
    external_address: str
    external_port: int
    internal_port: int
    lifetime: int


def plain(address: str) -> str:
    """``address`` with an IPv4-mapped IPv6 address written as IPv4."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def judge(address: str) -> str | None:
    """None when ``address`` is a public address others can reach; otherwise what it is
    (:data:`CARRIER_GRADE`, :data:`DOUBLE_NAT`, or why it is not global)."""
    try:
        ip = ipaddress.ip_address(plain(address))
    except ValueError:
        return f"not an address: {address[:64]!r}"
    if isinstance(ip, ipaddress.IPv4Address):
        if ip in SHARED:
            return CARRIER_GRADE
        if any(ip in net for net in RFC1918):
            return DOUBLE_NAT
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if not ip.is_global:
        return "not a global address"
    return None


def refusal(method: str, address: str) -> str | None:
    """Why the external ``address`` a method found is refused (None: it is public)."""
    what = judge(address)
    if what is None:
        return None
    if what == CARRIER_GRADE:
        return (f"{CARRIER_GRADE}: the router's external address {plain(address)} is in "
                "100.64.0.0/10, shared behind the carrier's own NAT")
    if what == DOUBLE_NAT:
        return (f"{DOUBLE_NAT}: the router's external address {plain(address)} is private "
                "(another router stands before it)")
    return f"the external address {plain(address)} is {what}"


def _routes(text: str) -> Iterator[tuple[int, str]]:
    for line in text.splitlines()[1:]:
        cells = line.split()
        if len(cells) < 8:
            continue
        try:
            destination, gateway, flags = (int(cells[1], 16), int(cells[2], 16),
                                           int(cells[3], 16))
            metric, mask = int(cells[6]), int(cells[7], 16)
        except ValueError:
            continue
        if destination == 0 and mask == 0 and flags & RTF_UP and flags & RTF_GATEWAY:
            yield metric, str(ipaddress.IPv4Address(gateway.to_bytes(4, "little")))


def default_gateway(table: Path = ROUTE_TABLE) -> str:
    """The IPv4 default route's gateway with the lowest metric, read from ``table``
    (Linux's ``/proc/net/route``; nothing is sent).  :class:`MapError` says why none."""
    try:
        text = table.read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise MapError(f"no default gateway: cannot read {table} ({exc.strerror})") from exc
    routes = sorted(_routes(text))
    if not routes:
        raise MapError(f"no default gateway: no default route in {table}")
    return routes[0][1]


def family_of(address: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in address else socket.AF_INET


def sockaddr(server: tuple[str, int]) -> tuple[Any, ...]:
    """``server`` as the socket takes it: a link-local IPv6 address keeps its interface
    (``fe80::1%eth0``: the scope goes into the address's fourth field)."""
    if "%" not in server[0]:
        return server
    found = socket.getaddrinfo(server[0], server[1], socket.AF_INET6, socket.SOCK_DGRAM,
                               0, socket.AI_NUMERICHOST)
    return tuple(found[0][4])


def local_address(server: tuple[str, int]) -> str:
    """The address this machine sends to ``server`` from (a UDP connect sends nothing)."""
    with socket.socket(family_of(server[0]), socket.SOCK_DGRAM) as probe:
        probe.connect(sockaddr(server))
        return str(probe.getsockname()[0]).partition("%")[0]


async def exchange(server: tuple[str, int], request: bytes, schedule: Iterator[float],
                      accept: Callable[[bytes], T | None], source: str | None = None) -> T:
    """Send ``request`` to ``server`` and again after each wait of ``schedule`` until
    ``accept`` takes an answer (it returns None for one to ignore), the schedule ends
    (:class:`MapError`) or the caller's deadline cancels this.  The socket is connected,
    so only ``server`` is heard; it sends from ``source`` when given (a PCP request for
    a global IPv6 address to a link-local gateway must come from that address).  Every
    socket error (the network unreachable, the gateway unreachable, nobody at the port)
    is a :class:`MapError`."""
    where = f"{server[0]}:{server[1]}"
    try:
        return await _exchange(server, request, schedule, accept, source)
    except ConnectionRefusedError:  # an ICMP port unreachable: nobody there
        raise MapError(f"nothing listens at {where}") from None
    except OSError as exc:
        raise MapError(f"cannot reach {where} ({exc})") from exc


async def _exchange(server: tuple[str, int], request: bytes, schedule: Iterator[float],
                    accept: Callable[[bytes], T | None], source: str | None) -> T:
    with trio.socket.socket(family_of(server[0]), socket.SOCK_DGRAM) as sock:
        if source is not None:
            await sock.bind((source, 0))
        await sock.connect(sockaddr(server))
        for wait in schedule:
            await sock.send(request)
            with trio.move_on_after(wait):
                while True:
                    taken = accept(await sock.recv(MAX_DATAGRAM))
                    if taken is not None:
                        return taken
    raise MapError(f"no answer from {server[0]}:{server[1]}")
