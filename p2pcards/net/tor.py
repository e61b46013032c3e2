"""Tor for networks that take no inbound link: the host's onion service, on tor's control
port (control-spec); the joiner dials it through tor's SOCKS port
(:mod:`p2pcards.net.socks`), and TLS pins the host as on any other link
(docs/networking.md, "Across the internet"; docs/security.md).

- **The control port.** :func:`open_control` dials the first of the control addresses
  that answers (a host and port, or a Unix socket's path): ``127.0.0.1:9051``, then
  Debian's ``/run/tor/control``.  Nothing answering is :class:`TorNotRunning`, in one
  line that says what to do.
- **Authentication.** ``PROTOCOLINFO 1`` names the methods tor takes; a password given
  is used if tor takes one, else SAFECOOKIE (the server proves it knows the cookie
  before we show our hash), COOKIE, then NULL.  A refusal, or a cookie we may not
  read, is :class:`TorAuthError`, naming what to set.
- **The onion service.** ``ADD_ONION NEW:ED25519-V3 Flags=DiscardPK`` maps the
  service's port to the host's listener on 127.0.0.1; it lives as long as the control
  connection, which :func:`onion_service` keeps open for the table's life and ends
  with ``DEL_ONION`` (shielded, at most :data:`CLOSE_SECONDS`, also when cancelled).
- **Bounds.** A reply line longer than :data:`MAX_LINE` bytes, or a reply longer than
  :data:`MAX_REPLY`, is :class:`ControlError`: a broken or hostile control port cannot
  make us read without end (and :func:`onion_service` bounds its setup in time).
- **Onion addresses.** :func:`check_onion` checks a v3 address (rend-spec-v3: the
  base32 of the key, a checksum and the version byte 3).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import re
import secrets
import stat
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

import trio

ControlAddress = tuple[str, int] | str
"""Where tor's control port is: a host and a port, or the path of a Unix socket."""
DEFAULT_CONTROL: tuple[ControlAddress, ...] = (("127.0.0.1", 9051), "/run/tor/control")
"""Tried in order: the usual ControlPort, then the socket Debian's tor opens."""
MAX_LINE = 4096
"""The longest reply line read, in bytes."""
MAX_REPLY = 64 * 1024
"""The most bytes one reply may take, its lines together."""
MAX_EVENTS = 64
"""Asynchronous events kept while a command waits for its reply (the oldest dropped)."""
SETUP_SECONDS = 30.0
"""The time tor's control port has to authenticate us and add the onion service."""
PUBLISH_SECONDS = 120.0
"""The time tor has to upload the service's descriptor when it is waited for."""
CLOSE_SECONDS = 5.0
"""The time ``DEL_ONION`` has when the service ends."""
COOKIE_BYTES = 32
NONCE_BYTES = 32
SERVER_KEY = b"Tor safe cookie authentication server-to-controller hash"
CLIENT_KEY = b"Tor safe cookie authentication controller-to-server hash"
START_TOR = "start it (Debian/Ubuntu: `sudo apt install tor`, then `sudo systemctl start tor`)"
SET_TORRC = ("set CookieAuthentication 1 and ControlPort 9051 in /etc/tor/torrc and restart"
             " tor; your user needs read access to the cookie file (Debian: `sudo adduser"
             " $USER debian-tor`, then log in again)")


class TorError(Exception):
    """Tor cannot do what the table needs, said in one line."""


class TorNotRunning(TorError, OSError):
    """Nothing answers where tor should be."""


class TorAuthError(TorError):
    """tor's control port does not take our authentication."""


class ControlError(TorError):
    """tor's control port answered what cannot be read (or too much of it)."""


class TorReplyError(TorError):
    """A command refused by tor (a 4xx or 5xx reply)."""

    def __init__(self, verb: str, code: str, text: str):
        super().__init__(f"tor refused {verb}: {code} {text}")
        self.verb, self.code, self.text = verb, code, text


@dataclass(frozen=True, slots=True)
class ReplyLine:
    code: str
    """The three digits (``250``, ``650``, ``552``...)."""
    text: str
    """The line after the code and its separator."""
    data: tuple[str, ...] | None = None
    """The lines of a ``250+`` data block (None: the line has none)."""


@dataclass(frozen=True, slots=True)
class Onion:
    """A published onion service: joiners dial ``address:port`` through tor."""

    service_id: str
    port: int

    @property
    def address(self) -> str:
        return f"{self.service_id}.onion"


@dataclass(frozen=True, slots=True)
class ProtocolInfo:
    methods: frozenset[str]
    cookie_file: str | None
    version: str | None


def show_control(address: ControlAddress) -> str:
    return address if isinstance(address, str) else f"{address[0]}:{address[1]}"


def parse_control(text: str) -> ControlAddress:
    """``HOST:PORT``, ``PORT`` (on 127.0.0.1), or a Unix socket's path (``/run/...``,
    ``unix:/run/...``); ValueError if it is none of these."""
    if text.startswith(("/", "unix:")):
        return text.removeprefix("unix:")
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not HOST:PORT or the path of a socket")
    return host, int(port)


# ============================================================ onion addresses

def onion_address(public_key: bytes) -> str:
    """The v3 onion address of an ed25519 public key (rend-spec-v3)."""
    if len(public_key) != 32:
        raise ValueError("an ed25519 public key is 32 bytes")
    checksum = hashlib.sha3_256(b".onion checksum" + public_key + b"\x03").digest()[:2]
    return base64.b32encode(public_key + checksum + b"\x03").decode().lower() + ".onion"


def check_onion(host: str) -> str:
    """``host`` as a v3 onion address (lower case), or ValueError saying what is wrong."""
    name = host.lower().removesuffix(".")
    label = name.removesuffix(".onion")
    if label == name or "." in label:
        raise ValueError(f"{host!r} is not an onion address (NAME.onion)")
    if len(label) != 56 or not re.fullmatch(r"[a-z2-7]+", label):
        raise ValueError(f"{host!r} is not a v3 onion address (56 base32 characters)")
    raw = base64.b32decode(label.upper())
    if raw[34] != 3:
        raise ValueError(f"{host!r} is an onion address of version {raw[34]}, not 3")
    if onion_address(raw[:32]) != name:
        raise ValueError(f"{host!r} is not an onion address: its checksum is wrong (a typo?)")
    return name


def is_onion(host: str) -> bool:
    try:
        check_onion(host)
    except ValueError:
        return False
    return True


# ============================================================ replies

def keywords(text: str) -> dict[str, str]:
    """The ``KEY=VALUE`` and ``KEY="quoted"`` words of a reply line (other words are
    skipped); ControlError for a quoted string left open."""
    found: dict[str, str] = {}
    for m in re.finditer(r'(\S+?)=("(?:[^"\\]|\\.)*"|"|[^\s"]*)', text):
        key, value = m.group(1), m.group(2)
        if value.startswith('"'):
            if len(value) < 2 or not value.endswith('"'):
                raise ControlError(f"tor's control port sent an unterminated string: {key}")
            value = unquote(value[1:-1])
        found[key] = value
    return found


def unquote(text: str) -> str:
    """The contents of a quoted string with its escapes undone (control-spec 2.1.1)."""
    def one(m: re.Match[str]) -> str:
        escaped = m.group(1)
        if escaped[0] in "01234567":
            return chr(int(escaped, 8))
        return {"n": "\n", "t": "\t", "r": "\r"}.get(escaped, escaped)
    return re.sub(r"\\([0-7]{1,3}|.)", one, text, flags=re.DOTALL)


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ControlPort:
    """One connection to tor's control port."""

    def __init__(self, stream: trio.abc.Stream, where: str = "tor's control port"):
        self.stream = stream
        self.where = where
        self.buffer = bytearray()
        self.events: list[list[ReplyLine]] = []
        """Asynchronous replies (6xx) read while waiting for a command's reply."""

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def _line(self) -> bytes:
        while True:
            end = self.buffer.find(b"\n")
            if 0 <= end <= MAX_LINE:
                line = bytes(self.buffer[:end])
                del self.buffer[:end + 1]
                return line.removesuffix(b"\r")
            if end > MAX_LINE or len(self.buffer) > MAX_LINE:
                raise ControlError(f"{self.where} sent a line longer than {MAX_LINE} bytes")
            try:
                data = await self.stream.receive_some(MAX_LINE)
            except (trio.BrokenResourceError, OSError) as exc:
                raise TorError(f"{self.where} broke the connection ({exc})") from exc
            if not data:
                raise TorError(f"{self.where} closed the connection")
            self.buffer += data

    async def reply(self) -> list[ReplyLine]:
        """The next reply (its lines, the last one final), of at most :data:`MAX_REPLY`
        bytes; ControlError for one that does not read."""
        lines: list[ReplyLine] = []
        size = 0

        async def line() -> str:
            nonlocal size
            raw = await self._line()
            size += len(raw) + 2
            if size > MAX_REPLY:
                raise ControlError(f"{self.where} sent a reply longer than {MAX_REPLY} bytes")
            return raw.decode("utf-8", "replace")

        while True:
            text = await line()
            code, mark, rest = text[:3], text[3:4], text[4:]
            if not (code.isdigit() and len(code) == 3 and mark in ("-", "+", " ")) or (
                    lines and code != lines[0].code):
                raise ControlError(f"{self.where} sent what is not a reply: {text[:80]!r}")
            data: list[str] | None = None
            if mark == "+":
                data = []
                while (more := await line()) != ".":
                    data.append(more[1:] if more.startswith(".") else more)
            lines.append(ReplyLine(code, rest, None if data is None else tuple(data)))
            if mark == " ":
                return lines

    async def command(self, line: str) -> list[ReplyLine]:
        """Send one command and read its reply (events read meanwhile are kept in
        :attr:`events`); TorReplyError if tor refuses it.  Errors name the command's
        verb only (an AUTHENTICATE's secret is not shown)."""
        if "\r" in line or "\n" in line:
            raise ValueError("a control command is one line")
        verb = line.split(" ", 1)[0]
        try:
            await self.stream.send_all(line.encode() + b"\r\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise TorError(f"{self.where} broke the connection ({exc})") from exc
        while True:
            lines = await self.reply()
            if not lines[0].code.startswith("6"):
                break
            self.events = [*self.events[-(MAX_EVENTS - 1):], lines]
        if lines[-1].code[0] != "2":
            raise TorReplyError(verb, lines[-1].code, lines[-1].text[:200])
        return lines

    async def event(self) -> list[ReplyLine]:
        """The next asynchronous event (one kept first)."""
        while not self.events:
            lines = await self.reply()
            if lines[0].code.startswith("6"):
                return lines
        return self.events.pop(0)

    async def protocol_info(self) -> ProtocolInfo:
        methods: frozenset[str] = frozenset()
        cookie = version = None
        for reply in await self.command("PROTOCOLINFO 1"):
            if reply.text.startswith("AUTH "):
                words = keywords(reply.text)
                methods = frozenset(filter(None, words.get("METHODS", "").split(",")))
                cookie = words.get("COOKIEFILE")
            elif reply.text.startswith("VERSION "):
                version = keywords(reply.text).get("Tor")
        return ProtocolInfo(methods, cookie, version)

    async def authenticate(self, password: str | None = None,
                           nonce: Callable[[int], bytes] = secrets.token_bytes) -> str:
        """Authenticate by the best method tor offers; the method used.  ``nonce(n)``
        gives SAFECOOKIE's client nonce of ``n`` bytes.  Plain COOKIE is never used: it
        would send the contents of whatever file the (unauthenticated) answer names to
        whatever answers on the port; SAFECOOKIE has tor prove it knows the cookie
        first, and tor always offers it beside COOKIE."""
        info = await self.protocol_info()
        methods = info.methods
        if password is not None and "HASHEDPASSWORD" in methods:
            method, secret = "HASHEDPASSWORD", quote(password)
        elif "SAFECOOKIE" in methods:
            method = "SAFECOOKIE"
            cookie = read_cookie(info.cookie_file)
            secret = await self._challenge(cookie, nonce(NONCE_BYTES))
        elif "NULL" in methods:
            method, secret = "NULL", ""
        elif "COOKIE" in methods:  # (tor offers SAFECOOKIE beside it: never COOKIE alone)
            raise TorAuthError("what answers on tor's control port offers COOKIE"
                               " authentication but not SAFECOOKIE, which every tor offers"
                               " beside it: it may not be tor (the cookie file it names is"
                               " not read)")
        elif "HASHEDPASSWORD" in methods:
            raise TorAuthError("tor's control port asks for a password: set it in the"
                               " environment variable P2PCARDS_TOR_PASSWORD,"
                               f" or {SET_TORRC}")
        else:
            raise TorAuthError(f"tor's control port offers no method we know"
                               f" ({', '.join(sorted(methods)) or 'none'}): {SET_TORRC}")
        try:
            await self.command(f"AUTHENTICATE {secret}".rstrip())
        except TorReplyError as exc:
            raise TorAuthError(f"tor refused our authentication ({method}: {exc.code}"
                               f" {exc.text}): {SET_TORRC}") from exc
        return method

    async def _challenge(self, cookie: bytes, client_nonce: bytes) -> str:
        """SAFECOOKIE: the server's hash checked, our hash (hex) to send."""
        reply = (await self.command(f"AUTHCHALLENGE SAFECOOKIE {client_nonce.hex()}"))[-1]
        words = keywords(reply.text)
        try:
            server_hash = bytes.fromhex(words["SERVERHASH"])
            server_nonce = bytes.fromhex(words["SERVERNONCE"])
        except (KeyError, ValueError) as exc:
            raise ControlError(f"{self.where} sent an AUTHCHALLENGE reply that does not read"
                               ) from exc
        message = cookie + client_nonce + server_nonce
        expected = hmac.new(SERVER_KEY, message, hashlib.sha256).digest()
        if not hmac.compare_digest(server_hash, expected):
            raise TorAuthError(f"{self.where} does not know tor's cookie (its SAFECOOKIE hash"
                               " is wrong): is it tor that listens there?")
        return hmac.new(CLIENT_KEY, message, hashlib.sha256).hexdigest()

    async def add_onion(self, local_port: int, virtual_port: int | None = None) -> Onion:
        """A new onion service (its key discarded) whose ``virtual_port`` (by default
        ``local_port``) leads to 127.0.0.1:``local_port``."""
        port = virtual_port or local_port
        lines = await self.command(f"ADD_ONION NEW:ED25519-V3 Flags=DiscardPK"
                                   f" Port={port},127.0.0.1:{local_port}")
        ids = [line.text.removeprefix("ServiceID=") for line in lines
               if line.text.startswith("ServiceID=")]
        if len(ids) != 1 or not is_onion(ids[0] + ".onion"):
            raise ControlError(f"{self.where} answered ADD_ONION without a v3 ServiceID")
        return Onion(ids[0].lower(), port)

    async def published(self, service_id: str) -> None:
        """Wait until tor has uploaded ``service_id``'s descriptor to a directory (its
        HS_DESC events turned on first)."""
        while True:
            event = (await self.event())[0].text.split()
            if event[:2] == ["HS_DESC", "UPLOADED"] and event[2:3] == [service_id]:
                return

    async def del_onion(self, service_id: str) -> None:
        await self.command(f"DEL_ONION {service_id}")


def read_cookie(path: str | None) -> bytes:
    """tor's authentication cookie (32 bytes, a regular file, read without blocking)."""
    if not path:
        raise TorAuthError("tor's control port names no cookie file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
            cookie = os.read(fd, COOKIE_BYTES + 1) if regular else b""
        finally:
            os.close(fd)
    except OSError as exc:
        raise TorAuthError(f"cannot read tor's cookie file {path} ({exc.strerror}): give"
                           " your user read access to it (Debian: `sudo adduser $USER"
                           " debian-tor`, then log in again)") from exc
    if len(cookie) != COOKIE_BYTES:
        raise TorAuthError(f"tor's cookie file {path} is not a {COOKIE_BYTES}-byte cookie")
    return cookie


async def open_control(addresses: Sequence[ControlAddress] = DEFAULT_CONTROL
                       ) -> ControlPort:
    """A connection to the first of ``addresses`` that answers; TorNotRunning if none
    does (TorAuthError if a socket is there that we may not open)."""
    denied = None
    for address in addresses:
        try:
            if isinstance(address, str):
                stream: trio.abc.Stream = await trio.open_unix_socket(address)
            else:
                stream = await trio.open_tcp_stream(*address)
        except PermissionError:
            denied = address
        except OSError:
            continue
        else:
            return ControlPort(stream, f"tor's control port {show_control(address)}")
    if denied is not None:
        raise TorAuthError(f"may not open tor's control socket {show_control(denied)}: your"
                           " user needs access to it (Debian: `sudo adduser $USER"
                           " debian-tor`, then log in again)")
    where = " or ".join(map(show_control, addresses))
    raise TorNotRunning(f"tor is not running (nothing answers on its control port {where}):"
                        f" {START_TOR}, or give --tor-control HOST:PORT")


@contextlib.asynccontextmanager
async def onion_service(local_port: int, virtual_port: int | None = None, *,
                        control: Sequence[ControlAddress] = DEFAULT_CONTROL,
                        password: str | None = None,
                        nonce: Callable[[int], bytes] = secrets.token_bytes,
                        wait: bool = False,
                        setup_seconds: float = SETUP_SECONDS,
                        publish_seconds: float = PUBLISH_SECONDS) -> AsyncIterator[Onion]:
    """An onion service leading to 127.0.0.1:``local_port`` for as long as the block
    runs (``wait``: once tor has published it).  The control connection stays open
    meanwhile; ``DEL_ONION`` ends the service when the block ends, however it ends."""
    port = await open_control(control)
    onion: Onion | None = None
    try:
        try:
            with trio.fail_after(setup_seconds):
                await port.authenticate(password, nonce)
                if wait:
                    await port.command("SETEVENTS HS_DESC")
                onion = await port.add_onion(local_port, virtual_port)
        except trio.TooSlowError as exc:
            raise TorError(f"{port.where} did not answer within {setup_seconds:g} s") from exc
        if wait:
            try:
                with trio.fail_after(publish_seconds):
                    await port.published(onion.service_id)
                    await port.command("SETEVENTS")
            except trio.TooSlowError as exc:
                raise TorError(f"tor did not publish {onion.address} within"
                               f" {publish_seconds:g} s: is it connected to the Tor network?"
                               ) from exc
        yield onion
    finally:
        with trio.CancelScope(shield=True):
            if onion is not None:
                with trio.move_on_after(CLOSE_SECONDS), contextlib.suppress(
                        TorError, OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                    await port.del_onion(onion.service_id)
            await trio.aclose_forcefully(port.stream)
