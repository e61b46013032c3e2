"""The host's watchers: links with no seat that follow the table (``join --watch``).

A watcher proves its identity at the door like any joiner (the same
:class:`~p2pcards.net.door.Door`, the same pre-authentication bounds); its
``auth`` carries ``watch``, and :meth:`Lobby.admit_watcher
<p2pcards.net.lobby.Lobby.admit_watcher>` refuses a seated identity.  The host
takes at most ``host --watchers`` of them (:data:`DEFAULT_WATCHERS`), and
answers ``watching`` in place of ``welcome``.

What a watcher is sent is what a seat with no cards gets: the host relays it
every frame it sends to every seat (:meth:`Watchers.relay`: the table
messages, whose sealed parts and decryption shares only their recipients can
use, the seats' chat, the notices, the ``start`` of each game, the players'
words between games and the ``end``); a watcher that comes in late is first
sent the ``start`` and every table message so far (the host's log, in the
order its sessions took them), then follows live.  Nothing is addressed to one
seat at this relay: the host never has anything of the kind to send.

A watcher is never waited for.  Its frames go through a queue of at most
:data:`WATCH_QUEUE` frames (references to frames the host holds anyway); a
watcher that falls that far behind is dropped, with a line in the host's log,
and may come back with the same command.  What a watcher may send is its chat
(``wchat``, where the host allows it), each frame capped at
:data:`~p2pcards.net.gate.PREAUTH_FRAME` bytes; anything else (a table
message, a seat's chat, a word about another game), or a flood, cuts it off.
Its chat is counted by :class:`ChatBudget`, per identity and per address,
across its arrivals: at most :data:`WATCH_CHATS` lines of one identity and
:data:`WATCH_ADDRESS_CHATS` from one address in :data:`WATCH_CHAT_WINDOW`
seconds, so that neither coming back nor a fresh identity each time floods
the seats' screens.
Its returns are paced like a seat's (:meth:`Door.pace
<p2pcards.net.door.Door.pace>`): each costs the host a copy of the log.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import trio

from p2pcards.net import links
from p2pcards.net.door import Door, Quietly, reason_of
from p2pcards.net.frames import (
    MAX_CHAT,
    MAX_NOTICE,
    Error,
    Frame,
    FrameError,
    Notice,
    WatchChat,
    WatcherSeen,
    WatchersFrame,
    Watching,
    kind_of,
)
from p2pcards.net.gate import PREAUTH_FRAME
from p2pcards.net.identity import device_id, show_id
from p2pcards.net.lobby import WatchRequest
from p2pcards.net.pump import DRAIN_SECONDS, Pump
from p2pcards.net.wire import Link, LinkClosed

DEFAULT_WATCHERS = 4
"""Watchers a host takes unless told (``host --watchers N``; 0: none).  A few friends
looking on; each costs the host a copy of every frame it sends, and a late one the log."""
WATCH_QUEUE = 1024
"""Frames queued for one watcher before it is dropped as too slow.  A deal of the
longest game is a few hundred table messages; a watcher this far behind is not
following the table, and the host does not keep more for it."""
WATCH_CHATS = 5
"""Chat lines one identity may send as a watcher in WATCH_CHAT_WINDOW seconds (where the
host allows watchers to chat), whatever its links: more is a flood, and cuts the
watcher off."""
WATCH_ADDRESS_CHATS = 10
"""Chat lines the watchers of one address (:func:`~p2pcards.net.gate.address_of`) may
send in WATCH_CHAT_WINDOW seconds, whatever their identities: two people watching
from one home at the most one may say; more is a flood, and cuts off the watcher
that sends it."""
WATCH_CHAT_WINDOW = 10.0
WATCH_CHAT_SENDERS = 1024
"""Identities and addresses whose lines of the last WATCH_CHAT_WINDOW seconds the host
remembers (the oldest forgotten first): far more than ever chat in that time."""


class ChatBudget:
    """Watchers' chat lines counted per identity and per address, across their links: a
    line is shown only while both have lines left in the window (sans I/O: the caller
    gives the time)."""

    def __init__(self, window: float = WATCH_CHAT_WINDOW):
        self.window = window
        self._said: dict[tuple[str, bytes | str], deque[float]] = {}
        """(``id`` or ``address``, which) -> when its lines of the window were said."""

    def take(self, key: bytes, address: str, now: float) -> str | None:
        """Count a line of identity ``key`` from ``address`` at ``now``; None if it may
        be shown, else why not (nothing counted)."""
        self._forget(now)
        for which, most, what in ((("id", key), WATCH_CHATS, "its identity"),
                                  (("address", address), WATCH_ADDRESS_CHATS,
                                   "its address")):
            if len(self._said.get(which, ())) >= most:
                return (f"more than {most} chat lines in {self.window:g} s from {what}:"
                        " a flood")
        for which in (("id", key), ("address", address)):
            said = self._said.pop(which, None) or deque()
            said.append(now)
            self._said[which] = said  # (the most recent last)
        while len(self._said) > WATCH_CHAT_SENDERS:
            del self._said[next(iter(self._said))]
        return None

    def _forget(self, now: float) -> None:
        """Drop the lines said before the window (and whoever has none left)."""
        for which in list(self._said):
            said = self._said[which]
            while said and said[0] <= now - self.window:
                said.popleft()
            if not said:
                del self._said[which]


@dataclass(eq=False)
class Watcher:
    """One watcher's link: who it is, its queue and tasks, and its chat so far."""

    pump: Pump
    key: bytes
    name: str
    address: str = "local"
    """What the door counts its link by (:func:`~p2pcards.net.gate.address_of`)."""

    @property
    def link(self) -> Link:
        return self.pump.link


class Watchers:
    """The watchers of one host: taken, relayed to, dropped."""

    def __init__(self, most: int, chat: bool, door: Door, *,
                 catch_up: Callable[[], list[Frame]],
                 tell_seats: Callable[[Frame, Frame], None],
                 log: Callable[[str], None], closed: Callable[[str], None]):
        self.most = most
        self.chat = chat
        self.door = door
        self.catch_up = catch_up
        """The frames that bring a new watcher up to date (taken at once, with nothing
        relayed in between)."""
        self.tell_seats = tell_seats
        """Sends the seats' links a frame (the first: to links at version 4; the second,
        the same said in a ``notice``, to older ones)."""
        self.log = log
        self.closed = closed
        self.links: list[Watcher] = []
        self.budget = ChatBudget()
        """Their chat lines, per identity and per address, across their links."""
        self.dropped = 0
        """Watchers dropped as too slow."""

    # ============================================================ who watches

    def identities(self) -> set[bytes]:
        return {w.key for w in self.links}

    def check(self, request: WatchRequest) -> None:
        """Whether one more watcher may come (one that comes back replaces its old link):
        FrameError with the reason if not."""
        if self.most == 0:
            raise FrameError("this table takes no watchers (its host set --watchers 0)")
        if request.key not in self.identities() and len(self.links) >= self.most:
            raise FrameError(f"the table has {self.most} watchers already, the most its host"
                             " takes (host --watchers)")

    def frame(self) -> WatchersFrame:
        return WatchersFrame(watchers=tuple(
            WatcherSeen(name=w.name, id=device_id(w.key)) for w in self.links))

    def names(self) -> list[str]:
        return [f"{links.printable(w.name, 32)} ({show_id(device_id(w.key), 4)})"
                for w in self.links]

    def _changed(self, line: str) -> None:
        """Who watches changed: the host's log, the seats and the watchers are told."""
        self.log(line)
        listing = self.frame()
        self.tell_seats(listing, _notice(line))
        self.relay(listing)

    # ============================================================ relaying

    def relay(self, frame: Frame) -> None:
        """Queue ``frame`` for every watcher; one whose queue is full is dropped."""
        for watcher in list(self.links):
            try:
                watcher.pump.put(frame)
            except trio.WouldBlock:
                self.dropped += 1
                self._drop(watcher, f"its queue of {WATCH_QUEUE} frames is full (it reads too"
                                    " slowly to follow the table); it may come back")
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                pass

    def refuse_below(self, version: int, reason: str) -> None:
        """Every watcher whose link speaks a version below ``version`` is sent ``reason``
        and let go (a watcher of the lobby, when the roster names what its build does
        not know: it would not read the ``start``)."""
        for watcher in [w for w in self.links if w.link.version < version]:
            name = links.printable(watcher.name, 32)
            with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError,
                                     trio.BrokenResourceError):
                watcher.pump.put(Error(reason=reason))
            watcher.pump.let_go()  # (its writer sends what is queued, then ends the link)
            self.links.remove(watcher)
            self.log(f"closed the link of the watcher {name}: {reason}")
            self.closed(reason)
            self._changed(f"{name} no longer watches")

    def _drop(self, watcher: Watcher, reason: str) -> None:
        if watcher not in self.links:
            return
        self.links.remove(watcher)
        self.log(f"dropped the watcher {links.printable(watcher.name, 32)}: {reason}")
        self.closed(reason)
        watcher.pump.cancel()
        self._changed(f"{links.printable(watcher.name, 32)} no longer watches")

    # ============================================================ a watcher's link

    async def play(self, link: Link, request: WatchRequest, address: str = "local") -> None:
        """A watcher's link from its ``watching`` to its end (``address``: what the door
        counts it by): only it is closed, whatever it does."""
        watcher: Watcher | None = None
        try:
            await self.door.pace(request.key)
            stale = next((w for w in self.links if w.key == request.key), None)
            if stale is not None:  # its old link is dead but not yet noticed: replaced
                self.links.remove(stale)
                stale.pump.cancel()
            self.check(request)  # (again: others may have come meanwhile)
            await link.send(Watching(chat=self.chat, most=self.most))
            self.door.rejoins.seated(request.key, trio.current_time())
            watcher = Watcher(Pump.open(link, WATCH_QUEUE, self.catch_up()), request.key,
                              request.name, address)
            self.links.append(watcher)
            self._changed(f"{links.printable(request.name, 32)}"
                          f" ({show_id(device_id(request.key), 4)}) watches the table")
            cut = await watcher.pump.run(partial(self._said, watcher), most=PREAUTH_FRAME)
            if cut:
                self._cut(watcher, cut)
                with trio.move_on_after(1), contextlib.suppress(LinkClosed, FrameError):
                    await link.send(Error(reason=cut))
        except Quietly as exc:
            self.closed(str(exc))
        except FrameError as exc:
            self.log(f"closed the link of the watcher {links.printable(request.name, 32)}:"
                     f" {exc}")
            self.closed(str(exc))
            with trio.move_on_after(1), contextlib.suppress(LinkClosed, FrameError):
                await link.send(Error(reason=str(exc)))
        except Exception as exc:  # a broken link, or a fault of ours: this link only
            self.log(f"the watcher {links.printable(request.name, 32)} left"
                     f" ({reason_of(exc)})")
        finally:
            if watcher is not None and watcher in self.links:
                self.links.remove(watcher)
                self._changed(f"{links.printable(watcher.name, 32)} no longer watches")
            with contextlib.suppress(Exception):
                await link.aclose()

    def _cut(self, watcher: Watcher, reason: str) -> None:
        """Cut a watcher off for what it sent (the reason logged)."""
        self.log(f"cut off the watcher {links.printable(watcher.name, 32)}: {reason}")
        self.closed(reason)
        if watcher in self.links:
            self.links.remove(watcher)
            self._changed(f"{links.printable(watcher.name, 32)} no longer watches")

    def _said(self, watcher: Watcher, frame: Frame) -> None:
        """A frame from a watcher: its chat, where allowed (FrameError for anything else,
        or a flood)."""
        if not isinstance(frame, WatchChat):
            raise FrameError(f"a watcher sends no {kind_of(frame)!r} frame: it watches,"
                             " and nothing it sends changes the game")
        if not self.chat:
            raise FrameError("this table's watchers do not chat (its host did not set"
                             " --watchers-chat)")
        flood = self.budget.take(watcher.key, watcher.address, trio.current_time())
        if flood is not None:
            raise FrameError(flood)
        text = links.printable(frame.text, MAX_CHAT)
        line = WatchChat(name=watcher.name, text=text)
        shown = f"{links.printable(watcher.name, 32)} (watching): {text}"
        self.log(shown)
        self.tell_seats(line, _notice(shown))
        for other in list(self.links):
            if other is not watcher:
                with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError,
                                         trio.BrokenResourceError):
                    other.pump.put(line)

    async def farewell(self) -> None:
        """The host is leaving: every watcher's queue goes out (bounded by the caller)."""
        for watcher in list(self.links):
            watcher.pump.close()
        for watcher in list(self.links):
            with trio.move_on_after(DRAIN_SECONDS):
                await watcher.pump.drained.wait()


def _notice(text: str) -> Frame:
    return Notice(text=links.printable(text, MAX_NOTICE))
