"""Frames on a link: a big-endian u32 length, then one msgpack map (DESIGN.md section 4).

The length is checked against the cap before anything is read; the map is
decoded strictly (no ext types, string keys, no trailing bytes) and must
carry a string ``t`` naming its type.  Any fault raises :class:`FrameError`
with the reason, and the caller closes that link only.
"""

from __future__ import annotations

import contextlib
import struct
from typing import Any

import msgpack
import trio

from p2pcards.table.codec import MAX_MESSAGE

MAX_FRAME = MAX_MESSAGE + 64 * 1024
"""A frame holds one table message (at most MAX_MESSAGE) and a little framing;
the roster and the lobby fit easily."""
HEADER = struct.Struct(">I")
PROTOCOL = "p2pcards"
VERSIONS = (1, 1)
"""The link protocol versions this node speaks (lowest, highest)."""


class FrameError(Exception):
    """A frame that cannot be taken: the link that sent it is closed with this reason."""


class LinkClosed(Exception):
    """The other end closed the link (between frames)."""


def encode(frame: dict[str, Any]) -> bytes:
    body: bytes = msgpack.packb(frame, use_bin_type=True)
    if len(body) > MAX_FRAME:
        raise FrameError(f"a {frame.get('t')!r} frame of {len(body)} bytes is over the"
                         f" {MAX_FRAME}-byte cap")
    return HEADER.pack(len(body)) + body


def _no_ext(code: int, data: bytes) -> Any:
    raise FrameError(f"msgpack extension type {code} is not allowed")


def decode(body: bytes) -> dict[str, Any]:
    try:
        frame = msgpack.unpackb(body, raw=False, strict_map_key=True, ext_hook=_no_ext)
    except FrameError:
        raise
    except Exception as exc:  # msgpack raises several unrelated types
        raise FrameError(f"not msgpack ({type(exc).__name__}: {exc})") from exc
    if not isinstance(frame, dict):
        raise FrameError(f"a frame must be a map, not {type(frame).__name__}")
    kind = frame.get("t")
    if not isinstance(kind, str):
        raise FrameError("a frame must name its type in 't'")
    return frame


class Link:
    """Frames over one byte stream (a TLS stream, or a memory stream in tests)."""

    def __init__(self, stream: trio.abc.Stream, peer: str = "peer"):
        self.stream = stream
        self.peer = peer
        self.buffer = bytearray()
        self.sent = 0
        self.received = 0
        self._send_lock = trio.Lock()

    async def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            try:
                chunk = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise LinkClosed(f"{self.peer}: the link broke ({exc})") from exc
            if not chunk:
                return False
            self.buffer += chunk
        return True

    async def receive(self) -> dict[str, Any]:
        if not await self._fill(HEADER.size):
            if self.buffer:
                raise FrameError("the link closed inside a frame header")
            raise LinkClosed(f"{self.peer} closed the link")
        (size,) = HEADER.unpack_from(self.buffer)
        if size > MAX_FRAME:
            raise FrameError(f"a frame of {size} bytes is over the {MAX_FRAME}-byte cap")
        if not await self._fill(HEADER.size + size):
            raise FrameError(f"the link closed inside a frame ({len(self.buffer) - 4} of"
                             f" {size} bytes)")
        body = bytes(self.buffer[HEADER.size:HEADER.size + size])
        del self.buffer[:HEADER.size + size]
        self.received += 1
        return decode(body)

    async def send(self, frame: dict[str, Any]) -> None:
        data = encode(frame)
        async with self._send_lock:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise LinkClosed(f"{self.peer}: the link broke ({exc})") from exc
        self.sent += 1

    async def aclose(self) -> None:
        with trio.move_on_after(1) as scope:
            scope.shield = True
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await self.stream.aclose()


def field(frame: dict[str, Any], name: str, kind: type | tuple[type, ...],
          most: int | None = None) -> Any:
    """``frame[name]``, checked to be of ``kind`` (and at most ``most`` long)."""
    value = frame.get(name)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise FrameError(f"a {frame['t']!r} frame needs {name!r} as"
                         f" {getattr(kind, '__name__', kind)}")
    if most is not None and hasattr(value, "__len__") and len(value) > most:
        raise FrameError(f"a {frame['t']!r} frame's {name!r} is over {most} long")
    return value
