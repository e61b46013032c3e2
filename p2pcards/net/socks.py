"""A SOCKS5 client (RFC 1928) on Trio streams, for dialling a host through tor's SOCKS
port (:mod:`p2pcards.net.tor`; docs/networking.md, "Across the internet").

:func:`open_stream` dials the first proxy that answers (tor's ``127.0.0.1:9050``, then
Tor Browser's ``9150``), asks it to CONNECT to a host by name (an onion address
stays a name: tor resolves it, not us) and returns the stream, for the caller to wrap
in TLS (:func:`p2pcards.net.tls.socks_dial`).  No authentication, or a user name and
password (RFC 1929), which tor does not check but uses to keep streams with different
credentials on different circuits.  A refusal is :class:`SocksError` naming the
proxy's reply; no proxy answering is :class:`~p2pcards.net.tor.TorNotRunning`.
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Sequence

import trio

from p2pcards.net.tor import START_TOR, TorNotRunning

Proxy = tuple[str, int]
"""A SOCKS5 proxy's host and port."""
DEFAULT_PROXIES: tuple[Proxy, ...] = (("127.0.0.1", 9050), ("127.0.0.1", 9150))
"""tor's SOCKS port, then Tor Browser's."""
VERSION = 5
NO_AUTH, USER_PASSWORD, NO_METHOD = 0, 2, 0xFF
CONNECT = 1
IPV4, DOMAIN, IPV6 = 1, 3, 4
REPLIES = {
    1: "general SOCKS server failure",
    2: "connection not allowed by ruleset",
    3: "network unreachable",
    4: "host unreachable",
    5: "connection refused",
    6: "TTL expired",
    7: "command not supported",
    8: "address type not supported",
    # tor's own, with the SocksPort flag ExtendedErrors (tor's proposal 304)
    0xF0: "onion service descriptor not found",
    0xF1: "onion service descriptor invalid",
    0xF2: "onion service introduction failed",
    0xF3: "onion service rendezvous failed",
    0xF4: "onion service needs client authorization",
    0xF5: "onion service client authorization is wrong",
    0xF6: "onion address invalid",
    0xF7: "onion service introduction timed out",
}
"""The proxy's reply codes (0: succeeded)."""


class SocksError(OSError):
    """The proxy refused the link, or answered what is not SOCKS5; ``code``: its reply
    code, if it sent one."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.code = code


def reply_text(code: int) -> str:
    return REPLIES.get(code, f"reply code {code:#04x}")


async def _exactly(stream: trio.abc.Stream, count: int) -> bytes:
    """``count`` bytes, not one more (what follows is the caller's)."""
    data = bytearray()
    while len(data) < count:
        chunk = await stream.receive_some(count - len(data))
        if not chunk:
            raise SocksError("the SOCKS proxy closed the connection")
        data += chunk
    return bytes(data)


def address_bytes(host: str) -> bytes:
    """The CONNECT request's address: an IP literal as one, anything else as a name."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        name = host.encode("idna")
        if not 0 < len(name) < 256:
            raise ValueError(f"{host!r} is not a host name of 1 to 255 bytes") from None
        return bytes([DOMAIN, len(name)]) + name
    return bytes([IPV4 if ip.version == 4 else IPV6]) + ip.packed


async def handshake(stream: trio.abc.Stream, host: str, port: int,
                    credentials: tuple[str, str] | None = None) -> None:
    """Ask the SOCKS5 proxy at the other end of ``stream`` to CONNECT to ``host:port``;
    SocksError if it does not."""
    request = address_bytes(host) + struct.pack(">H", port)
    method = NO_AUTH if credentials is None else USER_PASSWORD
    await stream.send_all(bytes([VERSION, 1, method]))
    version, chosen = await _exactly(stream, 2)
    if version != VERSION:
        raise SocksError(f"the proxy does not speak SOCKS5 (version {version})")
    if chosen != method:
        raise SocksError("the SOCKS proxy takes none of our authentication methods")
    if credentials is not None:
        user, password = (part.encode() for part in credentials)
        if not (0 < len(user) < 256 and 0 < len(password) < 256):
            raise ValueError("a SOCKS user name and password are 1 to 255 bytes each")
        await stream.send_all(bytes([1, len(user)]) + user + bytes([len(password)])
                              + password)
        if (await _exactly(stream, 2))[1] != 0:
            raise SocksError("the SOCKS proxy refused our user name and password")
    await stream.send_all(bytes([VERSION, CONNECT, 0]) + request)
    version, code, _, kind = await _exactly(stream, 4)
    if version != VERSION:
        raise SocksError(f"the proxy does not speak SOCKS5 (version {version})")
    if code != 0:
        raise SocksError(f"the SOCKS proxy could not reach {host}:{port}: {reply_text(code)}",
                         code)
    sizes = {IPV4: 4, IPV6: 16}
    if kind == DOMAIN:
        size = (await _exactly(stream, 1))[0]
    elif kind in sizes:
        size = sizes[kind]
    else:
        raise SocksError(f"the SOCKS proxy answered an unknown address type {kind}")
    await _exactly(stream, size + 2)  # the address it bound (nothing we need)


async def open_stream(host: str, port: int, proxies: Sequence[Proxy] = DEFAULT_PROXIES,
                      credentials: tuple[str, str] | None = None) -> trio.SocketStream:
    """A stream to ``host:port`` through the first of ``proxies`` that answers (SOCKS5
    done: what it carries is the host's); TorNotRunning if none answers, SocksError if
    the proxy cannot reach the host."""
    for proxy in proxies:
        try:
            stream = await trio.open_tcp_stream(*proxy)
        except OSError:
            continue
        try:
            await handshake(stream, host, port, credentials)
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
        return stream
    where = " or ".join(f"{h}:{p}" for h, p in proxies)
    raise TorNotRunning(f"tor is not running (nothing answers on its SOCKS port {where}):"
                        f" {START_TOR}, or give --tor-socks HOST:PORT")
