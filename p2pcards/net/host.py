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
"""

from __future__ import annotations

import contextlib
import hmac
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.bots import BOT_NAMES, Bot
from p2pcards.games import GAMES
from p2pcards.net import lan, links, tls
from p2pcards.net.driver import Driver, Person
from p2pcards.net.frames import (
    NONCE_BYTES,
    Auth,
    BotClaim,
    ChatLine,
    Error,
    Frame,
    FrameError,
    Hello,
    Lobby,
    LobbySeat,
    Msg,
    Notice,
    Start,
    Welcome,
    kind_of,
)
from p2pcards.net.identity import Identity, device_id, show_id
from p2pcards.net.invite import TOKEN_BYTES, Invite, check_proof
from p2pcards.net.journal import Journal
from p2pcards.net.peer import Peer
from p2pcards.net.settings import Settings
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.codec import CodecError, identity_key, open_envelope
from p2pcards.table.roster import MAX_NAME, Roster, SeatEntry


@dataclass
class Seated:
    """A link to a joiner: who it is and the seats it speaks for."""

    link: Link
    key: bytes
    name: str
    seats: set[int]
    out: trio.MemorySendChannel[Frame]
    out_read: trio.MemoryReceiveChannel[Frame]
    sent_here: set[bytes] = field(default_factory=set)
    drained: trio.Event = field(default_factory=trio.Event)
    late: int = 0
    chats: list[float] = field(default_factory=list)


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


class Host:
    def __init__(self, identity: Identity, config: HostConfig, make_bot: Callable[[str], Bot],
                 journal: Journal, say: Callable[[str], None] = print,
                 person: Person | None = None, seed: int | None = None):
        self.identity = identity
        self.config = config
        self.make_bot = make_bot
        self.journal = journal
        self.say = say
        self.person = person
        self.seed = seed
        self.links: list[Seated] = []
        self.bot_keys: dict[int, Ed25519PrivateKey] = {}
        self.peer: Peer | None = None
        self.driver: Driver | None = None
        self.started = trio.Event()
        self.entries: list[SeatEntry] = []
        self.table = secrets.token_bytes(16)
        self.token = secrets.token_bytes(TOKEN_BYTES)
        self.port = 0
        self.closed_reasons: list[str] = []
        self.chats = links.Chat()
        if journal.records:
            self._resume()
        else:
            self.entries.append(SeatEntry(config.name, identity.public, config.own_bot or "",
                                          0 if config.own_bot else None))
            for kind in config.bots:
                self._add_bot(kind, 0)

    # ================================================================= seating

    def _add_bot(self, kind: str, run_by: int) -> None:
        key = Ed25519PrivateKey.generate()
        seat = len(self.entries)
        self.bot_keys[seat] = key
        self.entries.append(SeatEntry(f"{kind}-{seat}", key.public_key().public_bytes_raw(),
                                      kind, run_by))

    @property
    def free(self) -> int:
        return self.config.players - len(self.entries)

    def invite(self) -> Invite:
        return Invite(self.config.address or self.config.bind, self.port, self.identity.id,
                      self.token)

    def _beacon(self) -> bytes | None:
        """The LAN beacon while seats are free (None: stop announcing)."""
        if self.peer is not None or self.free == 0:
            return None
        return lan.beacon(self.config.game, self.config.name, self.port, self.identity.id,
                          self.token, self.free)

    def _resume(self) -> None:
        self.peer = Peer.restore(self.journal)
        settings = self.peer.settings
        self.table = self.peer.roster.table
        self.token = settings["token"]
        self.config.settings = Settings.from_wire(settings["table"])
        self.entries = list(self.peer.roster.seats)
        self.say(f"resuming the table of {self.journal.path} ({len(self.peer.log)} messages)")
        self._make_driver()

    def _start(self) -> None:
        rules = GAMES[self.config.game]
        options = rules.non_default(rules.resolve_options(dict(self.config.options)))
        roster = Roster(self.table, self.config.game, options, tuple(self.entries))
        keys = {0: self.identity.key, **self.bot_keys}
        self.peer = Peer(roster, keys, secrets.token_bytes(32), self.journal,
                         {"token": self.token, "table": self.config.settings.to_wire()})
        self.journal.commit()  # the table survives a crash from here on
        self._make_driver()

    def _make_driver(self) -> None:
        assert self.peer is not None
        roster = self.peer.roster
        bots = {seat: self.make_bot(e.bot) for seat, e in enumerate(roster.seats)
                if seat in self.peer.sessions and e.bot}
        self.driver = Driver(self.peer, self._relay_own, bots, self.config.settings,
                             self.person, self.say, self.seed)
        self.say(f"roster: {describe_roster(roster)}")
        self.say(f"safety number: {roster.safety_number()} (compare it aloud)")
        self.say(f"table: {self.config.settings.describe()}")
        if self.person is not None:
            self.person.seated(roster, 0, self.config.settings, self.chat)
        self.started.set()

    # ================================================================== serving

    async def serve(self, *, task_status: trio.TaskStatus[Invite] = trio.TASK_STATUS_IGNORED
                    ) -> None:
        context = tls.server_context(self.identity)
        port = self.config.port or (self.peer.settings.get("port", 0) if self.peer else 0)
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(
                trio.serve_ssl_over_tcp, self._handle, port, context, host=self.config.bind))
            self.port = listeners[0].transport_listener.socket.getsockname()[1]
            if self.peer is not None:
                self.peer.settings["port"] = self.port
            task_status.started(self.invite())
            if self.config.beacon is not None and self.peer is None:
                nursery.start_soon(lan.announce, self.config.beacon, self._beacon)
            if self.peer is None and self.free == 0:
                self._start()
            await self.started.wait()
            assert self.driver is not None and self.peer is not None
            if not self.journal.records:
                self.peer.settings["port"] = self.port
            await self.driver.run()
            await self._farewell()
            nursery.cancel_scope.cancel()

    async def _farewell(self) -> None:
        for seated in list(self.links):
            seated.out.close()
        with trio.move_on_after(5):
            for seated in list(self.links):
                await seated.drained.wait()
        self.journal.close()

    async def _handle(self, stream: trio.SSLStream[trio.SocketStream]) -> None:
        """One link, from its handshake to its end.  Whatever it sends, only it is closed:
        nothing raised here reaches the listener (Trio would take the host down)."""
        link = Link(stream, "a joiner")
        seated: Seated | None = None
        try:
            try:
                with trio.fail_after(links.HANDSHAKE_SECONDS):
                    seated = await self._admit(link)
            except trio.TooSlowError:
                raise FrameError("did not finish the handshake in time") from None
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._writer, seated, nursery.cancel_scope)
                try:
                    await self._reader(seated)
                except FrameError as exc:  # the reason goes after what is queued
                    self._closing(seated, str(exc))
                    self._drop(seated, Error(reason=str(exc)))
                self._drop(seated)
                with trio.move_on_after(2):
                    await seated.drained.wait()
                nursery.cancel_scope.cancel()
        except FrameError as exc:
            await self._close(link, seated, str(exc))
        except Exception as exc:  # a broken link, or a fault of ours: this link only
            reason = _reason(exc)
            self._log(f"{seated.name if seated else 'a joiner'} left ({reason})")
        finally:
            if seated is not None:
                self._drop(seated)
            with contextlib.suppress(Exception):
                await link.aclose()

    def _drop(self, seated: Seated, last: Frame | None = None) -> None:
        """Take a link off the table (its queue then drains and closes), once."""
        if seated not in self.links:
            return
        self.links.remove(seated)
        if last is not None:
            seated.out.send_nowait(last)
        seated.out.close()
        if self.peer is None:
            self._unseat(seated)
            self._lobby_changed()

    def _unseat(self, seated: Seated) -> None:
        """A joiner left the lobby: its seats (and its bots') are free again, the seats
        after them move up."""
        keep = [i for i in range(len(self.entries)) if i not in seated.seats]
        moved = {old: new for new, old in enumerate(keep)}
        entries = []
        for old in keep:
            entry = self.entries[old]
            run_by = None if entry.run_by is None else moved[entry.run_by]
            name = f"{entry.bot}-{moved[old]}" if entry.bot and run_by != moved[old] \
                else entry.name
            entries.append(SeatEntry(name, entry.identity, entry.bot, run_by))
        self.entries = entries
        self.bot_keys = {moved[s]: k for s, k in self.bot_keys.items()}
        for other in self.links:
            other.seats = {moved[s] for s in other.seats}

    def _closing(self, seated: Seated | None, reason: str) -> None:
        who = f"{seated.name} (seats {sorted(seated.seats)})" if seated else "a joiner"
        self._log(f"closed the link of {who}: {reason}")
        self.closed_reasons.append(reason)

    async def _close(self, link: Link, seated: Seated | None, reason: str) -> None:
        self._closing(seated, reason)
        with trio.move_on_after(1), contextlib.suppress(LinkClosed, FrameError):
            await link.send(Error(reason=reason))

    def _log(self, line: str) -> None:
        self.say(f"[host] {line}")

    def _notice(self, line: str) -> None:
        """A join or a leave: shown here and at every joiner."""
        self._log(line)
        self._broadcast(Notice(text=line))

    async def _admit(self, link: Link) -> Seated:
        links.negotiate(await link.receive())
        nonce = secrets.token_bytes(NONCE_BYTES)
        await link.send(Hello(nonce=nonce, game=self.config.game, name=self.config.name,
                              free=self.free))
        auth = await link.receive()
        if not isinstance(auth, Auth):
            raise FrameError(f"expected auth, got {kind_of(auth)!r}")
        key, name, token, signature = auth.key, auth.name, auth.token, auth.sig
        if not name or not name.isprintable():
            raise FrameError(f"auth: a name of 1 to {MAX_NAME} printable characters")
        try:
            public = identity_key(key, "the joiner's identity")
        except CodecError as exc:
            raise FrameError(str(exc)) from exc
        if not hmac.compare_digest(token, self.token):
            raise FrameError("not invited: the token is not this table's")
        if not check_proof(public, signature, nonce, self.identity.id, token):
            raise FrameError("the proof of identity does not verify")
        stale = next((s for s in self.links if s.key == key), None)
        if stale is not None and self.peer is None:
            raise FrameError("this identity is already at the table")
        if self.peer is not None:  # the game has begun: only a seated identity comes back
            if stale is not None:  # its old link is dead but not yet noticed: replaced
                self.links.remove(stale)
                stale.out.close()
                await stale.link.aclose()
            return await self._rejoin(link, key, name)
        entries = self._entries(key, name, auth.bot, auth.bots, nonce)
        await link.send(Welcome(seat=len(self.entries), resume=False))
        if len(entries) > self.free or self.peer is not None:  # others sat meanwhile
            raise FrameError(f"the table filled up ({self.free} seats free)")
        if {e.identity for e in self.entries} & {e.identity for e in entries}:
            raise FrameError("an identity already at the table")  # sat meanwhile
        base = len(self.entries)  # now, not before the welcome: others may have sat
        seats = set(range(base, base + len(entries)))
        self.entries.extend(
            SeatEntry(e.name if i == 0 else f"{e.bot}-{base + i}", e.identity, e.bot,
                      None if e.run_by is None else base) for i, e in enumerate(entries))
        seated = _seated(link, key, name, seats)
        self.links.append(seated)
        self._notice(f"{name} ({show_id(device_id(key), 4)}) sits at seat {min(seats)}")
        self._lobby_changed()
        return seated

    def _entries(self, key: bytes, name: str, own_bot: str, bots: tuple[BotClaim, ...],
                 nonce: bytes) -> list[SeatEntry]:
        """The seats a joiner asks for (its own, its bots'), checked; not yet taken.  A
        bot's key comes with its signature of the nonce: nobody reserves another's key."""
        if own_bot and own_bot not in BOT_NAMES:
            raise FrameError(f"auth: unknown bot {own_bot!r}")
        if 1 + len(bots) > self.free:
            raise FrameError(f"the table is full ({self.free} seats free,"
                             f" {1 + len(bots)} asked for)")
        seat = len(self.entries)  # for now: the seats are numbered when taken
        entries = [SeatEntry(name, key, own_bot, seat if own_bot else None)]
        for i, bot in enumerate(bots):
            if bot.kind not in BOT_NAMES:
                raise FrameError(f"auth: bot {i} must be [kind, 32-byte key, signature], with"
                                 f" a kind of {', '.join(BOT_NAMES)}")
            try:
                proven = check_proof(identity_key(bot.key, f"bot {i}'s key"), bot.sig, nonce,
                                     self.identity.id, b"bot")
            except CodecError as exc:
                raise FrameError(str(exc)) from exc
            if not proven:
                raise FrameError(f"auth: bot {i}'s key is not proven")
            entries.append(SeatEntry(f"{bot.kind}-{seat + 1 + i}", bot.key, bot.kind, seat))
        keys = {e.identity for e in self.entries}
        if any(e.identity in keys for e in entries) or \
                len({e.identity for e in entries}) != len(entries):
            raise FrameError("an identity already at the table")
        return entries

    async def _rejoin(self, link: Link, key: bytes, name: str) -> Seated:
        assert self.peer is not None
        roster = self.peer.roster
        own = [i for i, e in enumerate(roster.seats) if e.identity == key]
        if not own:
            raise FrameError("the game has begun; this identity has no seat at it")
        seats = {own[0]} | {i for i, e in enumerate(roster.seats) if e.run_by == own[0]}
        seated = _seated(link, key, name, seats)
        await link.send(Welcome(seat=own[0], resume=True))
        await link.send(self._start_frame())
        for wire in self.peer.log:
            seated.out.send_nowait(Msg(wire=wire))
        self.links.append(seated)
        self._notice(f"{name} is back at seat {own[0]}")
        return seated

    def _start_frame(self) -> Start:
        assert self.peer is not None
        return Start(roster=self.peer.roster, settings=self.config.settings)

    def _lobby_changed(self) -> None:
        if self.peer is not None:
            return
        self._broadcast(Lobby(players=self.config.players, seats=tuple(
            LobbySeat(name=e.name, id=device_id(e.identity), bot=e.bot, run_by=e.run_by)
            for e in self.entries)))
        if self.free == 0:
            try:
                self._start()
            except CodecError as exc:  # checked on the way in: should not happen
                raise FrameError(f"the roster cannot be made: {exc}") from exc
            self._broadcast(self._start_frame())
        else:
            self._log(f"{len(self.entries)} of {self.config.players} seats taken")

    def _broadcast(self, frame: Frame, but: Seated | None = None) -> None:
        for seated in list(self.links):
            if seated is not but:
                with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
                    seated.out.send_nowait(frame)

    async def _writer(self, seated: Seated, scope: trio.CancelScope) -> None:
        try:
            async for frame in seated.out_read:
                await seated.link.send(frame)
        except LinkClosed:
            scope.cancel()  # the reader sees the same break, or is cancelled
        finally:
            seated.drained.set()

    async def _reader(self, seated: Seated) -> None:
        """Frames from a seated joiner until it leaves: :class:`FrameError` for one it
        should not send (the link is closed with the reason); returns when it closes."""
        while True:
            try:
                frame = await seated.link.receive()
            except LinkClosed:
                self._notice(f"{seated.name} left the table (seats {sorted(seated.seats)})")
                return
            if isinstance(frame, Msg):
                self._table_message(seated, frame.wire)
            elif isinstance(frame, ChatLine):
                if self.peer is None:
                    raise FrameError("chat before the game began")
                now = trio.current_time()
                seated.chats = [t for t in seated.chats if now - t < 10] + [now]
                if len(seated.chats) > MAX_CHATS:
                    raise FrameError(f"more than {MAX_CHATS} chat lines in 10 s: a flood")
                seat, text = self.chats.take(frame, self.peer.roster.keys, self.table)
                if seat not in seated.seats:
                    raise FrameError(f"chat in seat {seat}'s name")
                self._broadcast(frame, but=seated)
                self.say(f"{self.peer.roster.seats[seat].name}: {text}")
            else:
                raise FrameError(f"a {kind_of(frame)!r} frame is not expected from a joiner")

    def _table_message(self, seated: Seated, wire: bytes) -> None:
        if self.peer is None or self.driver is None:
            raise FrameError("a table message before the game began")
        try:
            env = open_envelope(wire, self.peer.roster.keys)
        except CodecError as exc:
            raise FrameError(f"a table message that does not verify: {exc}") from exc
        if env.table != self.peer.roster.table:
            raise FrameError("a message of another table")
        if env.sender not in seated.seats:
            raise FrameError(f"a message for seat {env.sender}, not one of its seats")
        if wire in seated.sent_here:
            raise FrameError(f"a replay of seat {env.sender}'s message {env.seq}")
        seated.sent_here.add(wire)
        if wire in self.peer.known:
            return  # sent again after a reconnection: already relayed
        # relayed at once (the next seat is waiting for it), then judged here: a link
        # whose message the host's own sessions refuse is closed, so it gets no further
        self._broadcast(Msg(wire=wire), but=seated)
        kept, refused = self.peer.receive(wire)
        if kept:
            pass
        elif any(r.rejection.rule not in LATE for r in refused):
            reason = next(r.rejection for r in refused if r.rejection.rule not in LATE)
            raise FrameError(f"seat {env.sender}'s message {env.seq} is refused:"
                             f" {reason.rule}: {reason.reason}")
        else:
            seated.late += 1
            if seated.late > MAX_LATE:
                raise FrameError(f"{seated.late} messages refused as late: a flood")
        self.driver.post("poke")

    async def _relay_own(self, wires: list[bytes]) -> None:
        for wire in wires:
            self._broadcast(Msg(wire=wire))

    async def chat(self, text: str) -> None:
        """Say ``text`` to the table (signed by this peer's identity, seat 0)."""
        self._broadcast(self.chats.frame(self.identity.key, self.table, 0, text))


LATE = frozenset({"silent", "turn"})
"""Refusals an honest peer can earn by arriving late (a claim of silence, or another
message, got in first): the message is not relayed, the link stays (up to MAX_LATE)."""
MAX_LATE = 50
MAX_CHATS = 10
"""Chat lines a link may send in 10 seconds."""


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _seated(link: Link, key: bytes, name: str, seats: set[int]) -> Seated:
    out, out_read = trio.open_memory_channel[Frame](math.inf)
    return Seated(link, key, name, seats, out, out_read)


def describe_roster(roster: Roster) -> str:
    parts = []
    for seat, entry in enumerate(roster.seats):
        who = f"{entry.bot} bot run by seat {entry.run_by}" if entry.bot else \
            show_id(device_id(entry.identity), 4)
        parts.append(f"{seat} {entry.name} ({who})")
    return "; ".join(parts)
