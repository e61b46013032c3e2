"""UPnP Internet Gateway Device (v1 and v2): found by SSDP, driven by SOAP over HTTP.

1. An SSDP M-SEARCH for InternetGatewayDevice:2 and :1 goes to :data:`SSDP_GROUP`
   (``239.255.255.250:1900``; a test gives a loopback address), again every
   :data:`SEARCH_AGAIN` seconds.  An answer counts when its ``LOCATION`` is an
   ``http://`` URL on the answering address; the default gateway's is taken at once.
   Another device's (any machine on the LAN can answer) is taken only when the
   gateway has not answered within :data:`PREFER_GATEWAY` seconds of it (or the
   gateway is not known).
2. The device description at that URL (at most :data:`MAX_DESCRIPTION` bytes, no
   DOCTYPE) names the WANIPConnection:2, WANIPConnection:1 or WANPPPConnection:1
   service (in that order of preference) and its control URL, which must lie on the
   same address.
3. ``GetExternalIPAddress``, then ``AddAnyPortMapping`` (v2: the router picks the
   port, and says it) or, where that is refused or missing, ``AddPortMapping`` (v1,
   the internal port asked for outside too); a lease refused as not permanent
   (error 725) is asked again for lease 0.  ``AddPortMapping`` again renews;
   ``DeletePortMapping`` deletes.

A mapping asked for but not yet answered is kept in :attr:`UpnpClient.asked`, for the
mapper to delete when the request is cancelled.  ``DeletePortMapping`` names the
external port, so for ``AddAnyPortMapping`` (the router picks the port) only the port
suggested can be deleted: a port the router picked and never told cannot be deleted,
and is left to the lease asked for.

Every failure, an unreachable network included, is a :class:`MapError`.
"""

from __future__ import annotations

import ipaddress
import math
import socket
from dataclasses import dataclass
from urllib.parse import urljoin
from xml.etree import ElementTree
from xml.sax.saxutils import escape

import trio

from p2pcards.net.portmap import minihttp
from p2pcards.net.portmap.common import (
    UPNP,
    MapError,
    Mapping,
    family_of,
    local_address,
    plain,
)

SSDP_GROUP = ("239.255.255.250", 1900)
SEARCH_TARGETS = ("urn:schemas-upnp-org:device:InternetGatewayDevice:2",
                  "urn:schemas-upnp-org:device:InternetGatewayDevice:1")
SERVICES = ("urn:schemas-upnp-org:service:WANIPConnection:2",
            "urn:schemas-upnp-org:service:WANIPConnection:1",
            "urn:schemas-upnp-org:service:WANPPPConnection:1")
"""The services that map ports, the preferred first."""
SEARCH_AGAIN = 0.5
PREFER_GATEWAY = 0.3
"""Seconds an SSDP answer from another device than the default gateway waits for the
gateway's own (a rogue responder on the LAN may answer first)."""
MAX_SSDP = 2048
MAX_DESCRIPTION = 64 * 1024
MAX_SOAP = 16 * 1024
ENVELOPE = "http://schemas.xmlsoap.org/soap/envelope/"
ENCODING = "http://schemas.xmlsoap.org/soap/encoding/"
ERRORS = {401: "Invalid Action", 402: "Invalid Args", 501: "Action Failed",
          602: "Optional Action Not Implemented", 606: "Action not authorized",
          714: "NoSuchEntryInArray", 715: "WildCardNotPermittedInSrcIP",
          716: "WildCardNotPermittedInExtPort", 718: "ConflictInMappingEntry",
          724: "SamePortValuesRequired", 725: "OnlyPermanentLeasesSupported",
          726: "RemoteHostOnlySupportsWildcard", 727: "ExternalPortOnlySupportsWildcard",
          728: "NoPortMapsAvailable", 729: "ConflictWithOtherMechanisms"}
ONLY_PERMANENT = 725


class SoapFault(MapError):
    """The device answered an action with a UPnP error."""

    def __init__(self, action: str, code: int, description: str):
        name = ERRORS.get(code, description[:60] or "an unknown error")
        super().__init__(f"the router refused {action}: {name} ({code})")
        self.code = code


@dataclass(frozen=True)
class Service:
    kind: str
    control: str


def search(target: tuple[str, int], search_target: str) -> bytes:
    host = f"[{target[0]}]" if ":" in target[0] else target[0]
    lines = ["M-SEARCH * HTTP/1.1", f"HOST: {host}:{target[1]}", 'MAN: "ssdp:discover"']
    if ipaddress.ip_address(target[0]).is_multicast:
        lines.append("MX: 1")
    lines.append(f"ST: {search_target}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def read_ssdp(data: bytes, source: str) -> str | None:
    """The description URL of an SSDP answer from ``source``; None for anything else
    (another status, no LOCATION, a LOCATION on another address)."""
    lines = data.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1.1 200"):
        return None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "location":
            try:
                url = minihttp.parse_url(value.strip())
            except minihttp.HttpError:
                return None
            same = ipaddress.ip_address(url.host) == ipaddress.ip_address(source)
            return value.strip() if same else None
    return None


def same_address(one: str, other: str) -> bool:
    try:
        return ipaddress.ip_address(plain(one)) == ipaddress.ip_address(plain(other))
    except ValueError:
        return False


async def discover(target: tuple[str, int] = SSDP_GROUP, gateway: str | None = None) -> str:
    """The description URL of the IGD at ``gateway`` (the default gateway), or of the
    first other IGD heard when the gateway's own answer has not come within
    :data:`PREFER_GATEWAY` seconds of it; until the caller's deadline."""
    try:
        return await _discover(target, gateway)
    except OSError as exc:
        raise MapError(f"cannot search for the router by SSDP ({exc})") from exc


async def _discover(target: tuple[str, int], gateway: str | None) -> str:
    first: str | None = None
    deadline = math.inf
    with trio.socket.socket(family_of(target[0]), socket.SOCK_DGRAM) as sock:
        if ipaddress.ip_address(target[0]).is_multicast:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 2)
        await sock.bind(("::" if ":" in target[0] else "0.0.0.0", 0))
        while True:
            if first is None:
                for kind in SEARCH_TARGETS:
                    await sock.sendto(search(target, kind), target)
            with trio.move_on_at(min(trio.current_time() + SEARCH_AGAIN, deadline)) as wait:
                while True:
                    data, source = await sock.recvfrom(MAX_SSDP)
                    location = read_ssdp(data, source[0])
                    if location is None:
                        continue
                    if gateway is None or same_address(source[0], gateway):
                        return location
                    if first is None:
                        first = location
                        deadline = trio.current_time() + PREFER_GATEWAY
                        wait.deadline = min(wait.deadline, deadline)
            if first is not None and trio.current_time() >= deadline:
                return first


def local(tag: str) -> str:
    return tag.rpartition("}")[2]


def parse_xml(body: bytes, limit: int) -> ElementTree.Element:
    """The XML of ``body``: at most ``limit`` bytes, no DOCTYPE (no entity to expand)."""
    if len(body) > limit:
        raise MapError(f"an XML answer longer than {limit} bytes")
    if b"<!doctype" in body.lower() or b"<!entity" in body.lower():
        raise MapError("an XML answer with a DOCTYPE")
    try:
        return ElementTree.fromstring(body)
    except (ElementTree.ParseError, LookupError, ValueError) as exc:
        # LookupError: an unknown encoding in the XML declaration
        raise MapError(f"malformed XML ({type(exc).__name__}: {exc})") from exc


def find_service(body: bytes, location: str) -> Service:
    """The preferred port-mapping service of a device description and its control URL
    (on the description's own address)."""
    root = parse_xml(body, MAX_DESCRIPTION)
    base = next((e.text.strip() for e in root.iter() if local(e.tag) == "URLBase" and e.text),
                location)
    found: dict[str, str] = {}
    for element in root.iter():
        if local(element.tag) != "service":
            continue
        fields = {local(child.tag): (child.text or "").strip() for child in element}
        kind, control = fields.get("serviceType", ""), fields.get("controlURL", "")
        if kind in SERVICES and control and kind not in found:
            found[kind] = urljoin(base, control)
    for kind in SERVICES:
        if kind in found:
            control = found[kind]
            try:
                same = minihttp.parse_url(control).host == minihttp.parse_url(location).host
            except minihttp.HttpError as exc:
                raise MapError(f"the control URL is refused ({exc})") from exc
            if not same:
                raise MapError("the control URL is on another address than the device")
            return Service(kind, control)
    raise MapError("the device offers no WANIPConnection or WANPPPConnection service")


def envelope(service: str, action: str, args: list[tuple[str, str]]) -> bytes:
    inner = "".join(f"<{name}>{escape(value)}</{name}>" for name, value in args)
    return (f'<?xml version="1.0"?>\r\n<s:Envelope xmlns:s="{ENVELOPE}" '
            f's:encodingStyle="{ENCODING}"><s:Body><u:{action} xmlns:u="{service}">'
            f"{inner}</u:{action}></s:Body></s:Envelope>\r\n").encode()


def read_soap(action: str, status: int, body: bytes) -> dict[str, str]:
    """The out-arguments of an action's answer; :class:`SoapFault` for a UPnP error."""
    root = parse_xml(body, MAX_SOAP)
    if status != 200:
        code = next((e.text for e in root.iter() if local(e.tag) == "errorCode"), None)
        text = next((e.text for e in root.iter() if local(e.tag) == "errorDescription"), "")
        if code is not None and code.strip().isdigit():
            raise SoapFault(action, int(code), (text or "").strip())
        raise MapError(f"the router answered {action} with HTTP {status}")
    answer = next((e for e in root.iter() if local(e.tag) == f"{action}Response"), None)
    if answer is None:
        raise MapError(f"no {action}Response in the router's answer")
    return {local(child.tag): (child.text or "").strip() for child in answer}


class UpnpClient:
    """One IGD's port mapping for ``internal_port``: :meth:`find` first."""

    def __init__(self, internal_port: int, *, ssdp: tuple[str, int] = SSDP_GROUP,
                 timeout: float = 2.0, description: str = "p2pcards",
                 gateway: str | None = None):
        self.internal_port = internal_port
        self.ssdp = ssdp
        self.gateway = gateway
        """The default gateway, whose IGD is preferred (None: the first heard)."""
        self.timeout = timeout
        self.description = description
        self.service: Service | None = None
        self.internal_client = ""
        self.external_address: str | None = None
        self.fallback: str | None = None
        """Why AddAnyPortMapping was not used (None: it was, or the service is v1)."""
        self.asked: Mapping | None = None
        """The mapping of the last request sent, while its answer is awaited."""

    async def find(self) -> Service:
        location = await discover(self.ssdp, self.gateway)
        try:
            page = await minihttp.request(location, limit=MAX_DESCRIPTION,
                                          timeout=self.timeout)
        except minihttp.HttpError as exc:
            raise MapError(f"cannot read the device description ({exc})") from exc
        if page.status != 200:
            raise MapError(f"the device description answered HTTP {page.status}")
        self.service = find_service(page.body, location)
        url = minihttp.parse_url(self.service.control)
        try:
            self.internal_client = local_address((url.host, url.port))
        except OSError as exc:
            raise MapError(f"no route to the router {url.host} ({exc})") from exc
        return self.service

    async def call(self, action: str, args: list[tuple[str, str]]) -> dict[str, str]:
        service = self.service or await self.find()
        headers = {"Content-Type": 'text/xml; charset="utf-8"',
                   "SOAPAction": f'"{service.kind}#{action}"'}
        try:
            answer = await minihttp.request(service.control, method="POST", headers=headers,
                                            body=envelope(service.kind, action, args),
                                            limit=MAX_SOAP, timeout=self.timeout)
        except minihttp.HttpError as exc:
            raise MapError(f"{action} failed ({exc})") from exc
        return read_soap(action, answer.status, answer.body)

    async def address(self) -> str:
        out = await self.call("GetExternalIPAddress", [])
        address = out.get("NewExternalIPAddress", "")
        try:
            self.external_address = str(ipaddress.ip_address(address))
        except ValueError:
            raise MapError(f"the router's external address is {address[:64]!r}") from None
        return self.external_address

    def _args(self, port: int, lease: int) -> list[tuple[str, str]]:
        return [("NewRemoteHost", ""), ("NewExternalPort", str(port)),
                ("NewProtocol", "TCP"), ("NewInternalPort", str(self.internal_port)),
                ("NewInternalClient", self.internal_client), ("NewEnabled", "1"),
                ("NewPortMappingDescription", self.description),
                ("NewLeaseDuration", str(lease))]

    async def _add(self, port: int, lease: int) -> int:
        try:
            await self.call("AddPortMapping", self._args(port, lease))
        except SoapFault as fault:
            if fault.code != ONLY_PERMANENT or lease == 0:
                raise
            await self.call("AddPortMapping", self._args(port, 0))
            return 0
        return lease

    async def map(self, lifetime: int, suggest: Mapping | None = None) -> Mapping:
        """The mapping (AddAnyPortMapping, else AddPortMapping), or its renewal
        (``suggest``: the mapping held, asked again for its port)."""
        self.asked = None
        service = self.service or await self.find()
        address = self.external_address or await self.address()
        if suggest is None and service.kind.endswith(":2"):
            try:
                # deleted on a cancel as the port suggested: the one picked is not known
                self.asked = Mapping(UPNP, address, self.internal_port, self.internal_port,
                                     lifetime)
                out = await self.call("AddAnyPortMapping",
                                      self._args(self.internal_port, lifetime))
                self.asked = None
                port = int(out.get("NewReservedPort", ""))
                if not 0 < port < 65536:
                    raise MapError(f"AddAnyPortMapping reserved port {port}")
                return Mapping(UPNP, address, port, self.internal_port, lifetime)
            except (MapError, ValueError) as exc:
                self.fallback = str(exc)
        port = suggest.external_port if suggest is not None else self.internal_port
        self.asked = Mapping(UPNP, address, port, self.internal_port, lifetime)
        lease = await self._add(port, lifetime)
        self.asked = None
        return Mapping(UPNP, address, port, self.internal_port, lease)

    async def delete(self, mapping: Mapping) -> None:
        """DeletePortMapping of ``mapping``'s external port (TCP)."""
        await self.call("DeletePortMapping", [("NewRemoteHost", ""),
                                              ("NewExternalPort", str(mapping.external_port)),
                                              ("NewProtocol", "TCP")])
