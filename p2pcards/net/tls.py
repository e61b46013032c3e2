"""TLS 1.3 for links: the host presents its identity's certificate; the joiner pins it.

Python's ``ssl`` cannot accept an unknown self-signed *client* certificate,
so only the host has one (docs/networking.md, "TLS and the joiner's proof of
identity"); the joiner proves who it is
inside the channel (:mod:`p2pcards.net.invite`).  The joiner does not use a
CA: it reads the host's certificate after the handshake and compares the
device id of the key it carries with the one pinned (from the invite, or
trusted on first use).
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Sequence

import trio

from p2pcards.net import socks
from p2pcards.net.identity import Identity, IdentityError, cert_identity, device_id
from p2pcards.net.tor import is_onion


def server_context(identity: Identity) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(identity.cert_path, identity.key_path)
    return context


def client_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # pinned by device id instead (peer_id)
    return context


def peer_id(stream: trio.SSLStream[trio.SocketStream]) -> bytes:
    """The device id of the host at the other end of a finished handshake."""
    der = stream.getpeercert(binary_form=True)
    if not der:
        raise IdentityError("the host presented no certificate")
    return device_id(cert_identity(der))


async def connect(host: str, port: int) -> trio.SSLStream[trio.SocketStream]:
    """A TLS 1.3 stream to ``host:port`` (handshake done; not yet pinned)."""
    return await secure(await trio.open_tcp_stream(host, port))


async def secure(tcp: trio.SocketStream) -> trio.SSLStream[trio.SocketStream]:
    """A TLS 1.3 stream over ``tcp`` (handshake done; not yet pinned; ``tcp`` closed if
    it fails)."""
    stream = trio.SSLStream(tcp, client_context(), server_hostname=None)
    try:
        await stream.do_handshake()
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return stream


Dial = Callable[[str, int], Awaitable[tuple[trio.abc.Stream, bytes]]]
"""Opens a link to the host at ``host:port``: the stream, and the device id of the
host at the other end (for the joiner to pin)."""


async def dial(host: str, port: int) -> tuple[trio.abc.Stream, bytes]:
    """A TLS link to ``host:port`` and the device id its certificate carries
    (:class:`~p2pcards.net.identity.IdentityError` if it carries none)."""
    return await _pinned(await connect(host, port))


async def _pinned(stream: trio.SSLStream[trio.SocketStream]) -> tuple[trio.abc.Stream, bytes]:
    try:
        return stream, peer_id(stream)
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise


def socks_dial(proxies: Sequence[socks.Proxy] = socks.DEFAULT_PROXIES,
               credentials: tuple[str, str] | None = None) -> Dial:
    """A :data:`Dial` through the first of the SOCKS5 ``proxies`` that answers (tor's,
    for an onion address; :mod:`p2pcards.net.socks`), the TLS and the pinning as
    :func:`dial`'s."""
    async def dial(host: str, port: int) -> tuple[trio.abc.Stream, bytes]:
        tcp = await socks.open_stream(host, port, proxies, credentials)
        return await _pinned(await secure(tcp))
    return dial


def routed(proxies: Sequence[socks.Proxy] = socks.DEFAULT_PROXIES) -> Dial:
    """A :data:`Dial` that reaches an onion address through tor's SOCKS5 ``proxies``
    (:func:`socks_dial`) and any other address directly (:func:`dial`)."""
    through = socks_dial(proxies)

    async def either(host: str, port: int) -> tuple[trio.abc.Stream, bytes]:
        return await (through if is_onion(host) else dial)(host, port)
    return either


def peer_address(stream: trio.abc.Stream) -> str:
    """The IP address at the other end of ``stream`` (a TLS stream on TCP), or "local"
    for a stream on no socket (a memory stream in tests)."""
    inner: object = stream
    for _ in range(4):  # a TLS stream over a socket stream, at most
        sock = getattr(inner, "socket", None)
        if sock is not None:
            try:
                return str(sock.getpeername()[0])
            except OSError:  # gone already
                return "unknown"
        inner = getattr(inner, "transport_stream", None)
        if inner is None:
            break
    return "local"
