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
the game from the start (what it holds already is skipped).  When one game
ends and the players agree to another, it follows the next game; the host's
``end`` ends its watch.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import trio

from p2pcards.net import links, tls
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
    Hello,
    Kind,
    Lobby,
    Msg,
    Notice,
    Start,
    WatchChat,
    Watchers,
    Watching,
    kind_of,
)
from p2pcards.net.identity import Friends, Identity, IdentityError, show_id
from p2pcards.net.invite import Invite, proof
from p2pcards.net.join import GIVE_UP, RETRY_MOST, HostLost, JoinError, pin_host
from p2pcards.net.lobby import describe_roster
from p2pcards.net.settings import Settings
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.kinds import printable
from p2pcards.table.roster import MAX_NAME, Roster, describe_deck
from p2pcards.table.session import WATCHER, Session
from p2pcards.table.state import Event

_SEAT = re.compile(r"\bseat (\d+)\b")
MAX_REFUSALS_SHOWN = 20
"""Refused messages a watcher names one by one (then only counts them)."""


class Onlooker(Protocol):
    """A person watching (the read-only prompt)."""

    def seated(self, roster: Roster, seat: int, settings: Settings,
               chat: Callable[[str], Awaitable[None]]) -> None: ...

    def report(self, table: Session, events: Sequence[Event]) -> None: ...

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
    dial: tls.Dial = tls.dial
    on_over: GameDone | None = None
    tap: Callable[[bytes], None] | None = None
    """Sees every frame's bytes as received (tests record them)."""
    session: Session | None = None
    settings: Settings = field(default_factory=Settings)
    number: int = 0
    """The number of the game watched now (1 for the first)."""
    link: Link | None = None
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
        self.dialled = False

    async def run(self) -> None:
        """Watch until the host ends the table (or is gone after a game)."""
        pause = 0.2
        reached = trio.current_time()
        lost = False
        while not self.ended:
            self.dialled = False
            try:
                if not await self._session():
                    continue  # (the fingerprint confirmed: dialled again, now pinned)
                pause = 0.2
                if self.ended:
                    return
                raise LinkClosed("the host closed the link")
            except JoinError:
                raise
            except (OSError, LinkClosed, trio.BrokenResourceError, trio.TooSlowError) as exc:
                if self.session is None and not self.dialled:
                    raise HostLost(f"cannot reach the host: {links.why_lost(exc)}") from exc
                if self.ended:
                    return
                if self.session is not None and self.session.over:
                    self.say("the host is gone after the game: the watch ends")
                    return
                if self.dialled:
                    reached, lost = trio.current_time(), False
                if trio.current_time() - reached > GIVE_UP:
                    raise HostLost(f"the host has been unreachable for {GIVE_UP:g} s") from exc
                if not lost:
                    lost = True
                    self.say(f"lost the host ({links.why_lost(exc)}); trying"
                             f" again every few seconds for up to {GIVE_UP / 60:g} minutes")
            except FrameError as exc:
                raise JoinError(f"the host sent what it should not: {links.printable(exc)}"
                                ) from exc
            await trio.sleep(pause)
            pause = min(RETRY_MOST, pause * 2)

    # ============================================================ the link

    async def _session(self) -> bool:
        """One link, until the table ends or the link breaks (False: the fingerprint was
        just confirmed, so dial again: a person may take longer than the door waits)."""
        with trio.fail_after(links.HANDSHAKE_SECONDS):
            try:
                stream, seen = await self.dial(self.invite.host, self.invite.port)
            except IdentityError as exc:
                raise JoinError(str(exc)) from exc
        link = Link(stream, "the host")
        link.tap = self.tap
        try:
            if not await self._pin(seen):
                return False
            with trio.fail_after(links.HANDSHAKE_SECONDS):
                await self._hello(link)
            self.dialled = True
            self.link = link
            if self.person is not None:
                self.person.connection(True)
            while not self.ended:
                try:
                    frame = await link.receive()
                except FrameError as exc:
                    if exc.kind not in (Kind.CHAT, Kind.WCHAT):
                        raise
                    self.say(f"[a chat line was dropped: {exc}]")
                    continue
                await self._frame(frame)
            return True
        finally:
            if self.link is not None and self.person is not None:
                self.person.connection(False)
            self.link = None
            await link.aclose()

    async def _pin(self, seen: bytes) -> bool:
        """The host's device id against the invite's (as a joiner checks it); with none
        in the invite, confirmed by the person and pinned (False: dial again)."""
        pinned, self.invite = await pin_host(self.invite, seen, self.confirm, "watching")
        return pinned

    async def _hello(self, link: Link) -> None:
        await link.send(Hello())
        first = await link.receive()
        if isinstance(first, Error):
            raise JoinError(f"the host refused: {links.printable(first.reason)}")
        version = links.negotiate(first)
        assert isinstance(first, Hello)
        if version < WATCH_VERSION:
            raise JoinError("the host's p2pcards is older and takes no watchers (link"
                            f" protocol {version}; watching needs {WATCH_VERSION})")
        if first.nonce is None or first.name is None:
            raise FrameError("hello: the host's hello needs a nonce and a name")
        host_name = links.printable(first.name, MAX_NAME)
        if self.friends is not None and self.invite.fingerprint is not None:
            warning = self.friends.check(host_name, self.invite.fingerprint)
            if warning:
                self.say(warning)
        assert self.invite.fingerprint is not None
        nonce, token = first.nonce, self.invite.token
        await link.send(Auth(key=self.identity.public, name=self.name, token=token, bot="",
                             sig=proof(self.identity.key, nonce, self.invite.fingerprint,
                                       token), watch=True))
        answer = await link.receive()
        if isinstance(answer, Error):
            raise JoinError(f"the host refused: {links.printable(answer.reason)}")
        if not isinstance(answer, Watching):
            raise FrameError(f"expected watching, got {kind_of(answer)!r}")
        self.may_chat = answer.chat
        chat = "you may chat (say TEXT)" if answer.chat else "watchers do not chat here"
        self.say(f"watching {host_name}'s table ({chat})")

    # ============================================================ what comes

    async def _frame(self, frame: Frame) -> None:
        if isinstance(frame, Msg):
            await self._message(frame.wire)
        elif isinstance(frame, Start):
            self._started(frame.roster, frame.settings)
        elif isinstance(frame, Lobby):
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
        elif isinstance(frame, Watchers):
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

    def _started(self, roster: Roster, settings: Settings) -> None:
        if self.session is not None and roster.table == self.session.table:
            if roster != self.session.home:
                raise JoinError("the host now shows another roster than the one it showed")
            return  # (sent again after the link came back)
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
        self.number += 1
        if self.number > 1:
            self.say(f"game {self.number}: {roster.rules.title}, the same players")
        self.say(f"roster: {describe_roster(roster)}")
        self.say(f"safety number: {roster.safety_number()} (compare it aloud)")
        self.say(f"table: {settings.describe()}")
        self.say(describe_deck(roster.deck))
        if self.person is not None:
            self.person.seated(roster, WATCHER, settings, self.chat)
            self.person.watched(self.watching)

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
                self.say(printable(f"refused a message from {who}: {rejection.rule}:"
                                   f" {rejection.reason}", SHOWN_LINE))
        self._report(session)
        if session.over and session.table not in self.done:
            self.done.add(session.table)
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
            self.say(printable(_named(event.text, names), SHOWN_LINE))

    async def chat(self, text: str) -> None:
        """Say ``text`` to the table, where the host lets watchers chat."""
        if not self.may_chat:
            self.say("this table's watchers do not chat (its host did not allow it)")
            return
        if self.link is None:
            self.say("not connected to the host: nothing was said")
            return
        try:
            await self.link.send(WatchChat(text=text[:MAX_CHAT]))
        except (LinkClosed, FrameError):
            self.say("the link to the host broke: nothing was said")


def _named(text: str, names: Sequence[str]) -> str:
    """An event's text with its seats by name."""
    return _SEAT.sub(lambda m: names[int(m[1])] if int(m[1]) < len(names) else m[0], text)

