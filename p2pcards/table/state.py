"""The table session's records: phases, what is due, what was refused, one deal in progress."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Final

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.games import HandState
from p2pcards.protocol.constants import OBSERVER
from p2pcards.protocol.randomness import JointRandom
from p2pcards.table.codec import Envelope
from p2pcards.table.kinds import Act, Agree, Audit, Keys, Kind, ProvedAct
from p2pcards.table.replay import Outcome

if TYPE_CHECKING:
    from p2pcards.table.decks import TableDeck
    from p2pcards.table.ledger import Ledger


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


@dataclass(frozen=True, slots=True)
class Rejection:
    """A message refused: who sent it (None when it cannot be told), the rule it
    breaks, and why.  The session is unchanged."""

    sender: int | None
    rule: str
    reason: str
    evidence: bool = False
    """Whether the message, refused, was kept as new evidence (a fork or a proof of
    equivocation this seat did not have): worth journaling and relaying, unlike every
    other refused message."""

    def __str__(self) -> str:
        who = "unknown sender" if self.sender is None else f"seat {self.sender}"
        return f"{who}: {self.rule}: {self.reason}"


class Refused(Exception):
    """A message that breaks a rule, raised before anything changes."""

    def __init__(self, rule: str, reason: str):
        super().__init__(reason)
        self.rule = rule
        self.reason = reason


class Proven(Refused):
    """A signed message, due and on this seat's transcript, that the proved deck
    refuses: it proves its sender cheated.  The session records it (it is the proof,
    for every seat and for ``p2pcards verify``) and its sender forfeits the deal.
    ``seat`` and ``kind``: an earlier message's, when a shuffle taken before, whose
    proof was not yet checked, is the one refused (its shuffler forfeits)."""

    def __init__(self, rule: str, reason: str, seat: int | None = None, kind: str = ""):
        super().__init__(rule, reason)
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
class Event:
    """Something for the user interface: ``kind`` and a line of text.  A move
    (``act``) also carries this seat's own view just before it (``before``) and the
    move as that view knows it (``code``), so that a prompt can tell it as the seat
    saw it (its own cards named, others' hidden)."""

    kind: str
    text: str
    seat: int | None = None
    before: HandState | None = None
    code: int = -1


@dataclass
class DealRun:
    """One deal in progress at this peer."""

    index: int
    deck: TableDeck
    """Today's :class:`~p2pcards.protocol.deck.Deck` or the proved deck (the roster says
    which: :mod:`p2pcards.table.decks`)."""
    ids: list[int]
    seal_private: X25519PrivateKey
    ledger: Ledger
    """Where the deal's slots are, and who can open them."""
    seal_keys: dict[int, bytes] = field(default_factory=dict)
    view: HandState | None = None
    """This seat's own view (the watcher's is the public one)."""
    public: HandState | None = None
    """The deal as everyone sees it: whose turn it is, what every seat checks a move
    against, where the cards shown are."""
    signers: list[int] = field(default_factory=list)
    """The seats that sign the deal's result (all but a seat that forfeited by silence)."""
    vote: tuple[int, str] | None = None
    """A proposal to void the deal being answered: (proposer, reason)."""
    consented: str = ""
    """Why every seat consented to void this deal (its audit still runs)."""
    suspect: str = ""
    """Why this seat's own view refused a move the public view allowed (a card this
    seat holds, shown by another): it raises the alarm when its turn comes."""
    own_code: int = -1
    """This seat's last move as its own view knows it (the public text hides cards)."""
    acts: list[tuple[int, Act | ProvedAct]] = field(default_factory=list)
    played: list[tuple[int, HandState]] = field(default_factory=list)
    """(position in the transcript of each move, the public view before it): where a
    proven cheat takes the deal back to."""
    audits: dict[int, Audit] = field(default_factory=dict)
    agrees: dict[int, Agree] = field(default_factory=dict)
    agree_hash: bytes = b""
    outcome: Outcome | None = None
    verdict: str = ""
    points: list[int] = field(default_factory=list)
    views: list[tuple[object, ...] | None] = field(default_factory=list)
    """This seat's view knowledge after every move (the tests compare it)."""
    envelopes: list[Envelope] = field(default_factory=list)
    key_steps: list[tuple[int, Step, Keys]] = field(default_factory=list)
    draw: JointRandom | None = None
    """The joint draw under way for a chance move (Control Nut!)."""
    draws: int = 0
    problem: str = ""
    """What went wrong opening this seat's cards (reported in its ``opened``)."""
    alarms: dict[int, str] = field(default_factory=dict)
    refuted: tuple[int, str] | None = None
    """A deferred shuffle proof of the proved deck found not to hold (the first, oldest
    first): its shuffler and why ("shuffle: its shuffle proof: ..."); its verdict comes
    at the end of the shuffle's round (docs/protocol.md, "A refused step")."""
    judged: bool = False
    """Whether that verdict has been given."""
    opened: bool = False
    shown: dict[int, int] = field(default_factory=dict)
    """Slot -> its card (an index of ``ids``) for every slot opened to everyone (face up
    at the deal, shown by a move, a blind card): a proved deal's record names them."""

    @property
    def dealer(self) -> int:
        return self.ledger.setup.dealer

    @property
    def number(self) -> int:
        """The deal's place in the match: the deals scored before it."""
        return self.ledger.setup.number
