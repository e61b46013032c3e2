"""Every seat's session in one process: the tests' and the bench's table.

Messages go from each session's outbox to every other session in the order
they were sent.  ``tamper`` sees each message on its way (sender, wire) and
returns what is delivered instead (a list: several messages, or none), so a
test can make any seat cheat or the network misbehave.
"""

from __future__ import annotations

import hashlib
import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.bots import Bot
from p2pcards.protocol.source import SeededSource
from p2pcards.table.codec import public_bytes
from p2pcards.table.roster import AGREED_DECK, make_roster
from p2pcards.table.session import Forge, Rejection, Session

Tamper = Callable[[int, bytes], list[bytes]]


def seat_identity(seed: object, seat: int) -> Ed25519PrivateKey:
    """A reproducible identity for tests and benches (never for play)."""
    return Ed25519PrivateKey.from_private_bytes(
        hashlib.sha256(f"p2pcards/test-identity/{seed}/{seat}".encode()).digest())


@dataclass
class Delivery:
    """A rejection seen at the table: which seat refused what, from whom."""

    at: int
    rejection: Rejection


@dataclass
class MemoryTable:
    game: str
    players: int
    seed: object
    bots: Sequence[Bot]
    options: Mapping[str, int] | None = None
    keep_states: bool = False
    tamper: Tamper | None = None
    consent: bool = True
    """How every seat answers a proposal to void the deal."""
    forges: Mapping[int, Forge] = field(default_factory=dict)
    """Seat -> a cheat forging that seat's messages (:data:`Forge`)."""
    deck: str = AGREED_DECK
    """The table's deck as its roster names it (:mod:`p2pcards.table.decks`): the
    proved one with the next deal shuffled ahead unless told (every seat is this
    build's)."""
    run_by: Mapping[int, int] = field(default_factory=dict)
    """Seat -> the seat whose peer runs it as a bot (the roster says so; the bots in
    ``bots`` decide every seat's moves alike)."""
    names: Sequence[str] | None = None
    """The seats' names in the roster (None: ``seat0``, ``seat1``, ...)."""
    sessions: list[Session] = field(default_factory=list)
    rejected: list[Delivery] = field(default_factory=list)
    messages: int = 0
    bytes_sent: int = 0

    def __post_init__(self) -> None:
        keys = [seat_identity(self.seed, s) for s in range(self.players)]
        table = hashlib.sha256(f"p2pcards/test-table/{self.seed}".encode()).digest()[:16]
        roster = make_roster(table, self.game, [public_bytes(k.public_key()) for k in keys],
                             options=self.options, names=self.names,
                             bots=["heuristic" if s in self.run_by else ""
                                   for s in range(self.players)], run_by=self.run_by,
                             deck=self.deck)
        self.sessions = [Session(roster, s, keys[s], SeededSource(f"{self.seed}:secrets:{s}"),
                                 keep_states=self.keep_states, forge=self.forges.get(s))
                         for s in range(self.players)]
        self.rngs = [random.Random(f"{self.seed}:bot:{s}") for s in range(self.players)]
        self.pending: deque[tuple[int, bytes]] = deque()

    def _collect(self) -> None:
        for session in self.sessions:
            for wire in session.take_outbox():
                self.messages += 1
                self.bytes_sent += len(wire)
                delivered = [wire] if self.tamper is None else self.tamper(session.me, wire)
                self.pending.extend((session.me, w) for w in delivered)

    def deliver(self) -> None:
        """Deliver every message in flight (and those they cause).  Once a message has
        reached every seat and what it made them send is on its way, each seat checks
        its deferred shuffle proofs (:meth:`Session.check_pending`), as a node does when
        it has nothing else to do."""
        self._idle()
        while self.pending:
            sender, wire = self.pending.popleft()
            for session in self.sessions:
                if session.me == sender:
                    continue
                rejection = session.receive(wire)
                if rejection is not None:
                    self.rejected.append(Delivery(session.me, rejection))
            self._collect()
            self._idle()

    def _idle(self) -> None:
        self._collect()
        for session in self.sessions:
            session.check_pending()
        self._collect()

    def step(self) -> bool:
        """Deliver everything, then let one seat whose move it is decide; False when
        nobody has anything to do (the game is over, or the table is stuck)."""
        self.deliver()
        for session in self.sessions:
            if session.void_question() is not None:
                session.answer_void(self.consent)
                return True
        for session in self.sessions:
            view = session.decision()
            if view is not None:
                session.act(self.bots[session.me](view.clone(), self.rngs[session.me]))
                return True
        return False

    def play(self, deals: int | None = None) -> None:
        """Play until the game is over, or ``deals`` deals are finished at every seat."""
        while self.step():
            if deals is not None and all(len(s.finished) >= deals for s in self.sessions):
                break
        self.deliver()
