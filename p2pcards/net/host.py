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

:class:`Host` is the table: its game (the peer and its driver), the game
after it, and the parts it is made of, each with one job:

- the door (:mod:`p2pcards.net.door`): links before they authenticate;
- the seating (:mod:`p2pcards.net.seating`): the lobby's I/O, a link from its
  hello to its end (who may sit where, the lobby decides:
  :mod:`p2pcards.net.lobby`, no I/O);
- the relay (:mod:`p2pcards.net.relay`): what a seated link may send (the
  referee decides: :mod:`p2pcards.net.referee`, no I/O) and what goes out on
  every link, the watchers' (:mod:`p2pcards.net.watchers`) too;
- the interval (:mod:`p2pcards.net.interval`): the players' words between two
  games (the agreement decides: :mod:`p2pcards.net.again`, no I/O).

Each link has one reader and one writer (:class:`~p2pcards.net.pump.Pump`),
over any :class:`trio.abc.Stream`.  TLS is wrapped around a connection by the
listener of :meth:`Host.serve`, before the host sees it; :meth:`Host.accept`
takes a stream already open (tests hand it memory streams).
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.bots import MakeBot
from p2pcards.net import lan, links, tls
from p2pcards.net.again import Agreement
from p2pcards.net.door import Door
from p2pcards.net.driver import Driver, Person
from p2pcards.net.frames import (
    Again,
    End,
    Frame,
    FrameError,
    HelloFrame,
    Msg,
    Start,
    from_map,
    to_map,
)
from p2pcards.net.identity import Identity
from p2pcards.net.interval import TABLE_ID_BYTES, Interval
from p2pcards.net.invite import TOKEN_BYTES, Invite, invite_at
from p2pcards.net.journal import Journal, JournalError, damaged
from p2pcards.net.lobby import Lobby, describe_roster
from p2pcards.net.lobbychat import clean
from p2pcards.net.outreach import Outreach, Reaching
from p2pcards.net.peer import Peer
from p2pcards.net.portmap.mapper import PortmapConfig
from p2pcards.net.reach import Found, Plan
from p2pcards.net.referee import Referee
from p2pcards.net.relay import LinkLog, Seated, TableRelay
from p2pcards.net.seating import Seating
from p2pcards.net.series import GameOver, Place, match_so_far
from p2pcards.net.settings import Settings
from p2pcards.net.tor import ControlAddress
from p2pcards.net.watchers import DEFAULT_WATCHERS, Watchers
from p2pcards.table.roster import (
    AHEAD_DECK,
    DEFAULT_DECK,
    PIPELINED_DECK,
    PROVED_DECK,
    deck_choice,
    describe_deck,
)

SEED_BYTES = 32
FAREWELL_SECONDS = 30.0
"""How long, once the game is over, the links' queues may take to go out: long enough
for a peer that was paused near the end (it reads its backlog, checking every message)
to get the game's end before the host is gone."""


@dataclass
class HostConfig:
    """What the host command asks for: the game, the seats and bots, where to listen,
    the table settings and deck, watchers, another game or not."""

    game: str
    players: int
    options: dict[str, int]
    name: str
    own_bot: str | None
    """The bot playing the host's own seat (headless), or None: a person."""
    bots: list[str]
    """The kinds of the other bots the host runs."""
    settings: Settings
    bind: str | None = "127.0.0.1"
    """The address to listen on (None: every address, IPv4 and IPv6)."""
    port: int = 0
    address: str | None = None
    """The address the invite names, whatever this machine has (``--address``)."""
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
    found: Found | None = None
    """This machine's addresses (None: read them when the table is hosted)."""
    portmap: PortmapConfig | None = None
    """How to ask the router for a port mapping (None: not at all)."""
    tor: tuple[ControlAddress, ...] | None = None
    """Tor's control port, for an onion service (None: none)."""


Listen = Callable[[trio.Nursery], Awaitable[int]]
"""Starts a listener in the nursery (it hands each connection to :meth:`Host.handle`)
and returns its port."""


class Host:
    """One table's host: its game, the games after it, and the links it serves."""

    def __init__(self, identity: Identity, config: HostConfig, make_bot: MakeBot,
                 journal: Journal, *, say: Callable[[str], None] = print,
                 person: Person | None = None, seed: int | None = None,
                 place: Place | None = None):
        self.identity = identity
        self.config = config
        self.make_bot = make_bot
        self.journal = journal
        place = place or Place()
        self.say = say
        self.person = person
        self.seed = seed
        self.bot_keys: dict[bytes, Ed25519PrivateKey] = {}
        """The keys of the bots this host runs, by their public key."""
        self.peer: Peer | None = None
        self.driver: Driver | None = None
        self.started = trio.Event()
        self.port = 0
        self.outreach = Outreach(Reaching(config.bind, config.address, config.portmap,
                                          config.tor, config.found), say)
        """The port mapped on the router and the onion service, while the table lasts."""
        self.log = LinkLog(say)
        self.door = Door(self.log.closed, self.log.log)
        self._nursery: trio.Nursery | None = None
        started_by: list[Again] = []
        if journal.records:
            self.lobby, started_by = self._resume(place)
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
        self.relay = TableRelay(self.lobby, self.door, self.log, watchers=config.watchers,
                                watchers_chat=config.watchers_chat, catch_up=self._catch_up,
                                person=person)
        self.interval = Interval(identity.key, self.relay,
                                 replace(place, first=place.first or journal.path),
                                 game=lambda: self.peer, say=say,
                                 asks=person is not None and not config.own_bot,
                                 headless=person is None, once=config.once)
        self.interval.started_by = started_by
        self.seating = Seating(self, self.lobby, self.door, self.relay,
                               interval=self.interval, log=self.log)
        if self.peer is not None:
            self._make_driver()

    # ================================================================= its parts

    @property
    def links(self) -> list[Seated]:
        """The seated links."""
        return self.relay.links

    @property
    def watchers(self) -> Watchers:
        return self.relay.watchers

    @property
    def referee(self) -> Referee | None:
        return self.relay.referee

    @property
    def closed_reasons(self) -> deque[str]:
        """Why links were closed (the newest :data:`~p2pcards.net.relay.MAX_CLOSED_REASONS`;
        :attr:`closed_count` counts them all)."""
        return self.log.closed_reasons

    @property
    def closed_count(self) -> int:
        return self.log.closed_count

    @property
    def agreement(self) -> Agreement | None:
        """The players' words since this game ended (None: it is not over here yet)."""
        return self.interval.agreement

    @property
    def number(self) -> int:
        """This game's number in the series."""
        return self.interval.number

    @number.setter
    def number(self, number: int) -> None:
        self.interval.number = number

    @property
    def on_over(self) -> GameOver | None:
        """What to do when a game is over (the command writes its outputs there)."""
        return self.interval.on_over

    @on_over.setter
    def on_over(self, on_over: GameOver | None) -> None:
        self.interval.on_over = on_over

    # ================================================================= the table

    @property
    def free(self) -> int:
        return self.lobby.free

    @property
    def begun(self) -> bool:
        """Whether the game has begun (its roster made)."""
        return self.peer is not None

    def plan(self) -> Plan:
        """The invite's addresses and how the table can be reached, as things stand."""
        return self.outreach.plan(self.port)

    def invite(self) -> Invite:
        return invite_at(self.plan().addresses, self.identity.id, self.lobby.token)

    def hello(self, nonce: bytes) -> HelloFrame:
        """The host's hello to a link: ``nonce`` to sign, the game, its name, the seats
        free."""
        return HelloFrame(nonce=nonce, game=self.config.game, name=self.config.name,
                          free=self.free)

    def _beacon(self) -> bytes | None:
        """The LAN beacon while seats are free, or (the game under way) while a joiner
        seated at it is away, or while a watcher may come, with no seat free: it carries
        the table's token, by which a seated identity finds its journal again (None: not
        this interval)."""
        watchable = len(self.watchers.links) < self.watchers.most
        if self.peer is not None and (self.interval.ended
                                      or not (self.away() or watchable)):
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
        return [] if self.peer is None else self.relay.away(self.peer.roster)

    def _resume(self, place: Place) -> tuple[Lobby, list[Again]]:
        """The peer as the journal left it; the lobby of its roster, and the consents that
        began its game."""
        self.peer = Peer.restore(self.journal)
        settings = self.peer.settings
        try:
            self.config.settings = Settings.from_wire(settings["table"])
            token = settings["token"]
            if not isinstance(token, bytes):
                raise TypeError("its token is not bytes")
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(self.journal.path, 0, None, "does not read (the table's"
                          f" settings; {type(exc).__name__}: {exc})") from exc
        self.say(f"resuming the table of {self.journal.path} ({len(self.peer.log)} messages"
                 f"{self.journal.dropped_note()})")
        if deck_choice(self.peer.roster.deck) != self.config.deck:
            self.say(f"this table deals with the {deck_choice(self.peer.roster.deck)} deck,"
                     " as it began"
                     f" (a new table, --new, would deal with the {self.config.deck} deck)")
        try:
            words = [from_map(raw) for raw in settings.get("again", [])]
        except (FrameError, AttributeError, TypeError) as exc:
            raise damaged(self.journal.path, 0, None, "does not read (the consents that"
                          f" began its game; {type(exc).__name__}: {exc})") from exc
        if place.series is not None and place.series.number == 0:
            place.series.begin(self.peer.roster.table)  # (from before series were recorded)
        return (Lobby.resumed(self.peer.roster, self.identity.id, token),
                [w for w in words if isinstance(w, Again)])

    def begin(self) -> None:
        """Every seat is taken: the roster, the peer and its driver."""
        roster = self.lobby.close()
        if self.config.deck == PROVED_DECK and roster.deck == PROVED_DECK:
            self.say("a joiner's p2pcards is older: every shuffle proof is checked on"
                     " arrival, as it does")
        elif self.config.deck == PROVED_DECK and roster.deck == PIPELINED_DECK:
            self.say("a joiner's p2pcards is older: each deal is shuffled at its"
                     " beginning, as it does")
        elif self.config.deck == PROVED_DECK and roster.deck == AHEAD_DECK:
            self.say("a joiner's p2pcards is older: each deal's shares are sent after the"
                     " agreement before it, as it does")
        if roster.deck in links.RULE_VERSIONS:
            self.watchers.refuse_below(links.RULE_VERSIONS[roster.deck],
                                       links.rule_refusal(roster.deck))
        keys = {0: self.identity.key} | {
            seat: self.bot_keys[entry.identity] for seat, entry in enumerate(roster.seats)
            if entry.identity in self.bot_keys}
        if self.interval.series is not None:
            self.interval.series.begin(roster.table)
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
        self.driver = Driver(self.peer, self.relay.send_own, bots, self.config.settings,
                             self.person, self.say, self.seed, make_bot=self.make_bot,
                             person_seat=None if self.config.own_bot else 0)
        self.relay.begin(self.peer, self.driver, self.interval.tables)
        self.say(f"roster: {describe_roster(roster)}")
        self.say(f"safety number: {roster.safety_number()} (compare it aloud)")
        self.say(f"table: {self.config.settings.describe()}")
        self.say(describe_deck(roster.deck))
        if self.person is not None:
            self.person.seated(roster, 0, self.config.settings, self.chat)
        self.started.set()

    def start_frame(self) -> Start:
        """The game's ``start``: its roster and the table settings."""
        assert self.peer is not None
        return Start(roster=self.peer.roster, settings=self.config.settings)

    def played(self) -> list[Frame]:
        """What the game has seen since its ``start``: every table message so far (the
        host's log, in the order its sessions took them), the players' words once it is
        over, and the end."""
        assert self.peer is not None
        frames: list[Frame] = [Msg(wire=w) for w in self.peer.log]
        agreement, ended = self.interval.agreement, self.interval.ended
        frames += agreement.frames() if agreement is not None else []
        if ended:
            frames.append(End(reason=ended))
        return frames

    def _catch_up(self) -> list[Frame]:
        """What brings a new watcher up to date: the lobby, or the game's ``start`` and
        what it has seen since (as a seat that comes back is sent it); its ``start``
        tells it the match so far (the game's number, the earlier games' results)."""
        if self.peer is None:
            return [self.lobby.frame()]
        series = self.interval.series
        start = match_so_far(self.start_frame(), series.results if series else [],
                             self.number)
        return [start, *self.played()]

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
        listener, or :meth:`accept`), then relay until the game is over, and the games
        after it the players agree to."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                if listen is not None:
                    self.port = await listen(nursery)
                    await self.outreach.start(nursery, self.port)
                    if self.peer is not None:
                        self.peer.settings["port"] = self.port
                task_status.started(self.invite())
                if self.config.beacon is not None:
                    nursery.start_soon(lan.announce, self.config.beacon, self._beacon)
                if self.peer is None and self.free == 0:
                    self.begin()
                await self.started.wait()
                assert self.driver is not None and self.peer is not None
                if not self.journal.records:
                    self.peer.settings["port"] = self.port
                while True:
                    await self.driver.run()
                    if not self.peer.over:
                        break  # (adjourned: the same command resumes it)
                    await self.interval.game_over(self.peer, self.driver, self.journal)
                    if not await self._next():
                        break
                await self.relay.farewell(FAREWELL_SECONDS)
                self.journal.close()
                nursery.cancel_scope.cancel()
        finally:
            self._nursery = None

    async def handle(self, stream: trio.abc.Stream, address: str | None = None) -> None:
        """One link, from its handshake to its end (:meth:`Seating.handle
        <p2pcards.net.seating.Seating.handle>`): only it is closed, whatever it does."""
        await self.seating.handle(stream, address)

    def accept(self, stream: trio.abc.Stream, address: str = "local") -> None:
        """Take a link already open (any byte stream) as the listener's are taken, as if
        from ``address``."""
        if self._nursery is None:
            raise trio.ClosedResourceError("the host is not running")
        self._nursery.start_soon(self.handle, stream, address)

    # ============================================================ another game

    async def _next(self) -> bool:
        """Between two games: True once the next one has begun here; False when the
        table closes (someone left, or it cannot begin here)."""
        if not await self.interval.agreed():
            return False
        try:
            self._next_game()
        except (JournalError, OSError) as exc:
            self.interval.end(f"the next game cannot begin here: {exc}")
            return False
        return True

    def _next_game(self) -> None:
        """Every peer agreed: the next game's roster (a fresh table id, the same seats),
        its journal, its sessions; every link is sent its ``start``."""
        old = self.peer
        assert old is not None
        roster, self.journal = self.interval.advance(old)
        settings = dict(old.settings)
        settings["again"] = [to_map(word) for word in self.interval.started_by]  # (for a
        # peer that comes back to this host restarted: the consents that began the game)
        self.peer = Peer(roster, old.keys, secrets.token_bytes(SEED_BYTES), self.journal,
                         settings)
        self.journal.commit()
        self.lobby.next_game(roster)
        self.config.game, self.config.players = roster.game, roster.players
        self.config.options = dict(roster.options)
        self.say(f"game {self.interval.number}: {roster.rules.title}, the same players")
        self._make_driver()
        self.relay.broadcast(self.start_frame())

    async def say_again(self, game: str | None, options: dict[str, int] | None
                        ) -> str | None:
        """The host's person asks for another game (``game`` None: agrees to the
        proposal, or proposes the same game): None, or why not."""
        return self.interval.say_again(game, options)

    async def leave(self) -> bool:
        """This host's player leaves: no more games (every link is told who left)."""
        self.interval.leave()
        return True

    async def chat(self, text: str) -> bool:
        """Say ``text`` to the table (signed by this peer's identity, seat 0): sent."""
        self.relay.broadcast(self.relay.chats.frame(self.identity.key, self.lobby.table, 0,
                                                    text))
        return True

    async def lobby_chat(self, text: str) -> bool:
        """Say ``text`` in the lobby, before every seat is taken (in this host's word, to
        every joiner there: :mod:`p2pcards.net.lobbychat`): whether it was said (once the
        game has begun, chat is signed: :meth:`chat`)."""
        line = clean(text)
        if self.begun or not line:
            return False
        self.relay.lobby_say(self.config.name, self.identity.id, line)
        return True
