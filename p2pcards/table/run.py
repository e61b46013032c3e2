"""One deal in progress at one seat, and the deck interface it deals with.

A :class:`DealRun` is everything a seat keeps of a deal while it is played
(its deck, slots, views, moves, what was revealed and agreed).  Its deck is a
:class:`TableDeck`: the slots both decks offer (:class:`~p2pcards.table.state.SlotDeck`)
and the table's side of the deck, where the two decks differ (which messages
they take and how, the keys or shares a seat gives, how a move shows its
cards, how the deal's verdict is reached, how ``--explain`` tells it).  Each
deck (:mod:`p2pcards.table.decks`) satisfies it, so that nothing else in the
table asks which deck it has.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.games import HandState
from p2pcards.protocol.errors import RemoteProtocolError
from p2pcards.protocol.randomness import JointRandom
from p2pcards.table.codec import Envelope
from p2pcards.table.decks import Flavor
from p2pcards.table.kinds import Act, Agree, Audit, Keys, Message, ProvedAct
from p2pcards.table.ledger import Ledger
from p2pcards.table.replay import Outcome
from p2pcards.table.state import Needs, ProvenCheat, SlotDeck, Step

DealHandler = Callable[["DealRun", Envelope, Any, Step], Needs]
"""A deck's handler of one of its message kinds (see
:data:`p2pcards.table.phases.machine.Handler`)."""


class TableDeck(SlotDeck, Protocol):
    """A deal's deck as the table deals with it (see the module docstring)."""

    @property
    def flavor(self) -> Flavor:
        """What the table's deck decides of its messages (:mod:`p2pcards.table.decks`)."""

    def step(self) -> Message:
        """This seat's deck step due now (a pass, a key share, a shuffle)."""

    def remix(self, slots: list[int]) -> Message:
        """This seat's re-mix of the cards it holds in ``slots``."""

    def handlers(self) -> Mapping[type, DealHandler]:
        """The deck's message classes and how each is taken (its passes or shuffles,
        its key releases or shares): checked (:class:`~p2pcards.table.state.RefusedMessage`
        before any change), then applied to the deck."""

    def key_release(self, run: DealRun, step: Step) -> Message:
        """This seat's key release (or shares) for ``step``'s grants."""

    def audit(self, run: DealRun) -> Audit:
        """This seat's secrets of the deal, revealed after it (a deck that is audited)."""

    def move(self, action: str, shown: Sequence[int], slots: tuple[int, ...]) -> Act | ProvedAct:
        """This seat's move as it goes on the wire: its public ``action``, the slots of the
        cards it ``shown``s with what opens them, the ``slots`` of its face-down cards."""

    def check_shown(self, run: DealRun, env: Envelope, message: Act | ProvedAct,
                    cards: list[int]) -> set[int]:
        """Every card a move shows comes from a slot its mover holds and opens to the
        ``cards`` the move names; the slots whose card this seat holds already (proof of a
        cheat only it can see).  Refused before any change."""

    def open_shown(self, run: DealRun, sender: int, message: Act | ProvedAct,
                   doubles: set[int]) -> None:
        """Open the slots a move taken has shown to everyone."""

    def unchecked(self, run: DealRun) -> int:
        """Shuffle proofs taken without their check, none found refused yet."""

    def waiting(self, run: DealRun) -> bool:
        """Whether proofs taken unchecked stand between the deal and its next step."""

    def check_deferred(self, run: DealRun, limit: int | None) -> None:
        """Check up to ``limit`` of them, oldest first (the first refused is kept)."""

    def proof_job(self) -> ProofJob | None:
        """The next of them as work another thread may do (None: none)."""

    def refusal(self, run: DealRun) -> ProvenCheat | None:
        """Every proof checked: the first refused, as the proof of its shuffler's cheat."""

    def conclude(self, run: DealRun, keep_states: bool) -> tuple[Outcome, str]:
        """The deal's outcome and verdict, every secret it reveals in."""

    def explain_rounds(self, names: list[str]) -> list[str]:
        """For ``--explain``: each round of the deck and each re-mix."""

    def explain_keys(self, run: DealRun, kinds: Counter[str]) -> list[str]:
        """For ``--explain``: the keys (or shares) the deal's steps gave."""

    def explain_audit(self, run: DealRun, names: list[str], players: int) -> list[str]:
        """For ``--explain``: what the deck reveals after the deal, and what it holds."""


@dataclass(frozen=True, eq=False)
class ProofJob:
    """Idle work another thread may do while the seat goes on: a deferred proof's check,
    a pure computation on immutable values (``check``: whether it holds), whose result
    the seat's own thread records (``vouch``, when it holds: its turn in idle time then
    costs nothing; one that does not hold is checked again there, to be named); or the
    seat's own step or shares of a deck prepared ahead, drawn under that deck's lock
    (``check`` does it and says True; ``vouch`` has nothing to record)."""

    key: object
    """What the job is about (the message whose proof it checks, or the deck whose step
    or shares it makes): one job at a time each."""
    check: Callable[[], bool]
    vouch: Callable[[], None]


@dataclass
class DealRun:
    """One deal in progress at this peer."""

    index: int
    deck: TableDeck
    """The roster's deck (:mod:`p2pcards.table.decks`)."""
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


def show(run: DealRun, slot: int) -> bool:
    """Open a slot every key (or share) of which is public; one that opens to no card (a
    deck broken somewhere) stops the deal for its audit at every seat alike: True."""
    try:
        run.shown[slot] = run.deck.open(slot)
    except RemoteProtocolError as error:
        run.problem = run.problem or error.reason
        return True
    return False
