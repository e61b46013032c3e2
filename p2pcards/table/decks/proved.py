"""The proved deck at the table: every step with its proof, checked before it is taken.

:class:`ProvedTableDeck` is the protocol's
:class:`~p2pcards.protocol.proved.deck.ProvedDeck` with the table's side of it
(:class:`~p2pcards.table.run.TableDeck`): key shares, shuffles and re-mixes
taken with their proofs (at a table of the pipelined rule a shuffle's proof by
the end of its round: docs/protocol.md, "Pipelined shuffles"), decryption shares
made and taken one set per recipient, a move's cards opened with every seat's
share, and the verdict read off the deal as everyone saw it: nothing is revealed
after a deal (docs/proved-deck.md).  A step the deck refuses, signed and in turn,
proves its sender cheated (:class:`~p2pcards.table.state.ProvenCheat`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.protocol.constants import PUBLIC
from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.errors import EarlyMessage
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.protocol.proved.deck import Refused as DeckRefused
from p2pcards.protocol.proved.messages import KeyShare, Remix, Shares, Shuffle
from p2pcards.protocol.proved.shuffle import shuffle_holds
from p2pcards.protocol.steps import DeckContext
from p2pcards.table.codec import Envelope, counted
from p2pcards.table.decks import PROVED, Flavor
from p2pcards.table.events import ForfeitReason
from p2pcards.table.kinds import Act, Audit, Kind, ProvedAct, ProvedShares, clip, printable
from p2pcards.table.proved import concluded
from p2pcards.table.replay import Outcome, forfeit
from p2pcards.table.roster import Roster
from p2pcards.table.run import DealHandler, DealRun, ProofJob, show
from p2pcards.table.state import (
    EVERYONE,
    NOTHING,
    Needs,
    ProvenCheat,
    RefusedMessage,
    Rule,
    Step,
    queue,
)


class ProvedTableDeck(ProvedDeck):
    """The proved deck, as a seat of ``roster`` deals with it (``flavor``: the proved
    deck's, or the pipelined rule's)."""

    def __init__(self, context: DeckContext, me: int, source: SecretSource, *,
                 roster: Roster, identity: Ed25519PrivateKey | None, flavor: Flavor = PROVED):
        super().__init__(context, me, source)
        self.roster = roster
        self._flavor = flavor
        self.carried = 0
        """How many steps of :attr:`log`, first, came on the moves of the deal before
        (a deck prepared ahead: docs/protocol.md, "Shuffle ahead"; 0 for any other)."""
        self.failed = False
        """Whether a deferred proof of a deck prepared ahead was found false in idle time
        (it stays pending, for its verdict when the deal begins; only such a deck's)."""

    @property
    def flavor(self) -> Flavor:
        return self._flavor

    def handlers(self) -> Mapping[type, DealHandler]:
        return {KeyShare: self.on_step, Shuffle: self.on_step, Remix: self.on_step,
                ProvedShares: self.on_shares}

    # ============================================================ taking messages

    def _take(self, run: DealRun, env: Envelope, message: KeyShare | Shuffle | Remix | Shares,
              *, defer: bool = False) -> None:
        """Another seat's message into the deck (``defer``: a shuffle taken with its
        proof left for later); a refusal is a proven cheat (the signed message is the
        proof: docs/protocol.md, "A refused step"), unless a shuffle taken before it
        without its check is refused first (the oldest cheat is the one every seat
        finds)."""
        try:
            self.receive(message, defer=defer)
        except DeckRefused as error:
            earlier = self.refusal(run)
            if earlier is not None:
                raise earlier from None
            raise ProvenCheat(Rule.DECK, f"{error.step}: {error.reason}",
                              detail=error.step) from None
        except EarlyMessage as error:  # (the transcript orders them: never at the table)
            raise RefusedMessage(Rule.DECK, str(error), env.kind) from None

    def on_step(self, run: DealRun, env: Envelope, message: KeyShare | Shuffle | Remix,
                step: Step) -> Needs:
        """A key share, a proved shuffle or a proved re-mix: checked by the deck (at a
        table of the pipelined rule a shuffle's proof later, by the end of its round: the
        next shuffler need not wait for it; a re-mix's at once, since the shares of its
        slots are due next)."""
        if env.sender != self.me:
            if isinstance(message, Remix) and message.slots != step.slots:
                raise RefusedMessage(Rule.REMIX, "a re-mix of other slots than the cards it"
                                                 " holds")
            self._take(run, env, message,
                       defer=self.flavor.pipelined and isinstance(message, Shuffle))
        if isinstance(message, Remix):
            return queue(run.ledger.remixed(env.sender, message))
        return NOTHING

    def on_shares(self, run: DealRun, env: Envelope, message: ProvedShares,
                  step: Step) -> Needs:
        """The shares of a deal step: one set per recipient, exactly as the step grants
        them, each share's proof checked (a bad one is a proven cheat)."""
        grants, sent = step_grants(step), sent_grants(message)
        if sent != grants:
            raise RefusedMessage(Rule.KEYS, f"shares of {sent}, not of the step's grants"
                                            f" {grants}")
        if env.sender != self.me:
            for shares in message.shares:
                self._take(run, env, shares)
        stop = False
        for recipient, slots in step.grants:
            for slot in slots:
                if recipient is EVERYONE:
                    run.ledger.knows[slot] = set(range(self.context.parties))
                    if self.can_open(slot):
                        stop = show(run, slot) or stop
        return Needs(stop=stop)

    # ============================================================ this seat's messages

    def key_release(self, run: DealRun, step: Step) -> ProvedShares:
        """This seat's decryption shares for a deal step's grants, one set per recipient."""
        return self.shares_for(step)

    def shares_for(self, step: Step) -> ProvedShares:
        """This seat's decryption shares for ``step``'s grants, one set per recipient."""
        return ProvedShares(party=self.me, shares=tuple(
            self.release(list(slots), None if recipient is EVERYONE else recipient)
            for recipient, slots in step.grants))

    def audit(self, run: DealRun) -> Audit:
        raise AssertionError("the proved deck reveals no secret after a deal")

    def move(self, action: str, shown: Sequence[int], slots: tuple[int, ...]) -> ProvedAct:
        """A move at a proved table: this seat's shares of the slots it shows that are not
        yet open to everyone (its own share is the one every other seat lacks)."""
        need = [s for s in shown if self.holder.get(s) != PUBLIC]
        return ProvedAct(party=self.me, action=action, shown=tuple(shown), slots=slots,
                         shares=self.release(need) if need else None)

    # ============================================================ moves

    def check_shown(self, run: DealRun, env: Envelope, message: Act | ProvedAct,
                    cards: list[int]) -> set[int]:
        """Every card the move shows comes from a slot its mover holds, and the mover's
        shares (checked: a bad one is a proven cheat) open it, with the other seats'
        shares in the transcript, to the card the move names (another card: a proven
        cheat, the signed move and the shares prove it).  Nothing is changed before a
        refusal that is not a proven cheat; a proven cheat ends the deal."""
        assert isinstance(message, ProvedAct)  # (the kind due at this table: its flavor's)
        sender = env.sender
        if len(message.shown) != len(cards):
            raise RefusedMessage(Rule.SLOTS, f"the move shows {len(cards)} card(s), the"
                                             f" message {len(message.shown)} slot(s)")
        for slot in message.shown:
            if run.ledger.place.get(slot) != sender or not self.in_play(slot):
                raise RefusedMessage(Rule.NOT_HELD, f"slot {slot} is not a card seat {sender}"
                                                    " holds")
        need = {s for s in message.shown if self.holder.get(s) != PUBLIC}
        given = set() if message.shares is None else set(message.shares.slots)
        if given != need and sender != self.me:  # (this seat's own shares are in its deck)
            raise RefusedMessage(Rule.KEYS, f"the mover's shares of slots {sorted(given)},"
                                            f" not of the slots not yet shown {sorted(need)}")
        if sender != self.me and message.shares is not None:
            self._take(run, env, message.shares)
        name = self.roster.rules.notation.name
        opened = []
        for slot in message.shown:
            if not self.can_open(slot):
                raise ProvenCheat(Rule.KEYS, f"slot {slot} shown without every seat's share")
            try:
                opened.append(run.ids[self.open(slot)])
            except DeckRefused as error:
                raise ProvenCheat(Rule.DECK, f"{error.step}: {error.reason}",
                                  detail=error.step) from None
        if sorted(opened) != sorted(cards):
            raise ProvenCheat(Rule.NOT_HELD, f"showed {' '.join(name(c) for c in opened)} as"
                                             f" {' '.join(name(c) for c in cards)}")
        return set()

    def open_shown(self, run: DealRun, sender: int, message: Act | ProvedAct,
                   doubles: set[int]) -> None:
        for slot in message.shown:
            assert isinstance(slot, int)
            run.shown[slot] = self.open(slot)

    # ============================================================ deferred proofs

    def unchecked(self, run: DealRun) -> int:
        return 0 if run.refuted is not None else len(self.pending)

    def waiting(self, run: DealRun) -> bool:
        return bool(self.pending) and not run.judged

    def check_deferred(self, run: DealRun, limit: int | None) -> None:
        """Check up to ``limit`` of the deal's deferred shuffle proofs, oldest first; the
        first that does not hold is kept (:attr:`DealRun.refuted`) for its verdict, which
        comes at the end of its round."""
        if run.refuted is not None:
            return
        try:
            self.check_pending(limit)
        except DeckRefused as error:
            assert error.party is not None  # (a proof names its shuffler)
            ahead = "ahead " if self.pending[0][0] < self.carried else ""
            run.refuted = (error.party, f"{ahead}{error.step}: {error.reason}")

    def proof_job(self) -> ProofJob | None:
        head = self.unchecked_head()
        if head is None or self.failed:
            return None
        statement, message = head
        return ProofJob(message, partial(shuffle_holds, statement, message.proof),
                        partial(self.vouch, message))

    def work_job(self) -> ProofJob | None:
        """This seat's own idle work on a deck prepared ahead, as a worker thread may do
        it (:meth:`work_ahead`'s order: its step, and its shares once every proof it
        holds is checked): drawn under the deck's lock, so the same bytes whichever
        thread draws them, and a step or a release that needs them waits for them."""
        if self.prepared is None and self.own_due() is not None:
            return ProofJob(self, partial(_done, self.prepare), _nothing)
        if self.shares_due and (not self.pending or self.failed):
            return ProofJob(self, partial(_done, self.make_shares), _nothing)
        return None

    def refusal(self, run: DealRun) -> ProvenCheat | None:
        self.check_deferred(run, None)
        if run.refuted is None or run.judged:
            return None
        seat, reason = run.refuted
        kind = Kind.PROVED_MOVE if reason.startswith("ahead ") else Kind.PROVED_SHUFFLE
        return ProvenCheat(Rule.DECK, reason, seat, kind,
                           detail=reason.partition(":")[0].removeprefix("ahead "))

    # ============================================================ a deck prepared ahead

    def work_ahead(self, limit: int | None) -> int:
        """Idle time, for a deck prepared ahead (docs/protocol.md, "Shuffle ahead"): this
        seat's own step made ready, then the proofs of the shuffles taken, oldest first
        (the first that does not hold is kept pending, for its verdict when the deal
        begins), then this seat's decryption shares of the deck once it is complete
        (made, kept: :meth:`make_shares`).  At most ``limit`` units of work; how many
        were done."""
        done = 0
        while limit is None or done < limit:
            if self.prepare():
                done += 1
                continue
            if not self.pending or self.failed:
                if self.make_shares():  # (kept here; none leaves before its deal)
                    done += 1
                    continue
                break
            try:
                self.check_pending(1)
            except DeckRefused:
                self.failed = True
            done += 1
        return done

    def take_early(self, message: ProvedShares) -> None:
        """Another seat's shares of this deck's first deal step, sent before the deal (on
        the agreement of the deal before): every set's proofs checked before any is taken
        (:class:`DeckRefused` at the first that does not hold, and nothing taken)."""
        if message.party == self.me:
            return  # (this seat's own were taken as it made them)
        for shares in message.shares:
            self._check_shares(shares)
        for shares in message.shares:
            self._accept(shares)

    def ahead_left(self) -> int:
        """The units of work :meth:`work_ahead` has still to do."""
        own = 0 if self.prepared is not None or self.own_due() is None else 1
        return own + (0 if self.failed else len(self.pending)) + self.shares_due

    # ============================================================ the verdict

    def conclude(self, run: DealRun, keep_states: bool) -> tuple[Outcome, str]:
        """The verdict of a deal of the proved deck: its cards never shown stay secret, so
        its record is the deal as everyone saw it (:mod:`p2pcards.table.proved`), and the
        points are the public view's: every move and every card shown was checked on
        arrival, and a card shown against its seat's claim proves a breach."""
        if run.public is not None:
            return concluded(run)
        setup = run.ledger.setup  # (an alarm before the deal was made: every card was
        seat = min(run.alarms)  # proven, it is false)
        return (forfeit(setup, run.ledger.blank_deck(), [], {}, seat=seat,
                        reason=ForfeitReason.REFUSED_STEP.value),
                clip(f"seat {seat} raised a false alarm ({clip(run.alarms[seat], 80)})"))

    # ============================================================ --explain

    def explain_rounds(self, names: list[str]) -> list[str]:
        """The key shares, shuffle rounds and re-mixes, each proof checked on arrival
        (docs/proved-deck.md)."""
        keys = [m for m in self.log if isinstance(m, KeyShare)]
        lines = [f"  proved deck: {counted(len(keys), 'key share')} from"
                 f" {', '.join(names[s] for s in sorted(k.party for k in keys))}, each with"
                 " its proof of knowledge checked on arrival"]
        if self.carried:
            lines.append(f"  shuffled ahead: {counted(self.carried, 'step')} of this deck came"
                         " on the moves of the deal before, each checked before any card"
                         " opened")
        for round_ in self.rounds:
            what = f"the {self.context.size} card points" if round_.inputs is None else \
                f"a reshuffle of {len(round_.inputs)} slots"
            lines.append(f"  deck round {round_.number} ({what}): {len(round_.shuffles)} of"
                         f" {self.context.parties} shuffles, each with its proof of a shuffle"
                         " checked on arrival: "
                         + ", ".join(names[m.party] for m in round_.shuffles))
        lines.extend(f"  re-mix by {names[m.party]} of the {len(m.slots)} cards it holds, its"
                     " proof of a shuffle checked on arrival"
                     for m in self.log if isinstance(m, Remix))
        return lines

    def explain_keys(self, run: DealRun, kinds: Counter[str]) -> list[str]:
        sets = [m for m in self.log if isinstance(m, Shares)]
        shown = sum(len(m.slots) for m in sets if m.to is None)
        dealt = sum(len(m.slots) for m in sets if m.to is not None)
        moves = kinds[Kind.PROVED_ACT] + kinds[Kind.PROVED_MOVE]
        return [f"  decryption shares: {counted(kinds[Kind.PROVED_SHARES], 'pshares message')}"
                f" and {counted(moves, 'move')}: {dealt} to one seat, {shown}"
                " to everyone, each with its proof checked on arrival"] if sets else []

    def explain_audit(self, run: DealRun, names: list[str], players: int) -> list[str]:
        lines = ["  audit: none; the proved deck checked every step on arrival and reveals"
                 " no secret, so the cards never shown stay secret"]
        record = run.outcome.record if run.outcome is not None else None
        if record is not None and record.public and record.penalty is not None:
            index, last = record.penalty["index"], len(record.actions) - 1
            text = record.actions[index][1] if index < len(record.actions) else "?"
            lines.append(f"  a card shown proves a breach: move {last},"
                         f" {printable(record.actions[last][1], 40)}, contradicts what"
                         f" {names[record.penalty['seat']]} claimed at move {index},"
                         f" {printable(text, 40)} ({printable(record.penalty['reason'], 40)})")
        return lines


def step_grants(step: Step) -> list[tuple[int | None, tuple[int, ...]]]:
    """A deal step's grants as a ``pshares`` names them: (recipient, None for everyone;
    its slots), in the step's order."""
    return [(None if r is EVERYONE else r, slots) for r, slots in step.grants]


def sent_grants(message: ProvedShares) -> list[tuple[int | None, tuple[int, ...]]]:
    """The grants a ``pshares`` (or a ``pagree``'s shares) names, in its order."""
    return [(s.to, s.slots) for s in message.shares]


def _done(work: Callable[[], bool]) -> bool:
    work()
    return True


def _nothing() -> None:
    return None
