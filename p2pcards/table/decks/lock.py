"""Today's deck at the table: commutative locks, keys sealed to their seat, the audit.

:class:`LockTableDeck` is the protocol's :class:`~p2pcards.protocol.deck.Deck` with
the table's side of it (:class:`~p2pcards.table.run.TableDeck`): its passes and
re-mixes taken, its key releases made and taken (each key shown to everyone
checked against its commitment, each sealed one opened and checked by its
recipient), a move's cards shown with every key of their slots, and after the
deal every seat's secrets revealed and the verdict reached by
:func:`~p2pcards.table.judge.judge`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.deck import Deck, Round
from p2pcards.protocol.errors import EarlyMessage, RemoteProtocolError
from p2pcards.protocol.messages import KeyRelease, Locked, Remixed, Shuffled, Unlocked
from p2pcards.protocol.steps import DeckContext
from p2pcards.table.codec import Envelope, counted, private_bytes, seal
from p2pcards.table.decks import LOCK, Flavor
from p2pcards.table.events import ForfeitReason
from p2pcards.table.judge import Deal, KeyStep, judge, open_sealed
from p2pcards.table.kinds import Act, Audit, Keys, ProvedAct, clip, printable
from p2pcards.table.replay import Outcome
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
)

_PASS = {Unlocked: "unlock", Shuffled: "shuffle", Locked: "lock"}


class LockTableDeck(Deck):
    """Today's deck, as a seat of ``roster`` deals with it (``identity``: the seat's,
    which seals its keys; None for a session that only checks)."""

    def __init__(self, context: DeckContext, me: int, source: SecretSource, *,
                 roster: Roster, identity: Ed25519PrivateKey | None, flavor: Flavor = LOCK):
        super().__init__(context, me, source)
        self.roster = roster
        self.identity = identity
        self._flavor = flavor

    @property
    def flavor(self) -> Flavor:
        return self._flavor

    def handlers(self) -> Mapping[type, DealHandler]:
        return {Unlocked: self.on_pass, Shuffled: self.on_pass, Locked: self.on_pass,
                Remixed: self.on_pass, Keys: self.on_keys}

    # ============================================================ taking messages

    def on_pass(self, run: DealRun, env: Envelope,
                message: Unlocked | Shuffled | Locked | Remixed, step: Step) -> Needs:
        """A pass of the deck (unlock, shuffle, lock) or a re-mix."""
        if env.sender != self.me:
            if isinstance(message, Remixed) and message.slots != step.slots:
                raise RefusedMessage(Rule.REMIX, "a re-mix of other slots than the cards"
                                                 " it holds")
            try:
                self.receive(message)
            except (RemoteProtocolError, EarlyMessage) as error:
                raise RefusedMessage(Rule.DECK, str(error), env.kind) from None
        if isinstance(message, Remixed):
            run.ledger.remixed(env.sender, message)
        return NOTHING

    def on_keys(self, run: DealRun, env: Envelope, message: Keys, step: Step) -> Needs:
        """A key release: the public keys and, sealed, the keys for each recipient, exactly
        as the step grants them."""
        sender, me = env.sender, self.me
        grants = dict(step.grants)
        private = {r for r in grants if r is not EVERYONE}
        if {r for r, _ in message.sealed} != private:
            raise RefusedMessage(Rule.KEYS, f"sealed keys for seats"
                                            f" {sorted(r for r, _ in message.sealed)},"
                                            f" not {sorted(private)}")
        if [s for s, _ in message.public] != list(grants.get(EVERYONE, ())):
            raise RefusedMessage(Rule.KEYS, "public keys of other slots than the step shows")
        for slot, key in message.public:
            if not self.key_matches(sender, slot, key):
                raise RefusedMessage(Rule.KEY, f"the key of slot {slot} does not match its"
                                               " commitment")
        releases = [KeyRelease(party=sender, slot=s, key=k) for s, k in message.public]
        mine = dict(message.sealed).get(me)
        if mine is not None and sender != me:
            pairs, problem = self._unseal_keys(run, sender, mine, grants[me])
            if problem:  # signed and in turn: taken, and reported for the audit
                run.problem = run.problem or f"seat {sender}: {problem}"
            else:
                releases += [KeyRelease(party=sender, slot=s, key=k, to=me) for s, k in pairs]
        run.key_steps.append((sender, step, message))
        if sender != me:
            for release in releases:
                self.receive(release)
        stop = False
        for recipient, slots in grants.items():
            for slot in slots:
                if recipient is EVERYONE:
                    run.ledger.knows[slot] = set(range(self.context.parties))
                    if self.can_open(slot):
                        stop = show(run, slot) or stop
                elif me not in (sender, recipient):
                    self.holder[slot] = recipient
        return Needs(stop=stop)

    def _unseal_keys(self, run: DealRun, sender: int, sealed: bytes,
                     slots: tuple[int, ...]) -> tuple[tuple[tuple[int, int], ...], str]:
        """The keys ``sender`` sealed to this seat, or what is wrong with them."""
        pairs, problem = open_sealed(sealed, run.seal_private, self.roster.keys[sender],
                                     table=self.context.table, deal=run.index, sender=sender,
                                     recipient=self.me, slots=slots)
        for slot, key in pairs:
            if not self.key_matches(sender, slot, key):
                return (), f"the key of slot {slot} sent to seat {self.me} does not match" \
                           " its commitment"
        return pairs, problem

    # ============================================================ this seat's messages

    def key_release(self, run: DealRun, step: Step) -> Keys:
        sealed = []
        public: list[tuple[int, int]] = []
        for recipient, slots in step.grants:
            if recipient is EVERYONE:
                public.extend((s, self.release(s).key) for s in slots)
                continue
            content = [[s, self.release(s, recipient).key.to_bytes(32, "big")] for s in slots]
            assert self.identity is not None
            sealed.append((recipient, seal(self.identity, run.seal_keys[recipient],
                                           table=self.context.table, deal=run.index,
                                           sender=self.me, recipient=recipient,
                                           content=content)))
        return Keys(sealed=tuple(sealed), public=tuple(public))

    def audit(self, run: DealRun) -> Audit:
        return Audit(reveal=self.secrets(), seal_secret=private_bytes(run.seal_private))

    def move(self, action: str, shown: Sequence[int], slots: tuple[int, ...]) -> Act:
        return Act(action=action, shown=tuple((slot, tuple(sorted(self.keys[slot].items())))
                                              for slot in shown), slots=slots)

    # ============================================================ moves

    def check_shown(self, run: DealRun, env: Envelope, message: Act | ProvedAct,
                    cards: list[int]) -> set[int]:
        """Every card the move shows comes from a slot its sender holds, with every key of
        the slot, and the slots open to exactly those cards; returns the slots whose card
        this seat has privately opened elsewhere (its own: proof of a cheat that only it
        can see)."""
        assert isinstance(message, Act)  # (the kind due at this table: its flavor's act)
        sender = env.sender
        if len(message.shown) != len(cards):
            raise RefusedMessage(Rule.SLOTS, f"the move shows {len(cards)} card(s), the"
                                             f" message {len(message.shown)} slot(s)")
        name = self.roster.rules.notation.name
        opened = []
        doubles: set[int] = set()
        for slot, pairs in message.shown:
            if run.ledger.place.get(slot) != sender or not self.in_play(slot):
                raise RefusedMessage(Rule.NOT_HELD, f"slot {slot} is not a card seat {sender}"
                                                    " holds")
            keys = dict(pairs)
            if len(keys) != len(pairs) or set(keys) != set(self.lockers[slot]):
                raise RefusedMessage(Rule.KEYS, f"slot {slot} needs the keys of seats"
                                                f" {list(self.lockers[slot])}")
            for party, key in keys.items():
                if not self.key_matches(party, slot, key):
                    raise RefusedMessage(Rule.KEY, f"seat {party}'s key of slot {slot} does"
                                                   " not match its commitment")
            card = self.peek(slot, keys)
            if card is None:
                raise RefusedMessage(Rule.NOT_HELD, f"slot {slot} opens to no card")
            for other, seen in self.opened.items():
                if seen == card and other != slot:
                    if run.ledger.shown_to_all(other):
                        raise RefusedMessage(Rule.NOT_HELD, f"slot {slot} holds a card already"
                                                            " shown")
                    doubles.add(slot)
            opened.append(run.ids[card])
        if sorted(opened) != sorted(cards):
            told = " ".join(name(c) for c in opened) or "nothing"
            raise RefusedMessage(Rule.NOT_HELD, f"showed {told} as"
                                                f" {' '.join(name(c) for c in cards)}")
        return doubles

    def open_shown(self, run: DealRun, sender: int, message: Act | ProvedAct,
                   doubles: set[int]) -> None:
        assert isinstance(message, Act)
        if sender == self.me:
            return
        for slot, keys in message.shown:
            for party, key in keys:
                if party != self.me and party not in self.keys.get(slot, {}):
                    self.receive(KeyRelease(party=party, slot=slot, key=key))
            if slot not in doubles:
                self.open(slot)

    # ============================================================ no deferred proofs

    def unchecked(self, run: DealRun) -> int:
        return 0

    def waiting(self, run: DealRun) -> bool:
        return False

    def check_deferred(self, run: DealRun, limit: int | None) -> None:
        return None

    def proof_job(self) -> ProofJob | None:
        return None

    def refusal(self, run: DealRun) -> ProvenCheat | None:
        return None

    # ============================================================ the verdict

    def conclude(self, run: DealRun, keep_states: bool) -> tuple[Outcome, str]:
        """The audited deal's verdict (:func:`~p2pcards.table.judge.judge`); with every
        seat's consent, the deal is void (it does not count)."""
        deal = Deal(
            run.ledger.setup, run.ids, self.context, self.log, self.releases,
            [KeyStep(sender, step.grants, message) for sender, step, message in run.key_steps],
            [(seat, act) for seat, act in run.acts if isinstance(act, Act)], run.alarms,
            {s: a.reveal for s, a in run.audits.items()},
            {s: a.seal_secret for s, a in run.audits.items()}, self.roster.keys,
            run.ledger.blank_deck())
        outcome, verdict = judge(deal, lifted=self.lifted, keep_states=keep_states)
        if run.consented:
            record = outcome.record
            record.void, record.reason = True, run.consented
            record.actions, record.penalty, record.forfeit = [], None, None
            verdict = clip(f"void: {run.consented}")
        return outcome, verdict

    # ============================================================ --explain

    def explain_rounds(self, names: list[str]) -> list[str]:
        """Each round of the deck pass by pass (whose, and the deck its ``prior`` names),
        and each re-mix."""
        lines = []
        for entry in self.log:
            if isinstance(entry, Remixed):
                lines.append(f"  re-mix by {names[entry.party]} of the {len(entry.slots)}"
                             f" cards it holds: {len(entry.commitments)} new slots, each with"
                             " a key commitment")
                continue
            passes: list[Unlocked | Shuffled | Locked] = [*entry.unlocks, *entry.shuffles,
                                                          *entry.locks]
            what = f"the {self.context.size} card points" if entry.inputs is None else \
                f"a reshuffle of {len(entry.inputs)} slots"
            lines.append(f"  deck round {entry.number} ({what}): {len(passes)} of"
                         f" {len(entry.passes()) * self.context.parties} passes, each"
                         " computed from the deck before it, which its prior names")
            before = "the card points" if entry.inputs is None else "the slots reshuffled"
            for k, message in enumerate(passes, 1):
                made = f"{_PASS[type(message)]} by {names[message.party]}"
                extra = f"; {len(message.commitments)} key commitments" \
                    if isinstance(message, Locked) else ""
                lines.append(f"    {k}. {made}, from {before} (prior"
                             f" {message.prior.hex()[:12]}){extra}")
                before = f"{names[message.party]}'s {_PASS[type(message)]}"
        return lines

    def explain_keys(self, run: DealRun, kinds: Counter[str]) -> list[str]:
        public = sum(len(message.public) for _, _, message in run.key_steps)
        sealed = sum(len(slots) for _, step, _ in run.key_steps
                     for recipient, slots in step.grants if recipient is not EVERYONE)
        if not run.key_steps:
            return []
        parts = []
        if public:
            parts.append(f"{public} shown to everyone, each checked against its"
                         " commitment on arrival")
        if sealed:
            parts.append(f"{sealed} sealed to the key of the hello of the seat"
                         " they are for, opened and checked at the audit")
        return [f"  key releases: {counted(kinds[self.flavor.keys], 'keys message')} with"
                f" {counted(public + sealed, 'key')}: {'; '.join(parts) or 'none'}"]

    def explain_audit(self, run: DealRun, names: list[str], players: int) -> list[str]:
        outcome = run.outcome
        record = outcome.record if outcome is not None else None
        who = ", ".join(names[s] for s in sorted(run.audits)) or "no seat"
        revealed = f"secrets revealed by {who} ({counted(len(run.audits), 'audit message')}," \
            " each sealing secret matching its hello)"
        if record is None or not run.audits:
            return ["  audit: none, the deal ended before it"]
        if len(run.audits) < players:
            return [f"  audit: {revealed}, not every seat's: no audit"]
        forfeit = record.forfeit
        if forfeit is not None and forfeit.get("reason") == ForfeitReason.REFUSED_AUDIT:
            return [f"  audit: {revealed}; it finds a breach: {printable(run.verdict, 200)}"]
        rounds = [e for e in self.log if isinstance(e, Round)]
        remixes = [e for e in self.log if isinstance(e, Remixed)]
        passes = sum(len(r.unlocks) + len(r.shuffles) + len(r.locks) for r in rounds)
        commitments = sum(len(lock.commitments) for r in rounds for lock in r.locks) + \
            sum(len(m.commitments) for m in remixes)
        slots = sum(len(r.locks[0].deck) for r in rounds if r.locks) + \
            sum(len(m.slots) for m in remixes)
        remixed = f" and {counted(len(remixes), 're-mix', 're-mixes')}" if remixes else ""
        lines = [f"  audit: {revealed}; it holds: all {counted(passes, 'pass', 'passes')}{remixed}"
                 f" re-computed from the secrets, all {counted(commitments, 'key commitment')}"
                 " match the keys revealed, every key released is the committed one, and all"
                 f" {counted(slots, 'slot')} open to their cards"]
        penalty = record.penalty
        if penalty is not None:
            index = penalty["index"]
            text = record.actions[index][1] if index < len(record.actions) else "?"
            lines.append(f"  the moves replayed with every card known: move {index},"
                         f" {names[penalty['seat']]}'s {printable(text, 80)}, breaks the"
                         f" rules ({printable(penalty['reason'], 40)})")
        elif record.forfeit is None and not (outcome is not None and outcome.void):
            lines.append(f"  the moves replayed with every card known: all"
                         f" {len(record.actions)} within the rules")
        return lines
