"""The host's door in Trio: a link from its connecting to its ``auth``, and returns held
over the pace.  What it counts and decides is :mod:`p2pcards.net.gate` (no I/O);
this is the part that waits, cancels and closes.

A link is taken only if :meth:`Gate.enter <p2pcards.net.gate.Gate.enter>` gives it a
slot (else it is closed at once, before its TLS handshake); its frames are capped
at :data:`~p2pcards.net.gate.PREAUTH_FRAME` bytes, it has
:data:`~p2pcards.net.gate.AUTH_SECONDS` to authenticate, and it is closed at once
if a newer link takes its slot.  Its slot is freed when it is authenticated or
closed (not before: the slots bound the host's open files).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import trio

from p2pcards.net import tls
from p2pcards.net.frames import Error, FrameError
from p2pcards.net.gate import (
    AUTH_SECONDS,
    REJOIN_HOLD,
    Gate,
    Rejoins,
    Ticket,
    address_of,
)
from p2pcards.net.lobby import Rejoin, Request, WatchRequest
from p2pcards.net.wire import Link, LinkClosed

Admitted = Request | Rejoin | WatchRequest
LOGGED_IN_FULL = 10
"""Links closed at the door that are logged one by one; after them, a count at the
100th, the 1,000th...: a flood does not flood the log."""


class Quietly(FrameError):
    """A link closed without telling it why, so that it simply dials again: a return
    held over the pace, or replaced by a newer link of the same identity."""


class Door:
    """The links in their handshake, and the returns held (one host's)."""

    def __init__(self, record: Callable[[str], None], log: Callable[[str], None]):
        self.record = record
        """Records why a link was closed."""
        self.log = log
        self.closed = 0
        """Links closed before they were authenticated."""
        self.gate = Gate()
        self.rejoins = Rejoins()
        self._waiting: dict[Ticket, trio.CancelScope] = {}
        self._held: dict[bytes, trio.CancelScope] = {}

    async def enter(self, stream: trio.abc.Stream, address: str | None,
                    authenticate: Callable[[Link], Awaitable[Admitted]]
                    ) -> tuple[Link, Admitted, str] | None:
        """The link on ``stream`` authenticated by ``authenticate`` (its frames capped,
        its time bounded), with what it was admitted to and the address it is counted
        by; None if it was closed (the reason recorded)."""
        where = address_of(address or tls.peer_address(stream))
        ticket, oldest = self.gate.enter(where)
        if oldest is not None and oldest in self._waiting:
            self._waiting[oldest].cancel()  # the door is full: the oldest link makes room
        if ticket is None:
            await trio.aclose_forcefully(stream)
            self.closing(f"too many links in their handshake from its address ({where})")
            return None
        link = Link(stream, "a joiner")
        try:
            admitted = await self._wait(link, ticket, authenticate)
        except BaseException:  # (the host is closing: the link is told at once, not left
            await trio.aclose_forcefully(stream)  # to wait out its own handshake limit)
            raise
        finally:
            self.gate.leave(ticket)
        return None if admitted is None else (link, admitted, where)

    async def _wait(self, link: Link, ticket: Ticket,
                    authenticate: Callable[[Link], Awaitable[Admitted]]) -> Admitted | None:
        admitted: Admitted | None = None
        with trio.CancelScope(deadline=trio.current_time() + AUTH_SECONDS) as scope:
            self._waiting[ticket] = scope
            try:
                if not ticket.evicted:
                    admitted = await authenticate(link)
            except FrameError as exc:
                self.closing(str(exc))
                with trio.move_on_after(1), contextlib.suppress(LinkClosed, FrameError):
                    await link.send(Error(reason=str(exc)))
            except Exception as exc:  # a broken link, or a fault of ours: this link only
                self.log(f"a joiner left ({reason_of(exc)})")
            finally:
                del self._waiting[ticket]
        if admitted is None:
            if ticket.evicted:
                self.closing("its slot at the door was taken by a newer link (too many"
                             " links in their handshake)")
            elif scope.cancelled_caught:
                self.closing(f"no auth within {AUTH_SECONDS:g} s of connecting")
            await trio.aclose_forcefully(link.stream)
        return admitted

    def closing(self, reason: str) -> None:
        """A link is closed before it was authenticated, for ``reason``."""
        self.record(reason)
        self.closed += 1
        if self.closed <= LOGGED_IN_FULL:
            self.log(f"closed the link of a joiner: {reason}")
        elif str(self.closed).rstrip("0") == "1":
            self.log(f"{self.closed} links closed before they authenticated; the last:"
                     f" {reason}")

    async def pace(self, key: bytes) -> None:
        """Hold a return of identity ``key`` over the pace (REJOIN_BURST in REJOIN_WINDOW)
        until the window lets it in, at most REJOIN_HOLD seconds (then
        :class:`Quietly`: it dials again); one held return per identity, the newest."""
        wait = self.rejoins.wait(key, trio.current_time())
        if not wait:
            return
        if key in self._held:
            self._held[key].cancel()
        with trio.CancelScope() as hold:
            self._held[key] = hold
            try:
                await trio.sleep(min(wait, REJOIN_HOLD))
            finally:
                if self._held.get(key) is hold:
                    del self._held[key]
        if hold.cancelled_caught:
            raise Quietly("replaced by a newer link of the same identity")
        if wait > REJOIN_HOLD:
            raise Quietly(f"came back more than {self.rejoins.burst} times in"
                          f" {self.rejoins.window:g} s: held {REJOIN_HOLD:g} s, then closed")

    def seated(self, key: bytes, where: str, rejoined: bool) -> None:
        """Identity ``key`` is seated from ``where`` (``rejoined``: it came back)."""
        self.gate.sat(key, where)
        if rejoined:
            self.rejoins.seated(key, trio.current_time())


def reason_of(exc: BaseException) -> str:
    """What went wrong, in one line (the first of a group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
