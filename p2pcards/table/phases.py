"""The phase machine of one seat's table session: what is due, and what comes next.

A game goes through the phases of :class:`~p2pcards.table.state.Phase`: the
roster signed, the first dealer drawn, then for each deal the hellos, the deck's
passes, the deal's key releases, the play, the audit and the agreement.  The
machine takes each accepted message through its kind's handler
(:mod:`p2pcards.table.handlers`), then moves on (:meth:`PhaseMachine.advance`)
when the phase is complete.  It is the only writer of the agenda (the steps due
and the phase); the slot ledger and the handlers ask it to queue steps.  It
makes this seat's own messages (:meth:`PhaseMachine.make`) but sends nothing:
the session signs and sends (:mod:`p2pcards.table.session`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.games import HandState
from p2pcards.games.core import CHANCE, SPECTATOR, TERMINAL
from p2pcards.games.game import DealSetup
from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.deck import Deck
from p2pcards.protocol.errors import RemoteProtocolError
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.protocol.proved.deck import Refused as DeckRefused
from p2pcards.protocol.randomness import JointRandom
from p2pcards.protocol.steps import DeckContext
from p2pcards.table.agenda import Agenda
from p2pcards.table.codec import Envelope, private_bytes, public_bytes, seal
from p2pcards.table.dealing import Dealing, first_dealer_label, open_slots
from p2pcards.table.decks import FLAVORS, proved_act, proved_shares
from p2pcards.table.handlers import HANDLERS
from p2pcards.table.judge import Deal, KeyStep, judge
from p2pcards.table.kinds import (
    Act,
    Agree,
    Audit,
    Hello,
    Keys,
    Kind,
    Message,
    Opened,
    ProvedAct,
    Seats,
    Sign,
    clip,
    printable,
)
from p2pcards.table.ledger import Ledger
from p2pcards.table.proved import concluded, forfeited
from p2pcards.table.replay import forfeit
from p2pcards.table.roster import Roster
from p2pcards.table.seats import SeatChanges
from p2pcards.table.state import EVERYONE, WATCHER, DealRun, Event, Phase, Proven, Step
from p2pcards.table.transcript import Transcript


class PhaseMachine:
    """One seat's game: the agenda, the deal in progress, the deals done, the totals."""

    def __init__(self, roster: Roster, me: int, identity: Ed25519PrivateKey | None,
                 source: SecretSource, transcript: Transcript, *, keep_states: bool):
        self.roster = roster
        self.transcript = transcript
        """The seat's transcript (read here: its hash is what a deal's result signs)."""
        self.me = me
        self.identity = identity
        self.source = source
        self.keep_states = keep_states
        self.game = roster.rules
        self.players = roster.players
        self.options = roster.resolved_options()
        self.table = roster.table
        self.flavor = FLAVORS[roster.deck]
        """The table's deck and what it decides of the messages (:mod:`.decks`)."""
        self.agenda = Agenda(Phase.SEATING, (Step(Kind.SIGN, s) for s in range(self.players)))
        self.events: list[Event] = []
        self.draw = JointRandom(first_dealer_label(self.table), self.players, me, self.source)
        self.dealer = -1
        self.deals = 0
        self.scored = 0
        self.totals = [0] * self.game.unit_count(self.players)
        self.winner: int | list[int] | None = None
        self.run: DealRun | None = None
        self.seats = SeatChanges(roster)
        """Seats gone, stand-ins and returns (:mod:`p2pcards.table.seats`)."""
        self.deal_start = 0
        """The transcript's length when the deal in progress began (0 before the first;
        after its ``seat`` message and roster signatures, if any)."""
        self.boundary = 0
        """The transcript's length when the deal in progress was due to begin."""
        self.previous_start = 0
        """Where the deal before it began (a late seat may be taken back into it)."""
        self.finished: list[DealRun] = []
        self.dealing = Dealing(self.table, self.players, me, self.source,
                               keep_states=keep_states, events=self.events)

    @property
    def tell(self) -> bool:
        """Whether each move's event carries this seat's view before it, for a prompt to
        tell the move as the seat saw it (a copy of the view per move: only the seat a
        person may sit at keeps them)."""
        return self.dealing.tell

    @tell.setter
    def tell(self, value: bool) -> None:
        self.dealing.tell = value

    # ================================================================ queries

    @property
    def phase(self) -> Phase:
        return self.agenda.phase

    def due(self) -> Step | None:
        """The message due next, and from whom (None: the game is over)."""
        head = self.agenda.head
        if head is not None:
            return head
        run, phase = self.run, self.agenda.phase
        if phase in (Phase.DECK, Phase.PLAY) and run is not None:
            expected = run.deck.expected()
            if expected is not None:
                return Step(self.flavor.steps[expected[0]], expected[1])
        if phase == Phase.PLAY and run is not None and run.public is not None:
            player = run.public.current_player()
            if player >= 0:
                return Step(self.flavor.act, player)
        return None

    def last_word(self) -> bool:
        """Whether the message due is the game's last: the one agreement still missing
        from a deal after which the game is over (no message will ever follow it)."""
        run = self.run
        if self.phase != Phase.AGREE or run is None or len(list(self.agenda)) != 1:
            return False
        void = run.outcome is not None and run.outcome.void
        totals = [total + points for total, points in zip(self.totals, run.points, strict=True)]
        return self.game.winner(totals, self.scored + (0 if void else 1),
                                self.options) is not None

    def forced(self) -> int | None:
        """The move the table makes for the seat to move when it has no choice and
        does not see its card (Nullern's blind round), once everyone has shown it."""
        run = self.run
        if run is None or run.public is None or self.agenda.phase != Phase.PLAY:
            return None
        return run.ledger.forced(run.public)

    def deal_index(self) -> int:
        return self.run.index if self.run is not None else 0

    def current_draw(self) -> JointRandom:
        """The joint draw the ``commit`` and ``share`` messages are for."""
        run = self.run
        if run is not None and run.draw is not None:
            return run.draw
        return self.draw

    # ========================================================== the agenda

    def queue(self, steps: Iterable[Step]) -> None:
        """Queue the steps a handler or the ledger needs."""
        self.agenda.expect(steps)

    def taken(self, env: Envelope, message: Message, step: Step) -> None:
        """Apply an accepted message (its kind's handler; :class:`Refused` before any
        change) and note it in the deal."""
        HANDLERS[type(message)](self, env, message, step)

    def recorded(self, env: Envelope) -> None:
        """``env`` went into the transcript: the deal's share of it, and the step done."""
        if self.run is not None and self.agenda.phase not in (Phase.SEATING, Phase.DRAW):
            self.run.envelopes.append(env)
        self.agenda.done(env.sender, env.kind)

    def rewound(self, point: int, dropped: int) -> None:
        """The transcript went back to ``point`` (a cheat's, in the deal in progress),
        ``dropped`` messages fewer: the deal as everyone saw it there."""
        run = self.run
        if run is None:
            return
        del run.envelopes[max(0, len(run.envelopes) - dropped):]
        later = [state for position, state in run.played if position >= point]
        if later:
            run.public = later[0]
            del run.acts[run.public.moves:]  # (every action the public view took is one)
        run.played = [(p, state) for p, state in run.played if p < point]

    def alarm(self) -> None:
        """The deal stops for its audit (a seat could not open its cards, a card shown
        to all did not open, or every seat consented to void the deal).  A deal of the
        proved deck has no audit: it goes to its agreement at once."""
        if self.flavor.audited:
            self.agenda.restart(Phase.AUDIT, (Step(Kind.AUDIT, s)
                                              for s in range(self.players)))
        elif self.run is not None:
            self._no_audit(self.run)

    def vote_ended(self) -> None:
        """A seat refused to void the deal: nobody else answers."""
        self.agenda.drop(lambda step: step.kind == Kind.CONSENT)

    def advance(self) -> None:
        """Move to the next phase when the current one is complete."""
        agenda = self.agenda
        while True:
            run = self.run
            phase = agenda.phase
            head = agenda.head
            if phase == Phase.DEAL and run is not None and not run.opened \
                    and head is not None and head.kind == Kind.OPENED:
                run.opened = True  # every key of the deal is in: open this seat's cards
                open_slots(run, [s for s in range(len(run.ids)) if self.me in run.ledger.knows[s]])
            if phase == Phase.PLAY and run is not None:
                if run.alarms:
                    self.alarm()
                elif not self.flavor.audited and run.public is not None and run.public.proofs:
                    self._no_audit(run)  # a card shown proves a breach: the deal stops
                elif run.view is not None:
                    self.dealing.open_taken(run)
                    self.dealing.observe(run)
            if agenda:
                return
            phase = agenda.phase
            if phase == Phase.SEATING:
                agenda.enter(Phase.DRAW, [*(Step(Kind.COMMIT, s) for s in range(self.players)),
                                          *(Step(Kind.SHARE, s) for s in range(self.players))])
                number = self.roster.safety_number()
                self.events.append(Event("seated", "every seat signed the roster (safety"
                                                   f" number {number})"))
            elif phase == Phase.DRAW:
                rng = random.Random(self.draw.seed())
                self.dealer = self.game.first_dealer(self.players, rng)
                self._begin_deal()
            elif phase == Phase.SEATS:
                self._begin_deal(seated=True)  # (a seat taken: its deck is made anew)
            elif phase == Phase.HELLO:
                agenda.enter(Phase.DECK)
            elif phase == Phase.DECK:
                assert run is not None
                if run.deck.expected() is not None:
                    return
                agenda.enter(Phase.DEAL, run.ledger.deal_steps())
            elif phase == Phase.DEAL:
                assert run is not None
                if run.alarms:
                    self.alarm()
                else:
                    self._after_deal(run)
            elif phase == Phase.PLAY:
                assert run is not None and run.public is not None
                player = run.public.current_player()
                if player == CHANCE:
                    made, steps = self.dealing.chance(run)
                    agenda.expect(steps)
                    if made:
                        continue
                    return
                if player != TERMINAL:
                    agenda.expect(run.ledger.reveal_blind(run.public, player))
                    return
                if not self.flavor.audited:
                    self._no_audit(run)
                    continue
                agenda.enter(Phase.AUDIT, (Step(Kind.AUDIT, s) for s in range(self.players)))
            elif phase == Phase.AUDIT:
                assert run is not None
                self._conclude(run)
                run.signers = list(range(self.players))
                agenda.enter(Phase.AGREE, (Step(Kind.AGREE, s) for s in range(self.players)))
            elif phase == Phase.AGREE:
                assert run is not None
                self._score(run)
                if agenda.phase == Phase.OVER:
                    return
            else:
                return

    # ====================================================== deferred proofs

    def unchecked(self) -> bool:
        """Whether the deal in progress holds shuffle proofs taken without their check
        (docs/protocol.md, "Pipelined shuffles"), none of them found refused yet."""
        return self.unchecked_count() > 0

    def unchecked_count(self) -> int:
        """How many such proofs (0 once one is found refused)."""
        run = self.run
        if run is None or not isinstance(run.deck, ProvedDeck) or run.refuted is not None:
            return 0
        return len(run.deck.pending)

    def waiting(self) -> bool:
        """Whether the deferred proofs still stand between the deal and its next step:
        some unchecked, or one refused whose verdict is not given yet."""
        run = self.run
        return run is not None and isinstance(run.deck, ProvedDeck) \
            and bool(run.deck.pending) and not run.judged

    def check_pending(self, limit: int | None = None) -> None:
        """Check up to ``limit`` of the deal's deferred shuffle proofs, oldest first;
        the first that does not hold is kept (:attr:`DealRun.refuted`) for its verdict,
        which comes at the end of its round (:meth:`resolve`)."""
        run = self.run
        if run is None or not isinstance(run.deck, ProvedDeck) or run.refuted is not None:
            return
        try:
            run.deck.check_pending(limit)
        except DeckRefused as error:
            assert error.party is not None  # (a proof names its shuffler)
            run.refuted = (error.party, f"{error.step}: {error.reason}")

    def refusal(self) -> Proven | None:
        """Every deferred proof checked: the first refused, as the proof of its
        shuffler's cheat (None: every one holds)."""
        self.check_pending()
        run = self.run
        if run is None or run.refuted is None or run.judged:
            return None
        seat, reason = run.refuted
        return Proven(f"deck {reason.partition(':')[0]}", reason, seat, Kind.PROVED_SHUFFLE)

    def resolve(self, *, force: bool = False) -> bool:
        """At the end of a round (or ``force``: the deal ends otherwise, by claims of
        silence), every deferred proof is checked before anything else: the first
        that does not hold makes its shuffler forfeit, as if it had been refused on
        arrival, at the same point for every seat (the round's last shuffle is where
        every seat has them all).  True if so."""
        run = self.run
        if not self.waiting() or run is None or (run.deck.expected() is not None
                                                   and not force):
            return False
        proven = self.refusal()
        if proven is None:
            return False
        self.refute(proven)
        return True

    def refute(self, proven: Proven) -> None:
        """The verdict of a proven cheat (``proven.seat``'s message of ``proven.kind``):
        it forfeits the deal (docs/protocol.md, "A refused step")."""
        assert proven.seat is not None
        if self.run is not None:
            self.run.judged = True
        self.silenced(proven.seat, proven=f"its {proven.kind} refused: {proven.reason}")

    # ================================================================ a deal

    def amend(self, message: Seats) -> None:
        """The runner's ``seat`` message (checked): the roster with its changes, which
        every seat then signs; this session takes the seat its identity now holds."""
        if not message.changes:
            return
        self.roster = self.seats.amend(self.roster, message)
        self.transcript.keys = self.roster.keys
        self.events.append(Event("seats", self.seats.describe(self.roster, message)))
        if self.identity is not None:
            mine = public_bytes(self.identity.public_key())
            seat = next((s for s, e in enumerate(self.roster.seats) if e.identity == mine),
                        WATCHER)
            self.me = self.dealing.me = self.transcript.me = seat
            if seat != WATCHER:
                self.transcript.seq_out = self.transcript.seq_in[seat]
        self.deal_start = len(self.transcript) + 1  # (a cheat's point never goes back
        self.agenda.expect(Step(Kind.SIGN, s) for s in range(self.players))  # past it)

    def _begin_deal(self, *, seated: bool = False) -> None:
        """A deal begins: first, when seats change hands, the runner's ``seat`` message
        (and the roster signed again); then each seat's ``hello``."""
        index = self.deals
        ids = self.game.deck(self.players, self.options)
        context = DeckContext(self.table, index, self.players, len(ids))
        seal_private = X25519PrivateKey.from_private_bytes(self.source.token_bytes(32))
        deck = self.flavor.deck(context, self.me, self.source)
        setup = DealSetup(self.game, self.players, self.options, self.dealer, self.scored)
        ledger = Ledger(setup, deck, ids, self.flavor)
        self.run = DealRun(index, deck, ids, seal_private, ledger)
        self.deal_start = len(self.transcript)
        runner = self.seats.runner(self.roster)
        if not seated:  # (the deal before began at the last boundary)
            self.previous_start, self.boundary = self.boundary, self.deal_start
        if not seated and runner is not None and self.seats.due(self.roster):
            self.agenda.enter(Phase.SEATS, [Step(Kind.SEAT, runner)])
            return
        self.agenda.enter(Phase.HELLO, (Step(Kind.HELLO, s) for s in range(self.players)))
        self.events.append(Event("deal", f"deal {index + 1}, dealer seat {self.dealer}"))

    def _after_deal(self, run: DealRun) -> None:
        """Every seat has opened its cards: show what the deal shows after looking at
        other cards (Pasur's replacement for a lone opening jack), then make the views."""
        observed: list[int | None] = [None] * len(run.ids)
        for slot in range(len(run.ids)):
            if slot in run.deck.opened:
                observed[slot] = run.ids[run.deck.opened[slot]]
        extra = run.ledger.shown_after_deal(observed)
        if extra:
            self.agenda.expect(extra)
            return
        shown = [card if run.ledger.shown_to_all(slot) else None
                 for slot, card in enumerate(observed)]
        setup = run.ledger.setup
        run.public = setup.deal(shown, observer=SPECTATOR)
        if self.me == WATCHER:  # the watcher has no view of its own
            run.view = run.public
        else:
            run.view = setup.deal(observed, observer=self.me)
        run.ledger.reconcile(run.public)
        if self.keep_states:
            run.views.append(run.view.knowledge())
        self.agenda.enter(Phase.PLAY)

    def show(self, run: DealRun, slot: int) -> None:
        """Open a slot every key of which is public; one that opens to no card (a deck
        broken somewhere) stops the deal for its audit at every seat alike."""
        try:
            run.shown[slot] = run.deck.open(slot)
        except RemoteProtocolError as error:
            run.problem = run.problem or error.reason
            self.alarm()

    # ========================================================= deal's end

    def _no_audit(self, run: DealRun) -> None:
        """A deal of the proved deck is over (or stopped): every step was checked (on
        arrival, a shuffle's proof by the end of its round), so nothing is revealed;
        the verdict is the deal as everyone saw it."""
        if self.resolve(force=True):
            return  # (never: a round's proofs are checked at its end; a safety net)
        self._conclude(run)
        run.signers = list(range(self.players))
        self.agenda.restart(Phase.AGREE, (Step(Kind.AGREE, s) for s in run.signers))

    def _conclude(self, run: DealRun) -> None:
        """Every secret is in: the verdict (:func:`p2pcards.table.judge.judge`); at a
        table of the proved deck, the deal as the public view has it."""
        if isinstance(run.deck, ProvedDeck):
            self._conclude_proved(run)
            return
        deal = Deal(
            run.ledger.setup, run.ids,
            run.deck.context, run.deck.log, run.deck.releases,
            [KeyStep(sender, step.grants, message) for sender, step, message in run.key_steps],
            [(seat, act) for seat, act in run.acts if isinstance(act, Act)], run.alarms,
            {s: a.reveal for s, a in run.audits.items()},
            {s: a.seal_secret for s, a in run.audits.items()}, self.roster.keys,
            run.ledger.blank_deck())
        run.outcome, run.verdict = judge(deal, lifted=run.deck.lifted,
                                         keep_states=self.keep_states)
        if run.consented:  # every seat's consent: the deal does not count
            record = run.outcome.record
            record.void, record.reason = True, run.consented
            record.actions, record.penalty, record.forfeit = [], None, None
            run.verdict = clip(f"void: {run.consented}")
        run.points = run.outcome.points
        run.agree_hash = self.transcript.hash

    def _conclude_proved(self, run: DealRun) -> None:
        """The verdict of a deal of the proved deck: its cards never shown stay secret, so
        its record is the deal as everyone saw it (:mod:`p2pcards.table.proved`), and the
        points are the public view's: every move and every card shown was checked on
        arrival, and a card shown against its seat's claim proves a breach."""
        if run.public is not None:
            run.outcome, run.verdict = concluded(run)
        else:  # (an alarm before the deal was made: every card was proven, it is false)
            setup = run.ledger.setup
            seat = min(run.alarms)
            run.outcome = forfeit(setup, run.ledger.blank_deck(), [], {}, seat=seat,
                                  reason="refused step")
            run.verdict = clip(f"seat {seat} raised a false alarm"
                               f" ({clip(run.alarms[seat], 80)})")
        run.points = run.outcome.points
        run.agree_hash = self.transcript.hash

    def _score(self, run: DealRun) -> None:
        void = run.outcome is not None and run.outcome.void
        for unit, points in enumerate(run.points):
            self.totals[unit] += points
        run.played = []  # (only a deal in progress can be taken back)
        if run.outcome is not None:
            run.outcome.record.players = self.seats.names(self.roster)
        self.finished.append(run)
        self.deals += 1
        self.scored += 0 if void else 1
        self.events.append(Event("result", f"deal {run.index + 1}: {_numbers(run.points)}"
                                           f" ({run.verdict}); totals {_numbers(self.totals)}"))
        self.winner = self.game.winner(self.totals, self.scored, self.options)
        if self.winner is not None:
            self.agenda.restart(Phase.OVER)
            self.run = None
            self.events.append(Event("over", f"the game is over: {self._won()}"))
            return
        self.dealer = self.game.next_dealer(self.dealer, self.players, void)
        self._begin_deal()

    def _won(self) -> str:
        """``winner NAME`` or ``shared win: NAME, NAME`` (by the roster's names)."""
        names = [printable(entry.name, 32) for entry in self.roster.seats]
        winner = self.winner
        if isinstance(winner, list):
            return "shared win: " + ", ".join(self.game.unit_name(u, names) for u in winner)
        return f"winner {self.game.unit_name(winner, names) if winner is not None else '-'}"

    def back_to(self, kind: str) -> None:
        """The transcript went back to where this seat's ``kind`` message was due (its
        peer's messages since are dropped): the phase that message was in, so that the
        claims against it are taken as there (at the audit: a refused audit; at the
        agreement: the result stands, the seats still to sign signing it)."""
        run = self.run
        if kind == Kind.AUDIT:
            self.agenda.restart(Phase.AUDIT)
        elif kind == Kind.AGREE and run is not None:
            signed = {env.sender for env in self.transcript.envelopes[self.deal_start:]
                      if env.kind == Kind.AGREE}
            self.agenda.restart(Phase.AGREE, (Step(Kind.AGREE, s) for s in run.signers
                                              if s not in signed))
        elif self.agenda.phase in (Phase.AUDIT, Phase.AGREE):
            self.agenda.restart(Phase.PLAY)

    def crossed(self, position: int) -> bool:
        """Whether ``position`` is in the deal scored last rather than in the one in
        progress (or the game is over)."""
        return self.phase == Phase.OVER or position < self.deal_start

    def unscore(self) -> None:
        """Take back the scoring of the deal scored last: the transcript went back into
        its agreement (a claim of silence against this seat's peer, complete at the
        others before they saw its signature).  It is scored again once agreed."""
        run = self.finished.pop()
        void = run.outcome is not None and run.outcome.void
        for unit, points in enumerate(run.points):
            self.totals[unit] -= points
        self.deals -= 1
        self.scored -= 0 if void else 1
        self.winner = None
        self.dealer = run.dealer
        self.run = run
        if self.phase != Phase.OVER:
            self.deal_start = self.previous_start
        self.agenda.restart(Phase.AGREE)

    def silenced(self, seat: int, cheated: int | None = None, proven: str = "") -> None:
        """``seat`` forfeits the deal: the game's penalty against it, the deal scored as
        played so far for the others (docs/rules/common.md); its secrets never came, so
        the record keeps no cards, and the seats its peer runs do not sign the result.
        Before the first deal, or at a table of two (where one seat's word would be
        all it takes), the table breaks up instead; at the agreement the result stands
        without its peer's signatures; a deal already void stays void.  ``cheated``:
        the sequence number of a message it was proven to have signed in two versions
        (the forfeit's reason is then "equivocation", at the agreement too).
        ``proven``: why the proved deck refused a message it signed, in turn (the
        reason is then "refused step": docs/protocol.md, "A refused step")."""
        run = self.run
        what = "was silent" if cheated is None and not proven else proven or \
            f"signed two versions of its message {cheated}"
        if run is None or self.players == 2:
            self.agenda.restart(Phase.OVER)
            self.run = None
            self.events.append(Event("over", f"seat {seat} {what}: the table breaks up",
                                     seat))
            return
        alive = self.roster.others(seat)  # (its peer's other seats fall silent with it)
        if cheated is None and not proven:
            self.seats.went(self.roster, seat)  # (a bot takes them at the next deal)
        if self.agenda.phase == Phase.AGREE and cheated is None and not proven:
            self.agenda.drop(lambda step: step.seat not in alive)
            run.signers = [s for s in run.signers if s in alive]
            return
        reason = "equivocation" if cheated is not None else "refused step" if proven else \
            "refused audit" if self.agenda.phase == Phase.AUDIT else "silent"
        public = run.public
        rules_void = public.void_reason if public is not None else None
        if public is not None and not self.flavor.audited:  # (the moves are public)
            run.outcome = forfeited(run, seat, reason)
        else:
            run.outcome = forfeit(run.ledger.setup, run.ledger.blank_deck(), [], {},
                                  seat=seat, reason=reason)
        if run.consented or rules_void is not None:
            run.outcome.record.forfeit = None
            run.outcome.record.void = True
            run.outcome.record.reason = run.consented or rules_void or ""
            run.verdict = clip(f"void: {run.outcome.record.reason}")
        else:
            if public is not None and self.flavor.audited:
                played = public.clone()  # the deal as played so far, the penalty applied
                played.penalize(seat, reason)
                run.outcome.state = played
                run.outcome.record.forfeit = {"seat": seat, "reason": reason,
                                              "points": list(run.outcome.points)}
            run.verdict = clip(f"seat {seat} forfeits the deal: {reason}" if cheated is None
                               and not proven else f"seat {seat} forfeits the deal: {reason}"
                               f" ({what})")
        run.points = run.outcome.points
        run.agree_hash = self.transcript.hash
        run.signers = sorted(alive)
        self.agenda.restart(Phase.AGREE, (Step(Kind.AGREE, s) for s in run.signers))
        self.events.append(Event("forfeit", run.verdict, seat))

    # ==================================================== this seat's messages

    def make(self, step: Step) -> Message:
        """This seat's message for ``step`` (not a move: :meth:`move`)."""
        run = self.run
        kind = step.kind
        if kind == Kind.SIGN:
            return Sign(roster=self.roster.digest())
        if kind == Kind.COMMIT:
            return self.current_draw().commit()
        if kind == Kind.SHARE:
            return self.current_draw().reveal()
        if kind == Kind.SEAT:
            return self.seats.make(self.roster, self.me, self.source)
        assert run is not None
        if kind == Kind.HELLO:
            return Hello(seal_key=public_bytes(run.seal_private.public_key()))
        deck = run.deck
        if kind in self.flavor.steps.values() and kind != self.flavor.remix:
            return deck.step()
        if kind == self.flavor.remix:
            return deck.remix(list(step.slots))
        if kind == Kind.PROVED_SHARES and isinstance(deck, ProvedDeck):
            return proved_shares(deck, self.me, step.grants)
        if kind == Kind.KEYS:
            return self._make_keys(run, step)
        if kind == Kind.OPENED:
            return Opened(problem=clip(run.problem))
        if kind == Kind.AUDIT:
            assert isinstance(deck, Deck)
            return Audit(reveal=deck.secrets(), seal_secret=private_bytes(run.seal_private))
        if kind == Kind.AGREE:
            return Agree(transcript=run.agree_hash, points=tuple(run.points),
                         verdict=run.verdict)
        raise AssertionError(kind)

    def _make_keys(self, run: DealRun, step: Step) -> Keys:
        assert isinstance(run.deck, Deck)
        sealed = []
        public: list[tuple[int, int]] = []
        for recipient, slots in step.grants:
            if recipient is EVERYONE:
                public.extend((s, run.deck.release(s).key) for s in slots)
                continue
            content = [[s, run.deck.release(s, recipient).key.to_bytes(32, "big")]
                       for s in slots]
            assert self.identity is not None
            sealed.append((recipient, seal(self.identity, run.seal_keys[recipient],
                                           table=self.table, deal=run.index, sender=self.me,
                                           recipient=recipient, content=content)))
        return Keys(sealed=tuple(sealed), public=tuple(public))

    def move(self, view: HandState, code: int) -> Act | ProvedAct:
        """This seat's move ``code`` as it goes on the wire: its public text, the slots of
        its face-down cards, the slots and keys of the cards it shows."""
        run = self.run
        assert run is not None
        public = view.format_action(code, seat=SPECTATOR)
        full = view.format_action(code)
        hidden = [w for w, p in zip(full.split(), public.split(), strict=True) if p == "?"]
        place = run.ledger.place
        mine = {run.deck.opened[s]: s for s in place
                if place[s] == self.me and s in run.deck.opened}
        by_name = {self.game.notation.name(run.ids[c]): s for c, s in mine.items()}
        slots = tuple(by_name[name] for name in hidden)
        run.own_code = code
        if isinstance(run.deck, ProvedDeck):
            return proved_act(run.deck, self.me, public, [
                by_name[self.game.notation.name(card)] for card in view.shown_cards(code)],
                slots)
        shown = []
        for card in view.shown_cards(code):
            slot = by_name[self.game.notation.name(card)]
            shown.append((slot, tuple(sorted(run.deck.keys[slot].items()))))
        return Act(action=public, shown=tuple(shown), slots=slots)


def _numbers(values: Sequence[int]) -> str:
    """Points as a line shows them: ``4 0``."""
    return " ".join(map(str, values))
