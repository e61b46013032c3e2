"""The host's lobby: who may sit, where, and the roster once every seat is taken.

No sockets, no Trio, no clock: the host's relay (:mod:`p2pcards.net.host`)
hands it what arrives and does what it says.

A joiner's ``auth`` (:class:`~p2pcards.net.frames.Auth`) is admitted when its
name is printable, its key is a key, it carries the table's token and its
proof of identity verifies (:func:`p2pcards.net.invite.check_proof`).  Before
the game, it then asks for seats: its own and one per bot it brings (each
bot's key signs the nonce too, so nobody reserves another's key), checked
against the free seats and the identities already seated.  The seats are
numbered when they are taken (:meth:`Lobby.take`), not when asked for, since
others may sit in between; a joiner that leaves frees its seats and the
seats after them move up.  Once the game has begun, only an identity of the
roster comes back, to its seats (:meth:`Lobby.admit` says which).

A seat belongs to a joiner when it holds the joiner's identity, or its bot
is run by that seat: :func:`seats_of`.

The roster names the deck asked for, but for the proved deck's rule: the latest
one every joiner seated knows (the host's own seats and bots are this build's):
``proved-ahead-2`` (the next deal's shares on the agreement) when every one spoke
link protocol version 7, ``proved-ahead`` (the next deal shuffled ahead) at 6,
``proved-pipelined`` at 5 or above, else plain ``proved`` (each shuffle proof
checked on arrival), so that peers of two builds never split on a cheat's verdict
or on what is due (docs/protocol.md, "Versions").
"""

from __future__ import annotations

import hmac
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from p2pcards.bots import BOT_NAMES
from p2pcards.games import GAMES
from p2pcards.net.frames import (
    VERSIONS,
    Auth,
    FrameError,
    LobbyFrame,
    LobbySeat,
)
from p2pcards.net.identity import device_id, show_id
from p2pcards.net.invite import check_proof
from p2pcards.net.links import known_rules
from p2pcards.table.codec import CodecError, identity_key
from p2pcards.table.kinds import printable
from p2pcards.table.roster import DEFAULT_DECK, MAX_NAME, Roster, SeatEntry, table_deck

BOT_NAMES_GIVEN = ("ben", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo", "kit", "lu",
                   "max", "ned")
"""The names the lobby gives bots (a seat's kind of bot is shown beside its name), the
first not taken by another seat; past these, ``KIND-SEAT``."""
BOT_PROOF = b"bot"
"""What a bot's key signs with the nonce, in place of the token."""


@dataclass(frozen=True, slots=True)
class Request:
    """A joiner's seats, checked but not yet taken: ``entries`` are numbered from
    ``seat`` (the first free seat when it asked); :meth:`Lobby.take` numbers them
    again when it takes them."""

    key: bytes
    name: str
    seat: int
    entries: tuple[SeatEntry, ...]


@dataclass(frozen=True, slots=True)
class Rejoin:
    """An identity of the roster, back once the game has begun."""

    key: bytes
    name: str
    seat: int
    seats: frozenset[int]
    bot: str = ""
    """The bot its peer plays its own seat with in this run ("" : a person)."""


@dataclass(frozen=True, slots=True)
class WatchRequest:
    """A proven identity with no seat that asks to watch."""

    key: bytes
    name: str


def own_seat(entries: Sequence[SeatEntry], key: bytes) -> int | None:
    """The seat of identity ``key`` (None: it has none)."""
    return next((i for i, e in enumerate(entries) if e.identity == key), None)


def seats_of(entries: Sequence[SeatEntry], key: bytes) -> frozenset[int]:
    """The seats the peer of identity ``key`` speaks for: its own, and its bots'."""
    own = own_seat(entries, key)
    if own is None:
        return frozenset()
    return frozenset({own} | {i for i, e in enumerate(entries) if e.run_by == own})


class Lobby:
    """The seats of one table: taken, freed and, once all are taken, its roster."""

    def __init__(self, table: bytes, game: str, options: Mapping[str, int], players: int, *,
                 host_id: bytes, token: bytes, deck: str = DEFAULT_DECK):
        self.table = table
        self.game = game
        self.options = dict(options)
        self.players = players
        self.deck = deck
        """The deck asked for; the roster names it, or for ``proved`` the rule every
        seated joiner's link knows (:meth:`close`; every joiner learns it there, and
        signs it)."""
        self.host_id = host_id
        """The host's device id: what every proof of identity signs."""
        self.token = token
        self.entries: list[SeatEntry] = []
        self.joined: dict[bytes, str] = {}
        """The joiners seated before the game (identity -> name)."""
        self.versions: dict[bytes, int] = {}
        """The link version of each joiner seated before the game (identity -> version):
        its seats' and its bots'."""
        self.roster: Roster | None = None
        """The roster, once every seat is taken (then the lobby is closed)."""

    @classmethod
    def resumed(cls, roster: Roster, host_id: bytes, token: bytes) -> Lobby:
        """The lobby of a table whose game has begun (a host restarted from its
        journal)."""
        lobby = cls(roster.table, roster.game, roster.options, roster.players, host_id=host_id,
                    token=token, deck=roster.deck)
        lobby.entries = list(roster.seats)
        lobby.roster = roster
        return lobby

    # ============================================================ the host's seats

    def sit(self, name: str, identity: bytes, bot: str = "") -> int:
        """The host's own seat (played by a person, or by its ``bot``): the next one."""
        seat = len(self.entries)
        self.entries.append(SeatEntry(name, identity, bot, seat if bot else None))
        return seat

    def add_bot(self, kind: str, identity: bytes, run_by: int = 0) -> int:
        """A bot the host runs: the next seat."""
        seat = len(self.entries)
        self.entries.append(SeatEntry(self._bot_name(kind, seat), identity, kind, run_by))
        return seat

    def _bot_name(self, kind: str, seat: int, also: Sequence[str] = ()) -> str:
        """A bot's name: the first of :data:`BOT_NAMES_GIVEN` no seat has (nor ``also``),
        else its kind and seat."""
        taken = {same_name(e.name) for e in self.entries} | {same_name(n) for n in also}
        return next((n for n in BOT_NAMES_GIVEN if n not in taken), f"{kind}-{seat}")

    @property
    def free(self) -> int:
        return self.players - len(self.entries)

    @property
    def closed(self) -> bool:
        return self.roster is not None

    # ============================================================ joiners

    def admit(self, auth: Auth, nonce: bytes) -> Request | Rejoin:
        """What a joiner who answered the host's ``nonce`` with ``auth`` may have:
        seats to take (before the game), or its seats again (after); FrameError with
        the reason if nothing."""
        self._proven(auth, nonce)
        if self.roster is not None:  # the game has begun: only a seated identity comes back
            own = own_seat(self.roster.seats, auth.key)
            if own is None:
                raise FrameError("the game has begun, and this install (its identity) has no"
                                 " seat at it: join --watch to watch it")
            return Rejoin(auth.key, auth.name, own, seats_of(self.roster.seats, auth.key),
                          auth.bot)
        if auth.key in self.joined:
            raise FrameError("this identity is already at the table")
        return Request(auth.key, auth.name, len(self.entries), self._entries(auth, nonce))

    def admit_watcher(self, auth: Auth, nonce: bytes) -> WatchRequest:
        """A joiner who asks to watch (``auth.watch``), proven as a joiner is; FrameError
        if it holds a seat (or asks for bots).  How many may watch, the host's
        :class:`~p2pcards.net.watchers.Watchers` says."""
        self._proven(auth, nonce)
        if auth.bot or auth.bots:
            raise FrameError("a watcher holds no seat: it runs no bot (join --watch without"
                             " --bot or --bots)")
        if any(e.identity == auth.key for e in self.entries):
            raise FrameError("this identity has a seat at this table: it plays, it does not"
                             " watch (join without --watch)")
        return WatchRequest(auth.key, auth.name)

    def _proven(self, auth: Auth, nonce: bytes) -> None:
        """Check that ``auth`` is an invited identity's, proven (FrameError if not)."""
        if not auth.name or not auth.name.isprintable():
            raise FrameError(f"auth: a name of 1 to {MAX_NAME} printable characters")
        try:
            public = identity_key(auth.key, "the joiner's identity")
        except CodecError as exc:
            raise FrameError(str(exc)) from exc
        if not hmac.compare_digest(auth.token, self.token):
            raise FrameError("not invited: the token is not this table's")
        if not check_proof(public, auth.sig, nonce, self.host_id, auth.token):
            raise FrameError("the proof of identity does not verify")

    def _entries(self, auth: Auth, nonce: bytes) -> tuple[SeatEntry, ...]:
        """The seats a joiner asks for (its own, its bots'), checked; not yet taken."""
        if auth.bot and auth.bot not in BOT_NAMES:
            raise FrameError(f"auth: unknown bot {auth.bot!r}")
        if 1 + len(auth.bots) > self.free:
            raise FrameError(f"the table is full ({self.free} seats free,"
                             f" {1 + len(auth.bots)} asked for)")
        seat = len(self.entries)  # for now: the seats are numbered when taken
        entries = [SeatEntry(auth.name, auth.key, auth.bot, seat if auth.bot else None)]
        for i, bot in enumerate(auth.bots):
            if bot.kind not in BOT_NAMES:
                raise FrameError(f"auth: bot {i} must be [kind, 32-byte key, signature], with"
                                 f" a kind of {', '.join(BOT_NAMES)}")
            try:
                proven = check_proof(identity_key(bot.key, f"bot {i}'s key"), bot.sig, nonce,
                                     self.host_id, BOT_PROOF)
            except CodecError as exc:
                raise FrameError(str(exc)) from exc
            if not proven:
                raise FrameError(f"auth: bot {i}'s key is not proven")
            entries.append(SeatEntry(bot.kind, bot.key, bot.kind, seat))  # (named when taken)
        keys = {e.identity for e in self.entries}
        if any(e.identity in keys for e in entries) or \
                len({e.identity for e in entries}) != len(entries):
            raise FrameError("an identity already at the table")
        self._check_name(auth.name)
        return tuple(entries)

    def _check_name(self, name: str) -> None:
        """Two seats are never called alike (a name is compared without case, width
        or accents of composition): a second "ana" could pass for the first.  A bot's
        name gives way to a person's (:meth:`take` names the bot anew)."""
        taken = {same_name(e.name): i for i, e in enumerate(self.entries) if not e.bot
                 or e.run_by == i}
        if same_name(name) in taken:
            raise FrameError(f"the name {name!r} is taken (seat {taken[same_name(name)]}):"
                             " join under another (join --name)")

    def take(self, request: Request, version: int = VERSIONS[1]) -> frozenset[int]:
        """The seats of an admitted request, whose link speaks ``version``, numbered now
        (others may have sat since it was made); FrameError if they are no longer free."""
        entries = request.entries
        if len(entries) > self.free or self.roster is not None:  # others sat meanwhile
            raise FrameError(f"the table filled up ({self.free} seats free)")
        if {e.identity for e in self.entries} & {e.identity for e in entries}:
            raise FrameError("an identity already at the table")  # sat meanwhile
        base = len(self.entries)
        self._check_name(entries[0].name)  # (another may have sat under it meanwhile)
        self._rename_bots(entries[0].name)
        seated = [replace(entries[0], run_by=None if entries[0].run_by is None else base)]
        for i, e in enumerate(entries[1:], 1):
            seated.append(SeatEntry(self._bot_name(e.bot, base + i, [s.name for s in seated]),
                                    e.identity, e.bot, base))
        self.entries.extend(seated)
        self.joined[request.key] = request.name
        self.versions[request.key] = version
        return frozenset(range(base, base + len(entries)))

    def _rename_bots(self, name: str) -> None:
        """A person sits under ``name``: a bot called alike takes another name."""
        for i, entry in enumerate(self.entries):
            if entry.bot and entry.run_by != i and same_name(entry.name) == same_name(name):
                self.entries[i] = SeatEntry(self._bot_name(entry.bot, i, [name]),
                                            entry.identity, entry.bot, entry.run_by)

    def leave(self, key: bytes) -> bool:
        """A joiner left: before the game its seats (and its bots') are free again and
        the seats after them move up.  Whether anything changed."""
        if self.roster is not None or self.joined.pop(key, None) is None:
            return False
        self.versions.pop(key, None)
        gone = seats_of(self.entries, key)
        keep = [i for i in range(len(self.entries)) if i not in gone]
        moved = {old: new for new, old in enumerate(keep)}
        entries = []
        for old in keep:
            entry = self.entries[old]
            run_by = None if entry.run_by is None else moved[entry.run_by]
            entries.append(SeatEntry(entry.name, entry.identity, entry.bot, run_by))
        self.entries = entries
        return True

    def known(self) -> frozenset[str]:
        """The later rules of the proved deck every seated joiner's link knows."""
        return known_rules(self.versions.values())

    def next_game(self, roster: Roster) -> None:
        """The table plays another game (the same seats): its roster is ``roster``."""
        self.table, self.game, self.roster = roster.table, roster.game, roster
        self.options = dict(roster.options)
        self.entries = list(roster.seats)

    def seats(self, key: bytes) -> frozenset[int]:
        """The seats the peer of identity ``key`` holds now."""
        return seats_of(self.entries, key)

    # ============================================================ what it shows

    def frame(self) -> LobbyFrame:
        """The seats taken so far, as every joiner is shown them."""
        return LobbyFrame(players=self.players, seats=tuple(
            LobbySeat(name=e.name, id=device_id(e.identity), bot=e.bot, run_by=e.run_by)
            for e in self.entries))

    def close(self) -> Roster:
        """The roster of the seats taken (every one of them: :attr:`free` is 0); the
        lobby takes no one after this.  CodecError if it cannot be made."""
        rules = GAMES[self.game]
        options = rules.non_default(rules.resolve_options(dict(self.options)))
        self.roster = Roster(self.table, self.game, options, tuple(self.entries),
                             table_deck(self.deck, self.known()))
        return self.roster


def arrived(frame: LobbyFrame) -> str:
    """Who has sat so far, as a lobby frame shows it (``who`` before the table is
    seated): its names made safe, each bot marked as one."""
    names = [printable(s.name, MAX_NAME) + (f" ({printable(s.bot, 16)} bot)" if s.bot and
                                            s.run_by != i else "")
             for i, s in enumerate(frame.seats)]
    free = frame.players - len(frame.seats)
    return (f"the table is not seated yet: {len(frame.seats)} of {frame.players} seats"
            f" taken ({', '.join(names) or 'none'}); waiting for {free} more")


def describe_roster(roster: Roster) -> str:
    parts = []
    for seat, entry in enumerate(roster.seats):
        who = f"{printable(entry.bot, 16)} bot run by seat {entry.run_by}" if entry.bot else \
            show_id(device_id(entry.identity), 4)
        parts.append(f"{seat} {entry.name} ({who})")
    return "; ".join(parts)


def same_name(name: str) -> str:
    """A name as compared with the others at the table: Unicode-normalised (NFKC),
    without case, inner spaces folded."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())
