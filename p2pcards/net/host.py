"""The host of a networked table: it listens, seats the invited, and relays.

``p2pcards host``: the host takes seat 0 (and any bots it runs), prints an
invite, seats each joiner that proves it holds an invited identity, and when
every seat is taken signs the roster with the others and plays like any other
peer.  It relays every table message to every other link.  The relay can read
no sealed body and forge no signature; what it could do (show different
rosters, drop messages) the safety number, the transcript hashes and the grace
period catch (docs/security.md).

A link that sends anything it should not (a frame that does not decode, a
message for a seat it does not hold, a bad signature, another table's
message, a replay) is closed with the reason logged; the table goes on.

The host is three parts.  The lobby (:mod:`p2pcards.net.lobby`) decides who
sits where, and the referee (:mod:`p2pcards.net.referee`) what a seated link
may send; neither does I/O.  :class:`Host` is the Trio relay around them: one
reader and one writer per link, over any :class:`trio.abc.Stream`.  TLS is
wrapped around a connection by the listener of :meth:`Host.serve`, before the
host sees it; :meth:`Host.accept` takes a stream already open (tests hand it
memory streams).
"""

from __future__ import annotations

import contextlib
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.bots import MakeBot
from p2pcards.net import lan, links, tls
from p2pcards.net.again import LEAVE, Agreement, tell
from p2pcards.net.door import Door, Quietly, reason_of
from p2pcards.net.driver import Driver, Person
from p2pcards.net.frames import (
    NONCE_BYTES,
    PIPELINED_VERSION,
    WATCH_VERSION,
    Again,
    Auth,
    ChatLine,
    End,
    Error,
    Frame,
    FrameError,
    HelloFrame,
    Msg,
    Notice,
    Start,
    Welcome,
    from_map,
    kind_of,
    to_map,
)
from p2pcards.net.gate import PREAUTH_FRAME
from p2pcards.net.identity import Identity, device_id, show_id
from p2pcards.net.invite import TOKEN_BYTES, Invite
from p2pcards.net.journal import Journal, JournalError
from p2pcards.net.lobby import (
    Lobby,
    Rejoin,
    Request,
    WatchRequest,
    describe_roster,
    own_seat,
)
from p2pcards.net.peer import Peer
from p2pcards.net.pump import Pump
from p2pcards.net.referee import Conduct, Referee
from p2pcards.net.series import Place, fresh_journal, result_of, settle
from p2pcards.net.settings import Settings
from p2pcards.net.watchers import DEFAULT_WATCHERS, Watchers
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.codec import CodecError
from p2pcards.table.roster import (
    DEFAULT_DECK,
    PIPELINED_DECK,
    PROVED_DECK,
    deck_choice,
    describe_deck,
)

TABLE_ID_BYTES = 16
SEED_BYTES = 32
DRAIN_SECONDS = 2.0
"""How long a closing link's queue may take to go out."""
FAREWELL_SECONDS = 30.0
"""How long, once the game is over, the links' queues may take to go out: long enough
for a peer that was paused near the end (it reads its backlog, checking every message)
to get the game's end before the host is gone."""
MAX_CLOSED_REASONS = 100
"""Reasons kept of links closed (the newest; :attr:`Host.closed_count` counts them all):
enough to read what a misbehaving link did, bounded against a flood of them."""


@dataclass(eq=False)
class Seated:
    """A link to a joiner: who it is, what the host remembers of it, its queue and
    tasks."""

    pump: Pump
    name: str
    conduct: Conduct
    person: bool = False
    """A person plays its peer's own seat in this run (its ``auth`` named no bot)."""

    @property
    def key(self) -> bytes:
        return self.conduct.key

    @property
    def link(self) -> Link:
        return self.pump.link


@dataclass
class HostConfig:
    game: str
    players: int
    options: dict[str, int]
    name: str
    own_bot: str | None
    """The bot playing the host's own seat (headless), or None: a person."""
    bots: list[str]
    """The kinds of the other bots the host runs."""
    settings: Settings
    bind: str = "127.0.0.1"
    port: int = 0
    address: str | None = None
    beacon: tuple[str, int] | None = None
    """Where LAN beacons go (None: the table is not announced)."""
    deck: str = DEFAULT_DECK
    """The deck of a new table (the roster carries it; a table resumed from its journal
    keeps the deck it began with)."""
    once: bool = False
    """Leave after the game (no other game with the same players)."""
    watchers: int = DEFAULT_WATCHERS
    """The most watchers the host takes (0: none; docs/networking.md, "Watching")."""
    watchers_chat: bool = False
    """Whether watchers may chat (their lines are relayed, marked as a watcher's)."""


Listen = Callable[[trio.Nursery], Awaitable[int]]
"""Starts a listener in the nursery (it hands each connection to :meth:`Host.handle`)
and returns its port."""


class Host:
    def __init__(self, identity: Identity, config: HostConfig, make_bot: MakeBot,
                 journal: Journal, *, say: Callable[[str], None] = print,
                 person: Person | None = None, seed: int | None = None,
                 place: Place | None = None):
        self.identity = identity
        self.config = config
        self.make_bot = make_bot
        self.journal = journal
        place = place or Place()
        self.series = place.series
        """The record of the games played on this invite (None: kept in memory only)."""
        self.number = place.number
        """This game's number in the series."""
        self.first = place.first or journal.path
        """The first game's journal: the others' are named after it."""
        self.on_over = place.on_over
        self.tables: list[bytes] = list(self.series.tables[:-1]) if self.series else []
        """The table ids of the games played before this one."""
        self.agreement: Agreement | None = None
        """The players' words since this game ended (None: it is not over here yet)."""
        self.started_by: list[Again] = []
        """The consents that started this game (sent to a peer that comes back)."""
        self.early: dict[bytes, Again] = {}
        """Words that came before this host's game was over, the newest per identity."""
        self.ended = ""
        """Why no more games are played ("" while the table may go on)."""
        self.decided = trio.Event()
        self.say = say
        self.person = person
        self.seed = seed
        self.links: list[Seated] = []
        self.bot_keys: dict[bytes, Ed25519PrivateKey] = {}
        """The keys of the bots this host runs, by their public key."""
        self.peer: Peer | None = None
        self.driver: Driver | None = None
        self.referee: Referee | None = None
        self.started = trio.Event()
        self.port = 0
        self.closed_reasons: deque[str] = deque(maxlen=MAX_CLOSED_REASONS)
        self.closed_count = 0
        self.door = Door(self._closed, self._log)
        self.watchers = Watchers(config.watchers, config.watchers_chat, self.door,
                                 catch_up=self._catch_up, tell_seats=self._tell_seats,
                                 log=self._log, closed=self._closed)
        self.chats = links.Chat()
        self._nursery: trio.Nursery | None = None
        if journal.records:
            self.lobby = self._resume()
            self._make_driver()
        else:
            self.lobby = Lobby(secrets.token_bytes(TABLE_ID_BYTES), config.game,
                               config.options, config.players, host_id=identity.id,
                               token=secrets.token_bytes(TOKEN_BYTES), deck=config.deck)
            self.lobby.sit(config.name, identity.public, config.own_bot or "")
            for kind in config.bots:
                key = Ed25519PrivateKey.generate()
                public = key.public_key().public_bytes_raw()
                self.bot_keys[public] = key
                self.lobby.add_bot(kind, public)

    # ================================================================= the table

    @property
    def free(self) -> int:
        return self.lobby.free

    def invite(self) -> Invite:
        return Invite(self.config.address or self.config.bind, self.port, self.identity.id,
                      self.lobby.token)

    def _beacon(self) -> bytes | None:
        """The LAN beacon while seats are free, or (the game under way) while a joiner
        seated at it is away, or while a watcher may come, with no seat free: it carries
        the table's token, by which a seated identity finds its journal again (None: not
        this interval)."""
        watchable = len(self.watchers.links) < self.watchers.most
        if self.peer is not None and (self.ended or not (self.away() or watchable)):
            return None
        return lan.beacon(self.config.game, self.config.name, self.port, self.identity.id,
                          self.lobby.token, free=self.free)

    @property
    def deck(self) -> str:
        """The deck this table deals with: its roster's once it has one (a table resumed
        keeps the deck it began with), else the configured one."""
        return self.config.deck if self.peer is None else self.peer.roster.deck

    def away(self) -> list[int]:
        """The seats of joiners of this game with no link to the host now."""
        if self.peer is None:
            return []
        here = {seated.key for seated in self.links}
        return [seat for seat, entry in enumerate(self.peer.roster.seats)
                if seat != 0 and entry.run_by in (None, seat) and entry.identity not in here]

    def _resume(self) -> Lobby:
        """The peer as the journal left it; the lobby of its roster."""
        self.peer = Peer.restore(self.journal)
        settings = self.peer.settings
        self.config.settings = Settings.from_wire(settings["table"])
        self.say(f"resuming the table of {self.journal.path} ({len(self.peer.log)} messages)")
        if deck_choice(self.peer.roster.deck) != self.config.deck:
            self.say(f"this table deals with the {deck_choice(self.peer.roster.deck)} deck,"
                     " as it began"
                     f" (a new table, --new, would deal with the {self.config.deck} deck)")
        try:
            words = [from_map(raw) for raw in settings.get("again", [])]
        except (FrameError, AttributeError, TypeError) as exc:
            raise JournalError(f"{self.journal.path}: the consents that began its game do"
                               f" not read ({exc})") from exc
        self.started_by = [w for w in words if isinstance(w, Again)]
        if self.series is not None and self.series.number == 0:
            self.series.begin(self.peer.roster.table)  # (from before series were recorded)
        return Lobby.resumed(self.peer.roster, self.identity.id, settings["token"])

    def _start(self) -> None:
        roster = self.lobby.close()
        if self.config.deck == PROVED_DECK and roster.deck == PROVED_DECK:
            self.say("a joiner's p2pcards is older: every shuffle proof is checked on"
                     " arrival, as it does")
        if roster.deck == PIPELINED_DECK:
            self.watchers.refuse_below(PIPELINED_VERSION, links.pipelined_refusal())
        keys = {0: self.identity.key} | {
            seat: self.bot_keys[entry.identity] for seat, entry in enumerate(roster.seats)
            if entry.identity in self.bot_keys}
        if self.series is not None:
            self.series.begin(roster.table)
        self.peer = Peer(roster, keys, secrets.token_bytes(SEED_BYTES), self.journal,
                         {"token": self.lobby.token, "table": self.config.settings.to_wire()})
        self.journal.commit()  # the table survives a crash from here on
        self._make_driver()

    def _make_driver(self) -> None:
        assert self.peer is not None
        roster = self.peer.roster
        bots = {seat: self.make_bot(e.bot, roster.rules) for seat, e in enumerate(roster.seats)
                if seat in self.peer.sessions and e.bot and seat != 0}
        if self.config.own_bot:  # this run's choice, whatever the roster began with
            bots[0] = self.make_bot(self.config.own_bot, roster.rules)
        self.driver = Driver(self.peer, self._relay_own, bots, self.config.settings,
                             self.person, self.say, self.seed, make_bot=self.make_bot,
                             person_seat=None if self.config.own_bot else 0)
        self.referee = Referee(self.peer, self.chats, frozenset(self.tables))
        self.say(f"roster: {describe_roster(roster)}")
        self.say(f"safety number: {roster.safety_number()} (compare it aloud)")
        self.say(f"table: {self.config.settings.describe()}")
        self.say(describe_deck(roster.deck))
        if self.person is not None:
            self.person.seated(roster, 0, self.config.settings, self.chat)
        self.started.set()

    # ================================================================== serving

    async def serve(self, *, task_status: trio.TaskStatus[Invite] = trio.TASK_STATUS_IGNORED
                    ) -> None:
        """Listen for TLS links on the configured address and play the table."""
        await self.run(self._listen_tls, task_status=task_status)

    async def _listen_tls(self, nursery: trio.Nursery) -> int:
        context = tls.server_context(self.identity)
        port = self.config.port or (self.peer.settings.get("port", 0) if self.peer else 0)
        listeners = await nursery.start(partial(
            trio.serve_ssl_over_tcp, self.handle, port, context, host=self.config.bind))
        return int(listeners[0].transport_listener.socket.getsockname()[1])

    async def run(self, listen: Listen | None = None, *,
                  task_status: trio.TaskStatus[Invite] = trio.TASK_STATUS_IGNORED) -> None:
        """Play the table: seat the joiners whose links arrive (from ``listen``'s
        listener, or :meth:`accept`), then relay until the game is over."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                if listen is not None:
                    self.port = await listen(nursery)
                    if self.peer is not None:
                        self.peer.settings["port"] = self.port
                task_status.started(self.invite())
                if self.config.beacon is not None:
                    nursery.start_soon(lan.announce, self.config.beacon, self._beacon)
                if self.peer is None and self.free == 0:
                    self._start()
                await self.started.wait()
                assert self.driver is not None and self.peer is not None
                if not self.journal.records:
                    self.peer.settings["port"] = self.port
                while True:
                    await self.driver.run()
                    if not self.peer.over:
                        break  # (adjourned: the same command resumes it)
                    await self._game_over()
                    if not await self._interval():
                        break
                await self._farewell()
                nursery.cancel_scope.cancel()
        finally:
            self._nursery = None

    def accept(self, stream: trio.abc.Stream, address: str = "local") -> None:
        """Take a link already open (any byte stream) as the listener's are taken, as if
        from ``address``."""
        if self._nursery is None:
            raise trio.ClosedResourceError("the host is not running")
        self._nursery.start_soon(self.handle, stream, address)

    async def _farewell(self) -> None:
        for seated in list(self.links):
            seated.pump.close()
        with trio.move_on_after(FAREWELL_SECONDS):
            for seated in list(self.links):
                await seated.pump.drained.wait()
            await self.watchers.farewell()
        self.journal.close()

    # ================================================================== a link

    async def handle(self, stream: trio.abc.Stream, address: str | None = None) -> None:
        """One link, from its handshake to its end.  Whatever it sends, only it is closed:
        nothing raised here reaches the listener (Trio would take the host down)."""
        entered = await self.door.enter(stream, address, self._authenticate)
        if entered is None:
            return
        link, admitted, where = entered
        if isinstance(admitted, WatchRequest):
            await self.watchers.play(link, admitted)
        else:
            await self._play(link, admitted, where)

    async def _authenticate(self, link: Link) -> Request | Rejoin | WatchRequest:
        first = await link.receive(PREAUTH_FRAME)
        version = links.negotiate(first)
        assert isinstance(first, HelloFrame)
        links.admits(first, version, self.deck)
        link.version = version
        nonce = secrets.token_bytes(NONCE_BYTES)
        await link.send(HelloFrame(nonce=nonce, game=self.config.game, name=self.config.name,
                              free=self.free))
        auth = await link.receive(PREAUTH_FRAME)
        if not isinstance(auth, Auth):
            raise FrameError(f"expected auth, got {kind_of(auth)!r}")
        if auth.watch:
            request = self.lobby.admit_watcher(auth, nonce)
            self.watchers.check(request)
            return request
        admitted = self.lobby.admit(auth, nonce)
        if admitted.key in self.watchers.identities():
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
            await seated.pump.run(partial(self._take, seated), ended=partial(self._ended, seated),
                                  linger=DRAIN_SECONDS)
        except Quietly as exc:
            self._closing(seated, str(exc))
        except FrameError as exc:
            await self._close(link, seated, str(exc))
        except Exception as exc:  # a broken link, or a fault of ours: this link only
            reason = reason_of(exc)
            self._log(f"{seated.name if seated else 'a joiner'} left ({reason})")
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
        seated = _seated(link, admitted.key, admitted.name)
        seated.person = not admitted.entries[0].bot
        self.links.append(seated)
        self._notice(f"{admitted.name} ({show_id(device_id(admitted.key), 4)}) sits at seat"
                     f" {min(seats)}")
        self._lobby_changed()
        return seated

    async def _rejoin(self, link: Link, rejoin: Rejoin) -> Seated:
        assert self.peer is not None
        await self.door.pace(rejoin.key)
        stale = next((s for s in self.links if s.key == rejoin.key), None)
        if stale is not None:  # its old link is dead but not yet noticed: replaced
            self.links.remove(stale)
            stale.pump.close()
            await stale.link.aclose()
        seated = _seated(link, rejoin.key, rejoin.name)
        await link.send(Welcome(seat=rejoin.seat, resume=True))
        for word in self.started_by:  # (what started this game, for a peer that missed it)
            await link.send(word)
        await link.send(self._start_frame())
        for wire in self.peer.log:
            seated.pump.put(Msg(wire=wire))
        for word in self.agreement.frames() if self.agreement is not None else ():
            seated.pump.put(word)
        if self.ended:
            seated.pump.put(End(reason=self.ended))
        seated.person = not rejoin.bot
        self.links.append(seated)
        self._notice(f"{rejoin.name} is back at seat {rejoin.seat}")
        return seated

    def _start_frame(self) -> Start:
        assert self.peer is not None
        return Start(roster=self.peer.roster, settings=self.config.settings)

    def _lobby_changed(self) -> None:
        if self.peer is not None:
            return
        self._broadcast(self.lobby.frame())
        if self.free == 0:
            try:
                self._start()
            except CodecError as exc:  # checked on the way in: should not happen
                raise FrameError(f"the roster cannot be made: {exc}") from exc
            self._broadcast(self._start_frame())
        else:
            self._log(f"{len(self.lobby.entries)} of {self.config.players} seats taken")

    def _take(self, seated: Seated, frame: Frame) -> None:
        """A frame from a seated joiner: :class:`FrameError` for one it should not send
        (the link is closed with the reason)."""
        if isinstance(frame, Msg):
            self._table_message(seated, frame.wire)
        elif isinstance(frame, ChatLine):
            self._chat(seated, frame)
        elif isinstance(frame, Again):
            self._word(seated, frame)
        else:
            raise FrameError(f"a {kind_of(frame)!r} frame is not expected from a joiner")

    def _ended(self, seated: Seated, reason: str) -> None:
        """A seated joiner's reader stopped: it left (``reason`` ""), or it is closed for
        ``reason`` (said after what is queued for it); its seats are free again before
        the game."""
        if reason:
            self._closing(seated, reason)
            self._drop(seated, Error(reason=reason))
        else:
            self._notice(f"{seated.name} left the table ({self._seats(seated)})")
        self._drop(seated)

    def _table_message(self, seated: Seated, wire: bytes) -> None:
        if self.referee is None or self.driver is None:
            raise FrameError("a table message before the game began")
        env = self.referee.screen(seated.conduct, wire)
        if env is None:
            return  # sent again after a reconnection: already relayed
        # judged here first: only what the host's own sessions keep goes on (a message
        # refused as late, or evidence already held, is counted against its sender)
        if self.referee.judge(seated.conduct, wire, env):
            self._broadcast(Msg(wire=wire), but=seated)
        self.driver.post("poke")

    def _chat(self, seated: Seated, line: ChatLine) -> None:
        if self.referee is None:
            raise FrameError("chat before the game began")
        try:
            seat, text = self.referee.chat(seated.conduct, line, trio.current_time())
        except FrameError:
            if self.tables and self._said_before(line):
                return  # (signed for the game before, as the next began: not shown)
            raise
        self._broadcast(line, but=seated)
        self.say(f"{self.referee.peer.roster.seats[seat].name}: {text}")

    # ============================================================ another game

    async def _game_over(self) -> None:
        """The game is over here: its outputs (once: not again for a game restored after
        its end was recorded), its result in the series, its journal kept as done."""
        peer, driver, journal = self.peer, self.driver, self.journal
        assert peer is not None and driver is not None
        recorded = self.series is not None and self.series.between
        await self._sent()
        if not recorded:
            if self.on_over is not None:
                await self.on_over(peer, driver, self.number)
            if self.series is not None:
                self.series.finish(result_of(peer))
        settle(peer, journal)

    async def _sent(self) -> None:
        """Let what is queued for the links go out (for up to :data:`DRAIN_SECONDS`)
        before the game's outputs: verifying the whole transcript holds this loop for
        seconds on a busy machine, and the game's last message, relayed from the seat
        that sent it and still queued for the others, would reach them only after
        their grace period (they would claim its sender silent)."""
        with trio.move_on_after(DRAIN_SECONDS):
            while not all(seated.pump.idle() for seated in self.links):
                await trio.sleep(0.01)

    def _can_ask(self) -> bool:
        """Whether a person sits at the table who may ask for another game: at this
        host, or at a joiner linked now (its ``auth`` named no bot).  (A person away
        when the game ends does not keep a table of bots waiting.)"""
        if self.person is not None and not self.config.own_bot:
            return True
        return any(seated.person for seated in self.links)

    async def _interval(self) -> bool:
        """Between two games: wait for every peer's consent to another game (then it
        has begun: True) or for someone to leave (False; every link is told)."""
        assert self.peer is not None
        if self.agreement is None:
            self.agreement = Agreement(self.peer.roster, self.number)
        if self.ended:
            pass
        elif self.config.once:
            self._leave()
        elif not self._can_ask():
            self._end("no one at this table can ask for another game (a bot plays every"
                      " seat): the table closes")
        else:
            early, self.early = self.early, {}
            for key, word in early.items():  # (its sender may have gone since: a word
                try:                         # that leaves still counts)
                    self._take_word(word, None)
                except FrameError as exc:
                    seated = next((s for s in self.links if s.key == key), None)
                    if seated is not None:
                        self._closing(seated, str(exc))
                        self._drop(seated, Error(reason=str(exc)))
            self._consent()
        await self.decided.wait()
        self.decided = trio.Event()
        if self.ended:
            return False
        try:
            self._next_game()
        except (JournalError, OSError) as exc:
            self._end(f"the next game cannot begin here: {exc}")
            return False
        return True

    def _word(self, seated: Seated, word: Again) -> None:
        """A word from a link: checked and taken once this host's game is over (kept
        until then); FrameError if it may not be said."""
        own = own_seat(self.lobby.entries, seated.key)
        if word.seat != own:
            raise FrameError(f"again: a word in seat {word.seat}'s name, not its own")
        if word.table in self.tables or self.ended:
            return  # (about a game before this one, or the table is closing: nothing)
        if self.peer is None or word.table != self.peer.roster.table:
            raise FrameError("again: a word about another table's game")
        if self.agreement is None:
            self.early[seated.key] = word  # (this host's game is not over yet)
            return
        self._take_word(word, seated)

    def _take_word(self, word: Again, seated: Seated | None) -> None:
        assert self.agreement is not None and self.peer is not None
        outcome = self.agreement.take(word)
        if outcome == "stale":
            return
        self._broadcast(word)  # to every link, the sender's too: the one order
        names = [e.name for e in self.peer.roster.seats]
        self.say(tell(self.agreement, word, outcome, names, 0, headless=self.person is None))
        if outcome == "leave":
            self._end(f"{names[word.seat]} left: no more games at this table")
        elif self.agreement.complete:
            self.decided.set()
        elif outcome == "proposal":
            self._consent()

    def _consent(self) -> None:
        """A headless host agrees to the proposal that stands."""
        agreement = self.agreement
        if self.person is not None or agreement is None or agreement.proposal is None \
                or 0 in agreement.agreed or self.ended:
            return
        self._take_word(agreement.word(self.identity.key, 0, None, None), None)

    async def say_again(self, game: str | None, options: dict[str, int] | None
                        ) -> str | None:
        """The host's person asks for another game (``game`` None: agrees to the
        proposal, or proposes the same game): None, or why not."""
        if self.agreement is None or self.ended:
            return "the game is not over yet" if not self.ended else self.ended
        try:
            word = self.agreement.word(self.identity.key, 0, game, options)
        except ValueError as exc:
            return str(exc)
        if word.round == self.agreement.round and 0 in self.agreement.agreed:
            return "you agreed already: waiting for the others"
        self._take_word(word, None)
        return None

    async def leave(self) -> bool:
        """This host's player leaves: no more games (every link is told who left)."""
        self._leave()
        return True

    def _leave(self) -> None:
        if self.agreement is None:
            assert self.peer is not None
            self.agreement = Agreement(self.peer.roster, self.number)
        if not self.ended:
            self._take_word(self.agreement.word(self.identity.key, 0, LEAVE, None), None)

    def _end(self, reason: str) -> None:
        if self.ended:
            return
        self.ended = reason
        if self.series is not None:
            self.series.end(reason)
        self._broadcast(End(reason=reason))
        if not reason.endswith("no more games at this table"):
            self.say(reason)
        self.decided.set()

    def _next_game(self) -> None:
        """Every peer agreed: the next game's roster (a fresh table id, the same seats),
        its journal, its sessions; every link is sent its ``start``."""
        assert self.agreement is not None and self.peer is not None
        agreement, old = self.agreement, self.peer
        table = secrets.token_bytes(TABLE_ID_BYTES)
        while table in self.tables or table == old.roster.table:
            table = secrets.token_bytes(TABLE_ID_BYTES)
        roster = agreement.next_roster(table)
        journal = Journal.open(fresh_journal(self.first, self.number + 1))
        self.number += 1
        if self.series is not None:
            self.series.begin(roster.table)
        self.tables.append(old.roster.table)
        self.started_by = agreement.frames()
        self.agreement = None
        self.journal = journal
        settings = dict(old.settings)
        settings["again"] = [to_map(word) for word in self.started_by]  # (for a peer that
        # comes back to this host restarted: the consents that began the game)
        self.peer = Peer(roster, old.keys, secrets.token_bytes(SEED_BYTES), journal, settings)
        journal.commit()
        self.lobby.next_game(roster)
        self.config.game, self.config.players = roster.game, roster.players
        self.config.options = dict(roster.options)
        self.say(f"game {self.number}: {roster.rules.title}, the same players")
        self._make_driver()
        self._broadcast(self._start_frame())

    def _said_before(self, line: ChatLine) -> bool:
        """Whether a chat line is signed for the game before this one."""
        assert self.peer is not None
        try:
            links.Chat().take(line, self.peer.roster.keys, self.tables[-1])
        except FrameError:
            return False
        return True

    # ================================================================== sending

    def _broadcast(self, frame: Frame, but: Seated | None = None) -> None:
        """``frame`` to every seat's link (but ``but``'s) and to every watcher: what a
        watcher is sent is exactly what the seats are."""
        for seated in list(self.links):
            if seated is not but:
                with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
                    seated.pump.put(frame)
        self.watchers.relay(frame)

    def _tell_seats(self, frame: Frame, older: Frame) -> None:
        """A frame about the watchers to every seat's link (``older``, a notice saying
        the same, to a link that speaks no version with watchers), and to this host's
        person."""
        for seated in list(self.links):
            with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
                seated.pump.put(frame if seated.link.version >= WATCH_VERSION else older)
        watched = getattr(self.person, "watched", None)
        if watched is not None:
            watched(self.watchers.names())

    def _catch_up(self) -> list[Frame]:
        """What brings a new watcher up to date: the lobby, or the game's ``start`` and
        every table message so far (and the players' words, the end, as a seat that
        comes back is sent them)."""
        if self.peer is None:
            return [self.lobby.frame()]
        frames: list[Frame] = [self._start_frame(), *(Msg(wire=w) for w in self.peer.log)]
        frames += self.agreement.frames() if self.agreement is not None else []
        if self.ended:
            frames.append(End(reason=self.ended))
        return frames

    async def _relay_own(self, wires: list[bytes]) -> None:
        for wire in wires:
            self._broadcast(Msg(wire=wire))

    async def chat(self, text: str) -> None:
        """Say ``text`` to the table (signed by this peer's identity, seat 0)."""
        self._broadcast(self.chats.frame(self.identity.key, self.lobby.table, 0, text))

    # ================================================================== closing

    def _drop(self, seated: Seated, last: Frame | None = None) -> None:
        """Take a link off the table (its queue then drains and closes), once; before
        the game its seats are free again."""
        if seated not in self.links:
            return
        self.links.remove(seated)
        seated.pump.close(last)
        if self.lobby.leave(seated.key):
            self._lobby_changed()

    def _seats(self, seated: Seated) -> str:
        """The seats of a joiner, as words: ``seat 2``, ``seats 1 and 3``."""
        seats = [str(s) for s in sorted(self.lobby.seats(seated.key))]
        if len(seats) == 1:
            return f"seat {seats[0]}"
        return "seats " + ", ".join(seats[:-1]) + f" and {seats[-1]}" if seats else "no seat"

    def _closing(self, seated: Seated | None, reason: str) -> None:
        who = f"{seated.name} ({self._seats(seated)})" if seated else "a joiner"
        self._log(f"closed the link of {who}: {reason}")
        self._closed(reason)

    def _closed(self, reason: str) -> None:
        """Remember why a link was closed (the door logs its own, not each)."""
        self.closed_reasons.append(reason)
        self.closed_count += 1

    async def _close(self, link: Link, seated: Seated | None, reason: str) -> None:
        self._closing(seated, reason)
        with trio.move_on_after(1), contextlib.suppress(LinkClosed, FrameError):
            await link.send(Error(reason=reason))

    def _log(self, line: str) -> None:
        self.say(f"[host] {links.printable(line, 400)}")  # (reasons quote what links sent)

    def _notice(self, line: str) -> None:
        """A join or a leave: shown here and at every joiner."""
        self._log(line)
        self._broadcast(Notice(text=line))


def _seated(link: Link, key: bytes, name: str) -> Seated:
    return Seated(Pump.open(link), name, Conduct(key))
