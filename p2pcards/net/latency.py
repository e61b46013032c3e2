"""A link with a round-trip time: tests and ``p2pcards bench net --rtt`` put peers
as far apart as the internet would, on one machine.

:class:`DelayedStream` wraps one end of a Trio byte stream and holds every chunk
for half the round-trip time (plus jitter, if asked) in each direction: what is
sent leaves ``one_way`` seconds after :meth:`~DelayedStream.send_all` took it, and
what arrives is handed to :meth:`~DelayedStream.receive_some` ``one_way`` seconds
after it came in, so a message and its answer over the wrapped link take the
round-trip time.  Bytes never change order (a chunk's jitter never brings it
before the one sent ahead of it), and each direction holds at most ``limit``
bytes: past that, ``send_all`` waits, and nothing more is read from the inner
stream (the other end's sends wait in turn).  Its timing is Trio's clock, so a
test on :class:`trio.testing.MockClock` sees exact times.

Two tasks carry the chunks, started in the nursery given (the stream's owner's):
they end once the stream is closed, by either end.  :meth:`~DelayedStream.aclose`
delivers what was sent before it, each chunk at its time, then closes the inner
stream (cancelled, it closes it at once).  The other end's close arrives as the
end of the stream, after the data sent before it, and a sending side that broke
says so at the next ``send_all``.

:mod:`p2pcards.net.proxy` puts real processes behind the same delay.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import trio

__all__ = ["DEFAULT_LIMIT", "Delay", "DelayedStream"]

DEFAULT_LIMIT = 256 * 1024
"""Bytes each direction holds at most (a table's frames are a few KiB; a link of 150 ms
carries about 1.7 MB/s at this, and a 600 ms one about 0.85)."""


@dataclass(frozen=True)
class Delay:
    """A link's round-trip time and jitter, in seconds: each chunk waits ``rtt / 2``
    one way, plus a draw of ``rng.uniform(0, jitter)`` (an injected, seeded
    :class:`random.Random`; never the global one)."""

    rtt: float
    jitter: float = 0.0
    rng: random.Random | None = None

    def __post_init__(self) -> None:
        if not (self.rtt >= 0 and self.jitter >= 0 and math.isfinite(self.rtt + self.jitter)):
            raise ValueError("a round-trip time and a jitter are finite, 0 or more")
        if self.jitter and self.rng is None:
            raise ValueError("a jitter needs its random.Random")

    @property
    def one_way(self) -> float:
        return self.rtt / 2

    def draw(self) -> float:
        """One chunk's one-way delay."""
        if self.jitter and self.rng is not None:
            return self.one_way + self.rng.uniform(0, self.jitter)
        return self.one_way


class _Conveyor:
    """One direction: chunks in, each out at its time, in order, ``limit`` bytes at most
    held (a chunk larger than the limit goes in alone)."""

    def __init__(self, delay: Delay, limit: int):
        self.delay = delay
        self.limit = limit
        self.chunks: deque[tuple[float, bytes]] = deque()  # (due, data); b"": the end
        self.held = 0
        self.last_due = -math.inf
        self.ended = False
        self.changed = trio.lowlevel.ParkingLot()

    def full(self) -> bool:
        return bool(self.chunks) and self.held >= self.limit

    async def put(self, data: bytes) -> None:
        """Hold ``data`` (b"": the end) until its time; waits while full."""
        while self.full():
            await self.changed.park()
        due = max(trio.current_time() + self.delay.draw(), self.last_due)  # never reorders
        self.last_due = due
        self.chunks.append((due, data))
        self.held += len(data)
        self.ended = self.ended or not data
        self.changed.unpark_all()

    async def take(self, most: int | None = None) -> bytes:
        """The next chunk (at most ``most`` bytes of it) once its time has come; b"" at
        the end."""
        while True:
            while not self.chunks:
                await self.changed.park()
            due, data = self.chunks[0]
            if trio.current_time() >= due:
                break
            await trio.sleep_until(due)
        if not data:
            return b""
        if most is not None and len(data) > most:
            self.chunks[0] = (due, data[most:])
            data = data[:most]
        else:
            self.chunks.popleft()
        self.held -= len(data)
        self.changed.unpark_all()
        return data


class DelayedStream(trio.abc.Stream):
    """``inner`` with ``delay`` each way (see the module); its two carrying tasks run in
    ``nursery``."""

    def __init__(self, inner: trio.abc.Stream, delay: Delay, nursery: trio.Nursery, *,
                 limit: int = DEFAULT_LIMIT):
        if limit < 1:
            raise ValueError("a delayed stream holds at least one byte")
        self.inner = inner
        self.delay = delay
        self.outgoing = _Conveyor(delay, limit)
        self.incoming = _Conveyor(delay, limit)
        self.closed = False
        self.broken: BaseException | None = None
        """Why the inner stream refused what was sent (said at the next ``send_all``)."""
        self._sending = trio.CancelScope()
        self._reading = trio.CancelScope()
        self._flushed = trio.Event()
        self._readers = 0
        self._senders = 0
        self._calls: set[trio.CancelScope] = set()
        """The scopes of the calls waiting on this stream (closing it cancels them)."""
        nursery.start_soon(self._carry_out)
        nursery.start_soon(self._carry_in)

    @property
    def held(self) -> int:
        """Bytes held in both directions (at most twice the limit, and one chunk)."""
        return self.outgoing.held + self.incoming.held

    # ------------------------------------------------------------------ the Stream

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self._check("send_all", self._senders)
        if self.broken is not None:
            raise trio.BrokenResourceError("the delayed link broke") from self.broken
        self._senders += 1
        try:
            with self._call():
                await self.outgoing.put(bytes(data))
            if self.closed:
                raise trio.ClosedResourceError("the stream was closed")
        finally:
            self._senders -= 1

    async def wait_send_all_might_not_block(self) -> None:
        self._check("wait_send_all_might_not_block", self._senders)
        with self._call():
            while self.outgoing.full():
                await self.outgoing.changed.park()
        if self.closed:
            raise trio.ClosedResourceError("the stream was closed")

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        self._check("receive_some", self._readers)
        if max_bytes is not None and max_bytes < 1:
            raise ValueError("max_bytes must be 1 or more")
        self._readers += 1
        try:
            data = b""
            with self._call():
                data = await self.incoming.take(max_bytes)
            if self.closed:
                raise trio.ClosedResourceError("the stream was closed")
            return data
        finally:
            self._readers -= 1

    async def aclose(self) -> None:
        """What was sent is delivered, each chunk at its time, then the inner stream
        closed; cancelled meanwhile (or the stream broken), it is closed at once."""
        if self.closed:
            await trio.lowlevel.checkpoint()
            return
        self.closed = True
        for scope in self._calls:  # (a task waiting on this stream is told it closed)
            scope.cancel()
        self._reading.cancel()
        try:
            await self.outgoing.put(b"")  # (the end, after every chunk sent)
            await self._flushed.wait()
        finally:
            self._sending.cancel()
            await trio.aclose_forcefully(self.inner)

    # ---------------------------------------------------------------- inside

    def _check(self, what: str, busy: int) -> None:
        if self.closed:
            raise trio.ClosedResourceError("the stream was closed")
        if busy:
            raise trio.BusyResourceError(f"another task is in {what}")

    @contextlib.contextmanager
    def _call(self) -> Iterator[None]:
        """A call's wait, cancelled if the stream is closed meanwhile (the caller then
        raises :class:`trio.ClosedResourceError`)."""
        with trio.CancelScope() as scope:
            self._calls.add(scope)
            try:
                yield
            finally:
                self._calls.discard(scope)

    async def _carry_out(self) -> None:
        try:
            with self._sending:
                while data := await self.outgoing.take():
                    await self.inner.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            self.broken = exc
            self.outgoing.chunks.clear()
            self.outgoing.held = 0
            self.outgoing.changed.unpark_all()
        finally:  # (ended by its nursery's cancellation too: a close waits no more)
            self._flushed.set()

    async def _carry_in(self) -> None:
        with self._reading:
            try:
                while data := await self.inner.receive_some():
                    await self.incoming.put(bytes(data))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # (read as the end: the next receive_some says it after the rest)
            await self.incoming.put(b"")
