"""A small HTTP/1.1 client on Trio streams, enough for a router's UPnP pages: one
request per connection (``Connection: close``), the answer's head and body read up
to fixed sizes, a body by ``Content-Length``, chunks, or the end of the stream.
Literal addresses only (nothing is resolved), and no redirect is followed."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import trio

MAX_HEAD = 8 * 1024
"""The most bytes of status line and headers read."""
READ = 4096


class HttpError(Exception):
    """The request failed or its answer broke HTTP or the size caps."""


@dataclass(frozen=True)
class Url:
    host: str
    port: int
    path: str


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def parse_url(url: str) -> Url:
    """``http://ADDR[:PORT]/path`` (a literal address); :class:`HttpError` otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port or 80
    except ValueError as exc:
        raise HttpError(f"not a URL: {url[:100]!r}") from exc
    if parts.scheme != "http" or not parts.hostname:
        raise HttpError(f"not an http:// URL: {url[:100]!r}")
    try:
        ipaddress.ip_address(parts.hostname)
    except ValueError:
        raise HttpError(f"not a literal address: {parts.hostname[:64]!r}") from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Url(parts.hostname, port, path)


def _head(raw: bytes) -> tuple[int, dict[str, str]]:
    lines = raw.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)
    if len(status) < 2 or not status[0].startswith("HTTP/1.") or not status[1].isdigit():
        raise HttpError(f"not an HTTP answer: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    return int(status[1]), headers


CHUNK_SIZE = re.compile(rb"[0-9a-fA-F]{1,8}")
"""A chunk's size: hex digits only (``int(x, 16)`` would also take a sign, a ``0x``, an
underscore or spaces; a negative size once moved the reader backwards for ever)."""
MAX_SIZE_LINE = 1024
"""The most bytes of a chunk-size line (its extensions, ignored, included)."""


def _unchunk(data: bytes, limit: int) -> bytes | None:
    """The body of complete chunked ``data``; None while more is to come.  Each pass
    moves forward (a chunk's size and its data are read past), so this ends; a chunk
    whose size is not hex, whose data does not end in CRLF, or that takes the body
    over ``limit`` bytes is an :class:`HttpError`."""
    body = bytearray()
    at = 0
    while True:
        end = data.find(b"\r\n", at, at + MAX_SIZE_LINE + 2)
        if end < 0:
            if len(data) - at > MAX_SIZE_LINE:
                raise HttpError("a malformed chunk (its size line is too long)")
            return None
        digits = data[at:end].split(b";")[0].rstrip(b" \t")  # BWS before an extension
        if CHUNK_SIZE.fullmatch(digits) is None:
            raise HttpError(f"a malformed chunk (size {bytes(digits[:16])!r})")
        size = int(digits, 16)
        if size == 0:
            return bytes(body)
        if len(body) + size > limit:
            raise HttpError(f"an answer longer than {limit} bytes")
        start = end + 2
        if len(data) < start + size + 2:
            return None
        if data[start + size:start + size + 2] != b"\r\n":
            raise HttpError("a malformed chunk (no CRLF after its data)")
        body += data[start:start + size]
        assert start + size + 2 > at  # progress: at only moves forward
        at = start + size + 2


async def _read(stream: trio.abc.Stream, limit: int) -> Answer:
    data = bytearray()
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD:
            raise HttpError(f"headers longer than {MAX_HEAD} bytes")
        chunk = await stream.receive_some(READ)
        if not chunk:
            raise HttpError("the connection closed before the answer's headers")
        data += chunk
    raw, _, rest = bytes(data).partition(b"\r\n\r\n")
    if len(raw) > MAX_HEAD:
        raise HttpError(f"headers longer than {MAX_HEAD} bytes")
    status, headers = _head(raw)
    body = bytearray(rest)
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    length = headers.get("content-length")
    if not chunked and length is not None and (not length.isdigit() or int(length) > limit):
        raise HttpError(f"a Content-Length of {length[:20]!r} (at most {limit})")
    while True:
        if chunked:
            done = _unchunk(bytes(body), limit)
            if done is not None:
                return Answer(status, headers, done)
        elif length is not None and len(body) >= int(length):
            return Answer(status, headers, bytes(body[:int(length)]))
        if len(body) > 2 * limit + MAX_HEAD:
            raise HttpError(f"an answer longer than {limit} bytes")
        chunk = await stream.receive_some(READ)
        if not chunk:
            if chunked or length is not None:
                raise HttpError("the connection closed inside the answer's body")
            if len(body) > limit:
                raise HttpError(f"an answer longer than {limit} bytes")
            return Answer(status, headers, bytes(body))
        body += chunk


async def request(url: str, *, method: str = "GET", headers: dict[str, str] | None = None,
                  body: bytes = b"", limit: int = 64 * 1024, timeout: float = 2.0) -> Answer:
    """One request to ``url``; the answer whatever its status.  :class:`HttpError` for
    a failure, a broken answer, one over ``limit`` bytes, or none within ``timeout``."""
    target = parse_url(url)
    host = f"[{target.host}]" if ":" in target.host else target.host
    lines = [f"{method} {target.path} HTTP/1.1", f"Host: {host}:{target.port}",
             "Connection: close", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    wire = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    try:
        with trio.fail_after(timeout):
            stream = await trio.open_tcp_stream(target.host, target.port)
            async with stream:
                await stream.send_all(wire)
                return await _read(stream, limit)
    except trio.TooSlowError:
        raise HttpError(f"no answer from {host}:{target.port} within {timeout:g} s") from None
    except (OSError, trio.BrokenResourceError) as exc:
        raise HttpError(f"cannot reach {host}:{target.port} ({exc})") from exc
