"""A link: frames (:mod:`p2pcards.net.frames`) over one Trio byte stream.

The stream is anything that is a :class:`trio.abc.Stream`: a TLS stream on a
TCP connection, or a memory stream in tests.  A frame's length is checked
against the cap before its body is read; any fault raises
:class:`~p2pcards.net.frames.FrameError` with the reason, and the caller closes
that link only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import trio

from p2pcards.net.frames import (
    HEADER,
    MAX_FRAME,
    VERSIONS,
    Frame,
    FrameError,
    from_map,
    pack,
    pack_map,
    unpack_map,
)


def broken(exc: BaseException) -> str:
    """Why a link broke, in a few words: the system's reason (a reset, a timeout), else
    the error's own words, else that the connection was cut (Trio's errors of a broken
    TLS stream carry no text)."""
    chain: list[BaseException] = []
    error: BaseException | None = exc
    while error is not None and error not in chain and len(chain) < 5:
        chain.append(error)
        error = error.__cause__ or error.__context__
    for error in chain:
        if isinstance(error, OSError) and error.strerror:
            return error.strerror[:1].lower() + error.strerror[1:]
    return str(exc) or "the connection was cut"


class LinkClosed(Exception):
    """The other end closed the link (between frames)."""


class Link:
    """Frames over one byte stream (a TLS stream, or a memory stream in tests)."""

    def __init__(self, stream: trio.abc.Stream, peer: str = "peer"):
        self.stream = stream
        self.peer = peer
        self.version = VERSIONS[0]
        """The link protocol version both ends speak (set once their hellos meet)."""
        self.tap: Callable[[bytes], None] | None = None
        """Sees each frame's bytes as received (a watcher's record, in tests)."""
        self.buffer = bytearray()
        self.sent = 0
        self.received = 0
        self._send_lock = trio.Lock()

    async def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            try:
                chunk = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise LinkClosed(f"{self.peer}: the link broke ({broken(exc)})") from exc
            if not chunk:
                return False
            self.buffer += chunk
        return True

    async def receive(self, most: int = MAX_FRAME) -> Frame:
        """The next frame, checked (:class:`FrameError` if it is not one); ``most``: its
        cap in bytes, checked before a byte of its body is read or decoded."""
        return from_map(await self.receive_map(most))

    async def receive_map(self, most: int = MAX_FRAME) -> dict[str, Any]:
        """The next frame as its msgpack map (only its ``t`` checked)."""
        if not await self._fill(HEADER.size):
            if self.buffer:
                raise FrameError("the link closed inside a frame header")
            raise LinkClosed(f"{self.peer} closed the link")
        (size,) = HEADER.unpack_from(self.buffer)
        if size > most:
            raise FrameError(f"a frame of {size} bytes is over the {most}-byte cap"
                             + ("" if most == MAX_FRAME else " before authentication"))
        if not await self._fill(HEADER.size + size):
            raise FrameError(f"the link closed inside a frame ({len(self.buffer) - 4} of"
                             f" {size} bytes)")
        body = bytes(self.buffer[HEADER.size:HEADER.size + size])
        del self.buffer[:HEADER.size + size]
        self.received += 1
        if self.tap is not None:
            self.tap(body)
        return unpack_map(body)

    async def send(self, frame: Frame) -> None:
        await self._send(pack(frame))

    async def send_map(self, raw: dict[str, Any]) -> None:
        """Any map as a frame (tests send what a peer should not)."""
        await self._send(pack_map(raw))

    async def _send(self, data: bytes) -> None:
        async with self._send_lock:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise LinkClosed(f"{self.peer}: the link broke ({broken(exc)})") from exc
        self.sent += 1

    async def aclose(self) -> None:
        with trio.move_on_after(1) as scope:
            scope.shield = True
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await self.stream.aclose()
