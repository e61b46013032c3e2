"""The host's relay: its seated links, what it lets through from them, and what goes
out on them.

A seated link is a :class:`Seated`: the joiner's name, what the host
remembers of the link (:class:`~p2pcards.net.referee.Conduct`) and its
:class:`~p2pcards.net.pump.Pump`.  What a seated link sends is judged here,
against the host's own sessions (:class:`~p2pcards.net.referee.Referee`, no
I/O): a table message the sessions keep is relayed to every other link, and
a chat line signed by one of the link's seats; before the game, a line said in
the lobby (:mod:`p2pcards.net.lobbychat`: relayed in the host's word); anything
else closes that link, never the host.  Whatever goes to the seats goes to the watchers too
(:class:`~p2pcards.net.watchers.Watchers`): a watcher is sent exactly what
the seats are.  Nothing waits for a link: each frame goes into its queue.

:class:`LinkLog` is the host's log of its links: each line, and why each link
was closed (the door's, the watchers' and the seats' alike).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import trio

from p2pcards.net import links
from p2pcards.net.door import Door
from p2pcards.net.driver import Driver, Person
from p2pcards.net.frames import (
    LOBBY_CHAT_VERSION,
    WATCH_VERSION,
    ChatLine,
    Error,
    Frame,
    FrameError,
    LobbyChat,
    Msg,
    Notice,
)
from p2pcards.net.identity import device_id
from p2pcards.net.lobby import Lobby
from p2pcards.net.lobbychat import LOBBY_BACKLOG, LobbyTalk
from p2pcards.net.peer import Peer
from p2pcards.net.pump import DRAIN_SECONDS, Pump
from p2pcards.net.referee import Conduct, Referee
from p2pcards.net.watchers import Watchers
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.roster import Roster

MAX_CLOSED_REASONS = 100
"""Reasons kept of links closed (the newest; :attr:`LinkLog.closed_count` counts them
all): enough to read what a misbehaving link did, bounded against a flood of them."""


class LinkLog:
    """What the host says of its links, and why it closed them."""

    def __init__(self, say: Callable[[str], None]):
        self.say = say
        self.closed_reasons: deque[str] = deque(maxlen=MAX_CLOSED_REASONS)
        self.closed_count = 0

    def log(self, line: str) -> None:
        self.say(f"[host] {links.printable(line, 400)}")  # (reasons quote what links sent)

    def closed(self, reason: str) -> None:
        """Remember why a link was closed (the door logs its own, not each)."""
        self.closed_reasons.append(reason)
        self.closed_count += 1


@dataclass(eq=False)
class Seated:
    """A link to a joiner: who it is, what the host remembers of it, its queue and
    tasks."""

    pump: Pump
    name: str
    conduct: Conduct
    person: bool = False
    """A person plays its peer's own seat in this run (its ``auth`` named no bot)."""

    @classmethod
    def open(cls, link: Link, key: bytes, name: str) -> Seated:
        return cls(Pump.open(link), name, Conduct(key))

    @property
    def key(self) -> bytes:
        return self.conduct.key

    @property
    def link(self) -> Link:
        return self.pump.link


class TableRelay:
    """The seated links of one host, and its watchers: what comes from them is judged,
    what goes to them is queued."""

    def __init__(self, lobby: Lobby, door: Door, log: LinkLog, *, watchers: int,
                 watchers_chat: bool, catch_up: Callable[[], list[Frame]],
                 person: Person | None):
        self.lobby = lobby
        """The seats (read here to name a link's seats)."""
        self.log = log
        self.person = person
        self.links: list[Seated] = []
        self.watchers = Watchers(watchers, watchers_chat, door, catch_up=catch_up,
                                 tell_seats=self.tell_seats, log=log.log, closed=log.closed)
        self.chats = links.Chat()
        """This host's chat: the lines it signs, and the last number taken from each seat."""
        self.lobby_talk = LobbyTalk()
        """The lobby's chat, before the game: its lines counted per identity."""
        self.referee: Referee | None = None
        self.driver: Driver | None = None
        self.before: bytes | None = None
        """The table id of the game before this one (None: this is the first)."""

    def begin(self, peer: Peer, driver: Driver, tables: Sequence[bytes]) -> None:
        """A game begins here, played by ``peer`` and ``driver``, after the games of
        ``tables``."""
        self.referee = Referee(peer, self.chats, frozenset(tables))
        self.driver = driver
        self.before = tables[-1] if tables else None

    # ============================================================ what comes

    def table_message(self, seated: Seated, wire: bytes) -> None:
        """A table message from a seated link: relayed if the host's sessions keep it;
        FrameError if it closes the link."""
        if self.referee is None or self.driver is None:
            raise FrameError("a table message before the game began")
        env = self.referee.screen(seated.conduct, wire)
        if env is None:
            return  # nothing to do: the host has it (sent again after a reconnection),
            # it is of a game before this one, or its seat was taken while it was away
        # judged here first: only what the host's own sessions keep goes on (a message
        # refused as late, or evidence already held, is counted against its sender)
        if self.referee.judge(seated.conduct, wire, env):
            self.broadcast(Msg(wire=wire), but=seated)
        self.driver.post("poke")

    def chat(self, seated: Seated, line: ChatLine) -> None:
        """A chat line from a seated link: relayed and shown; FrameError if it closes
        the link."""
        if self.referee is None:
            raise FrameError("chat before the game began")
        try:
            seat, text = self.referee.chat(seated.conduct, line, trio.current_time())
        except FrameError:
            if self.before is not None and self._said_before(line, self.before):
                return  # (signed for the game before, as the next began: not shown)
            raise
        self.broadcast(line, but=seated)
        self.log.say(f"{self.referee.peer.roster.seats[seat].name}: {text}")

    def lobby_chat(self, seated: Seated, line: LobbyChat) -> None:
        """A line said in the lobby by a joiner: relayed to every other link and shown
        here; FrameError for a flood, or from a link below version 8.  One that crossed
        the ``start`` (the game began meanwhile) is counted, and dropped."""
        if seated.link.version < LOBBY_CHAT_VERSION:
            raise FrameError(f"an 'lchat' frame on a link of version {seated.link.version}")
        text = self.lobby_talk.take(seated.key, line.text, trio.current_time())
        if self.referee is None and text:
            self.lobby_say(seated.name, device_id(seated.key), text, but=seated)
            self.log.say(f"{links.printable(seated.name, 32)}: {text}")

    def lobby_say(self, name: str, id: bytes, text: str, but: Seated | None = None) -> None:
        """A line said in the lobby (``text``: made one printable line), to every seat's
        link but ``but``'s: an ``lchat`` to a link of version 8, else a ``notice``.
        Watchers are not sent it."""
        line, older = LobbyTalk.frames(name, id, text)
        for seated in list(self.links):
            if seated is not but and \
                    seated.pump.out.statistics().current_buffer_used < LOBBY_BACKLOG:
                # (a link that reads nothing misses lines past its backlog: a seat's queue
                # is unbounded, and the lobby has no end in time)
                with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
                    seated.pump.put(line if seated.link.version >= LOBBY_CHAT_VERSION
                                    else older)

    def _said_before(self, line: ChatLine, before: bytes) -> bool:
        """Whether a chat line is signed for the game ``before`` this one."""
        assert self.referee is not None
        try:
            links.Chat().take(line, self.referee.peer.roster.keys, before)
        except FrameError:
            return False
        return True

    # ============================================================ what goes

    def broadcast(self, frame: Frame, but: Seated | None = None) -> None:
        """``frame`` to every seat's link (but ``but``'s) and to every watcher: what a
        watcher is sent is exactly what the seats are."""
        for seated in list(self.links):
            if seated is not but:
                with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
                    seated.pump.put(frame)
        self.watchers.relay(frame)

    def tell_seats(self, frame: Frame, older: Frame) -> None:
        """A frame about the watchers to every seat's link (``older``, a notice saying
        the same, to a link that speaks no version with watchers), and to this host's
        person."""
        for seated in list(self.links):
            with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
                seated.pump.put(frame if seated.link.version >= WATCH_VERSION else older)
        watched = getattr(self.person, "watched", None)
        if watched is not None:
            watched(self.watchers.names())

    async def send_own(self, wires: list[bytes]) -> None:
        """What this host's own seats send, to every link."""
        for wire in wires:
            self.broadcast(Msg(wire=wire))

    def notice(self, line: str) -> None:
        """A join or a leave: shown here and at every joiner."""
        self.log.log(line)
        self.broadcast(Notice(text=line))

    async def sent(self) -> None:
        """Let what is queued for the links go out (for up to
        :data:`~p2pcards.net.pump.DRAIN_SECONDS`)."""
        with trio.move_on_after(DRAIN_SECONDS):
            while not all(seated.pump.idle() for seated in self.links):
                await trio.sleep(0.01)

    # ============================================================ who is here

    def away(self, roster: Roster) -> list[int]:
        """The seats of joiners of ``roster``'s game with no link to the host now."""
        here = {seated.key for seated in self.links}
        return [seat for seat, entry in enumerate(roster.seats)
                if seat != 0 and entry.run_by in (None, seat) and entry.identity not in here]

    def people(self) -> bool:
        """Whether a joiner linked now has a person at its own seat."""
        return any(seated.person for seated in self.links)

    def by_key(self, key: bytes) -> Seated | None:
        return next((seated for seated in self.links if seated.key == key), None)

    # ============================================================ closing

    def drop(self, seated: Seated, last: Frame | None = None) -> bool:
        """Take a link off the table (its queue sends ``last``, drains and closes), once:
        whether it was on it."""
        if seated not in self.links:
            return False
        self.links.remove(seated)
        seated.pump.close(last)
        return True

    def seats(self, seated: Seated) -> str:
        """The seats of a joiner, as words: ``seat 2``, ``seats 1 and 3``."""
        seats = [str(s) for s in sorted(self.lobby.seats(seated.key))]
        if len(seats) == 1:
            return f"seat {seats[0]}"
        return "seats " + ", ".join(seats[:-1]) + f" and {seats[-1]}" if seats else "no seat"

    def closing(self, seated: Seated | None, reason: str) -> None:
        """A link is closed for ``reason``: logged and remembered."""
        who = f"{seated.name} ({self.seats(seated)})" if seated else "a joiner"
        self.log.log(f"closed the link of {who}: {reason}")
        self.log.closed(reason)

    async def close(self, link: Link, seated: Seated | None, reason: str) -> None:
        """Close a link not yet pumped, telling it why."""
        self.closing(seated, reason)
        with trio.move_on_after(1), contextlib.suppress(LinkClosed, FrameError):
            await link.send(Error(reason=reason))

    async def farewell(self, most: float) -> None:
        """The host is leaving: every link's queue goes out (for up to ``most``
        seconds)."""
        for seated in list(self.links):
            seated.pump.close()
        with trio.move_on_after(most):
            for seated in list(self.links):
                await seated.pump.drained.wait()
            await self.watchers.farewell()
