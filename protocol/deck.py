"""The mental-poker deck of one party, sans I/O (docs/mental-poker.md).

Every party runs a :class:`Deck` for the deal.  Messages go in through
:meth:`Deck.receive` and come out of the party's own steps; the caller moves
them between parties (the table session signs and sends them).

**Round 0, the deal's deck.**  From the first shuffler (``deal mod N``: it
rotates with the deal) round the table, each party multiplies every card point
by a secret scalar ``s_i`` and permutes the deck (*shuffle pass*, broadcast);
then in the same order each party swaps ``s_i`` for a key per slot ``k_ij``,
one multiplication by ``k_ij·s_i⁻¹``, and broadcasts the deck with a hash
commitment to every key (*lock pass*).  Slot ``j`` is then locked under
``∏_i k_ij`` alone.

**Dealing.**  To give slot ``j`` to party ``t``, every party releases its key
of ``j`` to ``t``; to show it to everyone, to everyone; to keep it from its
holder (Nullern's blind round), to nobody until it is shown.  A released key
is checked against its commitment on arrival.  With every key of a slot a
party opens it: one multiplication by the inverse of the keys' product gives
a card point, which names the card.  Handing a held card to another party
(Control Nut!'s HAND) is dealing the slot again, to the taker.

**Reshuffle** (:meth:`Deck.begin_reshuffle`, a round ``r ≥ 1``) of any set of
slots locked by everyone (a Pasur jack back into the stock): an *unlock pass*
(each party swaps its key of every slot in the set for one scalar ``t_i``, no
permutation), then a shuffle pass and a lock pass as in round 0.  New slots
are appended; the old ones retire.

**Re-mix** (:meth:`Deck.remix`): a party re-encrypts cards it can open, each
under a fresh key of its own, in a secret order: new slots, locked by it
alone, whose positions say nothing of where the cards came from (the Bid
Whist bidder after the kitty; a HAND victim before the pick).  Nobody can
check a re-mix at once; the audit does.

What is checked on arrival, and refused with a :class:`RemoteProtocolError`
naming the sender and the step (the party's state unchanged): the step's
turn, the deck's size, every point on the curve, no point twice in a deck (a
card skipped or duplicated), commitments unique (none reused), a released key
against its commitment, slots that exist and are still in play.  Opening a
slot to a point that is no card, or to a card another slot in play opened to,
means somebody cheated: the error asks for the audit at once (``audit_now``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .constants import MAX_ROUNDS, MAX_SLOTS, OBSERVER, PUBLIC, Party
from .curve import (
    N,
    Point,
    PointError,
    SecretSource,
    card_points,
    inverse,
    is_point,
    random_scalar,
)
from .errors import EarlyMessage, LocalProtocolError, RemoteProtocolError
from .messages import (
    AuditReveal,
    KeyRelease,
    Locked,
    Remixed,
    Shuffled,
    Unlocked,
)
from .source import SystemSource
from .steps import (
    LOCK,
    REMIX,
    SHUFFLE,
    UNLOCK,
    DeckContext,
    deck_digest,
    lift_deck,
    rekey_deck,
    shuffle_deck,
)

Step = Unlocked | Shuffled | Locked
Message = Step | Remixed | KeyRelease


@dataclass(slots=True)
class Round:
    """One shuffle-and-lock of a set of slots (round 0: the card points)."""

    number: int
    inputs: tuple[int, ...] | None
    """The slots reshuffled, or None for round 0 (the card points)."""
    unlocks: list[Unlocked] = field(default_factory=list)
    shuffles: list[Shuffled] = field(default_factory=list)
    locks: list[Locked] = field(default_factory=list)
    first_slot: int = 0
    """The number of the first slot this round makes."""

    def passes(self) -> list[str]:
        return [SHUFFLE, LOCK] if self.inputs is None else [UNLOCK, SHUFFLE, LOCK]

    def done(self, step: str) -> list[Step]:
        return {UNLOCK: self.unlocks, SHUFFLE: self.shuffles, LOCK: self.locks}[step]  # type: ignore[return-value]


@dataclass(slots=True)
class _Secrets:
    unlock: int
    shuffle: int
    permutation: list[int]
    lock: list[int]


def random_permutation(size: int, source: SecretSource) -> list[int]:
    """A uniform permutation of range(size) (Fisher-Yates on the secret source)."""
    order = list(range(size))
    for i in range(size - 1, 0, -1):
        j = source.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


class Deck:
    """One party's side of the deck protocol for one deal."""

    def __init__(self, context: DeckContext, me: int, source: SecretSource | None = None):
        """``source``: where the secrets come from (:mod:`secrets` unless a test
        passes a seeded one)."""
        if not (0 <= me < context.parties or me == OBSERVER):
            raise LocalProtocolError(f"party {me} is not at this table")
        self.context = context
        self.me = Party(me)
        self._source = SystemSource() if source is None else source
        self.cards = card_points(context.table, context.deal, context.size)
        self.card_of = {point: card for card, point in enumerate(self.cards)}
        self.lifted: dict[bytes, Point] = dict(zip(self.cards, lift_deck(self.cards),
                                                   strict=True))
        """Every point this party has checked, kept for the passes and the audit."""
        self.rounds: list[Round] = []
        self.log: list[Round | Remixed] = []
        """Rounds and re-mixes in the order they happened (what the audit replays)."""
        self.points: list[bytes] = []
        """Slot -> its encrypted card."""
        self.lockers: list[tuple[int, ...]] = []
        """Slot -> the parties whose keys lock it."""
        self.retired: set[int] = set()
        self.commitments: dict[tuple[int, int], bytes] = {}
        self.keys: dict[int, dict[int, int]] = {}
        """Slot -> party -> key known to this party (its own as soon as it has one)."""
        self.releases: list[KeyRelease] = []
        self.opened: dict[int, int] = {}
        """Slot in play -> card, for the slots this party has opened."""
        self.holder: dict[int, int] = {}
        """Slot -> who holds it as far as this party knows: the party it last gave
        its own key to (PUBLIC when shown to all), itself once it has opened a slot
        dealt to it, the re-mixer of a re-mixed slot, or what :meth:`assign` says."""
        self._secrets: list[_Secrets] = []
        self._remixes: list[tuple[list[int], list[int]]] = []
        self._begin(None)

    # ---------------------------------------------------------------- state

    def _begin(self, inputs: tuple[int, ...] | None) -> None:
        size = self.context.size if inputs is None else len(inputs)
        if len(self.rounds) >= MAX_ROUNDS or len(self.points) + size > MAX_SLOTS:
            raise LocalProtocolError(f"at most {MAX_ROUNDS} rounds and {MAX_SLOTS} slots a deal")
        source = self._source
        if self.me == OBSERVER:  # an observer (``p2pcards verify``) keeps no secrets
            self._secrets.append(_Secrets(1, 1, [], []))
        else:
            self._secrets.append(_Secrets(
                1 if inputs is None else random_scalar(source), random_scalar(source),
                random_permutation(size, source), [random_scalar(source) for _ in range(size)]))
        round_ = Round(len(self.rounds), inputs)
        self.rounds.append(round_)
        self.log.append(round_)

    @property
    def current(self) -> Round:
        return self.rounds[-1]

    def expected(self) -> tuple[str, int] | None:
        """The broadcast step due next and whose it is; None between rounds."""
        round_ = self.current
        order = self.context.order(round_.number)
        for step in round_.passes():
            done = round_.done(step)
            if len(done) < len(order):
                return step, order[len(done)]
        return None

    def in_play(self, slot: int) -> bool:
        return 0 <= slot < len(self.points) and slot not in self.retired

    def _round_input(self, inputs: tuple[int, ...] | None = None) -> tuple[bytes, ...]:
        if inputs is None:
            inputs = self.current.inputs
        return self.cards if inputs is None else tuple(self.points[s] for s in inputs)

    def _deck_now(self) -> tuple[bytes, ...]:
        """The round's deck as it stands: the last broadcast output, else its input."""
        round_ = self.current
        for step in reversed(round_.passes()):
            done = round_.done(step)
            if done:
                return done[-1].deck
        return self._round_input()

    # ---------------------------------------------------------- own steps

    def step(self, forge: Callable[[Step], Step] | None = None) -> Step:
        """This party's pass that is due (its turn): the message to broadcast.

        ``forge``: a cheat for tests (:mod:`p2pcards.protocol.simulate`), applied to the message
        before this party takes it as its own, so that the cheater stays consistent.
        """
        due = self.expected()
        if due is None or due[1] != self.me:
            raise LocalProtocolError(f"not party {self.me}'s turn (due: {due})")
        kind = due[0]
        round_, secret = self.current, self._secrets[-1]
        now = self._deck_now()
        prior = deck_digest(self.context, round_.number, now)
        deck = lift_deck(now, self.lifted)
        message: Step
        if kind == UNLOCK:
            assert round_.inputs is not None
            mine = [self.keys[s][self.me] for s in round_.inputs]
            message = Unlocked(party=self.me, round=round_.number, slots=round_.inputs,
                               prior=prior,
                               deck=rekey_deck(deck, mine, [secret.unlock] * len(deck)))
        elif kind == SHUFFLE:
            message = Shuffled(party=self.me, round=round_.number, prior=prior,
                               deck=shuffle_deck(deck, secret.shuffle, secret.permutation))
        else:
            first = len(self.points)
            hidden = secret.unlock * secret.shuffle % N
            message = Locked(
                party=self.me, round=round_.number, prior=prior,
                deck=rekey_deck(deck, [hidden] * len(deck), secret.lock),
                commitments=tuple(self.context.commitment(self.me, first + j, key)
                                  for j, key in enumerate(secret.lock)))
        if forge is not None:
            message = forge(message)
        self._accept(message)
        return message

    def begin_reshuffle(self, slots: list[int] | tuple[int, ...]) -> None:
        """Start a reshuffle of ``slots`` (every party calls it with the same slots)."""
        if self.expected() is not None:
            raise LocalProtocolError("a round is still under way")
        chosen = tuple(slots)
        problem = self._reshuffle_problem(chosen)
        if problem:
            raise LocalProtocolError(problem)
        self._begin(chosen)

    def _reshuffle_problem(self, chosen: tuple[int, ...]) -> str | None:
        if len(set(chosen)) != len(chosen) or len(chosen) < 2:
            return "a reshuffle takes two or more distinct slots"
        for slot in chosen:
            if not self.in_play(slot) or len(self.lockers[slot]) != self.context.parties:
                return f"slot {slot} is not a jointly locked slot in play"
        if len(self.rounds) >= MAX_ROUNDS or len(self.points) + len(chosen) > MAX_SLOTS:
            return f"at most {MAX_ROUNDS} rounds and {MAX_SLOTS} slots a deal"
        return None

    def remix(self, slots: list[int] | tuple[int, ...]) -> Remixed:
        """Re-encrypt cards this party can open under fresh keys, in a secret order."""
        chosen = tuple(slots)
        if self.expected() is not None:
            raise LocalProtocolError("no re-mix while a round is under way")
        if len(set(chosen)) != len(chosen) or not chosen:
            raise LocalProtocolError("a re-mix takes distinct slots")
        if len(self._remixes) >= MAX_ROUNDS or len(self.points) + len(chosen) > MAX_SLOTS:
            raise LocalProtocolError(f"at most {MAX_ROUNDS} re-mixes and {MAX_SLOTS} slots")
        for slot in chosen:
            if not self.in_play(slot) or slot not in self.opened \
                    or self.holder.get(slot, self.me) != self.me:
                raise LocalProtocolError(f"slot {slot} is not a card this party holds")
        order = random_permutation(len(chosen), self._source)
        keys = [random_scalar(self._source) for _ in chosen]
        first = len(self.points)
        message = Remixed(
            party=self.me, slots=chosen,
            deck=tuple(self._times(key, self.cards[self.opened[chosen[i]]])
                       for key, i in zip(keys, order, strict=True)),
            commitments=tuple(self.context.commitment(self.me, first + m, key)
                              for m, key in enumerate(keys)))
        self._remixes.append(([chosen[i] for i in order], keys))
        cards = [self.opened[chosen[i]] for i in order]
        self._accept_remix(message)
        for m, (key, card) in enumerate(zip(keys, cards, strict=True)):
            self.keys[first + m] = {self.me: key}
            self.opened[first + m] = card
            self.holder[first + m] = self.me
        return message

    def _times(self, key: int, point: bytes) -> bytes:
        return rekey_deck([self.lifted[point]], [1], [key])[0]

    def release(self, slot: int, to: int | None = None) -> KeyRelease:
        """This party's key of ``slot``, for party ``to`` or everyone (None)."""
        if not self.in_play(slot) or self.me not in self.lockers[slot]:
            raise LocalProtocolError(f"no key of party {self.me} locks slot {slot} in play")
        if to is not None and not 0 <= to < self.context.parties:
            raise LocalProtocolError(f"party {to} is not at this table")
        message = KeyRelease(party=self.me, slot=slot, key=self.keys[slot][self.me], to=to)
        self.releases.append(message)
        self.holder[slot] = PUBLIC if to is None else to
        return message

    def secrets(self) -> AuditReveal:
        """Everything this party kept secret, for the audit."""
        return AuditReveal(
            party=self.me, unlock_keys=tuple(s.unlock for s in self._secrets),
            shuffle_keys=tuple(s.shuffle for s in self._secrets),
            permutations=tuple(tuple(s.permutation) for s in self._secrets),
            lock_keys=tuple(tuple(s.lock) for s in self._secrets),
            remix_orders=tuple(tuple(order) for order, _ in self._remixes),
            remix_keys=tuple(tuple(keys) for _, keys in self._remixes))

    # ---------------------------------------------------------- arrivals

    def receive(self, message: Message) -> None:
        """Another party's message; RemoteProtocolError (and no change) if it breaks
        the protocol."""
        if isinstance(message, KeyRelease):
            self._receive_key(message)
            return
        if not isinstance(message, Unlocked | Shuffled | Locked | Remixed):
            raise RemoteProtocolError(None, "message", f"not a deck message: {type(message)}")
        if message.party == self.me:
            raise RemoteProtocolError(message.party, "message", "in this party's own name")
        if isinstance(message, Remixed):
            lifted = self._check_remix(message)
            self.lifted.update(lifted)
            self._accept_remix(message)
            return
        kind = {Unlocked: UNLOCK, Shuffled: SHUFFLE, Locked: LOCK}[type(message)]
        self._check_turn(kind, message)
        now = self._deck_now()
        if message.prior != deck_digest(self.context, message.round, now):
            earlier = self._previous_sender()
            raise RemoteProtocolError(None, kind, f"party {message.party} computed its {kind}"
                                      " from another deck than this party holds: party"
                                      f" {message.party} or party {earlier} sent different"
                                      " versions of a step (their signed messages decide)")
        if len(message.deck) != len(now):
            raise RemoteProtocolError(message.party, kind, f"a deck of {len(message.deck)}"
                                      f" points, not {len(now)}")
        lifted = self._check_points(message.party, kind, message.deck)
        if isinstance(message, Locked):
            self._check_commitments(message.party, kind, message.commitments)
        self.lifted.update(lifted)
        self._accept(message)

    def _sequence(self, number: int, inputs: tuple[int, ...] | None) -> list[tuple[str, int]]:
        passes = [SHUFFLE, LOCK] if inputs is None else [UNLOCK, SHUFFLE, LOCK]
        return [(step, party) for step in passes for party in self.context.order(number)]

    def _check_turn(self, kind: str, message: Step) -> None:
        """Refuse a step that is not due; only hold back (EarlyMessage, nobody named) one
        that comes later in this round or a later one."""
        round_ = self.current
        due = self.expected()
        if message.round > round_.number + 1:
            raise RemoteProtocolError(message.party, kind, f"a step of round {message.round}"
                                                          f" during round {round_.number}")
        if message.round == round_.number + 1:  # a reshuffle this party has not begun yet
            raise EarlyMessage(f"party {message.party}'s {kind} of round {message.round} came"
                               f" during round {round_.number}")
        if message.round == round_.number and due is not None:
            sequence = self._sequence(round_.number, round_.inputs)
            position = sequence.index(due)
            if (kind, message.party) in sequence[position + 1:]:
                raise EarlyMessage(f"party {message.party}'s {kind} came before {due}")
        if due != (kind, message.party) or message.round != round_.number:
            raise RemoteProtocolError(message.party, kind, f"out of order (due: {due} of round"
                                                          f" {round_.number})")
        if isinstance(message, Unlocked) and message.slots != round_.inputs:
            raise RemoteProtocolError(message.party, kind, "an unlock of other slots than the"
                                                          " round's")

    def _previous_sender(self) -> int | None:
        round_ = self.current
        for step in reversed(round_.passes()):
            done = round_.done(step)
            if done:
                return done[-1].party
        return None

    def _accept(self, message: Step) -> None:
        round_ = self.current
        round_.done({Unlocked: UNLOCK, Shuffled: SHUFFLE, Locked: LOCK}[type(message)]
                    ).append(message)
        if not isinstance(message, Locked):
            return
        first = len(self.points) if len(round_.locks) == 1 else round_.first_slot
        round_.first_slot = first
        for j, commitment in enumerate(message.commitments):
            self.commitments[message.party, first + j] = commitment
        if message.party == self.me:
            for j, key in enumerate(self._secrets[-1].lock):
                self.keys.setdefault(first + j, {})[self.me] = key
        if self.expected() is None:  # the round is locked: its slots come into play
            self.points.extend(message.deck)
            self.lockers.extend([tuple(range(self.context.parties))] * len(message.deck))
            for slot in round_.inputs or ():
                self._retire(slot)

    def assign(self, slot: int, party: int) -> None:
        """Record a public fact of the game: ``party`` now holds ``slot`` (the table
        session calls it at every party when a card changes hands in public, such as
        a HAND pick of a re-mixed card, whose keys the others never see)."""
        if not self.in_play(slot) or not 0 <= party < self.context.parties:
            raise LocalProtocolError(f"no slot {slot} in play or no party {party}")
        self.holder[slot] = party

    def _accept_remix(self, message: Remixed) -> None:
        first = len(self.points)
        for m, commitment in enumerate(message.commitments):
            self.commitments[message.party, first + m] = commitment
        self.points.extend(message.deck)
        self.lockers.extend([(message.party,)] * len(message.deck))
        for m in range(len(message.deck)):
            self.holder[first + m] = message.party
        for slot in message.slots:
            self._retire(slot)
        self.log.append(message)

    def _retire(self, slot: int) -> None:
        self.retired.add(slot)
        self.opened.pop(slot, None)

    def _check_points(self, party: int, step: str, deck: tuple[bytes, ...]
                      ) -> dict[bytes, Point]:
        """The points of ``deck`` lifted (kept by the caller only once every check passed)."""
        if len(set(deck)) != len(deck):
            raise RemoteProtocolError(party, step, "a point appears twice (a card skipped or"
                                                   " duplicated)")
        try:
            lifted = lift_deck(deck, self.lifted)
        except PointError as error:
            bad = next(j for j, x in enumerate(deck) if not is_point(x))
            raise RemoteProtocolError(party, step, f"position {bad}: {error}") from None
        return dict(zip(deck, lifted, strict=True))

    def _check_commitments(self, party: int, step: str, commitments: tuple[bytes, ...]) -> None:
        fresh = set(commitments)
        if len(fresh) != len(commitments) or fresh & set(self.commitments.values()):
            raise RemoteProtocolError(party, step, "a commitment is reused")

    def _check_remix(self, message: Remixed) -> dict[bytes, Point]:
        party = message.party
        if self.expected() is not None:
            raise RemoteProtocolError(party, REMIX, "a re-mix during a round")
        if len(set(message.slots)) != len(message.slots):
            raise RemoteProtocolError(party, REMIX, "a slot named twice")
        made = sum(isinstance(e, Remixed) and e.party == party for e in self.log)
        if made >= MAX_ROUNDS or len(self.points) + len(message.slots) > MAX_SLOTS:
            raise RemoteProtocolError(party, REMIX, f"more than {MAX_ROUNDS} re-mixes or"
                                                    f" {MAX_SLOTS} slots")
        for slot in message.slots:
            if not self.in_play(slot):
                raise RemoteProtocolError(party, REMIX, f"slot {slot} is not in play")
            held = self.holder.get(slot)
            if held == PUBLIC:
                raise RemoteProtocolError(party, REMIX, f"slot {slot} was shown to everyone")
            if held is None:
                raise RemoteProtocolError(party, REMIX, f"slot {slot} was never given to party"
                                                        f" {party} as far as party {self.me}"
                                                        " knows")
            if held != party:
                raise RemoteProtocolError(party, REMIX, f"slot {slot} is held by party {held}")
        lifted = self._check_points(party, REMIX, message.deck)
        self._check_commitments(party, REMIX, message.commitments)
        return lifted

    def _receive_key(self, message: KeyRelease) -> None:
        party, slot = message.party, message.slot
        if party == self.me or not 0 <= party < self.context.parties:
            raise RemoteProtocolError(party, "key", f"no party {party} may send this key")
        if message.to is not None and message.to != self.me:
            raise RemoteProtocolError(party, "key", f"a key addressed to party {message.to}")
        if not self.in_play(slot) or party not in self.lockers[slot]:
            raise RemoteProtocolError(party, "key", f"no key of party {party} locks slot"
                                                    f" {slot} in play")
        if self.context.commitment(party, slot, message.key) != self.commitments[party, slot]:
            raise RemoteProtocolError(party, "key", f"the key of slot {slot} does not match"
                                                    " its commitment")
        self.keys.setdefault(slot, {})[party] = message.key
        self.releases.append(message)

    # ------------------------------------------------------------ opening

    def can_open(self, slot: int) -> bool:
        return self.in_play(slot) and set(self.keys.get(slot, {})) >= set(self.lockers[slot])

    def open(self, slot: int) -> int:
        """The card in ``slot`` (every key that locks it in hand)."""
        if slot in self.opened:
            return self.opened[slot]
        if not self.can_open(slot):
            raise LocalProtocolError(f"slot {slot} cannot be opened by party {self.me} yet")
        card = self.peek(slot, self.keys[slot])
        if card is None:
            raise RemoteProtocolError(None, "open", f"slot {slot} opens to no card",
                                      audit_now=True)
        if card in self.opened.values():
            raise RemoteProtocolError(None, "open", f"card {card} opened in two slots",
                                      audit_now=True)
        self.opened[slot] = card
        if self.holder.get(slot) != PUBLIC:  # every key came to this party: it holds it
            self.holder[slot] = self.me
        return card

    def peek(self, slot: int, keys: Mapping[int, int]) -> int | None:
        """The card ``slot`` opens to under ``keys`` (party -> key, every locker's), or
        None if that is no card; nothing is recorded (the caller checks the keys
        against their commitments first, :meth:`key_matches`)."""
        product = 1
        for party in self.lockers[slot]:
            product = product * keys[party] % N
        return self.card_of.get(self._times(inverse(product), self._lifted_point(slot)))

    def key_matches(self, party: int, slot: int, key: int) -> bool:
        """Whether ``key`` is ``party``'s committed key of ``slot`` (in play)."""
        return (self.in_play(slot) and party in self.lockers[slot]
                and self.context.commitment(party, slot, key) == self.commitments[party, slot])

    def _lifted_point(self, slot: int) -> bytes:
        point = self.points[slot]
        if point not in self.lifted:
            self.lifted.update(zip([point], lift_deck([point]), strict=True))
        return point

