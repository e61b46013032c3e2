"""The host's lobby over links: a link from the door to its end.

A link comes through the door (:class:`~p2pcards.net.door.Door`: its frames
capped, its time bounded), where it says hello (the version both ends speak,
and whether the table's deck admits it) and proves who it is with its
``auth``.  Who may sit where the lobby decides (:class:`~p2pcards.net.lobby.Lobby`,
no I/O); here it is done: a joiner is welcomed and takes its seats (numbered
now: others may have sat meanwhile), every link is shown the lobby, and the
last seat taken begins the game.  A seated identity that comes back once the
game has begun is welcomed back to its seats (held over the pace of its
returns first) and sent what it missed: the consents that began this game,
the ``start``, every table message so far, the players' words, the end.  A
watcher is handed to the watchers (:class:`~p2pcards.net.watchers.Watchers`).

Then the link's pump (:class:`~p2pcards.net.pump.Pump`) hands each frame it
reads to the relay (a table message, a chat line, a line said in the lobby) or to
the interval between games (a word about another game); anything else closes the
link.  A link that closes before the game frees its seats, and the seats after them
move up.
Whatever a link does, only it is closed: nothing raised here reaches the
listener.
"""

from __future__ import annotations

import contextlib
import secrets
from functools import partial
from typing import Protocol

import trio

from p2pcards.net import links
from p2pcards.net.door import Door, Quietly, reason_of
from p2pcards.net.frames import (
    NONCE_BYTES,
    Again,
    Auth,
    ChatLine,
    Error,
    Frame,
    FrameError,
    HelloFrame,
    LobbyChat,
    Msg,
    Start,
    Welcome,
    kind_of,
)
from p2pcards.net.gate import PREAUTH_FRAME
from p2pcards.net.identity import device_id, show_id
from p2pcards.net.interval import Interval
from p2pcards.net.lobby import Lobby, Rejoin, Request, WatchRequest
from p2pcards.net.pump import DRAIN_SECONDS
from p2pcards.net.relay import LinkLog, Seated, TableRelay
from p2pcards.net.wire import Link
from p2pcards.table.codec import CodecError


class HostTable(Protocol):
    """What seating a link asks of the host's table."""

    @property
    def begun(self) -> bool:
        """Whether the game has begun (its roster made)."""

    @property
    def deck(self) -> str:
        """The deck the table deals with (a link must speak a version that knows it)."""

    def hello(self, nonce: bytes) -> HelloFrame:
        """The host's hello, with ``nonce`` for the joiner to sign."""

    def begin(self) -> None:
        """Every seat is taken: the game begins (CodecError if its roster cannot be
        made)."""

    def start_frame(self) -> Start:
        """The game's ``start``: its roster and the table settings."""

    def played(self) -> list[Frame]:
        """What the game has seen since its ``start``: every table message, and the
        players' words and the end once it is over."""


class Seating:
    """The links of one host, from their handshake to their end."""

    def __init__(self, table: HostTable, lobby: Lobby, door: Door, relay: TableRelay, *,
                 interval: Interval, log: LinkLog):
        self.table = table
        self.lobby = lobby
        self.door = door
        self.relay = relay
        self.interval = interval
        self.log = log

    async def handle(self, stream: trio.abc.Stream, address: str | None = None) -> None:
        """One link, from its handshake to its end.  Whatever it sends, only it is closed:
        nothing raised here reaches the listener (Trio would take the host down)."""
        entered = await self.door.enter(stream, address, self._authenticate)
        if entered is None:
            return
        link, admitted, where = entered
        if isinstance(admitted, WatchRequest):
            await self.relay.watchers.play(link, admitted, where)
        else:
            await self._play(link, admitted, where)

    async def _authenticate(self, link: Link) -> Request | Rejoin | WatchRequest:
        watchers = self.relay.watchers
        first = await link.receive(PREAUTH_FRAME)
        version = links.negotiate(first)
        assert isinstance(first, HelloFrame)
        links.admits(first, version, self.table.deck)
        link.version = version
        nonce = secrets.token_bytes(NONCE_BYTES)
        await link.send(self.table.hello(nonce))
        auth = await link.receive(PREAUTH_FRAME)
        if not isinstance(auth, Auth):
            raise FrameError(f"expected auth, got {kind_of(auth)!r}")
        if auth.watch:
            request = self.lobby.admit_watcher(auth, nonce)
            watchers.check(request)
            return request
        admitted = self.lobby.admit(auth, nonce)
        if admitted.key in watchers.identities():
            raise FrameError("this identity watches the table: it cannot sit at it too")
        return admitted

    async def _play(self, link: Link, admitted: Request | Rejoin, where: str) -> None:
        """An authenticated link, from its seating to its end."""
        seated: Seated | None = None
        try:
            try:
                with trio.fail_after(links.HANDSHAKE_SECONDS):
                    seated = await self._seat(link, admitted)
            except trio.TooSlowError:
                raise FrameError("did not finish the handshake in time") from None
            self.door.seated(seated.key, where, isinstance(admitted, Rejoin))
            await seated.pump.run(partial(self._take, seated),
                                  ended=partial(self._ended, seated), linger=DRAIN_SECONDS)
        except Quietly as exc:
            self.relay.closing(seated, str(exc))
        except FrameError as exc:
            await self.relay.close(link, seated, str(exc))
        except Exception as exc:  # a broken link, or a fault of ours: this link only
            reason = reason_of(exc)
            self.log.log(f"{seated.name if seated else 'a joiner'} left ({reason})")
        finally:
            if seated is not None:
                self._drop(seated)
            with contextlib.suppress(Exception):
                await link.aclose()

    async def _seat(self, link: Link, admitted: Request | Rejoin) -> Seated:
        if isinstance(admitted, Rejoin):
            return await self._rejoin(link, admitted)
        await link.send(Welcome(seat=admitted.seat, resume=False))
        # now, not before the welcome (others may have sat meanwhile); the link's version
        # counts for the proved deck's rule the roster names (Lobby.close)
        seats = self.lobby.take(admitted, link.version)
        seated = Seated.open(link, admitted.key, admitted.name)
        seated.person = not admitted.entries[0].bot
        self.relay.links.append(seated)
        self.relay.notice(f"{admitted.name} ({show_id(device_id(admitted.key), 4)}) sits"
                          f" at seat {min(seats)}")
        self._lobby_changed()
        return seated

    async def _rejoin(self, link: Link, rejoin: Rejoin) -> Seated:
        assert self.table.begun
        await self.door.pace(rejoin.key)
        stale = self.relay.by_key(rejoin.key)
        if stale is not None:  # its old link is dead but not yet noticed: replaced
            self.relay.links.remove(stale)
            stale.pump.close()
            await stale.link.aclose()
        seated = Seated.open(link, rejoin.key, rejoin.name)
        await link.send(Welcome(seat=rejoin.seat, resume=True))
        for word in self.interval.started_by:  # (what started this game, for a peer that
            await link.send(word)              # missed it)
        await link.send(self.table.start_frame())
        for frame in self.table.played():
            seated.pump.put(frame)
        seated.person = not rejoin.bot
        self.relay.links.append(seated)
        self.relay.notice(f"{rejoin.name} is back at seat {rejoin.seat}")
        return seated

    def _lobby_changed(self) -> None:
        if self.table.begun:
            return
        self.relay.broadcast(self.lobby.frame())
        if self.lobby.free == 0:
            try:
                self.table.begin()
            except CodecError as exc:  # checked on the way in: should not happen
                raise FrameError(f"the roster cannot be made: {exc}") from exc
            self.relay.broadcast(self.table.start_frame())
        else:
            self.log.log(f"{len(self.lobby.entries)} of {self.lobby.players} seats taken")

    def _take(self, seated: Seated, frame: Frame) -> None:
        """A frame from a seated joiner: :class:`FrameError` for one it should not send
        (the link is closed with the reason)."""
        if isinstance(frame, Msg):
            self.relay.table_message(seated, frame.wire)
        elif isinstance(frame, ChatLine):
            self.relay.chat(seated, frame)
        elif isinstance(frame, LobbyChat):
            self.relay.lobby_chat(seated, frame)
        elif isinstance(frame, Again):
            self.interval.word(seated, frame)
        else:
            raise FrameError(f"a {kind_of(frame)!r} frame is not expected from a joiner")

    def _ended(self, seated: Seated, reason: str) -> None:
        """A seated joiner's reader stopped: it left (``reason`` ""), or it is closed for
        ``reason`` (said after what is queued for it)."""
        if reason:
            self.relay.closing(seated, reason)
            self._drop(seated, Error(reason=reason))
        else:
            self.relay.notice(f"{seated.name} left the table ({self.relay.seats(seated)})")
        self._drop(seated)

    def _drop(self, seated: Seated, last: Frame | None = None) -> None:
        """Take a link off the table (its queue then drains and closes), once; before
        the game its seats are free again."""
        if self.relay.drop(seated, last) and self.lobby.leave(seated.key):
            self._lobby_changed()
