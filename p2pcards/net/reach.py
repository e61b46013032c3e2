"""Where a host can be reached, found without sending anything, and the invite's
addresses.

- **What the machine has.** The source address the kernel would use on the
  default route, for IPv4 and for IPv6 (a UDP socket "connected" to a
  documentation address: connecting a UDP socket sends no packet, it only picks
  the route), the IPv4 addresses of the interfaces (Linux's ``SIOCGIFADDR``) and
  the IPv6 addresses of global scope (``/proc/net/if_inet6``).  Whatever cannot
  be read on this system is simply not found.
- **What the invite offers** (:func:`plan`): with ``--address``, that address
  alone; bound to one address, that one; bound to every address, up to four
  candidates in this order: a port mapped on the router (its public address), a
  public IPv4 address of this machine, a global IPv6 address, a LAN address; an
  onion address is added with ``--tor``.  Loopback is offered only when the
  host is bound to it (or nothing else exists).
- **How it can be reached**, in one line (:class:`Reach`): from the internet
  directly, through a mapped port, on this LAN only, or this machine only.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import socket
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from p2pcards.net.invite import Address, show_address
from p2pcards.net.portmap.common import SHARED

MOST = 4
"""Addresses a host offers in its invite (an onion address besides)."""
SIOCGIFADDR = 0x8915
"""Linux's ioctl that reads an interface's IPv4 address."""
PROBES = {socket.AF_INET: "192.0.2.1", socket.AF_INET6: "2001:db8::1"}
"""Documentation addresses (RFC 5737, RFC 3849) whose route a UDP socket looks up."""


class Reach(Enum):
    """How a table can be reached, said in one line when it is hosted."""

    INTERNET = "from the internet directly"
    MAPPED = "from the internet, through a port the router mapped"
    LAN = "on this LAN only"
    MACHINE = "this machine only"


@dataclass(frozen=True)
class Found:
    """The addresses this machine has, by kind."""

    route4: str | None = None
    """The IPv4 source address of the default route."""
    route6: str | None = None
    """The IPv6 source address of the default route."""
    ipv4: tuple[str, ...] = ()
    """Every interface's IPv4 address."""
    global6: tuple[str, ...] = ()
    """Every IPv6 address of global scope."""


@dataclass(frozen=True)
class Mapped:
    """A port the router mapped to the host's: the public address and port, and how."""

    address: str
    port: int
    method: str


@dataclass
class Plan:
    """The invite's addresses and the line that says how the table can be reached."""

    addresses: list[Address]
    reach: Reach
    line: str
    warnings: list[str] = field(default_factory=list)


def route_source(family: socket.AddressFamily) -> str | None:
    """The source address of the default route for ``family`` (None: no such route)."""
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((PROBES[family], 9))  # (UDP: nothing is sent)
            return str(probe.getsockname()[0]).partition("%")[0]
    except OSError:
        return None


def interface_ipv4() -> list[str]:
    """Every interface's IPv4 address (Linux; elsewhere none are found)."""
    found: list[str] = []
    try:
        names = socket.if_nameindex()
    except OSError:
        return found
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in names:
            request = struct.pack("256s", name.encode()[:15])
            try:
                answer = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, request)
            except OSError:
                continue  # (no IPv4 address on it)
            found.append(socket.inet_ntoa(answer[20:24]))
    return found


def interface_ipv6(path: Path = Path("/proc/net/if_inet6")) -> list[str]:
    """Every IPv6 address of global scope (Linux's table; elsewhere none are found)."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[3] == "00" and len(fields[0]) == 32:
                found.append(str(ipaddress.IPv6Address(bytes.fromhex(fields[0]))))
    return found


def ipv6_gateway(path: Path = Path("/proc/net/ipv6_route")) -> str | None:
    """The IPv6 default route's gateway, with its interface (``fe80::1%eth0``), from
    Linux's table (None: none found; nothing is sent)."""
    best: tuple[int, str] | None = None
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) < 10 or fields[0] != "0" * 32 or fields[1] != "00" \
                    or fields[4] == "0" * 32:
                continue
            hop = ipaddress.IPv6Address(bytes.fromhex(fields[4]))
            name = f"{hop}%{fields[9]}" if hop.is_link_local else str(hop)
            metric = int(fields[5], 16)
            if best is None or metric < best[0]:
                best = (metric, name)
    return best[1] if best is not None else None


def discover() -> Found:
    """What this machine has, read now (nothing is sent)."""
    return Found(route_source(socket.AF_INET), route_source(socket.AF_INET6),
                 tuple(interface_ipv4()), tuple(interface_ipv6()))


def kind(address: str) -> Reach | None:
    """INTERNET for a global address, LAN for a private or link one, MACHINE for
    loopback; None for an address no friend can use (unspecified, multicast) or a
    name (not an address)."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return None
    if ip.is_loopback:
        return Reach.MACHINE
    if ip.is_unspecified or ip.is_multicast or ip.is_link_local:
        return None
    if ip.is_global:
        return Reach.INTERNET
    return Reach.LAN if ip.is_private or ip in SHARED else None




def plan(port: int, found: Found, *, bind: str | None = None, address: str | None = None,
         mapped: Mapped | None = None, onion: Address | None = None,
         pinhole: Mapped | None = None) -> Plan:
    """The invite's addresses for a host listening on ``port`` at ``bind`` (None: every
    address), and how the table can be reached (``pinhole``: the router opened the
    port for this global IPv6 address).  A host bound to loopback with an onion
    service offers the onion address alone: it is reached through tor only."""
    extra = [onion] if onion is not None else []
    via = f"; through tor at {show_address(*onion)}" if onion is not None else ""
    if address is not None:
        reach = kind(address) or Reach.INTERNET
        return Plan([(address, port), *extra], reach, f"the invite names"
                     f" {show_address(address, port)} (--address){via}")
    if bind is not None and bind not in ("0.0.0.0", "::"):
        reach = kind(bind) or Reach.LAN
        if reach is Reach.MACHINE and onion is not None:
            return Plan([onion], Reach.INTERNET, f"reachable through tor only, at"
                        f" {show_address(*onion)} (this machine's addresses are not in the"
                        " invite)")
        return Plan([(bind, port), *extra], reach,
                    f"reachable {reach.value} (listening on {show_address(bind, port)}){via}")
    four = [a for a in (found.route4, *found.ipv4) if a is not None and bind != "::"]
    public4 = _unique(a for a in four if kind(a) == Reach.INTERNET)
    lan4 = _unique(a for a in four if kind(a) == Reach.LAN)
    six = [a for a in (found.route6, *found.global6) if a is not None and bind != "0.0.0.0"]
    global6 = _unique(a for a in six if kind(a) == Reach.INTERNET)
    lan6 = _unique(a for a in six if kind(a) == Reach.LAN)  # (unique local addresses)
    lan = lan4[:1] or lan6[:1]
    candidates: list[Address] = []
    if mapped is not None:
        candidates.append((mapped.address, mapped.port))
    candidates += [(a, port) for a in (*public4[:1], *global6[:1], *lan)]
    candidates = candidates[:MOST]
    on_lan = "on this LAN only" if lan4 else "not at all"
    warnings: list[str] = []
    opened = pinhole is not None and bool(global6) and pinhole.address == global6[0]
    if mapped is not None:
        reach = Reach.MAPPED
        at = show_address(mapped.address, mapped.port)
        line = f"reachable {reach.value} ({mapped.method}): {at}"
        if opened and pinhole is not None:
            line += (f"; over IPv6 at {show_address(global6[0], port)} (the router opened it:"
                     f" {pinhole.method})")
    elif public4:
        reach = Reach.INTERNET
        line = f"reachable {reach.value} at {show_address(public4[0], port)}"
    elif global6:
        reach = Reach.INTERNET
        line = (f"reachable {reach.value} over IPv6 at {show_address(global6[0], port)}"
                + (f" (the router opened it: {pinhole.method})" if opened and pinhole else
                   " where the router lets it in") + f"; over IPv4 {on_lan}")
    elif lan:
        reach = Reach.LAN
        line = (f"reachable {reach.value} at {show_address(lan[0], port)}: friends elsewhere"
                " need a port mapped on the router, or --tor")
    else:
        reach = Reach.MACHINE
        line = f"reachable {reach.value}: no network address was found"
        candidates = [("127.0.0.1" if bind != "::" else "::1", port)]
        warnings.append("the invite names loopback: only this machine can use it")
    return Plan([*candidates, *extra], reach, line + via, warnings)


def _unique(addresses: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for address in addresses:
        if address not in seen:
            seen.append(address)
    return seen
