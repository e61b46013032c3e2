"""NAT-PMP (RFC 6886), PCP's predecessor: the external address (opcode 0) and one TCP
mapping (opcode 2), over UDP to the gateway's port 5351.

The external address request is 2 bytes (version 0, opcode 0); its answer 12 (the
result code, the seconds since the device's epoch, the IPv4 address).  A mapping
request is 12 bytes (version 0, opcode 2, reserved, the internal port, the suggested
external port, the requested lifetime); its answer 16 (the result code, the epoch,
the internal port, the external port mapped and the lifetime granted).  Lifetime 0
with external port 0 deletes the mapping.  A request is sent again after 250 ms,
then each wait doubles, nine sends at most (RFC 6886 section 3.1), cut short by the
caller's deadline.
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from p2pcards.net.portmap.common import NAT_PMP, MapError, Mapping, Unsupported, exchange

PORT = 5351
VERSION = 0
OP_ADDRESS, OP_TCP = 0, 2
RESPONSE = 128
ADDRESS_REQUEST = struct.Struct("!BB")
ADDRESS_ANSWER = struct.Struct("!BBHI4s")
"""version, opcode, result code, seconds since epoch, external IPv4 address."""
MAP_REQUEST = struct.Struct("!BBHHHI")
"""version, opcode, reserved, internal port, suggested external port, lifetime."""
MAP_ANSWER = struct.Struct("!BBHIHHI")
"""version, opcode, result, epoch, internal port, mapped external port, lifetime."""
FIRST_WAIT, SENDS = 0.25, 9
RESULTS = {0: "Success", 1: "Unsupported Version", 2: "Not Authorized/Refused",
           3: "Network Failure", 4: "Out of resources", 5: "Unsupported opcode"}
UNSUPPORTED_VERSION = 1


def result_name(code: int) -> str:
    return f"{RESULTS.get(code, 'an unknown result')} ({code})"


def schedule() -> Iterator[float]:
    return (FIRST_WAIT * 2 ** n for n in range(SENDS))


def address_request() -> bytes:
    return ADDRESS_REQUEST.pack(VERSION, OP_ADDRESS)


def map_request(internal_port: int, external_port: int, lifetime: int) -> bytes:
    return MAP_REQUEST.pack(VERSION, OP_TCP, 0, internal_port, external_port, lifetime)


def _checked(data: bytes, shape: struct.Struct, opcode: int) -> tuple[int, ...] | None:
    if len(data) < 4 or data[0] != VERSION or data[1] != RESPONSE + opcode:
        return None
    result = int.from_bytes(data[2:4], "big")
    if result == UNSUPPORTED_VERSION:
        raise Unsupported("the device does not speak NAT-PMP version 0")
    if result != 0:
        raise MapError(f"the router refused: {result_name(result)}")
    if len(data) < shape.size:
        return None
    return shape.unpack_from(data)


@dataclass(frozen=True)
class NatPmpAnswer:
    epoch: int
    internal_port: int
    external_port: int
    lifetime: int


def read_address(data: bytes) -> str | None:
    fields = _checked(data, ADDRESS_ANSWER, OP_ADDRESS)
    if fields is None:
        return None
    raw = fields[4]
    assert isinstance(raw, bytes)
    return str(ipaddress.IPv4Address(raw))


def read_map(data: bytes, internal_port: int) -> NatPmpAnswer | None:
    fields = _checked(data, MAP_ANSWER, OP_TCP)
    if fields is None or fields[4] != internal_port:
        return None
    return NatPmpAnswer(fields[3], fields[4], fields[5], fields[6])


class NatPmpClient:
    """NAT-PMP requests for ``internal_port`` to the gateway at ``server``."""

    def __init__(self, server: tuple[str, int], internal_port: int):
        self.server = server
        self.internal_port = internal_port
        self.external_address: str | None = None
        self.asked: Mapping | None = None
        """The mapping requested, while its answer is awaited (the mapper deletes it
        when the request is cancelled: lifetime 0 for the internal port)."""

    async def address(self) -> str:
        self.external_address = await exchange(self.server, address_request(), schedule(),
                                               read_address)
        return self.external_address

    async def request(self, external_port: int, lifetime: int) -> NatPmpAnswer:
        def accept(data: bytes) -> NatPmpAnswer | None:
            return read_map(data, self.internal_port)

        return await exchange(self.server, map_request(self.internal_port, external_port,
                                                       lifetime), schedule(), accept)

    async def map(self, lifetime: int, suggest: Mapping | None = None) -> Mapping:
        """The mapping, or its renewal (``suggest``: the mapping held); the external
        address is asked first (once) so that a mapping is never made for nothing."""
        self.asked = None
        address = self.external_address or await self.address()
        port = suggest.external_port if suggest is not None else self.internal_port
        self.asked = Mapping(NAT_PMP, address, port, self.internal_port, lifetime)
        answer = await self.request(port, lifetime)
        self.asked = None
        return Mapping(NAT_PMP, address, answer.external_port, self.internal_port,
                       answer.lifetime)

    async def delete(self, mapping: Mapping) -> None:
        await self.request(0, 0)
