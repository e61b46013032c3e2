"""One peer's table session, sans I/O (docs/protocol.md).

A :class:`Session` takes verified messages (:meth:`Session.receive`) and local
decisions (:meth:`Session.act`) and puts the messages it must send in its
outbox (:meth:`Session.take_outbox`).  No sockets and no clocks: a test runs
every seat's session in one process (:mod:`p2pcards.table.memory`).

The session is the seat's front door; the work is done by its parts:

* :class:`~p2pcards.table.transcript.Transcript`: the order of the messages, the
  hash chain, the sequence numbers, the evidence of forks and equivocation, and
  the messages held until their turn;
* :class:`~p2pcards.table.phases.PhaseMachine`: what is due and what comes next,
  each message applied by its kind's handler (one module per phase:
  :mod:`p2pcards.table.phases`), with the slot ledger (:mod:`p2pcards.table.ledger`)
  following the game's cards;
* :class:`~p2pcards.table.claiming.ClaimDesk`: claims of silence and of cheats
  (their record: :class:`~p2pcards.table.claims.Claims`);
* :class:`~p2pcards.table.benched.Returns`: a benched seat's return, said and taken;
* :class:`~p2pcards.table.intake.Intake`: a message from the network through a
  sequence of named checks, each of which may refuse it, hold it for its turn, or
  pass it on; then its phase's handler applies it.

The session keeps two engine views: its seat's own, and the public one that
every move is checked against (so that honest seats never part over what only
one of them can see; a seat whose own cards disprove a move raises the alarm).
Claims of silence, and votes to void a deal, are the ways a deal ends other
than by play.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import ParamSpec, TypeVar

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.games import HandState, IllegalAction
from p2pcards.games.game import Game
from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.source import SystemSource
from p2pcards.table import kinds
from p2pcards.table.benched import Returns
from p2pcards.table.claiming import ClaimDesk
from p2pcards.table.claims import Claims
from p2pcards.table.codec import Envelope, pack, public_bytes, read_head
from p2pcards.table.decks import ACTS, DECK_STEPS
from p2pcards.table.events import TableEvent
from p2pcards.table.intake import Intake, record
from p2pcards.table.kinds import Alarm, Consent, Kind, Message, Silent, Void, clip
from p2pcards.table.phases import make, move, new_machine, resolve
from p2pcards.table.roster import Roster
from p2pcards.table.run import DealRun, ProofJob
from p2pcards.table.state import (
    WATCHER,
    Phase,
    Rejection,
    Step,
)
from p2pcards.table.transcript import Transcript

P = ParamSpec("P")
R = TypeVar("R")
TRANSCRIPT_FORMAT = "p2pcards-transcript/1"
MAX_REJECTIONS = 200
"""Refusals a session remembers (the newest): bounded whatever another peer sends."""
Forge = Callable[["Session", Step, Callable[[], Message]], Message]
"""A cheat, for tests: ``forge(session, step, make)`` returns the message the seat
sends for ``step`` in place of the honest one, which ``make()`` returns (calling it
moves the deck on for a deck step; a deck step forged with ``Deck.step(forge)``
keeps the seat's own deck in step with what it sends).  A seat whose move is
forged stops trusting its own view (it raises the alarm on its next turn)."""


def weak(method: Callable[P, R]) -> Callable[P, R]:
    """``method`` (a session's own, handed to one of its parts) called through a weak
    reference, so that the part holds no reference back to the session: a session and
    its parts are freed as soon as they are dropped, not by the cycle collector (which a
    table of thousands of messages would keep busy)."""
    ref = weakref.WeakMethod(method)

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        bound = ref()
        assert bound is not None, "a session's part outlived its session"
        return bound(*args, **kwargs)

    return call


def unplayable(game: Game) -> str | None:
    """What a game lacks that a table without a dealer needs (None: nothing): which
    cards an action shows, and how a chance event is made without a dealer, as the
    game declares them (``Game.capabilities``)."""
    can = game.capabilities
    if not can.shown_cards:
        return "its deals do not say which cards an action shows (Capabilities.shown_cards)"
    if can.chance and not can.table_chance:
        return ("its deals have chance events but do not say how a table without a dealer"
                " makes them (Capabilities.table_chance)")
    return None


class Session:
    """One seat's side of a table: every deal of a game, in turn with the others."""

    def __init__(self, roster: Roster, me: int, identity: Ed25519PrivateKey | None,
                 source: SecretSource | None = None, *, keep_states: bool = False,
                 forge: Forge | None = None):
        """``me``: this peer's seat, or :data:`WATCHER` for a session that only checks
        the others' messages (``p2pcards verify``; it needs no identity; given one, it
        takes the seat the roster gives that identity, when a ``seat`` message does:
        a bot's stand-in session, docs/protocol.md "Seats that change hands").
        ``forge``: a cheat, for tests (:data:`Forge`)."""
        problem = unplayable(roster.rules)
        if problem:
            raise ValueError(f"the table session cannot play {roster.rules.title}: {problem}")
        if me != WATCHER:
            if not 0 <= me < roster.players:
                raise ValueError(f"seat {me} is not at this table")
            if identity is None or \
                    public_bytes(identity.public_key()) != roster.seats[me].identity:
                raise ValueError(f"this identity is not seat {me}'s in the roster")
        self.home = roster
        """The roster as every seat first signed it (the transcript file starts with it)."""
        self.source: SecretSource = SystemSource() if source is None else source
        self.forge = forge
        self.table = roster.table
        self.transcript = Transcript(roster.table, roster.keys, me)
        self.claims = Claims()
        self.machine = new_machine(roster, me, identity, self.source, self.transcript,
                                   keep_states=keep_states)
        self.rejections: deque[Rejection] = deque(maxlen=MAX_REJECTIONS)  # the newest
        self.outbox: list[bytes] = []
        self.desk = ClaimDesk(self.transcript, self.claims, self.machine, self.outbox,
                              self.rejections, pump=weak(self._pump),
                              receive=weak(self._receive))
        self.returns = Returns(self.transcript, self.machine, self.outbox)
        self.intake = Intake(self.transcript, self.claims, self.machine, self.desk,
                             self.returns, rejections=self.rejections, pump=weak(self._pump),
                             settle_round=weak(self._resolve))
        self._pump()

    # ================================================================ the state

    @property
    def roster(self) -> Roster:
        """The roster as it stands (seats change hands at deal boundaries)."""
        return self.machine.roster

    @property
    def me(self) -> int:
        """This session's seat (:data:`WATCHER` while it holds none)."""
        return self.machine.me

    @property
    def identity(self) -> Ed25519PrivateKey | None:
        return self.machine.identity

    @property
    def phase(self) -> Phase:
        return self.machine.phase

    @property
    def over(self) -> bool:
        return self.machine.phase == Phase.OVER

    @property
    def run(self) -> DealRun | None:
        """The deal in progress."""
        return self.machine.run

    @property
    def finished(self) -> list[DealRun]:
        """The deals done, in order."""
        return self.machine.finished

    @property
    def events(self) -> list[TableEvent]:
        """What the table has told so far (:mod:`p2pcards.table.events`)."""
        return self.machine.events

    @property
    def totals(self) -> list[int]:
        return self.machine.totals

    @property
    def winner(self) -> int | list[int] | None:
        return self.machine.winner

    @property
    def hash(self) -> bytes:
        """The transcript hash as it stands."""
        return self.transcript.hash

    def holds(self, wire: bytes) -> bool:
        """Whether ``wire`` is held here for a turn this seat has not reached (a message
        or a claim its sender made on a transcript further on), rather than taken."""
        claims = self.claims
        return wire in self.transcript.held.values() or wire in claims.held.values() \
            or wire in claims.held_cheats.values()

    def took(self, wire: bytes) -> bool:
        """Whether ``wire`` is taken here: in the transcript, or a claim counted on it."""
        claims = self.claims
        head = read_head(wire)
        env = None if head is None else self.transcript.signed.get((head.sender, head.seq))
        return (env is not None and env.wire == wire) or wire in claims.settled \
            or any(made.wire == wire for made, _ in claims.made.values()) \
            or any(made.env.wire == wire for made in claims.cheats.values())

    # ================================================================ the driver's API

    def take_outbox(self) -> list[bytes]:
        """What this seat must send now (the outbox is emptied; its parts share it)."""
        out = list(self.outbox)
        self.outbox.clear()
        return out

    def due(self) -> Step | None:
        """The message due next, and from whom (None: the game is over)."""
        return self.machine.due()

    def decision(self) -> HandState | None:
        """This seat's view when it is this seat's move (None otherwise)."""
        step = self.due()
        run = self.machine.run
        if step is None or step.kind not in ACTS or step.seat != self.me or run is None:
            return None
        if self.machine.forced() is not None or run.suspect or self.desk.accusing():
            return None
        return run.view

    def turn(self) -> tuple[bytes, int, int] | None:
        """Which of this seat's moves :meth:`decision` asks for: (the table, the deal,
        the moves made in it); None when it asks for none.  A move decided for one turn
        is taken while the turn is the same, whatever else came meanwhile (a chat, a
        share of the shuffle ahead)."""
        run = self.machine.run
        if run is None or self.decision() is None:
            return None
        return self.machine.table, run.index, len(run.acts)

    def act(self, code: int) -> None:
        """Make this seat's move ``code``; :class:`IllegalAction` (nothing changes) if
        the rules forbid it."""
        self._resolve()
        view = self.decision()
        if view is None:
            raise IllegalAction("turn", f"it is not seat {self.me}'s move")
        view.check(code)
        self._send_move(view, code)
        self._pump()

    def claim_silent(self, *, forked: bool = False) -> None:
        """The seat whose message is due has been silent past the table's grace period
        (the driver's clock says so): claim it.  With every other seat's claim on the
        same transcript, it forfeits the deal (p2pcards/rules/common.md); a message from
        it that arrives first wins.

        A seat whose message came on another transcript is not silent: another seat may
        have signed two versions of an earlier message, and it saw the other.  The relay
        brings every version to every seat, and a seat that holds such a proof claims
        it at once (the equivocator forfeits the deal).  So once the relay has had time
        (the driver's second grace period: ``forked=True``) and no proof is pending,
        nothing explains the other transcript: it exists nowhere but in its own
        messages, and it may be claimed like a silent seat."""
        step = self.due()
        if step is None or self.me in (step.seat, WATCHER):
            raise ValueError("no other seat's message is due")
        if self.me not in self.roster.others(step.seat):
            raise ValueError(f"seat {step.seat} is run by this seat's peer")
        transcript = self.transcript
        if transcript.equivocations:
            cheats = ", ".join(str(seat) for seat in sorted(transcript.equivocations))
            raise ValueError(f"a proof of equivocation by seat(s) {cheats} is being claimed")
        if step.seat in transcript.forked and not forked:
            raise ValueError(f"seat {step.seat} is not silent: its message came on another"
                             " transcript (an earlier message may have been sent in two"
                             " versions)")
        self.desk.own_claim(Silent(seat=step.seat))

    def propose_void(self, reason: str) -> None:
        """Propose, instead of this seat's move, to void the deal; every other seat then
        answers in turn (:meth:`answer_void`), and with every seat's consent the deal is
        void (audited, so that its cards are known; it does not count)."""
        if self.decision() is None:
            raise ValueError("a seat proposes to void the deal in place of its move")
        self._send(Void(reason=clip(reason or "voided by every seat", 80)),
                   Step(Kind.VOID, self.me))
        self._pump()

    def void_question(self) -> str | None:
        """The proposal to void the deal that this seat must now answer, if any."""
        step = self.due()
        run = self.machine.run
        if step is None or step.kind != Kind.CONSENT or step.seat != self.me or run is None:
            return None
        return run.vote[1] if run.vote else None

    def answer_void(self, agree: bool) -> None:
        """This seat's answer to the proposal to void the deal."""
        if self.void_question() is None:
            raise ValueError("no proposal to void the deal awaits this seat's answer")
        self._send(Consent(agree=agree), Step(Kind.CONSENT, self.me))
        self._pump()

    def receive(self, wire: bytes) -> Rejection | None:
        """Take a message from the network: None if accepted (or held until its turn
        comes), else the :class:`Rejection` (the session unchanged)."""
        rejection = self._receive(wire)
        if rejection is None:
            self.intake.retry_held()
        else:
            self.rejections.append(rejection)
        self.desk.claim_cheats()
        self.returns.say_back()
        return rejection

    def proof_jobs(self) -> list[ProofJob]:
        """The deferred proofs :meth:`check_pending` checks next, as work a driver may
        hand another thread meanwhile (:class:`~p2pcards.table.run.ProofJob`: a check
        that holds makes that one cost nothing here)."""
        return self.machine.proof_jobs()

    def check_pending(self, limit: int | None = None) -> bool:
        """Check the deferred shuffle proofs of the deal in progress, at most ``limit``
        of them, oldest first; whether any is left unchecked.  At a table whose roster
        names the pipelined rule (``proved-pipelined``; at a plain ``proved`` table every
        proof is checked on arrival and this does nothing) a shuffle from another
        seat is taken with its proof unchecked, so that this seat, when it shuffles
        next, shuffles and sends first (docs/protocol.md, "Pipelined shuffles"): the
        driver calls this once it has sent the outbox and has nothing else to do.
        Every proof is checked by the end of its round all the same (before anything
        else is taken or made there: no share leaves, and no card opens, before), and
        a proof that does not hold makes its shuffler forfeit the deal, as if it had
        been refused on arrival; messages due then go to the outbox.  At a table whose
        roster names ``proved-ahead``, the same idle time then makes this seat's step of
        the next deal's deck ready and checks the proofs of that deck's shuffles
        (docs/protocol.md, "Shuffle ahead"); whether any work is left counts them too."""
        self.machine.check_pending(limit)
        self._resolve()
        self._pump()
        return self.machine.unchecked()

    def export(self) -> bytes:
        """The transcript as a file for ``p2pcards verify``: the roster and every
        accepted message, in order."""
        return pack({"format": TRANSCRIPT_FORMAT, "roster": self.home.encode(),
                     "messages": [env.wire for env in self.transcript]})

    def late_word(self) -> bytes | None:
        """The message of the seat due, if this seat refused it because it had claimed its
        sender silent and the claims stay incomplete (:meth:`ClaimDesk.late_word`)."""
        return self.desk.late_word()

    def hold_return(self, hold: bool) -> None:
        """Hold this benched seat's return (``back``) until its person acts (True), or
        say it now (False) (:attr:`Returns.ready`)."""
        self.returns.ready = not hold
        if not hold:
            self.returns.say_back()

    def take_late(self, wire: bytes) -> None:
        """Take after all a message refused because this seat had claimed its sender
        silent (:meth:`ClaimDesk.take_late`)."""
        self.desk.take_late(wire)

    # ============================================================== receiving

    def _receive(self, wire: bytes) -> Rejection | None:
        return self.intake.receive(wire)

    def _record(self, env: Envelope) -> None:
        """``env`` (applied) goes into the transcript; the game moves on."""
        record(self.transcript, self.machine, env)

    # ================================================================= sending

    def _send(self, message: Message, step: Step) -> None:
        """Sign and send ``message``, the step due from this seat (computed before the
        message was made: making a deck step already moves the deck on)."""
        kind, body = kinds.encode_body(message)
        assert step.seat == self.me and step.kind == kind, (step, kind)
        kinds.decode_body(kind, body, self.me)  # what this seat sends, the others accept
        assert self.identity is not None
        env = self.transcript.seal(self.identity, self.machine.deal_index(), kind, body)
        self.machine.taken(env, message, step)
        mine = self.roster.process_of(self.me)
        position = len(self.transcript)
        for claimant, (made, claim) in self.claims.made.items():
            if self.roster.process_of(claim.seat) == mine:  # (kept: they may complete)
                self.claims.behind[claimant] = (made, claim, position)
        self.claims.lapse()
        self.outbox.append(env.wire)
        self._record(env)

    def _made(self, step: Step, made: Callable[[], Message]) -> Message:
        """This seat's message for ``step``: ``made()``, unless a cheat forges it."""
        return made() if self.forge is None else self.forge(self, step, made)

    def _send_move(self, view: HandState, code: int) -> None:
        run = self.machine.run
        assert run is not None
        step = Step(self.machine.flavor.act, self.me)
        honest = move(self.machine, view, code)
        message = self._made(step, lambda: honest)
        if message is not honest:  # its own view no longer follows what it sent
            run.suspect = run.suspect or "this seat sent a move it did not make"
        self._send(message, step)

    def _resolve(self) -> None:
        """At the end of a round, the deferred shuffle proofs before anything else
        (:func:`~p2pcards.table.phases.resolve`): one refused ends the deal; else this
        seat's steps held back for them (its shares) are made now."""
        machine = self.machine
        run = machine.run
        if run is None or not machine.waiting() or run.deck.expected() is not None:
            return
        if resolve(machine):
            machine.advance()
        self._pump()

    def _pump(self) -> None:
        """Send every automatic step that is this seat's (not its moves: :meth:`act`).
        A step other than the deck's own (shares, above all) waits for every deferred
        shuffle proof to be checked: after what this seat has just made has gone out
        (the driver then calls :meth:`check_pending`), or at once."""
        machine = self.machine
        while True:
            step = self.due()
            if step is None or step.seat != self.me or step.kind == Kind.CONSENT \
                    or self.desk.accusing():
                return  # (a seat that claims a cheat waits for the claims to complete)
            if step.kind not in DECK_STEPS and machine.waiting():
                if self.outbox:
                    return  # (its shuffle leaves before this seat checks the proofs)
                if resolve(machine, force=True):
                    machine.advance()
                    continue
            run = machine.run
            if step.kind in ACTS and run is not None and run.suspect:
                self._send(Alarm(problem=clip(run.suspect)), Step(Kind.ALARM, self.me))
                continue
            if step.kind in ACTS:
                forced = machine.forced()
                if forced is None or run is None or run.view is None:
                    return
                self._send_move(run.view, forced)
                continue
            self._send(self._made(step, partial(make, machine, step)), step)


__all__ = ["TRANSCRIPT_FORMAT", "WATCHER", "DealRun", "Forge", "Rejection", "Session", "Step"]
