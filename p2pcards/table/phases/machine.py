"""The phase machine of one seat's table session: what is due, and what comes next.

A game goes through the phases of :class:`~p2pcards.table.state.Phase`: the
roster signed, the first dealer drawn, then for each deal the hellos, the deck's
passes, the deal's key releases, the play, the audit and the agreement.  The
machine is the engine and holds no phase's rules: a :class:`Flow` (assembled in
:mod:`p2pcards.table.phases` from one module per phase) gives each message
class its handler, each phase what happens when its steps are done, and the
phase changes allowed, as data.  The machine is the one writer of the agenda
(the steps due and the phase): a handler returns what it needs
(:class:`~p2pcards.table.state.Needs`), the phases' functions ask the machine,
and a phase change the flow does not allow is a bug, caught here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.randomness import JointRandom
from p2pcards.table.agenda import Agenda
from p2pcards.table.codec import Envelope
from p2pcards.table.dealing import Dealing, first_dealer_label
from p2pcards.table.decks import FLAVORS
from p2pcards.table.events import TableEvent
from p2pcards.table.kinds import Kind, Message
from p2pcards.table.roster import Roster
from p2pcards.table.run import DealRun, ProofJob
from p2pcards.table.seats import SeatChanges
from p2pcards.table.state import Needs, Phase, RefusedMessage, Rule, Step
from p2pcards.table.transcript import Transcript

if TYPE_CHECKING:
    from p2pcards.table.decks.proved import ProvedTableDeck
    from p2pcards.table.kinds import ProvedShares

Handler = Callable[["PhaseMachine", Envelope, Any, Step], Needs]
"""A message class's handler: checks the message against the seat's state
(:class:`~p2pcards.table.state.RefusedMessage` before any change, so that a refused
message leaves the session as it was), applies it, and says what it needs."""


@dataclass(frozen=True)
class Flow:
    """The phases as data: what the machine does, phase by phase."""

    transitions: Mapping[Phase, frozenset[Phase]]
    """Phase -> the phases the machine may go to from it."""
    handlers: Mapping[type, Handler]
    """Message class -> its handler (a deck's own message classes: its
    :meth:`~p2pcards.table.run.TableDeck.handlers`)."""
    complete: Mapping[Phase, Callable[[PhaseMachine], bool]]
    """Phase -> what happens once its steps are done (True: look again, the agenda
    may have changed; False: nothing more until another message)."""
    watch: Mapping[Phase, Callable[[PhaseMachine], None]]
    """Phase -> what is checked each time the machine looks, steps due or not (a
    deal's cards opened as their keys come in, an alarm raised)."""
    stop: Callable[[PhaseMachine], None]
    """The deal stops for its audit, or (a deck with none) for its agreement."""


class PhaseMachine:
    """One seat's game: the agenda, the deal in progress, the deals done, the totals."""

    def __init__(self, roster: Roster, me: int, identity: Ed25519PrivateKey | None,
                 source: SecretSource, transcript: Transcript, *, flow: Flow,
                 keep_states: bool):
        self.roster = roster
        self.transcript = transcript
        """The seat's transcript (read here: its hash is what a deal's result signs)."""
        self.flow = flow
        self.me = me
        self.identity = identity
        self.source = source
        self.keep_states = keep_states
        self.game = roster.rules
        self.players = roster.players
        self.options = roster.resolved_options()
        self.table = roster.table
        self.flavor = FLAVORS[roster.deck]
        """The table's deck and what it decides of the messages (:mod:`..decks`)."""
        self._agenda = Agenda(Phase.SEATING, (Step(Kind.SIGN, s) for s in range(self.players)))
        self.events: list[TableEvent] = []
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
        self.ahead: ProvedTableDeck | None = None
        """The next deal's deck, prepared during this one at a shuffle-ahead table
        (:mod:`.ahead`; None: there is none, or it was discarded)."""
        self.early: dict[int, ProvedShares] = {}
        """Seat -> its shares of the prepared deck's first deal step, carried on its
        signature of this deal's result (docs/protocol.md, "Shares on the agreement"):
        that step is done when the deal begins (:func:`.ahead.settle`)."""

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
        return self._agenda.phase

    @property
    def head(self) -> Step | None:
        """The step queued first, if any (the deck and the game say what is due when
        none is: :meth:`due`)."""
        return self._agenda.head

    def steps(self) -> list[Step]:
        """The steps queued, in order."""
        return list(self._agenda)

    def due(self) -> Step | None:
        """The message due next, and from whom (None: the game is over)."""
        head = self._agenda.head
        if head is not None:
            return head
        run, phase = self.run, self._agenda.phase
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
        if self.phase != Phase.AGREE or self.run is None or len(self.steps()) != 1:
            return False
        return self.ends_game()

    def ends_game(self) -> bool:
        """Whether the game is over once the deal being agreed is scored."""
        run = self.in_progress()
        void = run.outcome is not None and run.outcome.void
        totals = [total + points for total, points in zip(self.totals, run.points, strict=True)]
        return self.game.winner(totals, self.scored + (0 if void else 1),
                                self.options) is not None

    def forced(self) -> int | None:
        """The move the table makes for the seat to move when it has no choice and
        does not see its card (Nullern's blind round), once everyone has shown it."""
        run = self.run
        if run is None or run.public is None or self.phase != Phase.PLAY:
            return None
        return run.ledger.forced(run.public)

    def in_progress(self) -> DealRun:
        """The deal in progress (a deal's message comes only during one)."""
        if self.run is None:
            raise AssertionError("a deal's message before a deal")
        return self.run

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
        """Queue ``steps`` after those due."""
        self._agenda.expect(steps)

    def enter(self, phase: Phase, steps: Iterable[Step] = ()) -> None:
        """Go to ``phase`` with ``steps`` queued after those due."""
        self._allowed(phase)
        self._agenda.enter(phase, steps)

    def restart(self, phase: Phase, steps: Iterable[Step] = ()) -> None:
        """Go to ``phase`` with only ``steps`` due (what was queued is dropped)."""
        self._allowed(phase)
        self._agenda.restart(phase, steps)

    def drop(self, unwanted: Callable[[Step], bool]) -> None:
        """Forget the steps queued that ``unwanted`` picks."""
        self._agenda.drop(unwanted)

    def _allowed(self, phase: Phase) -> None:
        now = self._agenda.phase
        if phase != now and phase not in self.flow.transitions[now]:
            raise AssertionError(f"the table may not go from {now.value} to {phase.value}")

    def needs(self, needs: Needs) -> None:
        """Do what taking a message needs (the one place a handler's needs are met)."""
        if needs.vote_over:
            self.drop(lambda step: step.kind == Kind.CONSENT)
        self.queue(needs.steps)
        if needs.stop:
            self.alarm()

    def taken(self, env: Envelope, message: Message, step: Step) -> None:
        """Apply an accepted message (its kind's handler; :class:`RefusedMessage` before
        any change) and do what it needs."""
        handler = self.flow.handlers.get(type(message))
        if handler is not None:
            self.needs(handler(self, env, message, step))
            return
        run = self.run
        own = None if run is None else run.deck.handlers().get(type(message))
        if run is None or own is None:
            raise RefusedMessage(Rule.DECK, f"{env.kind}: a message of another deck than"
                                            " this table's")
        self.needs(own(run, env, message, step))

    def recorded(self, env: Envelope) -> None:
        """``env`` went into the transcript: the deal's share of it, and the step done."""
        if self.run is not None and self.phase not in (Phase.SEATING, Phase.DRAW):
            self.run.envelopes.append(env)
        self._agenda.done(env.sender, env.kind)

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
        to all did not open, or every seat consented to void the deal)."""
        self.flow.stop(self)

    def advance(self) -> None:
        """Move to the next phase when the current one is complete."""
        while True:
            watch = self.flow.watch.get(self.phase)
            if watch is not None:
                watch(self)
            if self._agenda:
                return
            if not self.flow.complete[self.phase](self):
                return

    # ====================================================== deferred proofs

    def unchecked(self) -> bool:
        """Whether idle time has work: shuffle proofs of the deal in progress taken
        without their check (docs/protocol.md, "Pipelined shuffles"), none of them found
        refused yet, or work on the next deal's deck prepared ahead (:meth:`check_pending`
        does it)."""
        return self.unchecked_count() > 0

    def unchecked_count(self) -> int:
        """How many units of that work are left: the deal's unchecked proofs (0 once one
        is found refused), then, once none is left, the prepared deck's proofs and this
        seat's own step of it."""
        run = self.run
        now = 0 if run is None else run.deck.unchecked(run)
        if now or self.ahead is None:
            return now
        return self.ahead.ahead_left()

    def proof_jobs(self) -> list[ProofJob]:
        """The deferred proofs :meth:`check_pending` will check next, one per deck (the
        deal's, the one prepared ahead), and this seat's own work on the deck prepared
        ahead (its step, its shares), as work another thread may do meanwhile."""
        run = self.run
        jobs = [] if run is None or not run.deck.unchecked(run) else [run.deck.proof_job()]
        if self.ahead is not None:
            jobs += [self.ahead.proof_job(), self.ahead.work_job()]
        return [job for job in jobs if job is not None]

    def waiting(self) -> bool:
        """Whether the deferred proofs still stand between the deal and its next step:
        some unchecked, or one refused whose verdict is not given yet."""
        run = self.run
        return run is not None and run.deck.waiting(run)

    def check_pending(self, limit: int | None = None) -> None:
        """Check up to ``limit`` of the deal's deferred shuffle proofs, oldest first;
        the first that does not hold is kept (:attr:`DealRun.refuted`) for its verdict,
        which comes at the end of its round (:func:`.forfeits.resolve`).  With none left,
        up to the rest of ``limit`` units of work on the deck prepared ahead (its proofs,
        this seat's own step: :meth:`ProvedTableDeck.work_ahead`)."""
        run = self.run
        if run is not None:
            before = run.deck.unchecked(run)
            run.deck.check_deferred(run, limit)
            if limit is not None:
                limit = max(0, limit - (before - run.deck.unchecked(run)))
        if self.ahead is not None and (limit is None or limit > 0) \
                and (run is None or not run.deck.unchecked(run)):
            self.ahead.work_ahead(limit)  # (a deck of its own: nothing of it is released)
