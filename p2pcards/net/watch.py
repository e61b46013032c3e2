"""A watcher: ``p2pcards join --watch``.  It follows a networked table with no seat.

It connects and proves its identity as a joiner does (the invite's fingerprint
pinned, or confirmed), asks to watch (``auth.watch``, link protocol version 4),
and is answered ``watching`` (or refused: a seated identity, the host's limit).
Then it takes what the host relays to every seat: the ``start`` of each game
and its table messages, which a watching session
(:data:`~p2pcards.table.session.WATCHER`, the one ``p2pcards verify`` runs:
no seat, no secrets) checks one by one as a seat would (every signature, hash,
turn, deck step and move), so that what it shows is what every seat signed.
It sees what a seat that holds no cards sees: never a hidden card before the
deck opens it to everyone; after a deal, what the deck reveals (the lock
deck's audit: every hand as dealt; the proved deck: only what was shown).

It signs nothing and sends no table message.  It may chat (``wchat``) where
the host allows it.  If its link drops it dials again, and the host sends it
the game from the start (what it holds already is skipped).  The link itself
(dialling, pinning, the handshake, coming back) is the joiner's
(:class:`~p2pcards.net.client.HostLink`).  When one game
ends and the players agree to another, it follows the next game; the host's
``end`` ends its watch.

The match score it shows after each game counts the games the players count: a
watcher that comes in after the first game (or comes back after missing one) is
told by the host, in the ``start`` it is sent, the game's number and how the
latest games before it ended (``start.match``), which it reads against the
roster and shows as the host's word (it did not watch them); a game it watched
counts as it saw it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import trio

from p2pcards.net import links, tls
from p2pcards.net.client import HostLink, JoinError, Wording
from p2pcards.net.driver import SHOWN_LINE
from p2pcards.net.frames import (
    MAX_CHAT,
    WATCH_VERSION,
    Again,
    Auth,
    ChatLine,
    End,
    Error,
    Frame,
    FrameError,
    LobbyFrame,
    MatchSoFar,
    Msg,
    Notice,
    Start,
    WatchChat,
    WatchersFrame,
    Watching,
    kind_of,
)
from p2pcards.net.identity import Friends, Identity, show_id
from p2pcards.net.invite import Invite, proof
from p2pcards.net.lobby import describe_roster
from p2pcards.net.series import GameResult, match_lines, result_told, session_result
from p2pcards.net.settings import Settings
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.events import TableEvent, tell
from p2pcards.table.kinds import printable
from p2pcards.table.roster import MAX_NAME, Roster, describe_deck
from p2pcards.table.session import WATCHER, Session

MAX_REFUSALS_SHOWN = 20
"""Refused messages a watcher names one by one (then only counts them)."""
WATCHING = Wording("watching")
"""What a watcher says of its link (:class:`~p2pcards.net.client.HostLink`)."""


class Onlooker(Protocol):
    """A person watching (the read-only prompt)."""

    def seated(self, roster: Roster, seat: int, settings: Settings,
               chat: Callable[[str], Awaitable[bool]]) -> None: ...

    def report(self, table: Session, events: Sequence[TableEvent]) -> None: ...

    def connection(self, up: bool) -> None: ...

    def watched(self, names: Sequence[str]) -> None: ...

    def game_over(self, match: Sequence[str], *, goes_on: bool) -> None: ...


GameDone = Callable[[Session, int], Awaitable[None]]
"""Called once per game watched to its end: its session and its number."""


@dataclass
class Watch:
    identity: Identity
    invite: Invite
    name: str
    friends: Friends | None = None
    confirm: Callable[[str], Awaitable[bool]] | None = None
    say: Callable[[str], None] = print
    person: Onlooker | None = None
    dial: tls.Dial = field(default_factory=tls.routed)
    on_over: GameDone | None = None
    tap: Callable[[bytes], None] | None = None
    """Sees every frame's bytes as received (tests record them)."""
    session: Session | None = None
    settings: Settings = field(default_factory=Settings)
    number: int = 0
    """The number of the game watched now (1 for the first)."""
    may_chat: bool = False
    ended: str = ""
    refused: int = 0
    _chats: links.Chat = field(default_factory=links.Chat)

    def __post_init__(self) -> None:
        self.known: set[bytes] = set()
        self.shown = 0
        self.done: set[bytes] = set()
        """The tables whose game is over here (its outputs written)."""
        self.watching: list[str] = []
        self.results: dict[int, GameResult] = {}
        """How the games of the series ended, by number: as watched here, or as the host
        told them (:attr:`told`)."""
        self.told: set[int] = set()
        """The games whose result the host told (not watched here)."""
        self.host_link = HostLink(self, WATCHING, self.tap)
        """The link to the host: dialled, pinned, signed in, dialled again."""

    async def run(self) -> None:
        """Watch until the host ends the table (or is gone after a game)."""
        await self.host_link.run()

    @property
    def link(self) -> Link | None:
        """The link to the host while it is up."""
        return self.host_link.link

    # ============================================================ the link's questions

    def speaks(self, version: int) -> None:
        """A watcher watches at a host whose version knows watchers."""
        if version < WATCH_VERSION:
            raise JoinError("the host's p2pcards is older and takes no watchers (link"
                            f" protocol {version}; watching needs {WATCH_VERSION})")

    def auth(self, nonce: bytes, host_id: bytes, token: bytes) -> Auth:
        """Its identity's proof, asking to watch (no seat, no bot)."""
        return Auth(key=self.identity.public, name=self.name, token=token, bot="",
                    sig=proof(self.identity.key, nonce, host_id, token), watch=True)

    async def admitted(self, link: Link, answer: Frame, host: str) -> None:
        """Taken: the host's ``watching`` (whether it may chat)."""
        if not isinstance(answer, Watching):
            raise FrameError(f"expected watching, got {kind_of(answer)!r}")
        self.may_chat = answer.chat
        chat = "you may chat (say TEXT)" if answer.chat else "watchers do not chat here"
        self.say(f"watching {host}'s table ({chat})")

    def first_link(self, admitted: bool) -> bool:
        """A watcher the host has taken comes back, even to a table still in its lobby;
        one it never took, with no game shown yet, stops."""
        return self.session is None and not admitted

    def gone_after_game(self, dialled: bool) -> str | None:
        """A watcher whose game is over when the host is gone does not wait for the
        next."""
        if self.session is not None and self.session.over:
            return "the host is gone after the game: the watch ends"
        return None

    def last_heard(self, seen: float | None, admitted: bool) -> float | None:
        """A watcher counts its time without the host from the loss of a link the host
        had taken."""
        return trio.current_time() if admitted else None

    def dropped(self, exc: FrameError) -> None:
        """A chat line that does not read: said, not shown."""
        self.say(f"[a chat line was dropped: {exc}]")

    def linked(self, up: bool) -> None:
        """A watcher has no seat to be away from."""

    async def take(self, frame: Frame) -> bool:
        """A frame from the host: read on until the host ends the table."""
        await self._frame(frame)
        return not self.ended

    # ============================================================ what comes

    async def _frame(self, frame: Frame) -> None:
        if isinstance(frame, Msg):
            await self._message(frame.wire)
        elif isinstance(frame, Start):
            self._started(frame.roster, frame.settings, frame.match)
        elif isinstance(frame, LobbyFrame):
            self.say(f"lobby: {len(frame.seats)} of {frame.players} seats taken: "
                     + ", ".join(links.printable(s.name, MAX_NAME) for s in frame.seats))
        elif isinstance(frame, ChatLine):
            if self.session is not None:
                roster = self.session.home
                try:
                    seat, text = self._chats.take(frame, roster.keys, roster.table)
                except FrameError as exc:
                    self.say(f"[a chat line was dropped: {exc}]")
                    return
                self.say(f"{printable(roster.seats[seat].name, 32)}: {text}")
        elif isinstance(frame, WatchChat):
            self.say(f"{links.printable(frame.name or '?', 32)} (watching):"
                     f" {links.printable(frame.text, MAX_CHAT)}")
        elif isinstance(frame, WatchersFrame):
            self.watching = [f"{links.printable(w.name, 32)} ({show_id(w.id, 4)})"
                             for w in frame.watchers]
            if self.person is not None:
                self.person.watched(self.watching)
        elif isinstance(frame, Notice):
            self.say(f"[host] {links.printable(frame.text)}")
        elif isinstance(frame, Again):
            pass  # (the players' word about another game: a watcher has no vote)
        elif isinstance(frame, End):
            self.ended = links.printable(frame.reason) or "the host closed the table"
            self.say(f"[host] {self.ended}")
        elif isinstance(frame, Error):
            raise JoinError(f"the host closed the link: {links.printable(frame.reason)}")
        else:
            raise FrameError(f"a {kind_of(frame)!r} frame is not expected by a watcher")

    def _started(self, roster: Roster, settings: Settings, match: MatchSoFar | None
                 ) -> None:
        told = self._read_match(match, roster)
        if self.session is not None and roster.table == self.session.table:
            if roster != self.session.home:
                raise JoinError("the host now shows another roster than the one it showed")
            self._take_told(told)  # (sent again after the link came back)
            return
        if roster.table in self.done and self.session is not None:
            return
        try:
            session = Session(roster, WATCHER, None)
        except ValueError as exc:
            raise JoinError(f"the host's roster cannot be played here: {exc}") from exc
        session.machine.tell = True
        self.session, self.settings, self.shown = session, settings, 0
        self.known = set()
        self._chats = links.Chat()
        self.number = match.game if match is not None else self.number + 1
        for number in [n for n in self.results if n >= self.number]:
            del self.results[number]  # (a number again: a series begun anew)
            self.told.discard(number)
        self._take_told(told)
        if self.number > 1:
            self.say(f"game {self.number}: {roster.rules.title}, the same players")
        self.say(f"roster: {describe_roster(roster)}")
        self.say(f"safety number: {roster.safety_number()} (compare it aloud)")
        self.say(f"table: {settings.describe()}")
        self.say(describe_deck(roster.deck))
        if self.person is not None:
            self.person.seated(roster, WATCHER, settings, self.chat)
            self.person.watched(self.watching)

    def _read_match(self, match: MatchSoFar | None, roster: Roster
                    ) -> dict[int, GameResult]:
        """The results the host tells in a ``start``, by game number, read against its
        roster (FrameError naming the field if one does not fit it)."""
        if match is None:
            return {}
        first = match.game - len(match.results)
        told: dict[int, GameResult] = {}
        for i, result in enumerate(match.results):
            try:
                told[first + i] = result_told(result, roster)
            except ValueError as exc:
                raise FrameError(f"start.match.results[{i}] (game {first + i}): {exc}",
                                 "start") from None
        return told

    def _take_told(self, told: dict[int, GameResult]) -> None:
        """The results the host told, of the games before this one not watched here."""
        for number, result in told.items():
            if number < self.number and number not in self.results:
                self.results[number] = result
                self.told.add(number)

    def match(self) -> list[str]:
        """The match score after the game watched now (:func:`match_lines`): the games
        watched here as they were seen, the others as the host told them, or not known
        here."""
        return match_lines([self.results.get(n) for n in range(1, self.number + 1)],
                           self.told)

    async def _message(self, wire: bytes) -> None:
        session = self.session
        if session is None:
            raise FrameError("a table message before the game's start")
        if wire in self.known:
            return
        self.known.add(wire)
        rejection = session.receive(wire)
        if rejection is not None:
            self.refused += 1
            if self.refused <= MAX_REFUSALS_SHOWN:
                who = "an unknown sender" if rejection.sender is None else \
                    f"seat {rejection.sender}"
                self.say(printable(f"refused a message from {who}: {rejection.code}:"
                                   f" {rejection.reason}", SHOWN_LINE))
        self._report(session)
        if session.over and session.table not in self.done:
            self.done.add(session.table)
            self.results[self.number] = session_result(session)
            self.told.discard(self.number)
            if self.on_over is not None:
                await self.on_over(session, self.number)

    def _report(self, session: Session) -> None:
        events = session.events[self.shown:]
        self.shown = len(session.events)
        if not events:
            return
        if self.person is not None:
            self.person.report(session, events)
            return
        names = [e.name for e in session.roster.seats]
        for event in events:
            self.say(printable(tell(event, session.roster.rules, names), SHOWN_LINE))

    async def chat(self, text: str) -> bool:
        """Say ``text`` to the table, where the host lets watchers chat: whether it was
        sent (if not, why is said)."""
        if not self.may_chat:
            self.say("this table's watchers do not chat (its host did not allow it):"
                     " nothing was said")
            return False
        if self.link is None:
            self.say("not connected to the host: nothing was said")
            return False
        try:
            await self.link.send(WatchChat(text=text[:MAX_CHAT]))
        except (LinkClosed, FrameError):
            self.say("the link to the host broke: nothing was said")
            return False
        return True

