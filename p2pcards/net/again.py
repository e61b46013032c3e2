"""Another game with the same players: the agreement between two games, sans I/O.

When a networked game is over, each peer may say, in a signed ``again`` frame
(:class:`~p2pcards.net.frames.Again`), that it agrees to another game, or that
it leaves.  The host orders these words and relays each one it takes to every
link, the sender's included; every peer (the host too) feeds them, in that
order, to its own :class:`Agreement`, so that every peer knows the same
proposal and the same consents, and checks each signature itself.

The rules (docs/protocol.md, "Another game"):

- The peers that must agree are one seat per peer of the finished game's first
  roster (:func:`peer_seats`): a person's seat, or a headless peer's own; the
  bots a peer runs agree through it.
- A proposal is numbered: the first one after a game is round 1, each next one
  the round after.  A word naming a round above the current one (at most
  :data:`MAX_ROUNDS`) is a new proposal, which replaces the one before (its
  consents lapse; the proposer's word counts as its own consent): a peer whose
  link came back takes the proposal that stands, whatever its round.  A word naming the
  current round and the current proposal's game and options is a consent.  Any
  other word crossed a newer proposal on its way: it is dropped (``stale``), and
  its sender, who is shown the newer proposal, may agree to it or propose again.
- A word with the game "" leaves: no more games, for everyone.
- A game must fit the table: the same seats, so the seat count must be one the
  game is played by, and its options must be the game's.  A word that names a
  game that does not fit is a fault of its sender (an honest prompt refuses it
  before signing).
- Each peer may say at most :data:`MAX_WORDS` words between two games, and a
  series has at most :data:`MAX_GAMES` games: a peer cannot make the table
  start games without end, and the host starts one only once every peer has
  signed its consent to the same proposal.

The next game's roster (:meth:`Agreement.next_roster`) is the finished game's
first roster with a fresh table id and the agreed game and options: the same
names, identities, seats, bots and deck.  A peer takes it only if it is what
every peer agreed to and its table id is new to the series
(:meth:`Agreement.check_start`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.games import GAMES, OptionError
from p2pcards.net.frames import Again, FrameError
from p2pcards.table.codec import pack
from p2pcards.table.roster import Roster

AGAIN_DOMAIN = b"p2pcards/again/v1\x00"
MAX_WORDS = 20
"""Words (proposals, consents) one peer may say between two games: a person changes
their mind a few times; more is a flood, and closes its link."""
MAX_ROUNDS = MAX_WORDS * 8
"""The highest round a proposal may name: every peer (at most eight) proposing every
word it may say."""
MAX_GAMES = 99
"""Games one series may play (the host refuses a proposal past it)."""
LEAVE = ""
"""The game of a word that leaves the table: no more games."""


def signed_bytes(table: bytes, seat: int, round: int, game: str,
                 options: Mapping[str, int]) -> bytes:
    """What an ``again`` frame's signature covers."""
    return AGAIN_DOMAIN + pack([table, seat, round, game, dict(options)])


def sign(key: Ed25519PrivateKey, table: bytes, seat: int, *, round: int, game: str,
         options: Mapping[str, int]) -> Again:
    """Seat ``seat``'s word after the game of ``table`` (``game`` "": it leaves)."""
    items = tuple(sorted(options.items()))
    return Again(table=table, seat=seat, round=round, game=game, options=items,
                 sig=key.sign(signed_bytes(table, seat, round, game, dict(items))))


def peer_seats(roster: Roster) -> list[int]:
    """The seats that agree for their peers: each peer's own (not the bots it runs)."""
    return [seat for seat in range(roster.players) if roster.process_of(seat) == seat]


def fits(game: str, options: Mapping[str, int], players: int) -> str | None:
    """Why ``game`` with ``options`` cannot be played by this table's ``players`` seats
    (None: it can)."""
    rules = GAMES.get(game)
    if rules is None:
        return f"there is no game {game!r} (games: {', '.join(sorted(GAMES))})"
    if players not in rules.player_counts:
        counts = ", ".join(str(n) for n in rules.player_counts)
        seats = "seat" if counts == "1" else "seats"
        return (f"{rules.title} needs {counts} {seats}; this table has {players}, and"
                " another game keeps the same players")
    try:
        resolved = rules.resolve_options(dict(options))
    except OptionError as exc:
        return str(exc)
    if rules.non_default(resolved) != dict(options):
        return "name only the options that differ from the game's defaults"
    return None


def describe(game: str, options: Mapping[str, int]) -> str:
    """A game and its options as the screen says them: ``Pasur (target=30)``."""
    title = GAMES[game].title if game in GAMES else game
    given = ", ".join(f"{k}={v}" for k, v in sorted(options.items()))
    return f"{title} ({given})" if given else title


@dataclass(frozen=True, slots=True)
class Proposal:
    round: int
    game: str
    options: tuple[tuple[str, int], ...]
    by: int
    """The seat that proposed it."""


@dataclass
class Agreement:
    """What the peers said since the game of ``roster`` (its first roster) ended.
    ``played``: the games of the series so far, this one included."""

    roster: Roster
    played: int = 1
    round: int = 0
    proposal: Proposal | None = None
    agreed: dict[int, Again] = field(default_factory=dict)
    """Each seat's consent to the current proposal."""
    left: int | None = None
    """The seat that left (then no more games)."""
    words: dict[int, int] = field(default_factory=dict)
    """Words each seat said (bounded by MAX_WORDS)."""

    @property
    def table(self) -> bytes:
        return self.roster.table

    @property
    def peers(self) -> list[int]:
        return peer_seats(self.roster)

    @property
    def complete(self) -> bool:
        """Every peer agreed to the current proposal (and nobody left)."""
        return self.left is None and self.proposal is not None and \
            set(self.agreed) == set(self.peers)

    @property
    def closed(self) -> bool:
        return self.left is not None or self.complete

    def frames(self) -> list[Again]:
        """The words that stand: the current proposal's consents, the proposer's first
        (what a peer that comes back is sent)."""
        if self.proposal is None:
            return []
        by = self.proposal.by
        return [self.agreed[by], *(f for s, f in sorted(self.agreed.items()) if s != by)]

    def check(self, frame: Again) -> None:
        """FrameError if ``frame`` is not a word this table's seat may say: another
        table's, a seat that is not a peer's, a bad signature, a game that does not fit,
        one word too many, a series at its end."""
        if frame.table != self.table:
            raise FrameError("again: a word about another table's game")
        if frame.seat not in self.peers:
            raise FrameError(f"again: seat {frame.seat} does not speak for a peer")
        options = dict(frame.options)
        try:
            self.roster.keys[frame.seat].verify(
                frame.sig, signed_bytes(frame.table, frame.seat, frame.round, frame.game,
                                        options))
        except InvalidSignature:
            raise FrameError(f"again: seat {frame.seat}'s word with a bad signature"
                             ) from None
        if frame.game != LEAVE:
            problem = fits(frame.game, options, self.roster.players)
            if problem:
                raise FrameError(f"again: {problem}")
            if self.played >= MAX_GAMES:
                raise FrameError(f"again: this table has played {MAX_GAMES} games, the most"
                                 " one invite plays")
        if self.words.get(frame.seat, 0) >= MAX_WORDS:
            raise FrameError(f"again: more than {MAX_WORDS} words between two games: a"
                             " flood")

    def take(self, frame: Again) -> str:
        """Take a word, checked (:meth:`check`): ``"proposal"``, ``"consent"``,
        ``"leave"``, or ``"stale"`` (it changes nothing: it crossed a newer proposal,
        repeats a consent, or comes after the agreement closed); FrameError if it
        may not be said."""
        self.check(frame)
        self.words[frame.seat] = self.words.get(frame.seat, 0) + 1
        if self.closed:
            return "stale"
        if frame.game == LEAVE:
            self.left = frame.seat
            return "leave"
        if frame.round > MAX_ROUNDS:
            raise FrameError(f"again: round {frame.round}, past the last ({MAX_ROUNDS})")
        if self.round < frame.round <= MAX_ROUNDS:
            self.round = frame.round
            self.proposal = Proposal(frame.round, frame.game, frame.options, frame.seat)
            self.agreed = {frame.seat: frame}
            return "proposal"
        proposal = self.proposal
        if proposal is not None and frame.round == proposal.round and \
                (frame.game, frame.options) == (proposal.game, proposal.options) and \
                frame.seat not in self.agreed:
            self.agreed[frame.seat] = frame
            return "consent"
        return "stale"

    def word(self, key: Ed25519PrivateKey, seat: int, game: str | None,
             options: Mapping[str, int] | None) -> Again:
        """Seat ``seat``'s next word, signed.  With neither a game nor options: its
        consent to the proposal as it stands, or, with none, a proposal of the finished
        game and its options.  Else a proposal of ``game`` (None: the finished game)
        with ``options`` (None: the finished game's if it is the same game, else the
        defaults), or a consent if that is the proposal.  :data:`LEAVE` leaves.
        ValueError with the reason if the game does not fit the table."""
        if game == LEAVE:
            return sign(key, self.table, seat, round=0, game=LEAVE, options={})
        proposal = self.proposal
        if game is None and options is None and proposal is not None:
            return sign(key, self.table, seat, round=self.round, game=proposal.game,
                        options=dict(proposal.options))
        game = game or self.roster.game
        if options is None:
            options = dict(self.roster.options) if game == self.roster.game else {}
        elif game in GAMES:
            rules = GAMES[game]
            try:
                options = rules.non_default(rules.resolve_options(dict(options)))
            except OptionError as exc:
                raise ValueError(str(exc)) from None
        problem = fits(game, options, self.roster.players)
        if problem:
            raise ValueError(problem)
        if self.played >= MAX_GAMES:
            raise ValueError(f"this table has played {MAX_GAMES} games, the most one"
                             " invite plays")
        if proposal is not None and (proposal.game, proposal.options) == \
                (game, tuple(sorted(options.items()))):
            return sign(key, self.table, seat, round=self.round, game=game, options=options)
        return sign(key, self.table, seat, round=self.round + 1, game=game,
                    options=options)

    def next_roster(self, table: bytes) -> Roster:
        """The agreed game's roster: the same seats (names, identities, bots, who runs
        them) and deck as the finished game's first roster, under table id ``table``."""
        assert self.complete and self.proposal is not None
        return Roster(table, self.proposal.game, dict(self.proposal.options),
                      self.roster.seats, self.roster.deck)

    def check_start(self, roster: Roster, tables: Collection[bytes]) -> str | None:
        """Why the roster of a new game is not the one every peer agreed to (None: it
        is); ``tables``: the table ids the series has used."""
        if not self.complete or self.proposal is None:
            return "a new game that not every player has agreed to"
        if roster.table in tables or roster.table == self.table:
            return "a new game under a table id this table has used before"
        expected = self.next_roster(roster.table)
        if (roster.game, dict(roster.options)) != (expected.game, dict(expected.options)):
            return (f"a new game of {describe(roster.game, roster.options)}, not the"
                    f" {describe(expected.game, expected.options)} agreed to")
        if roster.seats != expected.seats or roster.deck != expected.deck:
            return "a new game whose seats or deck are not the last game's"
        return None


def tell(agreement: Agreement, frame: Again, outcome: str, names: list[str], me: int, *,
         headless: bool = False) -> str:
    """A word the table took, as a peer's screen says it (``me``: this peer's seat)."""
    who = "you" if frame.seat == me else names[frame.seat]
    if outcome == "leave":
        return f"{who} left: no more games at this table"
    proposal = agreement.proposal
    assert proposal is not None
    count = f"{len(agreement.agreed)} of {len(agreement.peers)} agree"
    if outcome == "proposal":
        what = describe(proposal.game, dict(proposal.options))
        if frame.seat == me:
            return f"you propose another game: {what} ({count})"
        if headless:
            return f"{who} proposes another game: {what} ({count})"
        return (f"{who} proposes another game: {what} ({count}); type again to agree,"
                " again GAME for another game, or quit")
    verb = "agree" if who == "you" else "agrees"
    return f"{who} {verb} ({count})"


def other_game(game: str, players: int) -> str | None:
    """A game other than ``game`` that ``players`` seats can play (an example to offer)."""
    for name in ("pasur", "nullern", "bidwhist", "controlnut", *sorted(GAMES)):
        rules = GAMES.get(name)
        if name != game and rules is not None and players in rules.player_counts:
            return name
    return None


def offer(game: str, players: int) -> str:
    """The end-of-game line: what a person may type now."""
    other = other_game(game, players)
    another = f", again {other} for another game" if other else ""
    return f"type again for another game with the same players{another}, or quit"
