"""The mental-poker deck of one party, sans I/O (DESIGN.md section 2).

Every party runs a :class:`Deck` for the deal.  Messages go in through
:meth:`Deck.receive` and come out of :meth:`Deck.shuffle`, :meth:`Deck.lock`
and :meth:`Deck.release`; the caller moves them between parties (the table
session signs and sends them).  The steps, in this order:

1. **Shuffle pass.**  From the first shuffler (``deal mod N``: it rotates with
   the deal) round the table, each party multiplies every point of the deck by
   a secret scalar ``s_i`` and permutes the deck; the output is broadcast.
2. **Lock pass.**  In the same order each party swaps ``s_i`` for a key per
   position, ``k_ij`` (one multiplication by ``k_ij·s_i⁻¹``), and broadcasts the
   deck with a hash commitment to every key.  Position ``j`` is then locked
   under ``∏_i k_ij`` alone.
3. **Deal.**  To give position ``j`` to party ``t``, every party releases its
   ``k_ij`` to ``t``; to show it to everyone, to everyone.  A released key is
   checked against its commitment on arrival.  With every key of a position
   in hand a party opens it: one multiplication by the inverse of their
   product gives a card point, which names the card.
4. **Audit** (:mod:`protocol.audit`): every party reveals its secrets, and
   every step is re-computed.

What is checked on arrival, and stops the message with a
:class:`RemoteProtocolError` naming the sender and the step: the step's turn,
the deck's size, every point on the curve, no point twice in a deck (a card
skipped or duplicated by a shuffler), commitments unique (none reused from
another party or position), a released key against its commitment.  Opening
a position to a point that is no card, or to a card already opened, means
somebody cheated in the shuffle or lock: the error asks for the audit at
once (``audit_now``), which names them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from protocol.curve import (
    Multiplier,
    N,
    Point,
    PointError,
    SecretSource,
    card_points,
    inverse,
    lift,
    random_scalar,
)
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.messages import AuditReveal, KeyRelease, Locked, Shuffled

COMMIT_DOMAIN = b"p2pcards/lock-key/v1"
MIN_PARTIES, MAX_PARTIES = 2, 7
MIN_CARDS, MAX_CARDS = 2, 128
SHUFFLE, LOCK, DEAL = "shuffle", "lock", "deal"


@dataclass(frozen=True, slots=True)
class DeckContext:
    """What every party agrees on before the deal: table id, deal number, parties, cards."""

    table: bytes
    deal: int
    parties: int
    size: int

    def __post_init__(self) -> None:
        if not MIN_PARTIES <= self.parties <= MAX_PARTIES:
            raise ValueError(f"{MIN_PARTIES} to {MAX_PARTIES} parties, not {self.parties}")
        if not MIN_CARDS <= self.size <= MAX_CARDS:
            raise ValueError(f"{MIN_CARDS} to {MAX_CARDS} cards, not {self.size}")
        if not 0 <= self.deal < 1 << 63:
            raise ValueError("the deal number must be a non-negative 63-bit integer")

    @property
    def order(self) -> list[int]:
        """The parties in shuffle and lock order: the first shuffler rotates with the deal."""
        first = self.deal % self.parties
        return [(first + i) % self.parties for i in range(self.parties)]

    def commitment(self, party: int, position: int, key: int) -> bytes:
        """The hash commitment to ``party``'s lock key of ``position`` (domain-separated)."""
        return hashlib.sha256(b"".join([
            COMMIT_DOMAIN, len(self.table).to_bytes(2, "big"), self.table,
            self.deal.to_bytes(8, "big"), party.to_bytes(1, "big"),
            position.to_bytes(2, "big"), key.to_bytes(32, "big")])).digest()


def random_permutation(size: int, source: SecretSource) -> list[int]:
    """A uniform permutation of range(size) (Fisher-Yates on the secret source)."""
    order = list(range(size))
    for i in range(size - 1, 0, -1):
        j = source.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def shuffle_deck(deck: Sequence[Point], scalar: int, permutation: Sequence[int]
                 ) -> tuple[bytes, ...]:
    """Output position j is ``scalar ·`` input position ``permutation[j]``."""
    times = Multiplier(scalar).times
    return tuple(times(deck[i]) for i in permutation)


def lock_deck(deck: Sequence[Point], scalar: int, keys: Sequence[int]) -> tuple[bytes, ...]:
    """Each position's shuffle scalar swapped for its key: ``k_j · scalar⁻¹ ·`` the point."""
    unshuffle = inverse(scalar)
    return tuple(Multiplier(key * unshuffle % N).times(point)
                 for key, point in zip(keys, deck, strict=True))


def lift_deck(deck: Sequence[bytes], known: Mapping[bytes, Point] | None = None
              ) -> list[Point]:
    """Every point of a deck decompressed and checked (``known``: points already
    lifted); PointError at the first that is none."""
    if known is None:
        return [lift(x) for x in deck]
    return [known.get(x) or lift(x) for x in deck]


class Deck:
    """One party's side of the deck protocol for one deal."""

    def __init__(self, context: DeckContext, me: int, source: SecretSource):
        if not 0 <= me < context.parties:
            raise LocalProtocolError(f"party {me} is not at this table")
        self.context = context
        self.me = me
        self.cards = card_points(context.table, context.deal, context.size)
        self.card_of = {point: card for card, point in enumerate(self.cards)}
        self.shuffles: list[Shuffled] = []
        self.locks: list[Locked] = []
        self.keys: dict[int, dict[int, int]] = {}
        """position -> party -> lock key known to this party (its own once locked)."""
        self.releases: list[KeyRelease] = []
        self.opened: dict[int, int] = {}
        """position -> card, for the positions this party has opened."""
        size = context.size
        self._shuffle_key = random_scalar(source)
        self._permutation = random_permutation(size, source)
        self._lock_keys = [random_scalar(source) for _ in range(size)]
        self._seen_commitments: set[bytes] = set()
        self._lifted: list[Point] = lift_deck(self.cards)
        self.lifted: dict[bytes, Point] = dict(zip(self.cards, self._lifted, strict=True))
        """Every point this party has checked, kept for the audit's re-computation."""
        """The current deck's points, lifted once when checked on arrival."""

    # ---------------------------------------------------------------- state

    @property
    def phase(self) -> str:
        if len(self.shuffles) < self.context.parties:
            return SHUFFLE
        if len(self.locks) < self.context.parties:
            return LOCK
        return DEAL

    def expected(self) -> tuple[str, int] | None:
        """The broadcast step due next and whose it is; None once the deck is locked."""
        order = self.context.order
        if len(self.shuffles) < len(order):
            return SHUFFLE, order[len(self.shuffles)]
        if len(self.locks) < len(order):
            return LOCK, order[len(self.locks)]
        return None

    def my_turn(self) -> bool:
        step = self.expected()
        return step is not None and step[1] == self.me

    @property
    def deck(self) -> tuple[bytes, ...]:
        """The deck as it stands: the last broadcast output."""
        if self.locks:
            return self.locks[-1].deck
        if self.shuffles:
            return self.shuffles[-1].deck
        return tuple(self.cards)

    # ---------------------------------------------------------- own steps

    def shuffle(self) -> Shuffled:
        """This party's shuffle pass (its turn); the message to broadcast."""
        self._own_turn(SHUFFLE)
        message = Shuffled(party=self.me,
                           deck=shuffle_deck(self._lifted, self._shuffle_key, self._permutation))
        self.shuffles.append(message)
        self._lifted = []
        return message

    def lock(self) -> Locked:
        """This party's lock pass (its turn); the message to broadcast."""
        self._own_turn(LOCK)
        commitments = tuple(self.context.commitment(self.me, j, key)
                            for j, key in enumerate(self._lock_keys))
        message = Locked(party=self.me, deck=lock_deck(self._lifted, self._shuffle_key,
                                                       self._lock_keys),
                         commitments=commitments)
        self._seen_commitments.update(commitments)
        self.locks.append(message)
        self._lifted = []
        for j, key in enumerate(self._lock_keys):
            self.keys.setdefault(j, {})[self.me] = key
        return message

    def release(self, position: int, to: int | None = None) -> KeyRelease:
        """This party's key for ``position``, for party ``to`` or everyone (None)."""
        if self.phase != DEAL:
            raise LocalProtocolError("no key is released before the deck is locked")
        if not 0 <= position < self.context.size:
            raise LocalProtocolError(f"no position {position} in a deck of {self.context.size}")
        if to is not None and not 0 <= to < self.context.parties:
            raise LocalProtocolError(f"party {to} is not at this table")
        message = KeyRelease(party=self.me, position=position,
                             key=self._lock_keys[position], to=to)
        self.releases.append(message)
        return message

    def secrets(self) -> AuditReveal:
        """Everything this party kept secret, for the audit."""
        return AuditReveal(party=self.me, shuffle_key=self._shuffle_key,
                           permutation=tuple(self._permutation),
                           lock_keys=tuple(self._lock_keys))

    def _own_turn(self, step: str) -> None:
        due = self.expected()
        if due != (step, self.me):
            raise LocalProtocolError(f"not party {self.me}'s {step} now (due: {due})")

    # ---------------------------------------------------------- arrivals

    def receive(self, message: Shuffled | Locked | KeyRelease) -> None:
        """Take another party's message; RemoteProtocolError (and no change) if it
        breaks the protocol."""
        if isinstance(message, Shuffled):
            self._check_step(SHUFFLE, message.party)
            self._lifted = self._check_deck(message.party, SHUFFLE, message.deck)
            self.shuffles.append(message)
        elif isinstance(message, Locked):
            self._check_step(LOCK, message.party)
            lifted = self._check_deck(message.party, LOCK, message.deck)
            fresh = set(message.commitments)
            if len(fresh) != len(message.commitments) or fresh & self._seen_commitments:
                raise RemoteProtocolError(message.party, LOCK, "a commitment is reused")
            self._seen_commitments |= fresh
            self.locks.append(message)
            self._lifted = lifted
        elif isinstance(message, KeyRelease):
            self._receive_key(message)
        else:
            raise RemoteProtocolError(None, "message", f"not a deck message: {type(message)}")

    def _check_step(self, step: str, party: int) -> None:
        if party == self.me:
            raise RemoteProtocolError(party, step, "a message in this party's own name")
        due = self.expected()
        if due != (step, party):
            raise RemoteProtocolError(party, step, f"out of order (due: {due})")

    def _check_deck(self, party: int, step: str, deck: tuple[bytes, ...]) -> list[Point]:
        size = self.context.size
        if len(deck) != size:
            raise RemoteProtocolError(party, step, f"a deck of {len(deck)} points, not {size}")
        if len(set(deck)) != size:
            raise RemoteProtocolError(party, step, "a point appears twice (a card skipped or"
                                                   " duplicated)")
        lifted = []
        for j, point in enumerate(deck):
            try:
                lifted.append(lift(point))
            except PointError as error:
                raise RemoteProtocolError(party, step, f"position {j}: {error}") from None
        self.lifted.update(zip(deck, lifted, strict=True))
        return lifted

    def _receive_key(self, message: KeyRelease) -> None:
        party, position = message.party, message.position
        if self.phase != DEAL:
            raise RemoteProtocolError(party, "key", "a key before the deck is locked")
        if party == self.me:
            raise RemoteProtocolError(party, "key", "a key in this party's own name")
        if message.to is not None and message.to != self.me:
            raise RemoteProtocolError(party, "key", f"a key addressed to party {message.to}")
        if not 0 <= party < self.context.parties or position >= self.context.size:
            raise RemoteProtocolError(party, "key", f"no party {party} or position {position}")
        committed = self._commitments_of(party)[position]
        if self.context.commitment(party, position, message.key) != committed:
            raise RemoteProtocolError(party, "key", f"the key of position {position} does not"
                                                    " match its commitment")
        self.keys.setdefault(position, {})[party] = message.key
        self.releases.append(message)

    def _commitments_of(self, party: int) -> tuple[bytes, ...]:
        for locked in self.locks:
            if locked.party == party:
                return locked.commitments
        raise AssertionError("every party has locked")

    # ------------------------------------------------------------ opening

    @property
    def _final(self) -> list[Point]:
        """The locked deck's points, lifted (kept from the last lock's check)."""
        if not self._lifted:
            self._lifted = lift_deck(self.deck)
        return self._lifted

    def can_open(self, position: int) -> bool:
        return len(self.keys.get(position, {})) == self.context.parties

    def open(self, position: int) -> int:
        """The card at ``position`` (every party's key for it in hand)."""
        if position in self.opened:
            return self.opened[position]
        if not self.can_open(position):
            missing = sorted(set(range(self.context.parties)) - set(self.keys.get(position, {})))
            raise LocalProtocolError(f"position {position} still needs the keys of {missing}")
        product = 1
        for key in self.keys[position].values():
            product = product * key % N
        point = Multiplier(inverse(product)).times(self._final[position])
        card = self.card_of.get(point)
        if card is None:
            raise RemoteProtocolError(None, "open", f"position {position} opens to no card",
                                      audit_now=True)
        if card in self.opened.values():
            raise RemoteProtocolError(None, "open", f"card {card} opened twice",
                                      audit_now=True)
        self.opened[position] = card
        return card
