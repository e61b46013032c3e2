"""The proved deck of one party, sans I/O (docs/proved-deck.md, "The state machine").

Every party runs a :class:`ProvedDeck` for the deal, driven like today's
:class:`~p2pcards.protocol.deck.Deck`: its own steps come out of :meth:`step`,
:meth:`release`, :meth:`remix`; other parties' messages go in through
:meth:`receive`; the caller moves them (the table session signs and sends them).

1. **Keys.**  Each party publishes ``X_i = x_i·G`` with a Schnorr proof bound to
   (table, deal, party), in any order; the joint key is their sum.
2. **Deck.**  Card ``c`` starts as the public encryption ``(G, M_c + K)``.
3. **Shuffles.**  In the round's order (``DeckContext.order``: round ``r`` starts
   at ``(deal + r) mod N``) each party re-encrypts and permutes the whole deck
   with a shuffle proof; a receiver checks it against the deck it holds before
   taking it.  When the round's last shuffle is in, its output becomes slots.
4. **Opening.**  A slot dealt to a seat: every other party sends its decryption
   share with a Chaum–Pedersen proof; the holder adds its own, privately.  A slot
   shown: every party's share.  No share of a slot leaves a party before every
   shuffle proof that made the slot has been checked (:meth:`release` refuses).
5. **Reshuffle** of slots in play (:meth:`begin_reshuffle`, a round ``r ≥ 1``,
   every party in turn) and **re-mix** (:meth:`remix`, the holder alone): a
   proved shuffle of those slots' ciphertexts; its output is appended as new
   slots and the old ones retire.

A refused step raises :class:`Refused` (a :class:`RemoteProtocolError`: party,
step, reason) and leaves this party's state as it was.  Nothing secret is ever
revealed; :func:`verify_deal` re-checks a recorded deal from its messages alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..constants import MAX_ROUNDS, MAX_SLOTS, OBSERVER, PUBLIC, Party
from ..curve import SecretSource
from ..errors import EarlyMessage, LocalProtocolError, RemoteProtocolError
from ..source import SystemSource
from ..steps import DeckContext
from .elgamal import (
    Ciphertext,
    card_points,
    combine,
    decryption_share,
    encode_deck,
    joint_key,
    key_share,
    public_encryption,
    shuffle,
)
from .group import IdentityPointError, Point, ProvedError, digest, u8, u64
from .messages import KeyShare, Message, Remix, Shares, Shuffle, decode_message
from .shuffle import ShuffleStatement, prove_shuffle, verify_shuffle
from .sigma import (
    Context,
    ProofError,
    ShareProof,
    first_bad_share,
    prove_key,
    prove_share,
    verify_key,
)

KEY, SHUFFLE, REMIX, SHARE, OPEN, MESSAGE = "key", "shuffle", "remix", "share", "open", "message"
DIGEST_DOMAIN = b"p2pcards/proved/deck-digest/v1"


class Refused(RemoteProtocolError, ProvedError):
    """Another party's step refused on arrival: ``party`` (None when the signed
    messages must decide between two), ``step`` (key, shuffle, remix, share, open,
    message) and ``reason``."""


def deck_digest(context: DeckContext, round_: int, deck: Sequence[Ciphertext]) -> bytes:
    """What a shuffle names as its input (``prior``): ``H(DIGEST_DOMAIN; table,
    u64(deal), u8(round), e_0 ‖ … ‖ e_{n-1})``."""
    return digest(DIGEST_DOMAIN, [context.table, u64(context.deal), u8(round_),
                                  encode_deck(deck)])


@dataclass(slots=True)
class ShuffleRound:
    """One proved shuffle of a deck by every party in turn (round 0: the card points)."""

    number: int
    inputs: tuple[int, ...] | None
    """The slots reshuffled, or None for round 0."""
    deck: tuple[Ciphertext, ...]
    """The deck the round starts from."""
    shuffles: list[Shuffle] = field(default_factory=list)


class ProvedDeck:
    """One party's side of the proved deck for one deal (``me`` = OBSERVER: a party
    that holds no secret and checks everything, as :func:`verify_deal` does)."""

    def __init__(self, context: DeckContext, me: int, source: SecretSource | None = None):
        if not (0 <= me < context.parties or me == OBSERVER):
            raise LocalProtocolError(f"party {me} is not at this table")
        self.context = context
        self.me = Party(me)
        self._source = SystemSource() if source is None else source
        self.cards = card_points(context.table, context.deal, context.size)
        self.card_of = {point: card for card, point in enumerate(self.cards)}
        self._x = 0
        if me != OBSERVER:
            self._x, self._public = key_share(self._source)
        self.publics: dict[int, Point] = {}
        """Party -> its key share's public point, once its proof has held."""
        self.key: Point | None = None
        """The joint key, once every key share is in."""
        self.rounds: list[ShuffleRound] = []
        self.log: list[Message] = []
        """Every message this party took, its own included, in order (the record)."""
        self.points: list[Ciphertext] = []
        """Slot -> its ciphertext."""
        self.lockers: list[tuple[int, ...]] = []
        """Slot -> the parties whose shares open it: every party, always (the joint
        key); kept so that the table asks for shares as it asks today's deck for keys."""
        self.origin: list[int] = []
        """Slot -> the position in :attr:`log` of the message that completed it."""
        self.retired: set[int] = set()
        self.pending: list[tuple[int, ShuffleStatement, Shuffle | Remix]] = []
        """Shuffles and re-mixes taken with ``defer=True`` whose proofs are not yet
        checked (log position, statement, message), oldest first."""
        self._drawing = threading.RLock()
        """Held while this party draws from its source (its step, its shares): a driver
        may make them in a worker thread (idle time), and the one that needs them then
        waits for them rather than draw them again."""
        self._vouched: dict[int, Shuffle | Remix] = {}
        """id -> a pending message whose proof was found to hold elsewhere (a worker
        thread: :meth:`vouch`); its check then costs nothing."""
        self.shares: dict[int, dict[int, Point]] = {}
        """Slot -> party -> its checked decryption share (this party's own too, once
        it computed it)."""
        self.opened: dict[int, int] = {}
        """Slot in play -> card, for the slots this party has opened."""
        self.holder: dict[int, int] = {}
        """Slot -> who holds it as far as this party knows: the party shares of it
        were last sent to (PUBLIC: shown), this party once it opened a slot dealt to
        it, the re-mixer of a re-mixed slot, or what :meth:`assign` says.  Shares
        travel in the record, so an observer replaying it knows the same."""
        self.remixes: dict[int, int] = {}
        """Party -> re-mixes it made this deal."""
        self._prepared: KeyShare | Shuffle | None = None
        """This party's due step, made in idle time and not yet taken (:meth:`prepare`)."""
        self.shares_ahead = False
        """Whether this party makes its decryption shares of every slot of round 0 at once,
        in slot order, before its first release (:meth:`make_shares`, in idle time or at
        that release): a deck prepared ahead, whose shares are on the next hand's path.
        (A slot's share is the same whoever it goes to; only its proof's nonce is drawn.)"""
        self._made_shares: dict[int, tuple[Point, ShareProof]] = {}
        """Slot -> this party's share and proof, made and not yet released."""
        self._shares_made = False

    # ---------------------------------------------------------------- state

    @property
    def current(self) -> ShuffleRound | None:
        return self.rounds[-1] if self.rounds else None

    def expected(self) -> tuple[str, int] | None:
        """The broadcast step due next and whose it is; None between rounds.  Key
        shares may come in any order: the first missing one in turn order is named."""
        if self.key is None:
            missing = [p for p in self.context.order(0) if p not in self.publics]
            return KEY, missing[0]
        round_ = self.rounds[-1]
        order = self.context.order(round_.number)
        if len(round_.shuffles) < len(order):
            return SHUFFLE, order[len(round_.shuffles)]
        return None

    def in_play(self, slot: int) -> bool:
        return 0 <= slot < len(self.points) and slot not in self.retired

    def checked(self, slot: int) -> bool:
        """Whether every proof that made ``slot`` has been checked (pending ones are
        checked oldest first, so none before the slot's last message is left)."""
        return not self.pending or self.pending[0][0] > self.origin[slot]

    def _deck_now(self, round_: ShuffleRound) -> tuple[Ciphertext, ...]:
        return round_.shuffles[-1].deck if round_.shuffles else round_.deck

    def _context(self, party: int) -> Context:
        return Context(self.context.table, self.context.deal, party)

    # ---------------------------------------------------------- own steps

    def step(self, forge: Callable[[Message], Message] | None = None) -> KeyShare | Shuffle:
        """This party's broadcast step that is due: its key share (as long as it has
        not sent it), else its shuffle in its turn (made earlier by :meth:`prepare`, or
        now).  ``forge``: a cheat for tests, applied before this party takes the message
        as its own."""
        with self._drawing:
            message: Message = self._prepared if self._prepared is not None else self._make()
            self._prepared = None
        if forge is not None:
            message = forge(message)
        assert isinstance(message, KeyShare | Shuffle)
        self._accept(message)
        return message

    def own_due(self) -> str | None:
        """This party's step of the deck due from it now, if any: KEY (its key share not
        yet taken) or SHUFFLE (its turn in the round under way)."""
        if self.me == OBSERVER:
            return None
        if self.me not in self.publics:
            return KEY
        return SHUFFLE if self.expected() == (SHUFFLE, self.me) else None

    def prepare(self) -> bool:
        """Make this party's step due now (:meth:`own_due`) without taking it, for
        :meth:`step` to send later: the work done in idle time.  The secrets are drawn
        in the order :meth:`step` would draw them, so the message is the same either
        way.  Whether one was made now."""
        with self._drawing:
            if self._prepared is not None or self.own_due() is None:
                return False
            self._prepared = self._make()
            return True

    def make_shares(self) -> bool:
        """With :attr:`shares_ahead`, once round 0 is complete: this party's decryption
        share of every slot of round 0, with its proof, made now in slot order and kept
        (none leaves: :meth:`release` sends them, as it checks its slots).  Made once,
        whenever it comes first, so the nonces are drawn in the same order whether it
        ran in idle time or at the first release.  Whether it ran now."""
        with self._drawing:
            if not self.shares_due:
                return False
            context = self._context(self.me)
            self._made_shares = {s: prove_share(context, self._x, self.points[s],
                                                self._source, public=self._public)
                                 for s in range(self.context.size)}
            self._shares_made = True
            return True

    @property
    def shares_due(self) -> bool:
        """Whether :meth:`make_shares` has work to do now: round 0 is complete (its slots
        are the first ``size``), and they are not made yet."""
        return self.shares_ahead and not self._shares_made and self.me != OBSERVER \
            and len(self.points) >= self.context.size

    @property
    def prepared(self) -> KeyShare | Shuffle | None:
        """This party's due step, if made already (:meth:`prepare`) and not yet taken."""
        return self._prepared

    def _make(self) -> KeyShare | Shuffle:
        if self.me == OBSERVER:
            raise LocalProtocolError("an observer takes no step")
        if self.me not in self.publics:
            return KeyShare(party=self.me, public=self._public,
                            proof=prove_key(self._context(self.me), self._x, self._source))
        due = self.expected()
        if due != (SHUFFLE, self.me):
            raise LocalProtocolError(f"not party {self.me}'s turn (due: {due})")
        round_ = self.rounds[-1]
        assert self.key is not None
        now = self._deck_now(round_)
        out, permutation, randomness = shuffle(now, self.key, self._source)
        statement = ShuffleStatement(self._context(self.me), self.key, now, out)
        return Shuffle(party=self.me, round=round_.number, slots=round_.inputs or (),
                       prior=deck_digest(self.context, round_.number, now), deck=out,
                       proof=prove_shuffle(statement, permutation, randomness, self._source))

    def begin_reshuffle(self, slots: Sequence[int]) -> None:
        """Start a reshuffle of ``slots`` (every party calls it with the same slots):
        round ``len(rounds)``, every party shuffles them in turn."""
        chosen = tuple(slots)
        if self.key is None or self.expected() is not None:
            raise LocalProtocolError("a round is still under way")
        problem = self._reshuffle_problem(chosen)
        if problem:
            raise LocalProtocolError(problem)
        self.rounds.append(ShuffleRound(len(self.rounds), chosen,
                                 tuple(self.points[s] for s in chosen)))

    def _reshuffle_problem(self, chosen: tuple[int, ...]) -> str | None:
        if len(set(chosen)) != len(chosen) or len(chosen) < 2:
            return "a reshuffle takes two or more distinct slots"
        for slot in chosen:
            if not self.in_play(slot):
                return f"slot {slot} is not in play"
        if len(self.rounds) >= MAX_ROUNDS or len(self.points) + len(chosen) > MAX_SLOTS:
            return f"at most {MAX_ROUNDS} rounds and {MAX_SLOTS} slots a deal"
        return None

    def remix(self, slots: Sequence[int]) -> Remix:
        """A proved shuffle of cards this party holds (it opened them), by it alone:
        new slots whose order says nothing to the others; it knows their cards."""
        chosen = tuple(slots)
        if self.me == OBSERVER or self.key is None or self.expected() is not None:
            raise LocalProtocolError("no re-mix before the deck is dealt or during a round")
        if len(set(chosen)) != len(chosen) or not chosen:
            raise LocalProtocolError("a re-mix takes distinct slots")
        if self.remixes.get(self.me, 0) >= MAX_ROUNDS or len(self.points) + len(chosen) > MAX_SLOTS:
            raise LocalProtocolError(f"at most {MAX_ROUNDS} re-mixes and {MAX_SLOTS} slots")
        for slot in chosen:
            if not self.in_play(slot) or slot not in self.opened \
                    or self.holder.get(slot, self.me) != self.me:
                raise LocalProtocolError(f"slot {slot} is not a card this party holds")
        inputs = tuple(self.points[s] for s in chosen)
        out, permutation, randomness = shuffle(inputs, self.key, self._source)
        statement = ShuffleStatement(self._context(self.me), self.key, inputs, out)
        message = Remix(party=self.me, slots=chosen, deck=out,
                        proof=prove_shuffle(statement, permutation, randomness, self._source))
        first = len(self.points)
        cards = [self.opened[chosen[i]] for i in permutation]
        self._accept(message)
        for m, card in enumerate(cards):
            self.opened[first + m] = card
        return message

    def release(self, slots: Sequence[int], to: int | None = None) -> Shares:
        """This party's decryption shares of ``slots`` with their proofs, for party
        ``to`` or everyone (None).  Refused (LocalProtocolError) for a slot not in
        play or one whose shuffle proofs are not all checked yet."""
        chosen = tuple(slots)
        if self.me == OBSERVER or self.key is None:
            raise LocalProtocolError("no share to release")
        if to is not None and (not 0 <= to < self.context.parties or to == self.me):
            raise LocalProtocolError(f"no shares of party {self.me} go to party {to}")
        if len(set(chosen)) != len(chosen) or not chosen:
            raise LocalProtocolError("a release names distinct slots")
        for slot in chosen:
            if not self.in_play(slot):
                raise LocalProtocolError(f"slot {slot} is not in play")
            if not self.checked(slot):
                raise LocalProtocolError(f"slot {slot}: not every shuffle proof that made it"
                                         " has been checked; no share leaves before")
        with self._drawing:
            self.make_shares()
            context = self._context(self.me)
            made = [self._made_shares.pop(s) if s in self._made_shares
                    else prove_share(context, self._x, self.points[s], self._source,
                                     public=self._public) for s in chosen]
        message = Shares(party=self.me, to=to, slots=chosen,
                         shares=tuple(d for d, _ in made), proofs=tuple(p for _, p in made))
        self._accept(message)
        return message

    # ---------------------------------------------------------- arrivals

    def receive(self, message: Message | bytes, *, defer: bool = False) -> None:
        """Another party's message (or its bytes); :class:`Refused` (and no change)
        if it breaks the protocol, EarlyMessage if it is due after ones not yet
        here.  ``defer``: take a shuffle or re-mix now and check its proof later
        (:meth:`check_pending`); no share of the slots it makes leaves before."""
        if isinstance(message, bytes | bytearray):
            message = decode_message(bytes(message))
        if not isinstance(message, KeyShare | Shuffle | Remix | Shares):
            raise Refused(None, MESSAGE, f"not a proved deck message: {type(message).__name__}")
        party = message.party
        if party == self.me:
            raise Refused(party, MESSAGE, "in this party's own name")
        if not 0 <= party < self.context.parties:
            raise Refused(party, MESSAGE, f"no party {party} at this table")
        if isinstance(message, KeyShare):
            self._check_key(message)
        elif isinstance(message, Shares):
            self._check_shares(message)
        else:
            proved: Shuffle | Remix = message
            statement = (self._check_shuffle(proved) if isinstance(proved, Shuffle)
                         else self._check_remix(proved))
            if defer:
                self._accept(proved)
                self.pending.append((len(self.log) - 1, statement, proved))
                return
            self._verify(statement, proved)
        self._accept(message)

    def check_pending(self, limit: int | None = None) -> None:
        """Check the proofs of the deferred shuffles and re-mixes, oldest first (at
        most ``limit`` of them: a caller checking in idle time goes one at a time);
        Refused at the first that does not hold (and it stays pending: the deal
        cannot go on)."""
        checked = 0
        while self.pending and (limit is None or checked < limit):
            _, statement, message = self.pending[0]
            self._verify(statement, message)
            self.pending.pop(0)
            checked += 1

    def unchecked_head(self) -> tuple[ShuffleStatement, Shuffle | Remix] | None:
        """The statement and message whose proof :meth:`check_pending` checks next (None:
        none is pending, or it is vouched for already).  The statement's values are
        immutable: another thread may check the proof (:func:`shuffle_holds`) while this
        deck goes on, and :meth:`vouch` for it once it holds."""
        if not self.pending:
            return None
        _, statement, message = self.pending[0]
        return None if self._vouched.get(id(message)) is message else (statement, message)

    def vouch(self, message: Shuffle | Remix) -> None:
        """``message``'s proof was checked elsewhere and holds (a worker thread, with the
        statement :meth:`unchecked_head` gave): its turn in :meth:`check_pending` takes
        it without checking it again.  Nothing if it is no longer pending."""
        if any(pending is message for _, _, pending in self.pending):
            self._vouched[id(message)] = message

    def _verify(self, statement: ShuffleStatement, message: Shuffle | Remix) -> None:
        if self._vouched.pop(id(message), None) is message:
            return
        step = SHUFFLE if isinstance(message, Shuffle) else REMIX
        try:
            verify_shuffle(statement, message.proof)
        except ProofError as error:
            raise Refused(message.party, step,
                          f"its shuffle proof: {str(error).partition(': ')[2]}") from None

    def _check_key(self, message: KeyShare) -> None:
        if message.party in self.publics:
            raise Refused(message.party, KEY, "a second key share")
        try:
            verify_key(self._context(message.party), message.public, message.proof)
        except ProofError as error:
            raise Refused(message.party, KEY, "its proof of knowledge does not hold"
                          f" ({error.check})") from None
        if len(self.publics) == self.context.parties - 1:
            try:
                joint_key([*self.publics.values(), message.public])
            except IdentityPointError:
                raise Refused(message.party, KEY, "the key shares sum to the identity") from None

    def _check_shuffle(self, message: Shuffle) -> ShuffleStatement:
        party = message.party
        if self.key is None:
            raise EarlyMessage(f"party {party}'s shuffle came before every key share")
        round_ = self.rounds[-1]
        due = self.expected()
        if message.round > round_.number + 1:
            raise Refused(party, SHUFFLE, f"a shuffle of round {message.round} during round"
                                          f" {round_.number}")
        if message.round == round_.number + 1 and due is None:
            raise EarlyMessage(f"party {party}'s shuffle of round {message.round} came before"
                               " this party began that reshuffle")
        if message.round == round_.number and due is not None:
            order = self.context.order(round_.number)
            if party in order[len(round_.shuffles) + 1:]:
                raise EarlyMessage(f"party {party}'s shuffle came before {due}")
        if due != (SHUFFLE, party) or message.round != round_.number:
            raise Refused(party, SHUFFLE, f"out of order (due: {due} of round {round_.number})")
        if message.slots != (round_.inputs or ()):
            raise Refused(party, SHUFFLE, "a shuffle of other slots than the round's")
        now = self._deck_now(round_)
        if message.prior != deck_digest(self.context, round_.number, now):
            earlier = (f"party {round_.shuffles[-1].party}" if round_.shuffles
                       else "the sender of a key share" if round_.number == 0
                       else "the sender of an earlier step")
            raise Refused(None, SHUFFLE, f"party {party} computed its shuffle from another deck"
                          f" than this party holds: party {party} or {earlier} sent"
                          " different versions of a step (their signed messages decide)")
        if len(message.deck) != len(now):
            raise Refused(party, SHUFFLE, f"a deck of {len(message.deck)} ciphertexts, not"
                                          f" {len(now)}")
        assert self.key is not None
        return ShuffleStatement(self._context(party), self.key, now, message.deck)

    def _check_remix(self, message: Remix) -> ShuffleStatement:
        party = message.party
        if self.key is None or self.expected() is not None:
            raise Refused(party, REMIX, "a re-mix before the deck is dealt or during a round")
        if len(set(message.slots)) != len(message.slots):
            raise Refused(party, REMIX, "a slot named twice")
        if self.remixes.get(party, 0) >= MAX_ROUNDS \
                or len(self.points) + len(message.slots) > MAX_SLOTS:
            raise Refused(party, REMIX, f"more than {MAX_ROUNDS} re-mixes or {MAX_SLOTS} slots")
        for slot in message.slots:
            if not self.in_play(slot):
                raise Refused(party, REMIX, f"slot {slot} is not in play")
            held = self.holder.get(slot)
            if held == PUBLIC:
                raise Refused(party, REMIX, f"slot {slot} was shown to everyone")
            if held is None:
                raise Refused(party, REMIX, f"slot {slot} was never given to party {party}"
                                            f" as far as party {self.me} knows")
            if held != party:
                raise Refused(party, REMIX, f"slot {slot} is held by party {held}")
        return ShuffleStatement(self._context(party), self.key,
                                tuple(self.points[s] for s in message.slots), message.deck)

    def _check_shares(self, message: Shares) -> None:
        party = message.party
        if self.key is None:
            raise EarlyMessage(f"party {party}'s shares came before every key share")
        if message.to is not None and message.to >= self.context.parties:
            raise Refused(party, SHARE, f"shares for party {message.to}, not at this table")
        items = list(zip(message.slots, message.shares, message.proofs, strict=True))
        problem: Exception | None = None  # (the first slot that cannot be taken, if any)
        for n, (slot, _, _) in enumerate(items):
            if slot >= len(self.points) and self.expected() is not None:
                problem = EarlyMessage(f"party {party}'s share of slot {slot} came during"
                                       " a round")
            elif not self.in_play(slot):
                problem = Refused(party, SHARE, f"slot {slot} is not in play")
            if problem is not None:
                del items[n:]
                break
        bad = first_bad_share(self._context(party), self.publics[party],
                              [(self.points[slot], share, proof) for slot, share, proof in items])
        if bad is not None:  # (the slots before the first that cannot be taken, in order)
            raise Refused(party, SHARE, f"slot {items[bad[0]][0]}: its proof does not hold"
                                        f" ({bad[1]})")
        if problem is not None:
            raise problem

    def _accept(self, message: Message) -> None:
        self.log.append(message)
        if isinstance(message, KeyShare):
            self.publics[message.party] = message.public
            if len(self.publics) == self.context.parties:
                self.key = joint_key(self.publics[p] for p in range(self.context.parties))
                self.rounds.append(ShuffleRound(0, None, tuple(public_encryption(m, self.key)
                                                        for m in self.cards)))
        elif isinstance(message, Shares):
            for slot, share in zip(message.slots, message.shares, strict=True):
                self.shares.setdefault(slot, {})[message.party] = share
                self.holder[slot] = PUBLIC if message.to is None else message.to
        elif isinstance(message, Shuffle):
            round_ = self.rounds[-1]
            round_.shuffles.append(message)
            if self.expected() is None:  # the round is complete: its output is slots
                self._append(message.deck)
                for slot in round_.inputs or ():
                    self._retire(slot)
        else:
            self.remixes[message.party] = self.remixes.get(message.party, 0) + 1
            self._append(message.deck)
            for m in range(len(message.deck)):
                self.holder[len(self.points) - len(message.deck) + m] = message.party
            for slot in message.slots:
                self._retire(slot)

    def _append(self, deck: Sequence[Ciphertext]) -> None:
        self.points.extend(deck)
        self.lockers.extend([tuple(range(self.context.parties))] * len(deck))
        self.origin.extend([len(self.log) - 1] * len(deck))

    def _retire(self, slot: int) -> None:
        self.retired.add(slot)
        self.opened.pop(slot, None)

    def assign(self, slot: int, party: int) -> None:
        """Record a public fact of the game: ``party`` now holds ``slot``."""
        if not self.in_play(slot) or not 0 <= party < self.context.parties:
            raise LocalProtocolError(f"no slot {slot} in play or no party {party}")
        self.holder[slot] = party

    # ------------------------------------------------------------ opening

    def can_open(self, slot: int) -> bool:
        """Whether this party has every share of ``slot`` but its own (an observer:
        every share), and every proof that made the slot is checked."""
        if slot in self.opened:
            return True
        if not self.in_play(slot) or not self.checked(slot):
            return False
        have = self.shares.get(slot, {})
        return all(p in have or p == self.me for p in range(self.context.parties))

    def open(self, slot: int) -> int:
        """The card in ``slot`` (every other party's share in hand; this party adds
        its own, which it never sends unless it shows the slot)."""
        if slot in self.opened:
            return self.opened[slot]
        if not self.can_open(slot):
            raise LocalProtocolError(f"slot {slot} cannot be opened by party {self.me} yet")
        have = dict(self.shares.get(slot, {}))
        if self.me != OBSERVER and self.me not in have:
            have[self.me] = decryption_share(self.points[slot], self._x)
        try:
            card = self.card_of.get(combine(self.points[slot], list(have.values())))
        except IdentityPointError:
            card = None
        if card is None:
            raise Refused(None, OPEN, f"slot {slot} opens to no card")
        if card in self.opened.values():
            raise Refused(None, OPEN, f"card {card} opened in two slots")
        self.opened[slot] = card
        if self.holder.get(slot) != PUBLIC:
            self.holder[slot] = self.me
        return card


def verify_deal(context: DeckContext, messages: Iterable[Message | bytes]) -> ProvedDeck:
    """Re-check a recorded deal offline from its messages alone, in the order they
    were taken: every key proof, shuffle proof, re-mix proof and share proof, the
    turn order and the slots.  Returns the observer's deck (``opened``: every slot
    shown to everyone, with its card); Refused naming the party and step at the
    first message that does not hold."""
    deck = ProvedDeck(context, OBSERVER)
    for message in messages:
        if isinstance(message, bytes | bytearray):
            message = decode_message(bytes(message))
        if isinstance(message, Shuffle) and message.round == len(deck.rounds) \
                and deck.expected() is None:
            try:
                deck.begin_reshuffle(message.slots)
            except LocalProtocolError as error:
                raise Refused(message.party, SHUFFLE, str(error)) from None
        try:
            deck.receive(message)
        except EarlyMessage as error:
            raise Refused(message.party, MESSAGE, f"out of order in the record: {error}"
                          ) from None
        if isinstance(message, Shares):
            for slot in message.slots:
                if deck.can_open(slot):
                    deck.open(slot)
    return deck
