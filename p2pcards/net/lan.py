"""LAN discovery: an open table announces itself; ``p2pcards lan`` lists what it hears.

A host started with ``--lan`` sends a small UDP beacon every
:data:`INTERVAL` seconds while seats are free, and once the game is under way
while a player seated at it is away or a watcher may still come (``join --lan NAME
--watch``), with no seat free (the multicast group
:data:`DEFAULT_GROUP` by default; ``--beacon ADDR:PORT`` sends elsewhere).
A beacon is a hint, never trusted: it carries the game, the host's name, its
port, its fingerprint, the free seats and the table's token (``--lan`` opens
the table to the local network), and a joiner still pins the fingerprint,
which the person confirms against the host's screen.  A table not heard for
three intervals is dropped from the list.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack
import trio

from p2pcards.games import GAMES
from p2pcards.net.identity import ID_BYTES
from p2pcards.net.invite import TOKEN_BYTES, Invite

DEFAULT_GROUP = ("239.255.45.45", 45451)
INTERVAL = 2.0
MAX_BEACON = 512
KIND = "p2pcards-table"


class BeaconError(ValueError):
    """A datagram that is not a beacon (ignored by the listener)."""


@dataclass(frozen=True)
class Heard:
    game: str
    name: str
    address: str
    port: int
    fingerprint: bytes
    token: bytes
    free: int

    def invite(self) -> Invite:
        return Invite(self.address, self.port, self.fingerprint, self.token)


def parse_address(text: str | None, default: tuple[str, int] = DEFAULT_GROUP
                  ) -> tuple[str, int]:
    if not text:
        return default
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not ADDR:PORT")
    ipaddress.ip_address(host)  # a literal address: beacons are not resolved
    return host, int(port)


def beacon(game: str, name: str, port: int, fingerprint: bytes, token: bytes, *, free: int
           ) -> bytes:
    data: bytes = msgpack.packb({"t": KIND, "v": 1, "game": game, "name": name,
                                 "port": port, "fp": fingerprint, "token": token,
                                 "free": free}, use_bin_type=True)
    return data


def read_beacon(data: bytes, source: str) -> Heard:
    if len(data) > MAX_BEACON:
        raise BeaconError("too long")
    try:
        raw: Any = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated types
        raise BeaconError(f"not msgpack ({exc})") from exc
    if not isinstance(raw, dict) or raw.get("t") != KIND or raw.get("v") != 1:
        raise BeaconError("not a p2pcards beacon")
    game, name, port = raw.get("game"), raw.get("name"), raw.get("port")
    fingerprint, token, free = raw.get("fp"), raw.get("token"), raw.get("free")
    if not (isinstance(game, str) and game in GAMES and isinstance(name, str)
            and len(name) <= 32
            and name.isprintable() and isinstance(port, int) and 0 < port < 65536
            and isinstance(fingerprint, bytes) and len(fingerprint) == ID_BYTES
            and isinstance(token, bytes) and len(token) == TOKEN_BYTES
            and isinstance(free, int) and 0 <= free < 16):
        raise BeaconError("a beacon with a missing or malformed field")
    return Heard(game, name, source, port, fingerprint, token, free)


def _is_multicast(host: str) -> bool:
    return ipaddress.ip_address(host).is_multicast


async def announce(target: tuple[str, int], make: Callable[[], bytes | None],
                   interval: float = INTERVAL) -> None:
    """Send ``make()`` to ``target`` every ``interval`` seconds (None: nothing this
    interval) until cancelled."""
    family = socket.AF_INET6 if ":" in target[0] else socket.AF_INET
    with trio.socket.socket(family, socket.SOCK_DGRAM) as sock:
        if _is_multicast(target[0]) and family == socket.AF_INET:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        while True:
            data = make()
            if data is not None:
                with contextlib.suppress(OSError):  # no route (yet): the next interval tries
                    await sock.sendto(data, target)
            await trio.sleep(interval)


class Listener:
    """Beacons heard on one address; :meth:`tables` lists those heard lately."""

    def __init__(self, listen: tuple[str, int], interval: float = INTERVAL):
        self.listen = listen
        self.interval = interval
        self.heard: dict[tuple[str, int, bytes], tuple[Heard, float]] = {}
        self.changed = trio.Event()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        host, port = self.listen
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with trio.socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if _is_multicast(host) and family == socket.AF_INET:
                await sock.bind(("", port))
                membership = struct.pack("4s4s", socket.inet_aton(host),
                                         socket.inet_aton("0.0.0.0"))
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
            else:
                await sock.bind((host, port))
            task_status.started()
            while True:
                data, source = await sock.recvfrom(MAX_BEACON + 1)
                try:
                    table = read_beacon(data, source[0])
                except BeaconError:
                    continue
                self.heard[(table.address, table.port, table.fingerprint)] = (
                    table, trio.current_time())
                self.changed.set()
                self.changed = trio.Event()

    def tables(self) -> list[Heard]:
        """Tables heard within the last three intervals, by host name."""
        now = trio.current_time()
        return sorted((table for table, at in self.heard.values()
                       if now - at <= 3 * self.interval), key=lambda t: (t.name, t.port))
