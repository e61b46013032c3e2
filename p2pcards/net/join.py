"""A joiner: it connects to the host of an invite, proves who it is, and plays.

The host's certificate is pinned to the invite's fingerprint (or, with none
in the invite, trusted on first use: the fingerprint is shown and must be
confirmed).  If the link drops during the game the joiner connects again
(with a growing pause) and the host sends it every table message; it sends
everything its seats sent, and the game goes on from where it was.  The link
itself (dialling, pinning, the handshake, coming back) is
:class:`~p2pcards.net.client.HostLink`, the watcher's too; the joiner says
what its ``auth`` carries, takes the ``welcome`` and what follows, and plays.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.bots import MakeBot
from p2pcards.net import links, lobbychat, tls
from p2pcards.net.again import LEAVE, Agreement, tell
from p2pcards.net.client import HostLink, JoinError, Wording
from p2pcards.net.driver import Driver, Person
from p2pcards.net.frames import (
    LOBBY_CHAT_VERSION,
    MAX_CHAT,
    Again,
    Auth,
    BotClaim,
    ChatLine,
    End,
    Error,
    Frame,
    FrameError,
    LobbyChat,
    LobbyFrame,
    Msg,
    Notice,
    Start,
    WatchChat,
    WatchersFrame,
    Welcome,
    kind_of,
)
from p2pcards.net.identity import ID_BYTES, Friends, Identity, device_id, show_id
from p2pcards.net.invite import Invite, proof
from p2pcards.net.journal import Journal, damaged
from p2pcards.net.lobby import BOT_PROOF, describe_roster, own_seat
from p2pcards.net.peer import Peer
from p2pcards.net.series import Place, fresh_journal, result_of, settle
from p2pcards.net.settings import Settings
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.roster import MAX_NAME, Roster, describe_deck

JOINING = Wording("joining", retrying=" (Ctrl-C stops; the same command resumes)",
                  giving_up="; the same command resumes the game later")
"""What a joiner says of its link (:class:`~p2pcards.net.client.HostLink`)."""


def known_host(journal: Journal) -> bytes | None:
    """The device id of the host this journal's game was joined at (pinned from the
    invite, or confirmed by the person), or None: no game yet, or a journal older than
    this record."""
    if not journal.records or journal.records[0][:1] != ["table"]:
        return None
    setup = journal.records[0][1] if len(journal.records[0]) > 1 else None
    settings = setup.get("settings") if isinstance(setup, dict) else None
    host = settings.get("host") if isinstance(settings, dict) else None  # (a table
    # record that does not read is named when the peer is restored from it)
    return host if isinstance(host, bytes) and len(host) == ID_BYTES else None


def seat_keys(roster: Roster, public: bytes, key: Ed25519PrivateKey,
              bot_keys: list[Ed25519PrivateKey]) -> tuple[int, dict[int, Ed25519PrivateKey]]:
    """This peer's seat in ``roster`` (its identity's ``public`` key) and the key of each
    seat it plays (its own ``key``, its bots'); :class:`JoinError` when the roster does
    not seat this peer and its bots exactly as they are."""
    own = [i for i, e in enumerate(roster.seats) if e.identity == public]
    if len(own) != 1:
        raise JoinError("the roster does not seat this identity exactly once")
    keys = {own[0]: key}
    by_public = {k.public_key().public_bytes_raw(): k for k in bot_keys}
    for seat, entry in enumerate(roster.seats):
        if entry.identity in by_public:
            if entry.run_by != own[0]:
                raise JoinError(f"the roster says seat {entry.run_by}'s peer runs this"
                                " peer's bot")
            keys[seat] = by_public[entry.identity]
    if len(keys) != 1 + len(bot_keys):
        raise JoinError("the roster leaves out a bot this peer runs")
    claimed = {i for i, e in enumerate(roster.seats) if e.run_by == own[0]} - set(keys)
    if claimed:
        raise JoinError(f"the roster says this peer runs seat(s) {sorted(claimed)}, whose"
                        " keys it does not hold")
    return own[0], keys


class Talking:
    """A joiner's lines of chat: in the lobby (relayed by the host) and at the table
    (signed); :class:`Joiner` has the link, the game and the identity they need."""

    peer: Peer | None
    version: int
    identity: Identity
    chats: links.Chat
    say: Callable[[str], None]
    own_talk: lobbychat.LobbyTalk | None = None
    """This joiner's own count of its lobby lines: it refuses a line the host would
    count as a flood rather than lose its seat."""

    @property
    def link(self) -> Link | None:
        raise NotImplementedError

    async def lobby_chat(self, text: str) -> bool | None:
        """Say ``text`` in the lobby, before every seat is taken (the host relays it in
        its word: :mod:`p2pcards.net.lobbychat`): whether it was sent (if not, why is
        said); None at a host below version 8, which takes no lobby chat (the line waits
        for the game)."""
        if self.link is not None and self.peer is None and self.version < LOBBY_CHAT_VERSION:
            return None
        if self.peer is None and self.link is not None:
            if self.own_talk is None:  # (a second to spare: the host counts lines as they
                self.own_talk = lobbychat.LobbyTalk(lobbychat.LOBBY_CHAT_WINDOW + 1)
            talk = self.own_talk  # arrive, and a flood there cuts the link)
            try:
                talk.take(b"", text, trio.current_time())
            except FrameError:
                self.say(f"not said: at most {talk.most} lines in the lobby in"
                         f" {lobbychat.LOBBY_CHAT_WINDOW:g} s; wait a moment")
                return False
        return await self._to_host(self.peer is None, lambda: LobbyChat(text=text[:MAX_CHAT]))

    async def chat(self, text: str) -> bool:
        """Say ``text`` to the table (signed by this peer's identity): whether it was
        sent (if not, why is said)."""
        def signed() -> Frame:
            assert self.peer is not None
            return self.chats.frame(self.identity.key, self.peer.roster.table,
                                    min(self.peer.sessions), text)
        return await self._to_host(self.peer is not None, signed)

    async def _to_host(self, now: bool, frame: Callable[[], Frame]) -> bool:
        """Send a line of chat: False, said, without a link to the host or before
        (``now`` False) its time."""
        link = self.link
        if link is None or not now:
            self.say("not connected to the host: nothing was said")
            return False
        try:
            await link.send(frame())
        except (LinkClosed, FrameError):
            self.say("the link to the host broke: nothing was said")
            return False
        return True


@dataclass
class Joiner(Talking):
    identity: Identity
    invite: Invite
    name: str
    own_bot: str | None
    bots: list[str]
    make_bot: MakeBot
    journal: Journal
    friends: Friends | None = None
    confirm: Callable[[str], Awaitable[bool]] | None = None
    say: Callable[[str], None] = print
    person: Person | None = None
    seed: int | None = None
    bot_keys: list[Ed25519PrivateKey] = field(default_factory=list)
    peer: Peer | None = None
    driver: Driver | None = None
    chats: links.Chat = field(default_factory=links.Chat)
    seat: int = -1
    dial: tls.Dial = field(default_factory=tls.routed)
    """How a link to the host is opened: TLS to each of the invite's addresses, an onion
    address through tor's SOCKS5 port (tests dial the host over memory streams)."""
    place: Place = field(default_factory=Place)
    """Where this game stands in the table's series of games."""
    once: bool = False
    """Leave after the game (no other game with the same players)."""
    lobby_seen: LobbyFrame | None = None
    """The lobby as the host last showed it (who has sat, before the game)."""
    version: int = 0
    """The link version this joiner and its host speak (0: not linked yet)."""

    def __post_init__(self) -> None:
        self.connected = trio.Event()
        self.changed = trio.Event()
        """Set when another game begins, or the table closes."""
        self.number = self.place.number
        self.first = self.place.first or self.journal.path
        self.tables: list[bytes] = list(self.place.series.tables[:-1]) \
            if self.place.series else []
        """The table ids of the games played before this one."""
        self.agreement: Agreement | None = None
        self.ended = ""
        """Why the host said no more games are played ("" : none said)."""
        self.links_over = False
        self.host_link = HostLink(self, JOINING)
        """The link to the host: dialled, pinned, signed in, dialled again."""
        if self.journal.records:
            pinned = known_host(self.journal)
            if self.invite.fingerprint is None and pinned is not None:  # confirmed when
                self.invite = replace(self.invite, fingerprint=pinned)  # the game began:
                # not asked again
            self.peer = Peer.restore(self.journal)
            self.say(f"resuming from {self.journal.path} ({len(self.peer.log)} messages"
                     f"{self.journal.dropped_note()})")
            if self.place.series is not None and self.place.series.number == 0:
                self.place.series.begin(self.peer.roster.table)  # (a game from before
                # series were recorded)
            try:
                settings = Settings.from_wire(self.peer.settings["table"])
            except (KeyError, ValueError) as exc:
                raise damaged(self.journal.path, 0, None, "does not read (the table's"
                              f" settings; {type(exc).__name__}: {exc})") from exc
            self._make_driver(settings)
        else:
            self.bot_keys = [Ed25519PrivateKey.generate() for _ in self.bots]

    async def run(self) -> None:
        """Sit, play the game (and the next ones the players agree to), and return when
        it is over and no other game follows."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._links_then_wake)
            while self.driver is None:
                await self.connected.wait()
                self.connected = trio.Event()
            while True:
                await self.driver.run()
                peer, driver, journal = self.peer, self.driver, self.journal
                assert peer is not None
                if not peer.over:
                    break  # (adjourned)
                await self._game_over(peer, driver, journal)
                if not await self._interval(peer):
                    break
            nursery.cancel_scope.cancel()
        self.journal.close()

    async def _links_then_wake(self) -> None:
        try:
            await self.host_link.run()
        finally:
            self.links_over = True
            self.changed.set()

    async def _game_over(self, peer: Peer, driver: Driver, journal: Journal) -> None:
        series = self.place.series
        if not (series is not None and series.between and peer is self.peer
                and self.number == series.number):
            if self.place.on_over is not None:
                await self.place.on_over(peer, driver, self.number)
            if series is not None:
                series.finish(result_of(peer))
        settle(peer, journal)

    async def _interval(self, peer: Peer) -> bool:
        """Between two games: True once the next one has begun; False when the table
        closes (someone left, the host said so, or this peer leaves: ``once``)."""
        if self.once and not self.ended:
            self.say("leaving after one game (--once): no more games at this table")
            await self.leave()
            return False
        await self._consent()
        while self.peer is peer and not self.ended and not self.links_over:
            await self.changed.wait()
            self.changed = trio.Event()
        if self.ended and self.place.series is not None:
            self.place.series.end(self.ended)
        return self.peer is not peer

    @property
    def own(self) -> int:
        assert self.peer is not None
        seat = own_seat(self.peer.roster.seats, self.identity.public)
        assert seat is not None
        return seat

    async def _consent(self) -> None:
        """A headless peer agrees to the proposal that stands, once its game is over."""
        agreement = self.agreement
        if self.person is not None or self.once or agreement is None or self.ended or \
                agreement.proposal is None or self.own in agreement.agreed or \
                self.peer is None or not self.peer.over:
            return
        await self._send_word(agreement.word(self.identity.key, self.own, None, None))

    async def say_again(self, game: str | None, options: dict[str, int] | None
                        ) -> str | None:
        """This joiner's person asks for another game (``game`` None: agrees to the
        proposal, or proposes the same game): None, or why not."""
        if self.ended:
            return self.ended
        if self.agreement is None or self.peer is None or not self.peer.over:
            return "the game is not over yet"
        try:
            word = self.agreement.word(self.identity.key, self.own, game, options)
        except ValueError as exc:
            return str(exc)
        if word.round == self.agreement.round and self.own in self.agreement.agreed:
            return "you agreed already: waiting for the others"
        if not await self._send_word(word):
            return "not connected to the host: say it again once the link is back"
        return None

    async def leave(self) -> bool:
        """This peer leaves once its game is over: no more games (the host tells every
        other peer who left).  Whether the host was told."""
        if self.agreement is None or self.peer is None or self.ended:
            return False
        with trio.move_on_after(links.HANDSHAKE_SECONDS):
            return await self._send_word(self.agreement.word(self.identity.key, self.own,
                                                             LEAVE, None))
        return False

    async def _send_word(self, word: Again) -> bool:
        link = self.link
        if link is None:
            return False
        try:
            await link.send(word)
        except LinkClosed:
            return False
        return True

    @property
    def link(self) -> Link | None:
        """The link to the host while it is up."""
        return self.host_link.link

    # ============================================================ the link's questions

    def speaks(self, version: int) -> None:
        """A joiner sits at a host of any version it speaks (which says, for one, whether
        it may chat in the lobby)."""
        self.version = version

    def auth(self, nonce: bytes, host_id: bytes, token: bytes) -> Auth:
        """Its identity's proof, and each bot key's (each signs the nonce too)."""
        return Auth(
            key=self.identity.public, name=self.name, token=token, bot=self.own_bot or "",
            sig=proof(self.identity.key, nonce, host_id, token),
            bots=tuple(BotClaim(kind=kind, key=key.public_key().public_bytes_raw(),
                                sig=proof(key, nonce, host_id, BOT_PROOF))
                       for kind, key in zip(self.bots, self.bot_keys, strict=True)))

    async def admitted(self, link: Link, answer: Frame, host: str) -> None:
        """Seated: the host's ``welcome``; what this peer's seats sent goes again."""
        if not isinstance(answer, Welcome):
            raise FrameError(f"expected welcome, got {kind_of(answer)!r}")
        self.seat = answer.seat
        if answer.resume and self.peer is None:
            raise JoinError("this identity sits at a game already under way, but its journal"
                            " is not here: without it this seat would send second versions"
                            " of its messages (read as cheating). Run the command on the"
                            " machine (and P2PCARDS_HOME) that began the game")
        self.say(f"seated at seat {self.seat} at {host}'s table")
        if self.peer is not None and self.peer.over and not self.ended:  # between games:
            self.agreement = Agreement(self.peer.roster, self.number)  # the host sends
            # again the words that stand (it may have been restarted meanwhile)
        if self.peer is not None:
            for wire in self.peer.mine:
                await link.send(Msg(wire=wire))

    def first_link(self, admitted: bool) -> bool:
        """A joiner with no game yet has nothing to come back to (its seats in the lobby
        are free again once its link is gone)."""
        return self.peer is None

    def gone_after_game(self, dialled: bool) -> str | None:
        """Once its game is over a joiner dials again while the host answers (the others
        may agree to another game); a host that does not answer is gone (its last words
        may not have come)."""
        if self.peer is not None and self.peer.over and not dialled:
            return ("the host is gone after the game; the same command comes back to the"
                    " table if it opens again")
        return None

    def last_heard(self, seen: float | None, admitted: bool) -> float | None:
        """A joiner counts its time without the host from the host's last frame."""
        return seen

    # ============================================================ what comes

    async def take(self, frame: Frame) -> bool:
        """A frame from the host (read on, whatever it is)."""
        await self._frame(frame)
        return True

    async def _frame(self, frame: Frame) -> None:
        if isinstance(frame, Msg):
            if self.driver is not None:
                self.driver.post("msg", frame.wire)
        elif isinstance(frame, LobbyFrame):
            self.lobby_seen = frame
            self.say(f"lobby: {len(frame.seats)} of {frame.players} seats taken: "
                     + ", ".join(links.printable(s.name, MAX_NAME) for s in frame.seats))
        elif isinstance(frame, Start):
            self._started(frame.roster, frame.settings)
        elif isinstance(frame, ChatLine):
            if self.peer is not None:
                try:
                    seat, text = self.chats.take(frame, self.peer.roster.keys,
                                                 self.peer.roster.table)
                except FrameError as exc:
                    self.dropped(exc)
                    return
                self.say(f"{self.peer.roster.seats[seat].name}: {text}")
        elif isinstance(frame, Notice):
            self.say(f"[host] {links.printable(frame.text)}")
        elif isinstance(frame, WatchersFrame):  # (who watches: ``who`` shows them)
            watched = getattr(self.person, "watched", None)
            if watched is not None:
                watched([f"{links.printable(w.name, MAX_NAME)} ({show_id(w.id, 4)})"
                         for w in frame.watchers])
        elif isinstance(frame, LobbyChat):
            if self.peer is None:  # (one that crossed the start is not shown)
                self.say(lobbychat.shown(frame, self.invite.fingerprint))
        elif isinstance(frame, WatchChat):
            self.say(f"{links.printable(frame.name or '?', MAX_NAME)} (watching):"
                     f" {links.printable(frame.text)}")
        elif isinstance(frame, Again):
            await self._word(frame)
        elif isinstance(frame, End):
            self.ended = links.printable(frame.reason) or "the host closed the table"
            if not self.ended.endswith("no more games at this table"):
                self.say(f"[host] {self.ended}")
            self.changed.set()
        elif isinstance(frame, Error):
            raise JoinError(f"the host closed the link: {links.printable(frame.reason)}")
        else:
            raise FrameError(f"a {kind_of(frame)!r} frame is not expected from the host")

    def dropped(self, exc: FrameError) -> None:
        """A chat line the host sent that is not shown: the host's doing, or a stale
        copy (none is shown before the game)."""
        if self.peer is not None:
            self.say(f"[a chat line was dropped: {exc}]")

    def linked(self, up: bool) -> None:
        """The link to the host broke or came back (the driver's :class:`Presence`)."""
        if self.driver is not None:
            self.driver.linked(up)

    async def _word(self, word: Again) -> None:
        """A word the host took (every peer's, this one's too, in the host's order)."""
        if word.table in self.tables:
            return  # (about a game before this one)
        agreement = self.agreement
        if agreement is None or self.peer is None or word.table != agreement.table:
            raise FrameError("again: a word about another table's game")
        outcome = agreement.take(word)
        if outcome == "stale":
            return
        names = [e.name for e in self.peer.roster.seats]
        self.say(tell(agreement, word, outcome, names, self.own,
                      headless=self.person is None))
        if outcome == "proposal":
            await self._consent()

    def _started(self, roster: Roster, settings: Settings) -> None:
        if self.peer is not None:
            if roster == self.peer.roster:
                return
            if self.agreement is not None and roster.table != self.peer.roster.table:
                problem = self.agreement.check_start(roster, self.tables)
                if problem is not None:
                    raise JoinError(f"the host started {problem}")
                self._next_game(roster, settings)
                return
            raise JoinError("the host now shows another roster than the one this seat"
                            " signed")
        own, keys = seat_keys(roster, self.identity.public, self.identity.key, self.bot_keys)
        if self.place.series is not None:
            self.place.series.begin(roster.table)
        self.peer = Peer(roster, keys, secrets.token_bytes(32), self.journal,
                         {"table": settings.to_wire(), "host": self.invite.fingerprint})
        if self.friends is not None:
            for seat, entry in enumerate(roster.seats):
                if not entry.bot and seat != own:
                    warning = self.friends.check(entry.name, device_id(entry.identity))
                    if warning:
                        self.say(warning)
        self._make_driver(settings)

    def _next_game(self, roster: Roster, settings: Settings) -> None:
        """Every peer agreed to another game, and this is its roster: its journal, its
        sessions (the same keys), its driver."""
        old = self.peer
        assert old is not None
        journal = Journal.open(fresh_journal(self.first, self.number + 1))
        self.number += 1
        if self.place.series is not None:
            self.place.series.begin(roster.table)
        self.tables.append(old.roster.table)
        self.journal = journal
        self.peer = Peer(roster, old.keys, secrets.token_bytes(32), journal,
                         dict(old.settings))
        self.say(f"game {self.number}: {roster.rules.title}, the same players")
        self._make_driver(settings)
        self.changed.set()

    def _make_driver(self, settings: Settings) -> None:
        assert self.peer is not None
        self.agreement = Agreement(self.peer.roster, self.number)
        roster = self.peer.roster
        own = min(self.peer.sessions)
        bots = {seat: self.make_bot(roster.seats[seat].bot, roster.rules)
                for seat in self.peer.sessions if roster.seats[seat].bot and seat != own}
        if self.own_bot:  # this run's choice, whatever the roster says the seat began as
            bots[own] = self.make_bot(self.own_bot, roster.rules)
        self.driver = Driver(self.peer, self._send, bots, settings, self.person, self.say,
                             self.seed, make_bot=self.make_bot,
                             person_seat=None if self.own_bot else own)
        self.say(f"roster: {describe_roster(roster)}")
        self.say(f"safety number: {roster.safety_number()} (compare it aloud)")
        self.say(f"table: {settings.describe()}")
        self.say(describe_deck(roster.deck))
        if self.person is not None:
            self.person.seated(roster, min(self.peer.sessions), settings, self.chat)
        self.connected.set()

    async def _send(self, wires: list[bytes]) -> None:
        link = self.link
        if link is None:
            return  # sent again from the journal once the link is back
        try:
            for wire in wires:
                await link.send(Msg(wire=wire))
        except LinkClosed:
            pass
