"""Tor, with no tor: a fake control port and a fake SOCKS5 proxy on loopback (127.0.0.1
only), each checking the exact commands and bytes we send, the proxy relaying to a real
local server (an echo server, or the host's TLS listener) as tor would to an onion
service.  Every server a test starts stops with its nursery."""

from __future__ import annotations

import base64
import hashlib
import hmac
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.net import socks, tls, tor
from p2pcards.net.identity import load_or_create, raw_public
from tests.test_net_procs import free_port

pytestmark = pytest.mark.usefixtures("loopback_only")  # (tests/conftest.py)

COOKIE = bytes(range(100, 132))
SERVER_NONCE = bytes(range(200, 232))
NONCE = bytes(range(32))


def nonce(size: int) -> bytes:
    assert size == 32
    return NONCE


def onion(seed: int = 1) -> str:
    key = Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)
    return tor.onion_address(raw_public(key.public_key()))


SERVICE_ID = onion().removesuffix(".onion")


@asynccontextmanager
async def serving(handler: Callable[[trio.SocketStream], Awaitable[None]]
                  ) -> AsyncIterator[int]:
    """``handler`` serving TCP links on a loopback port (the port), stopped at the end."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
        yield int(listeners[0].socket.getsockname()[1])
        nursery.cancel_scope.cancel()


# ============================================================ the fake control port

@dataclass
class FakeTor:
    """tor's control port as control-spec describes it, for one method."""

    methods: str = "NULL"
    cookie_file: str = ""
    password: str = ""
    lie: bool = False
    """SAFECOOKIE: prove a wrong cookie."""
    add_reply: bytes = b""
    """ADD_ONION's reply, instead of the service id."""
    info_reply: bytes = b""
    """PROTOCOLINFO's reply, instead of the real one (b"endless": lines without end)."""
    mute: bool = False
    """Read commands, answer nothing."""
    publish: bool = True
    """Tell of the descriptor uploaded (events on)."""
    commands: list[str] = field(default_factory=list)
    closed: trio.Event = field(default_factory=trio.Event)

    async def handle(self, stream: trio.abc.Stream) -> None:
        buffer = b""
        client_hash = ""
        try:
            while True:
                while b"\r\n" not in buffer:
                    data = await stream.receive_some(4096)
                    if not data:
                        return
                    buffer += data
                raw, buffer = buffer.split(b"\r\n", 1)
                line = raw.decode()
                self.commands.append(line)
                if self.mute:
                    continue
                verb, _, args = line.partition(" ")
                if verb == "PROTOCOLINFO":
                    await self.protocol_info(stream)
                elif verb == "AUTHCHALLENGE":
                    client_nonce = bytes.fromhex(args.split()[1])
                    message = COOKIE + client_nonce + SERVER_NONCE
                    proof = hmac.new(b"Tor safe cookie authentication server-to-controller"
                                     b" hash", (b"x" * 32 if self.lie else COOKIE)
                                     + client_nonce + SERVER_NONCE, hashlib.sha256)
                    client_hash = hmac.new(b"Tor safe cookie authentication controller-to-"
                                           b"server hash", message, hashlib.sha256).hexdigest()
                    await self.send(stream, f"250 AUTHCHALLENGE SERVERHASH={proof.hexdigest()}"
                                            f" SERVERNONCE={SERVER_NONCE.hex()}\r\n".encode())
                elif verb == "AUTHENTICATE":
                    good = {"NULL": "", "COOKIE": COOKIE.hex(), "SAFECOOKIE": client_hash,
                            "HASHEDPASSWORD": self.password}[self.methods.split(",")[0]]
                    if args != good:
                        await self.send(stream, b"515 Authentication failed: Password did"
                                                b" not match HashedControlPassword value.\r\n")
                        return
                    await self.send(stream, b"250 OK\r\n")
                elif verb == "ADD_ONION":
                    await self.send(stream, self.add_reply or
                                    f"250-ServiceID={SERVICE_ID}\r\n250 OK\r\n".encode())
                    if "HS_DESC" in self.commands[-2] and self.publish:
                        await self.send(stream, (
                            f"650 HS_DESC UPLOAD {SERVICE_ID} UNKNOWN $AAAA\r\n"
                            f"650 HS_DESC UPLOADED {onion(2)[:56]} UNKNOWN $AAAA\r\n"
                            f"650 HS_DESC UPLOADED {SERVICE_ID} UNKNOWN $AAAA\r\n").encode())
                else:
                    await self.send(stream, b"250 OK\r\n")  # SETEVENTS, DEL_ONION
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        finally:
            self.closed.set()
            await trio.aclose_forcefully(stream)

    async def protocol_info(self, stream: trio.abc.Stream) -> None:
        if self.info_reply == b"endless":
            while True:
                await self.send(stream, b"250-VERSION Tor=\"0.4.8.10\"\r\n" * 100)
        await self.send(stream, self.info_reply or (
            f'250-PROTOCOLINFO 1\r\n250-AUTH METHODS={self.methods}'
            f' COOKIEFILE="{self.cookie_file}"\r\n250-VERSION Tor="0.4.8.10"\r\n'
            f'250 OK\r\n').encode())

    @staticmethod
    async def send(stream: trio.abc.Stream, data: bytes) -> None:
        await stream.send_all(data)


@pytest.fixture
def cookie(tmp_path: Path) -> str:
    path = tmp_path / "control.authcookie"
    path.write_bytes(COOKIE)
    return str(path)


def added(port: int, virtual: int = 80) -> str:
    return f"ADD_ONION NEW:ED25519-V3 Flags=DiscardPK Port={virtual},127.0.0.1:{port}"


def client_hash() -> str:
    return hmac.new(b"Tor safe cookie authentication controller-to-server hash",
                    COOKIE + NONCE + SERVER_NONCE, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(("methods", "password", "authenticate"), [
    ("NULL", None, "AUTHENTICATE"),
    ("SAFECOOKIE,COOKIE", None, f"AUTHENTICATE {client_hash()}"),
    ("HASHEDPASSWORD,SAFECOOKIE,COOKIE", 'pa"ss\\', 'AUTHENTICATE "pa\\"ss\\\\"'),
])
async def test_an_onion_service_is_added_and_deleted(
        cookie: str, methods: str, password: str | None, authenticate: str) -> None:
    fake = FakeTor(methods, cookie, password='"pa\\"ss\\\\"')
    async with serving(fake.handle) as port:
        async with tor.onion_service(4321, 80, control=[("127.0.0.1", port)],
                                     password=password, nonce=nonce) as service:
            assert service == tor.Onion(SERVICE_ID, 80)
            assert service.address == f"{SERVICE_ID}.onion"
            assert not fake.closed.is_set()  # the service lives as long as the connection
        with trio.fail_after(5):
            await fake.closed.wait()
    challenge = [f"AUTHCHALLENGE SAFECOOKIE {NONCE.hex()}"] * methods.startswith("SAFE")
    assert fake.commands == ["PROTOCOLINFO 1", *challenge, authenticate, added(4321),
                             f"DEL_ONION {SERVICE_ID}"]


async def test_waiting_for_the_descriptor_and_a_unix_socket(tmp_path: Path) -> None:
    fake = FakeTor()
    path = tmp_path / "control"
    sock = trio.socket.socket(socket.AF_UNIX)
    await sock.bind(str(path))
    sock.listen()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, fake.handle, [trio.SocketListener(sock)])
        async with tor.onion_service(5555, control=[("127.0.0.1", free_port()),
                                                    tor.parse_control(f"unix:{path}")],
                                     wait=True) as service:
            assert service.port == 5555
            assert fake.commands[-1] == "SETEVENTS"  # (the events off once published)
        nursery.cancel_scope.cancel()
    assert fake.commands == ["PROTOCOLINFO 1", "AUTHENTICATE", "SETEVENTS HS_DESC",
                             added(5555, 5555), "SETEVENTS", f"DEL_ONION {SERVICE_ID}"]


@pytest.mark.parametrize("how", ["cancelled", "raised"])
async def test_the_service_is_deleted_when_the_table_ends_badly(how: str) -> None:
    fake = FakeTor()
    async with serving(fake.handle) as port:
        with trio.CancelScope() as scope:
            try:
                async with tor.onion_service(4321, control=[("127.0.0.1", port)]):
                    if how == "raised":
                        raise KeyError("the table broke")
                    scope.cancel()
                    await trio.sleep_forever()
            except KeyError:
                pass
        assert scope.cancelled_caught == (how == "cancelled")
        with trio.fail_after(5):
            await fake.closed.wait()
    assert fake.commands[-1] == f"DEL_ONION {SERVICE_ID}"


async def test_safecookie_checks_the_server_first(cookie: str) -> None:
    fake = FakeTor("SAFECOOKIE,COOKIE", cookie, lie=True)
    async with serving(fake.handle) as port:
        with pytest.raises(tor.TorAuthError, match="does not know tor's cookie"):
            async with tor.onion_service(1, control=[("127.0.0.1", port)], nonce=nonce):
                pytest.fail("no service without authentication")
    assert fake.commands == ["PROTOCOLINFO 1", f"AUTHCHALLENGE SAFECOOKIE {NONCE.hex()}"]


async def test_a_refused_authentication_says_what_to_set() -> None:
    fake = FakeTor("HASHEDPASSWORD", password='"right"')
    async with serving(fake.handle) as port:
        control = [("127.0.0.1", port)]
        with pytest.raises(tor.TorAuthError) as refused:
            async with tor.onion_service(1, control=control, password="wrong"):
                pytest.fail("no service without authentication")
        with pytest.raises(tor.TorAuthError, match="asks for a password: set it in the"
                                                   " environment variable P2PCARDS_TOR_PASSWORD"):
            async with tor.onion_service(1, control=control):
                pytest.fail("no service without authentication")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("tor refused our authentication (HASHEDPASSWORD: 515"
                              " Authentication failed")
    for advice in ("CookieAuthentication 1", "ControlPort 9051", "debian-tor"):
        assert advice in message
    assert "wrong" not in message  # the secret is not shown


@pytest.mark.parametrize(("contents", "why"), [
    (None, "cannot read tor's cookie file .* debian-tor"),
    (b"short", "is not a 32-byte cookie"),
    (COOKIE + b"!", "is not a 32-byte cookie"),
])
async def test_a_cookie_we_cannot_use(tmp_path: Path, contents: bytes | None,
                                      why: str) -> None:
    path = tmp_path / "cookie"
    if contents is not None:
        path.write_bytes(contents)
    fake = FakeTor("SAFECOOKIE,COOKIE", str(path))
    async with serving(fake.handle) as port:
        control = await tor.open_control([("127.0.0.1", port)])
        with pytest.raises(tor.TorAuthError, match=why):
            await control.authenticate()
        await control.aclose()
    assert fake.commands == ["PROTOCOLINFO 1"]


async def test_plain_cookie_authentication_is_never_used(tmp_path: Path) -> None:
    """Something on the control port that offers COOKIE alone (as no tor does) and names
    a file: the file is not read, nor anything sent."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"s" * 32)
    fake = FakeTor("COOKIE", str(secret))
    async with serving(fake.handle) as port:
        control = await tor.open_control([("127.0.0.1", port)])
        with pytest.raises(tor.TorAuthError, match="offers COOKIE authentication but not"
                                                   " SAFECOOKIE"):
            await control.authenticate()
        await control.aclose()
    assert fake.commands == ["PROTOCOLINFO 1"]


def test_a_cookie_file_that_is_no_file_is_not_read() -> None:
    with pytest.raises(tor.TorAuthError, match="is not a 32-byte cookie"):
        tor.read_cookie("/dev/zero")  # (read_bytes would never end)


async def test_a_refused_onion_names_the_code_and_the_text() -> None:
    fake = FakeTor(add_reply=b"512 Invalid argument: Port\r\n")
    async with serving(fake.handle) as port:
        with pytest.raises(tor.TorReplyError) as refused:
            async with tor.onion_service(1, control=[("127.0.0.1", port)]):
                pytest.fail("no service when tor refuses it")
        with trio.fail_after(5):
            await fake.closed.wait()  # (the connection is closed: no DEL_ONION needed)
    assert str(refused.value) == "tor refused ADD_ONION: 512 Invalid argument: Port"
    assert (refused.value.code, refused.value.verb) == ("512", "ADD_ONION")
    assert fake.commands[-1].startswith("ADD_ONION")


@pytest.mark.parametrize(("reply", "error"), [
    (b"endless", "a reply longer than 65536 bytes"),
    (b"250-" + b"x" * 10_000, "a line longer than 4096 bytes"),
    (b"250-PROTOCOLINFO 1\r\n550 OK\r\n", "what is not a reply"),
    (b"HTTP/1.1 400 Bad Request\r\n", "what is not a reply"),
    (b"250-ServiceID=nonsense\r\n250 OK\r\n", "without a v3 ServiceID"),
])
async def test_replies_that_do_not_read_are_bounded(reply: bytes, error: str) -> None:
    info = b"" if reply.startswith(b"250-ServiceID") else reply
    fake = FakeTor(info_reply=info, add_reply=reply if not info else b"")
    async with serving(fake.handle) as port:
        with trio.fail_after(10), pytest.raises(tor.ControlError, match=error):
            async with tor.onion_service(1, control=[("127.0.0.1", port)]):
                pytest.fail("no service from a broken control port")


async def test_a_service_never_published_is_given_up_and_deleted() -> None:
    fake = FakeTor(publish=False)
    async with serving(fake.handle) as port:
        with pytest.raises(tor.TorError, match=rf"tor did not publish {SERVICE_ID}.onion"
                                               r" within 0.5 s: is it connected"):
            async with tor.onion_service(1, control=[("127.0.0.1", port)], wait=True,
                                         publish_seconds=0.5):
                pytest.fail("no table before the service is published")
        with trio.fail_after(5):
            await fake.closed.wait()
    assert fake.commands[-2:] == [added(1, 1), f"DEL_ONION {SERVICE_ID}"]


async def test_a_silent_control_port_is_given_up() -> None:
    fake = FakeTor(mute=True)
    async with serving(fake.handle) as port:
        with pytest.raises(tor.TorError, match=r"127\.0\.0\.1:\d+ did not answer within 0.5"):
            async with tor.onion_service(1, control=[("127.0.0.1", port)],
                                         setup_seconds=0.5):
                pytest.fail("no service from a silent control port")


async def test_tor_not_running_is_one_line_that_says_what_to_do(tmp_path: Path) -> None:
    closed = free_port()
    with pytest.raises(tor.TorNotRunning) as missing:
        async with tor.onion_service(1, control=[("127.0.0.1", closed),
                                                 str(tmp_path / "no-socket")]):
            pytest.fail("no service without tor")
    message = str(missing.value)
    assert message == (f"tor is not running (nothing answers on its control port"
                       f" 127.0.0.1:{closed} or {tmp_path}/no-socket): start it"
                       " (Debian/Ubuntu: `sudo apt install tor`, then `sudo systemctl start"
                       " tor`), or give --tor-control HOST:PORT")
    assert isinstance(missing.value, OSError)


async def test_replies_with_data_and_events_between() -> None:
    left, right = trio.testing.memory_stream_pair()
    port = tor.ControlPort(left)
    await right.send_all(b"650 HS_DESC UPLOADED abc UNKNOWN $X\r\n"
                         b"250+onions/current=\r\nfirst\r\n..dotted\r\n.\r\n250 OK\r\n")
    lines = await port.command("GETINFO onions/current")
    assert lines == [tor.ReplyLine("250", "onions/current=", ("first", ".dotted")),
                     tor.ReplyLine("250", "OK")]
    assert await port.event() == [tor.ReplyLine("650", "HS_DESC UPLOADED abc UNKNOWN $X")]
    assert await right.receive_some() == b"GETINFO onions/current\r\n"
    with pytest.raises(ValueError):
        await port.command("GETINFO x\r\nSIGNAL HALT")


def test_keywords_and_quoted_strings() -> None:
    words = tor.keywords(r'AUTH METHODS=COOKIE,SAFECOOKIE COOKIEFILE="/run/a \"b\"\\c\n"')
    assert words == {"METHODS": "COOKIE,SAFECOOKIE", "COOKIEFILE": '/run/a "b"\\c\n'}
    assert tor.unquote(tor.quote('x"\\y').strip('"')) == 'x"\\y'
    assert tor.unquote(r"\101\8") == "A8"
    with pytest.raises(tor.ControlError):
        tor.keywords('COOKIEFILE="/run/open')


def test_control_addresses() -> None:
    assert tor.parse_control("127.0.0.1:9051") == ("127.0.0.1", 9051)
    assert tor.parse_control("9051") == ("127.0.0.1", 9051)
    assert tor.parse_control("[::1]:9051") == ("::1", 9051)
    assert tor.parse_control("unix:/run/tor/control") == "/run/tor/control"
    assert tor.parse_control("/run/tor/control") == "/run/tor/control"
    for bad in ("localhost", "127.0.0.1:0", "127.0.0.1:x"):
        with pytest.raises(ValueError):
            tor.parse_control(bad)


# ============================================================ onion addresses

def test_onion_addresses_are_checked() -> None:
    # the Tor Project's own
    real = "2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion"
    assert tor.check_onion(real.upper()) == real and tor.is_onion(real)
    key = bytes(range(32))
    made = tor.onion_address(key)
    assert len(made) == 62 and tor.check_onion(made) == made
    typo = ("a" if made[10] != "a" else "b").join((made[:10], made[11:]))
    raw = bytearray(key + bytes(3))
    raw[34] = 2
    version_2 = base64.b32encode(bytes(raw)).decode().lower() + ".onion"
    for bad, why in ((typo, "checksum is wrong"), (version_2, "of version 2, not 3"),
                     (made[:-6], "NAME.onion"), ("sub." + made, "NAME.onion"),
                     ("abc.onion", "56 base32"), (made[:5] + "1" + made[6:], "56 base32")):
        assert not tor.is_onion(bad)
        with pytest.raises(ValueError, match=why):
            tor.check_onion(bad)


# ============================================================ SOCKS5

@dataclass
class FakeProxy:
    """A SOCKS5 proxy that records what it is sent, and relays to ``target`` (as tor
    relays to the onion service's local port) or refuses with ``code``."""

    target: int
    code: int = 0
    method: int = 0
    seen: list[bytes] = field(default_factory=list)

    async def handle(self, client: trio.SocketStream) -> None:
        try:
            greeting = await self.exactly(client, 2)
            greeting += await self.exactly(client, greeting[1])
            self.seen.append(greeting)
            await client.send_all(bytes([5, self.method]))
            if self.method == 0xFF:
                return
            if self.method == 2:
                auth = await self.exactly(client, 2)
                auth += await self.exactly(client, auth[1] + 1)
                auth += await self.exactly(client, auth[-1])
                self.seen.append(auth)
                await client.send_all(b"\x01\x00")
            request = await self.exactly(client, 5)
            request += await self.exactly(client, request[4] + 2)
            self.seen.append(request)
            if self.code:
                await client.send_all(bytes([5, self.code, 0, 1, 0, 0, 0, 0, 0, 0]))
                return
            async with await trio.open_tcp_stream("127.0.0.1", self.target) as server:
                # the bound address as a name, and the first of the host's bytes with it
                await client.send_all(b"\x05\x00\x00\x03\x09localhost\x01\xbb")
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self.pipe, client, server, nursery.cancel_scope)
                    nursery.start_soon(self.pipe, server, client, nursery.cancel_scope)
        except (trio.BrokenResourceError, trio.ClosedResourceError, EOFError):
            pass
        finally:
            await trio.aclose_forcefully(client)

    @staticmethod
    async def exactly(stream: trio.abc.Stream, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = await stream.receive_some(count - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    @staticmethod
    async def pipe(source: trio.abc.Stream, sink: trio.abc.Stream,
                   scope: trio.CancelScope) -> None:
        try:
            async for chunk in source:
                await sink.send_all(chunk)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        scope.cancel()


async def echo(stream: trio.abc.Stream) -> None:
    try:
        async for chunk in stream:
            await stream.send_all(chunk)
    except trio.BrokenResourceError:
        pass


def connect_bytes(host: str, port: int) -> bytes:
    return b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() + port.to_bytes(2, "big")


async def test_a_stream_through_the_proxy_reaches_the_host() -> None:
    async with serving(echo) as target:
        proxy = FakeProxy(target)
        async with serving(proxy.handle) as port:
            # the first proxy (tor's usual port) is closed: the second is tried
            stream = await socks.open_stream(onion(), 443, [("127.0.0.1", free_port()),
                                                            ("127.0.0.1", port)])
            async with stream:
                for message in (b"hello", b"x" * 100_000):
                    await stream.send_all(message)
                    got = b""
                    with trio.fail_after(5):
                        while len(got) < len(message):
                            got += await stream.receive_some()
                    assert got == message
    assert proxy.seen == [b"\x05\x01\x00", connect_bytes(onion(), 443)]


async def test_user_name_and_password_for_circuit_isolation() -> None:
    async with serving(echo) as target:
        proxy = FakeProxy(target, method=2)
        async with serving(proxy.handle) as port:
            stream = await socks.open_stream(onion(), 80, [("127.0.0.1", port)],
                                             credentials=("table", "7"))
            await stream.aclose()
    assert proxy.seen == [b"\x05\x01\x02", b"\x01\x05table\x017",
                          connect_bytes(onion(), 80)]


@pytest.mark.parametrize(("code", "text"), [
    (1, "general SOCKS server failure"), (4, "host unreachable"), (5, "connection refused"),
    (6, "TTL expired"), (0xF2, "onion service introduction failed"), (0x42, "reply code 0x42"),
])
async def test_a_refusal_names_the_reply(code: int, text: str) -> None:
    async with serving(echo) as target:
        proxy = FakeProxy(target, code=code)
        async with serving(proxy.handle) as port:
            with pytest.raises(socks.SocksError) as refused:
                await socks.open_stream(onion(), 443, [("127.0.0.1", port)])
    assert str(refused.value) == f"the SOCKS proxy could not reach {onion()}:443: {text}"
    assert refused.value.code == code and isinstance(refused.value, OSError)


async def test_a_proxy_that_takes_no_method_we_offer() -> None:
    proxy = FakeProxy(0, method=0xFF)
    async with serving(proxy.handle) as port:
        with pytest.raises(socks.SocksError, match="takes none of our authentication"):
            await socks.open_stream(onion(), 443, [("127.0.0.1", port)])


async def test_the_reply_is_read_and_not_a_byte_more() -> None:
    left, right = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(socks.handshake, left, "10.1.2.3", 9)
        assert await FakeProxy.exactly(right, 3) == b"\x05\x01\x00"
        await right.send_all(b"\x05\x00")
        assert await FakeProxy.exactly(right, 10) == b"\x05\x01\x00\x01\x0a\x01\x02\x03\x00\x09"
        await right.send_all(b"\x05\x00\x00\x04" + bytes(18) + b"the host's bytes")
    assert await left.receive_some() == b"the host's bytes"


async def test_tor_not_running_for_the_joiner() -> None:
    closed = [("127.0.0.1", free_port()), ("127.0.0.1", free_port())]
    with pytest.raises(tor.TorNotRunning) as missing:
        await tls.socks_dial(closed)(onion(), 443)
    assert str(missing.value) == (
        f"tor is not running (nothing answers on its SOCKS port 127.0.0.1:{closed[0][1]} or"
        f" 127.0.0.1:{closed[1][1]}): start it (Debian/Ubuntu: `sudo apt install tor`, then"
        " `sudo systemctl start tor`), or give --tor-socks HOST:PORT")


async def test_a_tls_link_to_the_host_through_the_proxy(tmp_path: Path) -> None:
    """The joiner's dial through tor: the host's listener made as the host makes it, the
    fingerprint the joiner pins read through the proxy."""
    identity = load_or_create(tmp_path / "host")

    async def host(stream: trio.SSLStream[trio.SocketStream]) -> None:
        try:
            await stream.send_all(b"welcome " + await stream.receive_some())
        except trio.BrokenResourceError:
            pass
        finally:
            await trio.aclose_forcefully(stream)

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(
            trio.serve_ssl_over_tcp, host, 0, tls.server_context(identity), host="127.0.0.1"))
        proxy = FakeProxy(int(listeners[0].transport_listener.socket.getsockname()[1]))
        async with serving(proxy.handle) as port:
            stream, seen = await tls.socks_dial([("127.0.0.1", port)])(onion(), 443)
            async with stream:
                assert seen == identity.id
                await stream.send_all(b"joe")
                with trio.fail_after(5):
                    assert await stream.receive_some() == b"welcome joe"
        nursery.cancel_scope.cancel()
    assert proxy.seen == [b"\x05\x01\x00", connect_bytes(onion(), 443)]


async def test_a_game_through_the_onion_service_and_the_socks_port(tmp_path: Path) -> None:
    """A host with ``--tor`` bound to loopback (the fake control port): the invite names
    the onion address alone, and the joiner reaches the host
    through the SOCKS5 proxy (as tor leads the onion service to the host's port on
    127.0.0.1) and plays the game; the service is deleted when the table ends."""
    from tests.net_helpers import histories, make_host, make_joiner  # noqa: PLC0415

    fake = FakeTor()
    async with serving(fake.handle) as control:
        host = make_host(tmp_path)
        host.config.tor = (("127.0.0.1", control),)
        host.outreach.reaching.tor = host.config.tor
        async with trio.open_nursery() as nursery:
            invite = await nursery.start(host.serve)
            assert invite.addresses == ((onion(), invite.port),)  # (bound to loopback:
            # the onion address alone, this machine's are not given away)
            assert host.plan().line.startswith(f"reachable through tor only, at {onion()}:")
            proxy = FakeProxy(invite.port)
            async with serving(proxy.handle) as socks_port:
                joiner = make_joiner(tmp_path, invite, "joe",
                                     dial=tls.routed((("127.0.0.1", socks_port),)))
                await joiner.run()
                assert proxy.seen[-1] == connect_bytes(onion(), invite.port)
        assert host.peer is not None and joiner.peer is not None and joiner.peer.over
        assert len(histories(host.peer, joiner.peer)) == 1
        with trio.fail_after(5):
            await fake.closed.wait()
    assert fake.commands[-1] == f"DEL_ONION {SERVICE_ID}"
    assert any(c.startswith(f"ADD_ONION NEW:ED25519-V3 Flags=DiscardPK Port={invite.port},"
                            f"127.0.0.1:{invite.port}") for c in fake.commands)


async def test_a_control_port_that_goes_away_before_a_command_is_one_line() -> None:
    async def hang_up(stream: trio.SocketStream) -> None:
        await stream.aclose()
    async with serving(hang_up) as port:
        control = await tor.open_control([("127.0.0.1", port)])
        with trio.fail_after(5):
            with pytest.raises(tor.TorError, match="closed the connection"):
                await control.command("GETINFO version")  # (sent: the kernel takes it)
            for _ in range(3):  # sent to a socket closed at the other end: broken
                with pytest.raises(tor.TorError, match=r"port 127\.0\.0\.1:\d+ broke the"):
                    await control.command("GETINFO version")
        await control.aclose()
