"""PCP, the Port Control Protocol (RFC 6887): a MAP request for one TCP port.

A request is 60 bytes: the common header (version 2, opcode MAP, the requested
lifetime, the client's address as IPv6, IPv4-mapped for IPv4) then the MAP payload
(a 12-byte mapping nonce, protocol 6, the internal port, the suggested external port
and address).  The answer carries a result code, the lifetime granted and the
assigned external port and address.  The same nonce renews the mapping; lifetime 0
deletes it.  An IPv6 client address asks for a pinhole through the router's firewall
(its external address is the client's own).

Retransmission follows RFC 6887 section 8.1.1 (the first after about 3 s, each next
twice the last, up to 1024 s, each with up to 10% jitter either way), cut short by the
caller's deadline (a MAP request cancelled before its answer is left in
:attr:`PcpClient.asked`, for the mapper to delete).  A device that answers
UNSUPP_VERSION, or a NAT-PMP device that answers in version 0, raises
:class:`~p2pcards.net.portmap.common.Unsupported`.
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from p2pcards.net.portmap.common import (
    PCP,
    MapError,
    Mapping,
    RandomBytes,
    Unsupported,
    exchange,
    local_address,
    plain,
)

PORT = 5351
VERSION = 2
OPCODE_MAP = 1
RESPONSE = 0x80
TCP = 6
NONCE_BYTES = 12
HEADER = struct.Struct("!BBHI16s")
"""version, R bit and opcode, reserved, requested lifetime, client address."""
MAP = struct.Struct("!12sB3xHH16s")
"""nonce, protocol, (reserved), internal port, suggested external port and address."""
ANSWER = struct.Struct("!BBBBII12x")
"""version, R bit and opcode, reserved, result code, lifetime, epoch, (reserved)."""
IRT, MRT = 3.0, 1024.0
"""RFC 6887's initial and most retransmission times, in seconds."""
RESULTS = {
    0: "SUCCESS", 1: "UNSUPP_VERSION", 2: "NOT_AUTHORIZED", 3: "MALFORMED_REQUEST",
    4: "UNSUPP_OPCODE", 5: "UNSUPP_OPTION", 6: "MALFORMED_OPTION", 7: "NETWORK_FAILURE",
    8: "NO_RESOURCES", 9: "UNSUPP_PROTOCOL", 10: "USER_EX_QUOTA",
    11: "CANNOT_PROVIDE_EXTERNAL", 12: "ADDRESS_MISMATCH", 13: "EXCESSIVE_REMOTE_PEERS",
}
UNSUPP_VERSION = 1


def as_ipv6(address: str) -> bytes:
    """The 16 bytes PCP writes an address in (IPv4 as ``::ffff:a.b.c.d``)."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv4Address):
        return bytes(10) + b"\xff\xff" + ip.packed
    return ip.packed


def from_ipv6(raw: bytes) -> str:
    return plain(str(ipaddress.IPv6Address(raw)))


@dataclass(frozen=True)
class PcpRequest:
    nonce: bytes
    client: str
    internal_port: int
    lifetime: int
    external_port: int = 0
    external_address: str | None = None

    def encode(self) -> bytes:
        if self.external_address is not None:
            suggested = as_ipv6(self.external_address)
        elif ":" in self.client:
            suggested = bytes(16)  # ::, no preference (IPv6)
        else:
            suggested = as_ipv6("0.0.0.0")  # ::ffff:0.0.0.0, no preference (IPv4)
        return (HEADER.pack(VERSION, OPCODE_MAP, 0, self.lifetime, as_ipv6(self.client))
                + MAP.pack(self.nonce, TCP, self.internal_port, self.external_port,
                           suggested))


@dataclass(frozen=True)
class PcpAnswer:
    result: int
    lifetime: int
    epoch: int
    external_port: int
    external_address: str


def result_name(code: int) -> str:
    return f"{RESULTS.get(code, 'an unknown result')} ({code})"


def read_answer(data: bytes, request: PcpRequest) -> PcpAnswer | None:
    """The answer to ``request`` in ``data``; None for one to ignore (another nonce,
    malformed); :class:`Unsupported` for a device that does not speak PCP version 2."""
    if len(data) >= 4 and data[0] == 0:  # NAT-PMP's answer to a version it lacks
        raise Unsupported("the device speaks NAT-PMP, not PCP")
    if len(data) < ANSWER.size or len(data) % 4 or len(data) > 1100:
        return None
    version, op, _, result, lifetime, epoch = ANSWER.unpack_from(data)
    if op != RESPONSE | OPCODE_MAP:
        return None
    if result == UNSUPP_VERSION:
        raise Unsupported(f"the device answers UNSUPP_VERSION (it speaks version {version})")
    if version != VERSION or len(data) < ANSWER.size + MAP.size:
        return None
    nonce, protocol, internal, port, address = MAP.unpack_from(data, ANSWER.size)
    if nonce != request.nonce or protocol != TCP or internal != request.internal_port:
        return None
    return PcpAnswer(result, lifetime, epoch, port, from_ipv6(address))


def schedule(random: RandomBytes) -> Iterator[float]:
    """RFC 6887's waits between retransmissions: RT = (1 + RAND) * min(2 * RTprev, MRT),
    the first (1 + RAND) * IRT, RAND uniform in [-0.1, 0.1] from ``random``."""
    base = IRT
    while True:
        rand = int.from_bytes(random(2), "big") / 0xFFFF * 0.2 - 0.1
        yield (1 + rand) * base
        base = min(2 * base, MRT)


class PcpClient:
    """MAP requests for ``internal_port`` to the PCP server at ``server``; one nonce
    for the life of the client (the nonce ties a renewal and the delete to the map)."""

    def __init__(self, server: tuple[str, int], internal_port: int, random: RandomBytes,
                 *, client: str | None = None):
        self.server = server
        self.internal_port = internal_port
        self.random = random
        self.source = client
        """The address requests are sent from (None: the route's choice)."""
        self.client = client if client is not None else local_address(server)
        self.nonce = random(NONCE_BYTES)
        self.epoch: int | None = None
        self.asked: Mapping | None = None
        """The mapping of the MAP request sent, while its answer is awaited (deleted
        with this nonce when the request is cancelled)."""

    async def request(self, lifetime: int, external_port: int = 0,
                      external_address: str | None = None) -> PcpAnswer:
        request = PcpRequest(self.nonce, self.client, self.internal_port, lifetime,
                             external_port, external_address)

        def accept(data: bytes) -> PcpAnswer | None:
            return read_answer(data, request)

        answer = await exchange(self.server, request.encode(), schedule(self.random), accept,
                                self.source)
        if answer.result != 0:
            raise MapError(f"the router refused: {result_name(answer.result)}")
        self.epoch = answer.epoch
        return answer

    async def map(self, lifetime: int, suggest: Mapping | None = None) -> Mapping:
        """Ask for (or renew, with ``suggest`` the mapping held) the mapping."""
        self.asked = None
        if suggest is None:
            port = self.internal_port
            address = None
        else:
            port, address = suggest.external_port, suggest.external_address
        self.asked = Mapping(PCP, address or "", port, self.internal_port, lifetime)
        answer = await self.request(lifetime, port, address)
        self.asked = None
        return Mapping(PCP, answer.external_address, answer.external_port,
                       self.internal_port, answer.lifetime)

    async def delete(self, mapping: Mapping) -> None:
        """MAP with lifetime 0 and this client's nonce (the server matches the nonce,
        the protocol and the internal port; the external port and address are hints)."""
        await self.request(0, mapping.external_port, mapping.external_address or None)
