"""The table session's records: what is due, what was refused, one deal in progress."""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.games import HandState
from p2pcards.protocol.deck import Deck
from p2pcards.protocol.randomness import JointRandom
from p2pcards.table.codec import Envelope
from p2pcards.table.kinds import Act, Agree, Audit, Keys
from p2pcards.table.replay import Outcome

SHOWN = -1
"""Ledger place of a slot shown to everyone."""
EVERYONE = -1
"""Grant recipient: the keys are shown to everyone."""
WATCHER = -2
"""``me`` of a session that holds no seat and only checks (``p2pcards verify``)."""

SEATING, DRAW, HELLO, DECK, DEAL, PLAY, AUDIT, AGREE, OVER = (
    "seating", "draw", "hello", "deck", "deal", "play", "audit", "agree", "over")


@dataclass(frozen=True, slots=True)
class Rejection:
    """A message refused: who sent it (None when it cannot be told), the rule it
    breaks, and why.  The session is unchanged."""

    sender: int | None
    rule: str
    reason: str

    def __str__(self) -> str:
        who = "unknown sender" if self.sender is None else f"seat {self.sender}"
        return f"{who}: {self.rule}: {self.reason}"


class Refused(Exception):
    def __init__(self, rule: str, reason: str):
        super().__init__(reason)
        self.rule = rule
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Step:
    """A message due: its kind, its sender, and for a key release the grants
    (recipient or EVERYONE -> slots), for a re-mix the slots."""

    kind: str
    seat: int
    grants: tuple[tuple[int, tuple[int, ...]], ...] = ()
    slots: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Event:
    """Something for the user interface: ``kind`` and a line of text."""

    kind: str
    text: str
    seat: int | None = None


@dataclass
class DealRun:
    """One deal in progress at this peer."""

    index: int
    number: int
    dealer: int
    deck: Deck
    ids: list[int]
    seal_private: X25519PrivateKey
    seal_keys: dict[int, bytes] = field(default_factory=dict)
    place: dict[int, int] = field(default_factory=dict)
    knows: dict[int, set[int]] = field(default_factory=dict)
    """Slot -> the seats that can open it (public: who was given its keys)."""
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
    acts: list[tuple[int, Act]] = field(default_factory=list)
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
    steal: tuple[int, int, int] | None = None
    """A HAND steal under way: (victim, thief, the slot drawn, or -1 before the draw)."""
    deck_mask: int = 0
    """The game's cards that are in the deck (Control Nut!'s controls are not)."""
    problem: str = ""
    """What went wrong opening this seat's cards (reported in its ``opened``)."""
    alarms: dict[int, str] = field(default_factory=dict)
    opened: bool = False
    shown_extra: bool = False
    """Whether the cards the deal shows after looking at others (Pasur's replacement
    for an opening jack) have been asked for."""
    reshuffling: tuple[int, ...] = ()
    """The slots of a reshuffle under way (Pasur's stock after an opening jack)."""
