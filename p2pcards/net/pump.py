"""One link's two tasks at the host, the same for a seat's link and a watcher's.

The host never waits for a link: what it sends one is put in the link's queue
(:meth:`Pump.put`), and the link's writer sends it, in order, first what brings
the link up to date (its backlog).  The link's reader hands each frame it
receives to the host (capped at ``most`` bytes, checked before the frame is
read); a frame the host refuses raises
:class:`~p2pcards.net.frames.FrameError`, which ends the link with that reason.
A seat's queue is unbounded (the table waits for the seat, not the other way
round); a watcher's holds at most
:data:`~p2pcards.net.watchers.WATCH_QUEUE` frames (:class:`trio.WouldBlock`
when it is full: the watcher is dropped).

The link ends when the other end closes it, when a send breaks, when the
host cancels it (:meth:`Pump.cancel`) or lets it go (:meth:`Pump.let_go`:
once its queue has gone out), or when the reader's host refuses a frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import trio

from p2pcards.net.frames import MAX_FRAME, Frame, FrameError
from p2pcards.net.wire import Link, LinkClosed

DRAIN_SECONDS = 2.0
"""How long a closing link's queue may take to go out."""


@dataclass(eq=False)
class Pump:
    """A link's queue, and its reader and writer (:meth:`run`)."""

    link: Link
    out: trio.MemorySendChannel[Frame]
    queued: trio.MemoryReceiveChannel[Frame]
    backlog: list[Frame] = field(default_factory=list)
    """What is sent before anything queued (what brings the link up to date)."""
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    drained: trio.Event = field(default_factory=trio.Event)
    """Set when the writer is done (its queue gone out and closed, or the link broken)."""
    released: bool = False
    """The host let the link go: it ends once its queue has gone out."""

    @classmethod
    def open(cls, link: Link, most: float = math.inf, backlog: Iterable[Frame] = ()
             ) -> Pump:
        """A pump for ``link`` whose queue holds at most ``most`` frames, sending
        ``backlog`` first."""
        out, queued = trio.open_memory_channel[Frame](most)
        return cls(link, out, queued, list(backlog))

    def put(self, frame: Frame) -> None:
        """Queue ``frame`` (:class:`trio.WouldBlock` if the queue is full,
        :class:`trio.ClosedResourceError` once it is closed)."""
        self.out.send_nowait(frame)

    def close(self, last: Frame | None = None) -> None:
        """Nothing more is queued after ``last``: the writer sends what is queued, then
        ends (the reader reads on)."""
        if last is not None:
            self.out.send_nowait(last)
        self.out.close()

    def let_go(self) -> None:
        """Close the queue, and end the link once it has gone out."""
        self.released = True
        self.out.close()

    def cancel(self) -> None:
        """End the link now: what is queued is not sent."""
        self.out.close()
        self.scope.cancel()

    def idle(self) -> bool:
        """Whether the queue has gone out: nothing in it, and the writer back waiting for
        the next frame (or done)."""
        stats = self.queued.statistics()
        return stats.current_buffer_used == 0 and (stats.tasks_waiting_receive > 0
                                                   or self.drained.is_set())

    async def run(self, take: Callable[[Frame], None], *, most: int = MAX_FRAME,
                  ended: Callable[[str], None] | None = None, linger: float = 0.0) -> str:
        """Read and write until the link ends: each frame read (at most ``most`` bytes)
        goes to ``take``.  When the reader stops, ``ended`` is told why ("" : the other
        end closed the link; else the FrameError's reason), the writer has up to
        ``linger`` seconds to send what is queued, and the link's tasks end.  Returns
        the same reason ("" also when the link was cancelled or broke)."""
        reason = ""
        with self.scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._write, nursery.cancel_scope)
                try:
                    await self._read(take, most)
                except FrameError as exc:
                    reason = str(exc)
                if ended is not None:
                    ended(reason)
                if linger:
                    with trio.move_on_after(linger):
                        await self.drained.wait()
                nursery.cancel_scope.cancel()
        return reason

    async def _read(self, take: Callable[[Frame], None], most: int) -> None:
        while True:
            try:
                frame = await self.link.receive(most)
            except LinkClosed:
                return
            take(frame)

    async def _write(self, scope: trio.CancelScope) -> None:
        try:
            for frame in self.backlog:
                await self.link.send(frame)
            self.backlog = []
            async for frame in self.queued:
                await self.link.send(frame)
            if self.released:
                scope.cancel()
        except LinkClosed:
            scope.cancel()  # the reader sees the same break, or is cancelled
        finally:
            self.drained.set()
