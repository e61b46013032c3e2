"""The roster: who sits where, with which identity, and the game every seat signs.

Before the first deal every seat signs the roster's hash (a ``sign`` message);
the hash is shown as a short **safety number** that the players compare
aloud, because a relay could otherwise show different identities to
different peers.  The roster has no sealing keys: each deal's sealing keys
are fresh and announced, signed, in that deal's ``hello`` (a key that outlived
its deal would have to stay secret after the audit reveals the deal's).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pcards.games import GAMES, Game
from p2pcards.table.codec import (
    KEY_BYTES,
    TABLE_BYTES,
    CodecError,
    identity_key,
    pack,
    unpack,
)
from p2pcards.table.kinds import printable

ROSTER_DOMAIN = b"p2pcards/roster/v1\x00"
MAX_NAME = 32
MAX_ROSTER = 3 * 1024
"""The most bytes of an encoded roster, checked before it is decoded: about twice the
largest a table makes (Nullern's seven seats, every name 32 characters of four bytes
each, every seat but the host's a bot of the longest kind: 1,311 bytes)."""
LOCK_DECK = "lock"
"""Today's commutative-lock deck, audited after the deal (docs/mental-poker.md)."""
PROVED_DECK = "proved"
"""The deck whose every step carries a proof checked on arrival (docs/proved-deck.md),
each shuffle's proof too: a cheat's verdict comes at its shuffle (the rule of link
protocol version 4; what a roster recorded by an earlier build names)."""
PIPELINED_DECK = "proved-pipelined"
"""The proved deck whose shuffle proofs a seat may check in idle time, by the end of
their round, the verdict of a bad one coming there (docs/protocol.md, "Pipelined
shuffles"): what a host records for ``--deck proved`` when every seat's peer speaks
link protocol version 5 (:func:`table_deck`)."""
AHEAD_DECK = "proved-ahead"
"""The pipelined proved deck that shuffles the next deal's deck while this one is
played, each seat's step of it carried on its moves (docs/protocol.md, "Shuffle
ahead"): what a host records for ``--deck proved`` when every seat's peer speaks link
protocol version 6 (:func:`table_deck`)."""
AGREED_DECK = "proved-ahead-2"
"""The shuffle-ahead rule whose seats send their shares of the next deal on the
agreement that ends this one, and whose deals have no ``opened`` reports
(docs/protocol.md, "Shares on the agreement"): what a host records for ``--deck
proved`` when every seat's peer speaks link protocol version 7 (:func:`table_deck`)."""
DECKS = (LOCK_DECK, PROVED_DECK, PIPELINED_DECK, AHEAD_DECK, AGREED_DECK)
PROVED_DECKS = frozenset({PROVED_DECK, PIPELINED_DECK, AHEAD_DECK, AGREED_DECK})
"""The four rules of the proved deck: the same proofs, checked by the same seats."""
PROVED_RULES = (PROVED_DECK, PIPELINED_DECK, AHEAD_DECK, AGREED_DECK)
"""The proved deck's rules, oldest first: each needs a later link version than the one
before it (:func:`table_deck`)."""
DEFAULT_DECK = PROVED_DECK
"""The deck a new table is asked for (``--deck lock`` picks the lock deck, for peers of an
earlier build); the roster names the latest rule of the proved deck every peer knows
(:func:`table_deck`)."""
_PROVED_LINE = "proved (cheating refused at once; unplayed cards stay secret)"
DECK_LINES = {
    LOCK_DECK: "lock (cheating found by the audit after each deal, which shows every card)",
    PROVED_DECK: _PROVED_LINE,
    PIPELINED_DECK: _PROVED_LINE,
    AHEAD_DECK: _PROVED_LINE,
    AGREED_DECK: _PROVED_LINE,
}
"""What a person is told of each deck, after ``deck:`` (the roster screen, ``who``):
one line for the four rules of the proved deck, which differ only in when a cheat's
verdict comes and when the next deal's deck is shuffled."""


def table_deck(chosen: str, known: frozenset[str] | set[str]) -> str:
    """The deck a roster names for the ``chosen`` one (``--deck``): for the proved deck,
    its latest rule of those every seat's peer knows (``known``), else ``chosen``."""
    if chosen != PROVED_DECK:
        return chosen
    return next((rule for rule in reversed(PROVED_RULES) if rule in known), chosen)


def deck_choice(deck: str) -> str:
    """The ``--deck`` choice a roster's ``deck`` comes from (:func:`table_deck`)."""
    return PROVED_DECK if deck in PROVED_DECKS else deck


def describe_deck(deck: str) -> str:
    """The one line a person reads about a table's deck: ``deck: proved (...)``."""
    return f"deck: {DECK_LINES.get(deck, printable(deck, 40))}"


@dataclass(frozen=True, slots=True)
class SeatEntry:
    """One seat: a display name, the Ed25519 key that signs for it, and for a bot its
    kind (``ismcts``, ``heuristic``...) and the seat whose peer runs it."""

    name: str
    identity: bytes
    bot: str = ""
    run_by: int | None = None

    def to_wire(self) -> list[Any]:
        return [self.name, self.identity, self.bot, self.run_by]


@dataclass(frozen=True, slots=True)
class Roster:
    table: bytes
    game: str
    options: Mapping[str, int]
    seats: tuple[SeatEntry, ...]
    deck: str = LOCK_DECK
    """Which deck every deal of the table uses: :data:`LOCK_DECK`, :data:`PROVED_DECK` or
    :data:`PIPELINED_DECK` (the proved deck, shuffle proofs checked by a round's end).
    On the wire only when it is not the lock deck, so that an old roster's hash is unchanged
    (hence the lock deck here, the meaning of a roster that names none; a new table
    names :data:`DEFAULT_DECK`: :func:`make_roster`, the host's lobby)."""
    keys: list[Ed25519PublicKey] = field(compare=False, repr=False, default_factory=list)

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise CodecError(f"roster: {problem}")
        self.keys.extend(identity_key(s.identity, f"roster seat {i} identity")
                         for i, s in enumerate(self.seats))

    def _problem(self) -> str | None:
        if not isinstance(self.table, bytes) or len(self.table) != TABLE_BYTES:
            return f"the table id must be {TABLE_BYTES} bytes"
        if self.deck not in DECKS:
            return f"unknown deck {printable(self.deck, 40)!r} (expected {', '.join(DECKS)})"
        game = GAMES.get(self.game)
        if game is None:
            return f"unknown game {self.game!r}"
        players = len(self.seats)
        if players not in game.player_counts:
            return f"{game.title} is not played by {players}"
        try:
            resolved = game.resolve_options(dict(self.options))
        except ValueError as error:
            return str(error)
        if dict(self.options) != game.non_default(resolved):
            return "options must list exactly the values that differ from the defaults"
        identities = [s.identity for s in self.seats]
        for i, seat in enumerate(self.seats):
            if not isinstance(seat.name, str) or not 0 < len(seat.name) <= MAX_NAME \
                    or not seat.name.isprintable():
                return f"seat {i}: a name of 1 to {MAX_NAME} printable characters"
            if not isinstance(seat.identity, bytes) or len(seat.identity) != KEY_BYTES:
                return f"seat {i}: the identity must be {KEY_BYTES} bytes"
            if not isinstance(seat.bot, str) or len(seat.bot) > 16:
                return f"seat {i}: the bot kind must be a short string"
            if seat.run_by is not None and (not isinstance(seat.run_by, int)
                                            or isinstance(seat.run_by, bool)):
                return f"seat {i}: run_by must be a seat number"
            if seat.bot and (seat.run_by is None or not 0 <= seat.run_by < players):
                return f"seat {i}: a bot names the seat whose peer runs it"
            if not seat.bot and seat.run_by is not None:
                return f"seat {i}: only a bot is run by another seat"
        if len(set(identities)) != len(identities):
            return "two seats with one identity"
        return None

    @property
    def players(self) -> int:
        return len(self.seats)

    @property
    def rules(self) -> Game:
        return GAMES[self.game]

    def resolved_options(self) -> dict[str, int]:
        return self.rules.resolve_options(dict(self.options))

    def process_of(self, seat: int) -> int:
        """The seat whose peer runs ``seat``: itself, or for a bot the seat it names
        (followed through bots run by bots).  Seats of one peer fall silent together."""
        for _ in range(self.players):
            entry = self.seats[seat]
            if not entry.bot or entry.run_by is None:
                return seat
            seat = entry.run_by
        return seat

    def others(self, seat: int) -> set[int]:
        """The seats not run by ``seat``'s peer: those whose word counts against it."""
        mine = self.process_of(seat)
        return {s for s in range(self.players) if self.process_of(s) != mine}

    def to_wire(self) -> list[Any]:
        wire = [self.table, self.game, dict(sorted(self.options.items())),
                [s.to_wire() for s in self.seats]]
        return wire if self.deck == LOCK_DECK else [*wire, self.deck]

    def encode(self) -> bytes:
        return pack(self.to_wire())

    def digest(self) -> bytes:
        return hashlib.sha256(ROSTER_DOMAIN + self.encode()).digest()

    def safety_number(self) -> str:
        """Twenty digits in four groups, from the roster hash, to compare aloud."""
        number = int.from_bytes(self.digest()[:10], "big") % 10**20
        digits = f"{number:020d}"
        return " ".join(digits[i:i + 5] for i in range(0, 20, 5))


def decode_roster(data: bytes) -> Roster:
    raw = unpack(data, "roster", MAX_ROSTER)
    if not isinstance(raw, list) or len(raw) not in (4, 5):
        raise CodecError("roster: expected [table, game, options, seats] or [table, game,"
                         " options, seats, deck]")
    table, game, options, seats = raw[:4]
    deck = raw[4] if len(raw) == 5 else LOCK_DECK
    if len(raw) == 5 and deck == LOCK_DECK:
        raise CodecError("roster: the lock deck is named by leaving the deck out")
    if not isinstance(deck, str):
        raise CodecError("roster: the deck must be a name")
    if not isinstance(options, dict) or not isinstance(seats, list) \
            or not isinstance(game, str):
        raise CodecError("roster: expected a game name, an options map and a seat list")
    entries = []
    for i, seat in enumerate(seats):
        if not isinstance(seat, list) or len(seat) != 4:
            raise CodecError(f"roster seat {i}: expected [name, identity, bot, run_by]")
        entries.append(SeatEntry(*seat))
    return Roster(table, game, options, tuple(entries), deck)


def make_roster(table: bytes, game: str, identities: Sequence[bytes], *,
                names: Sequence[str] | None = None, bots: Sequence[str] | None = None,
                options: Mapping[str, int] | None = None,
                run_by: Mapping[int, int] | None = None, deck: str = DEFAULT_DECK) -> Roster:
    """A roster for ``identities`` (seat order); a seat with a bot is run by the peer
    of the seat ``run_by`` names for it, else by seat 0's.  A new table deals with the
    proved deck unless ``deck`` says otherwise."""
    names = list(names or [f"seat{i}" for i in range(len(identities))])
    bots = list(bots or [""] * len(identities))
    runners = run_by or {}
    seats = tuple(SeatEntry(names[i], identities[i], bots[i],
                            runners.get(i, 0) if bots[i] else None)
                  for i in range(len(identities)))
    rules = GAMES[game]
    return Roster(table, game, rules.non_default(rules.resolve_options(dict(options or {}))),
                  seats, deck)
