"""The table session's records: phases, what is due, what was refused, what a message needs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Final, Protocol

from p2pcards.protocol.constants import OBSERVER
from p2pcards.table.kinds import Kind


class Everyone(Enum):
    """A grant's recipient that is not a seat: the keys are shown to everyone."""

    EVERYONE = "everyone"


class Shown(Enum):
    """A ledger place that is not a hidden place: the slot is face up."""

    SHOWN = "shown"


EVERYONE: Final = Everyone.EVERYONE
SHOWN: Final = Shown.SHOWN
WATCHER: Final = OBSERVER
"""``me`` of a session that holds no seat and only checks (``p2pcards verify``)."""

Recipient = int | Everyone
"""Who a key release is for: a seat, or everyone."""
Place = int | Shown
"""Where a slot's card is: a hidden place of the engine, or face up."""
Grants = tuple[tuple[Recipient, tuple[int, ...]], ...]
"""A key release's grants: recipient -> slots."""


class Phase(Enum):
    """Where a game stands at one seat (docs/protocol.md, "Phases")."""

    SEATING = "seating"
    """Every seat signs the roster."""
    DRAW = "draw"
    """The joint draw of the first dealer."""
    SEATS = "seats"
    """Seats change hands before a deal: the runner's ``seat`` message, the roster
    signed again."""
    HELLO = "hello"
    """A deal begins: every seat announces its sealing key."""
    DECK = "deck"
    """The deck's passes: unlock, shuffle, lock."""
    DEAL = "deal"
    """The keys of the deal go round; every seat reports its cards open."""
    PLAY = "play"
    """The moves, with the key releases, re-mixes and draws they call for."""
    AUDIT = "audit"
    """Every seat reveals its secrets."""
    AGREE = "agree"
    """Every seat signs the deal's result."""
    OVER = "over"
    """The game is over (or the table broke up)."""


def grant_order(grant: tuple[Recipient, tuple[int, ...]]) -> int:
    """Grants in seat order, everyone's first."""
    recipient = grant[0]
    return -1 if recipient is EVERYONE else recipient


class Rule(StrEnum):
    """The rule a refused message breaks (the value is the word a refusal shows)."""

    MALFORMED = "malformed"
    """It does not decode, or a field is out of its bounds."""
    SIGNATURE = "signature"
    """Its signature does not verify with its seat's key."""
    TABLE = "table"
    """It names another table."""
    SILENT = "silent"
    """This seat has claimed its sender silent on this transcript."""
    REPLAY = "replay"
    """A message taken already, in this seat's own name, or a second claim."""
    STALE = "stale"
    """A claim of silence overtaken by a later message of its sender."""
    ORDER = "order"
    """Not its sender's next sequence number."""
    EQUIVOCATION = "equivocation"
    """A second, different message with a number taken already (kept as proof)."""
    TRANSCRIPT = "transcript"
    """Sent on another transcript than this seat's (a fork)."""
    TURN = "turn"
    """Not the message due, or not from the seat due."""
    DEAL = "deal"
    """It names another deal than the one in progress."""
    PROOF = "proof"
    """A claim of a cheat whose proof does not hold."""
    ROSTER = "roster"
    """A signature of another roster."""
    SEAT = "seat"
    """A ``seat`` message that changes seats otherwise than the table allows."""
    DRAW = "draw"
    """A commitment or share of a joint draw that does not hold."""
    HELLO = "hello"
    """A sealing key that cannot be used, or is used twice."""
    DECK = "deck"
    """A step the deck refuses (``detail``: the step), or another deck's message."""
    REMIX = "remix"
    """A re-mix of other slots than the cards its seat holds."""
    KEYS = "keys"
    """Keys or shares of other slots or seats than the step grants."""
    KEY = "key"
    """A key that does not match its commitment."""
    SLOTS = "slots"
    """A move that names other slots than its cards need."""
    NOT_HELD = "not-held"
    """A card shown that its seat does not hold."""
    SYNTAX = "syntax"
    """A move whose text does not read, or is not its public form."""
    ILLEGAL = "illegal"
    """A move the rules forbid on what everyone knows (``detail``: the rules' code,
    ``phase``, ``renege`` ...)."""
    AUDIT = "audit"
    """An audit whose secrets do not match the deal's hello or its seat."""
    AHEAD = "ahead"
    """A move that does not carry the step of the next deal's deck due from its seat,
    or carries one not due (docs/protocol.md, "Shuffle ahead")."""


@dataclass(frozen=True, slots=True)
class Rejection:
    """A message refused: who sent it (None when it cannot be told), the rule it
    breaks, and why.  The session is unchanged."""

    sender: int | None
    rule: Rule
    reason: str
    evidence: bool = False
    """Whether the message, refused, was kept as new evidence (a fork or a proof of
    equivocation this seat did not have): worth journaling and relaying, unlike every
    other refused message."""
    detail: str = ""
    """The step a deck refused (:attr:`Rule.DECK`), the rules' code of an illegal move
    (:attr:`Rule.ILLEGAL`)."""

    @property
    def code(self) -> str:
        """The rule as a refusal names it: ``turn``, ``deck shuffle``, ``renege``."""
        return rule_code(self.rule, self.detail)

    def __str__(self) -> str:
        who = "unknown sender" if self.sender is None else f"seat {self.sender}"
        return f"{who}: {self.code}: {self.reason}"


def rule_code(rule: Rule, detail: str) -> str:
    """How a refusal names ``rule`` with its ``detail`` (:attr:`Rejection.code`)."""
    if rule == Rule.ILLEGAL:
        return detail
    return f"{rule} {detail}" if detail else str(rule)


class RefusedMessage(Exception):
    """A message that breaks a rule, raised before anything changes."""

    def __init__(self, rule: Rule, reason: str, detail: str = ""):
        super().__init__(reason)
        self.rule = rule
        self.reason = reason
        self.detail = detail


class ProvenCheat(RefusedMessage):
    """A signed message, due and on this seat's transcript, that the proved deck
    refuses: it proves its sender cheated.  The session records it (it is the proof,
    for every seat and for ``p2pcards verify``) and its sender forfeits the deal.
    ``seat`` and ``kind``: an earlier message's, when a shuffle taken before, whose
    proof was not yet checked, is the one refused (its shuffler forfeits)."""

    def __init__(self, rule: Rule, reason: str, seat: int | None = None, kind: str = "",
                 detail: str = ""):
        super().__init__(rule, reason, detail)
        self.seat = seat
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Step:
    """A message due: its kind, its sender, and for a key release the grants
    (recipient or EVERYONE -> slots), for a re-mix the slots."""

    kind: Kind
    seat: int
    grants: Grants = ()
    slots: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Needs:
    """What taking a message calls for that only the phase machine does (it is the one
    writer of what is due): steps queued after those due, the deal stopped for its audit
    (``stop``), the consents still due dropped (``vote_over``: a seat refused)."""

    steps: tuple[Step, ...] = ()
    stop: bool = False
    vote_over: bool = False


NOTHING: Final = Needs()
"""A message that calls for nothing more."""


def queue(steps: Iterable[Step]) -> Needs:
    """Needs: ``steps`` queued."""
    return Needs(tuple(steps))


class SlotDeck(Protocol):
    """What both decks offer of their slots, as the ledger and the dealing helpers use
    them (:class:`~p2pcards.protocol.deck.Deck` and
    :class:`~p2pcards.protocol.proved.deck.ProvedDeck` both have it; the table's own
    part of a deck is :class:`~p2pcards.table.run.TableDeck`)."""

    @property
    def opened(self) -> dict[int, int]:
        """Slot -> its card (an index of the deal's ids), for every slot opened here."""

    @property
    def retired(self) -> set[int]:
        """Slots replaced by a re-mix or a reshuffle."""

    @property
    def holder(self) -> dict[int, int]:
        """Slot -> the seat it is open to, where that is known."""

    @property
    def lockers(self) -> list[tuple[int, ...]]:
        """Slot -> the seats whose key (or share) it needs."""

    @property
    def points(self) -> Sequence[object]:
        """Every slot made so far, in order."""

    def expected(self) -> tuple[str, int] | None:
        """The deck's step due next and its seat (None: no round under way)."""

    def in_play(self, slot: int) -> bool: ...

    def can_open(self, slot: int) -> bool: ...

    def open(self, slot: int) -> int:
        """The card of ``slot`` (RemoteProtocolError if it opens to none)."""

    def assign(self, slot: int, party: int) -> None:
        """``slot`` is in ``party``'s hand (a shown card back in a hand)."""

    def begin_reshuffle(self, slots: list[int]) -> None: ...
