"""Fake routers for the port-mapping tests, on loopback only: a PCP / NAT-PMP device
on a UDP port of 127.0.0.1 (or ::1), a UPnP IGD (an SSDP responder on UDP and its
web server on TCP, both on 127.0.0.1 or another loopback address such as 127.0.0.2),
and an SSDP "group" that hands each search to several IGDs, as multicast would.  Each
records what it was sent, with the time on Trio's clock, and answers as the test tells
it; each runs in a nursery the test cancels at its end.  Their answers are built here
byte by byte, not with the code under test."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from xml.etree import ElementTree

import trio

PUBLIC = "1.2.3.4"
"""An external address the fakes report (never sent to: only written in answers)."""

Handler = Callable[[bytes], bytes | None]


def mapped(address: str) -> bytes:
    ip = ipaddress.ip_address(address)
    return ip.packed if ip.version == 6 else bytes(10) + b"\xff\xff" + ip.packed


def pcp_answer(request: bytes, *, result: int = 0, lifetime: int = 3600,
               port: int = 40000, address: str = PUBLIC, version: int = 2) -> bytes:
    """A PCP MAP answer to ``request`` (RFC 6887 sections 7.2 and 11.1)."""
    nonce, internal = request[24:36], request[40:42]
    return (bytes([version, 0x81, 0, result]) + struct.pack("!II", lifetime, 1234)
            + bytes(12) + nonce + bytes([6, 0, 0, 0]) + internal
            + struct.pack("!H", port) + mapped(address))


def natpmp_device(*, address: str = PUBLIC, port: int = 41000, lifetime: int = 3600,
                  result: int = 0) -> Handler:
    """A NAT-PMP-only device (RFC 6886): PCP's version 2 gets Unsupported Version."""
    def answer(data: bytes) -> bytes | None:
        if data[0] != 0:
            return bytes([0, 128 + data[1], 0, 1]) + struct.pack("!I", 99)
        if data == b"\x00\x00":
            return bytes([0, 128, 0, 0]) + struct.pack("!I", 99) + \
                ipaddress.IPv4Address(address).packed
        if len(data) == 12 and data[1] == 2:
            internal, _, asked = struct.unpack("!HHI", data[4:12])
            granted = min(asked, lifetime)
            return struct.pack("!BBHIHHI", 0, 130, result, 99, internal,
                               port if asked else 0, granted)
        return None
    return answer


class FakeUdp:
    """A UDP device at 127.0.0.1 (``host``): ``handle`` answers each datagram (None:
    silence), ``delay`` seconds after it came; ``requests`` keeps (time, datagram)."""

    def __init__(self, handle: Handler | None = None, host: str = "127.0.0.1",
                 delay: float = 0.0):
        self.handle = handle or (lambda data: None)
        self.host = host
        self.delay = delay
        self.port = 0
        self.requests: list[tuple[float, bytes]] = []

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        with trio.socket.socket(family, socket.SOCK_DGRAM) as sock:
            await sock.bind((self.host, 0))
            self.port = sock.getsockname()[1]
            task_status.started(self.port)
            while True:
                data, source = await sock.recvfrom(2048)
                assert ipaddress.ip_address(source[0]).is_loopback
                self.requests.append((trio.current_time(), data))
                reply = self.handle(data)
                if reply is not None:
                    await trio.sleep(self.delay)
                    await sock.sendto(reply, source)


DEVICE = "urn:schemas-upnp-org:device-1-0"
SOAP_ENV = "http://schemas.xmlsoap.org/soap/envelope/"


def description(service: str, control: str = "/ctl/IPConn") -> bytes:
    return f"""<?xml version="1.0"?>
<root xmlns="{DEVICE}"><specVersion><major>1</major><minor>0</minor></specVersion>
<device><deviceType>urn:schemas-upnp-org:device:InternetGatewayDevice:2</deviceType>
<serviceList><service><serviceType>urn:schemas-upnp-org:service:Layer3Forwarding:1</serviceType>
<controlURL>/ctl/L3F</controlURL></service></serviceList>
<deviceList><device><deviceType>urn:schemas-upnp-org:device:WANDevice:2</deviceType>
<serviceList><service>
<serviceType>urn:schemas-upnp-org:service:WANCommonInterfaceConfig:1</serviceType>
<controlURL>/ctl/CmnIfCfg</controlURL></service></serviceList>
<deviceList><device><deviceType>urn:schemas-upnp-org:device:WANConnectionDevice:2</deviceType>
<serviceList><service><serviceType>{service}</serviceType>
<serviceId>urn:upnp-org:serviceId:WANIPConn1</serviceId><controlURL>{control}</controlURL>
<eventSubURL>/evt/IPConn</eventSubURL><SCPDURL>/WANIPCn.xml</SCPDURL></service></serviceList>
</device></deviceList></device></deviceList></device></root>""".encode()


def soap_answer(service: str, action: str, out: dict[str, str]) -> bytes:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in out.items())
    return (f'<?xml version="1.0"?><s:Envelope xmlns:s="{SOAP_ENV}"><s:Body>'
            f'<u:{action}Response xmlns:u="{service}">{inner}</u:{action}Response>'
            "</s:Body></s:Envelope>").encode()


def soap_fault(code: int, text: str) -> bytes:
    return (f'<?xml version="1.0"?><s:Envelope xmlns:s="{SOAP_ENV}"><s:Body><s:Fault>'
            "<faultcode>s:Client</faultcode><faultstring>UPnPError</faultstring><detail>"
            '<UPnPError xmlns="urn:schemas-upnp-org:control-1-0">'
            f"<errorCode>{code}</errorCode><errorDescription>{text}</errorDescription>"
            "</UPnPError></detail></s:Fault></s:Body></s:Envelope>").encode()


@dataclass
class Call:
    action: str
    soapaction: str
    args: dict[str, str]
    at: float


@dataclass
class FakeIgd:
    """A UPnP IGD on 127.0.0.1 (``host``): SSDP on UDP, the description and control on
    TCP.  ``faults`` maps an action to the UPnP error it gets, ``delays`` to the seconds
    its answer waits; ``raw`` maps a path to the whole HTTP answer sent for it (a rogue
    device's); ``ssdp_delay`` is the seconds before a search is answered (None: never)."""

    service: str = "urn:schemas-upnp-org:service:WANIPConnection:2"
    external: str = PUBLIC
    reserved: int = 40123
    faults: dict[str, tuple[int, str]] = field(default_factory=dict)
    description: bytes | None = None
    host: str = "127.0.0.1"
    delays: dict[str, float] = field(default_factory=dict)
    raw: dict[str, bytes] = field(default_factory=dict)
    ssdp_delay: float | None = 0.0
    searches: list[bytes] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    http_port: int = 0
    ssdp_port: int = 0
    _ssdp: trio.socket.SocketType = field(init=False, repr=False)

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, self._serve, 0,
                                                    host=self.host))
            self.http_port = listeners[0].socket.getsockname()[1]
            with trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                await sock.bind((self.host, 0))
                self.ssdp_port = sock.getsockname()[1]
                self._ssdp = sock
                task_status.started(self.ssdp_port)
                while True:
                    data, source = await sock.recvfrom(2048)
                    self.searched(data, source, nursery)

    def searched(self, data: bytes, source: tuple[str, int], nursery: trio.Nursery) -> None:
        """A search heard (here or by a :class:`FakeSsdpGroup`): answered from this
        IGD's own SSDP socket after ``ssdp_delay``."""
        assert ipaddress.ip_address(source[0]).is_loopback
        self.searches.append(data)
        if self.ssdp_delay is not None:
            nursery.start_soon(self._answer_search, source)

    async def _answer_search(self, source: tuple[str, int]) -> None:
        assert self.ssdp_delay is not None
        await trio.sleep(self.ssdp_delay)
        await self._ssdp.sendto(
            b"HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=120\r\n"
            b"ST: urn:schemas-upnp-org:device:InternetGatewayDevice:2\r\n"
            + f"LOCATION: http://{self.host}:{self.http_port}/rootDesc.xml\r\n"
            .encode() + b"SERVER: fake UPnP/1.1\r\n\r\n", source)

    async def _serve(self, stream: trio.SocketStream) -> None:
        async with stream:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some(4096)
                if not chunk:
                    return  # the client went away (cancelled) before its request
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            headers = {k.strip().lower(): v.strip()
                       for k, _, v in (line.partition(":") for line in lines[1:])}
            while len(body) < int(headers.get("content-length", "0")):
                chunk = await stream.receive_some(4096)
                if not chunk:
                    return
                body += chunk
            method, path, _ = lines[0].split(" ")
            self.paths.append(f"{method} {path}")
            if path in self.raw:
                wire = self.raw[path]
            else:
                status, reply = self._answer(path, headers, body)
                if path != "/rootDesc.xml":
                    await trio.sleep(self.delays.get(self.calls[-1].action, 0.0))
                wire = (f"HTTP/1.1 {status}\r\nContent-Type: text/xml\r\n"
                        f"Content-Length: {len(reply)}\r\nConnection: close\r\n\r\n"
                        .encode() + reply)
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all(wire)

    def _answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[str, bytes]:
        if path == "/rootDesc.xml":
            return "200 OK", self.description or description(self.service)
        root = ElementTree.fromstring(body)
        envelope_body = root.find(f"{{{SOAP_ENV}}}Body")
        assert envelope_body is not None
        (call,) = list(envelope_body)
        action = call.tag.rpartition("}")[2]
        args = {child.tag: child.text or "" for child in call}
        self.calls.append(Call(action, headers.get("soapaction", ""), args,
                               trio.current_time()))
        if action in self.faults:
            return "500 Internal Server Error", soap_fault(*self.faults[action])
        out = {"GetExternalIPAddress": {"NewExternalIPAddress": self.external},
               "AddAnyPortMapping": {"NewReservedPort": str(self.reserved)}}.get(action, {})
        return "200 OK", soap_answer(self.service, action, out)


class FakeSsdpGroup:
    """The SSDP multicast group, on a UDP port of 127.0.0.1: each search is handed to
    every IGD of ``members``, which answers from its own address."""

    def __init__(self, *members: FakeIgd):
        self.members = members
        self.port = 0

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        async with trio.open_nursery() as nursery:
            with trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                await sock.bind(("127.0.0.1", 0))
                self.port = sock.getsockname()[1]
                task_status.started(self.port)
                while True:
                    data, source = await sock.recvfrom(2048)
                    for member in self.members:
                        member.searched(data, source, nursery)
