"""One peer's table session, sans I/O (DESIGN.md section 3; docs/protocol.md).

A :class:`Session` takes verified messages (:meth:`Session.receive`) and local
decisions (:meth:`Session.act`) and puts the messages it must send in its
outbox (:meth:`Session.take_outbox`).  No sockets and no clocks: a test runs
every seat's session in one process (:mod:`p2pcards.table.memory`).

Every message is due from exactly one seat at a time, so all honest sessions
accept the same messages in the same order: that order is the transcript, and
each envelope names the transcript hash its sender had (``prior``).  What is
due comes from a queue of protocol steps (signing the roster, drawing the
first dealer, each deal's hellos, key releases, re-mixes, audits and
agreements), from the deck (its shuffle and lock passes) and from the game
(whose move it is).

The session keeps two engine views: its seat's own, and the public one that
every move is checked against (so that honest seats never part over what only
one of them can see; a seat whose own cards disprove a move raises the alarm).
Which slot of the deck holds which card is known to a seat only where the rules
let it see the card; the *ledger* (slot -> engine place) and who can open each
slot are public, and say which keys must go to whom when the game moves cards
(:mod:`p2pcards.table.moves`).  Claims of silence, and votes to void a deal,
are the ways a deal ends other than by play.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from functools import partial

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.games import HandState
from p2pcards.games.core import (
    CHANCE,
    SPECTATOR,
    TERMINAL,
    ActionSyntaxError,
    ChanceKind,
    IllegalAction,
)
from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.deck import Deck
from p2pcards.protocol.errors import EarlyMessage, RemoteProtocolError
from p2pcards.protocol.messages import KeyRelease, Locked, Remixed, Shuffled, Unlocked
from p2pcards.protocol.randomness import Commit, JointRandom, Reveal
from p2pcards.protocol.source import SystemSource
from p2pcards.protocol.steps import DeckContext
from p2pcards.table import kinds
from p2pcards.table.codec import (
    CodecError,
    Envelope,
    chain,
    genesis,
    open_envelope,
    pack,
    private_bytes,
    public_bytes,
    seal,
    seal_envelope,
    usable_seal_key,
)
from p2pcards.table.judge import Deal, KeyStep, judge, open_sealed
from p2pcards.table.kinds import (
    Act,
    Agree,
    Alarm,
    Audit,
    Consent,
    Hello,
    Keys,
    Message,
    Opened,
    Sign,
    Silent,
    Void,
    clip,
)
from p2pcards.table.moves import Movements
from p2pcards.table.replay import forfeit
from p2pcards.table.roster import Roster
from p2pcards.table.state import (
    AGREE,
    AUDIT,
    DEAL,
    DECK,
    DRAW,
    EVERYONE,
    HELLO,
    OVER,
    PLAY,
    SEATING,
    SHOWN,
    WATCHER,
    DealRun,
    Event,
    Refused,
    Rejection,
    Step,
)

TRANSCRIPT_FORMAT = "p2pcards-transcript/1"
Forge = Callable[["Session", Step, Callable[[], Message]], Message]
"""A cheat, for tests: ``forge(session, step, make)`` returns the message the seat
sends for ``step`` in place of the honest one, which ``make()`` returns (calling it
moves the deck on for a deck step; a deck step forged with ``Deck.step(forge)``
keeps the seat's own deck in step with what it sends).  A seat whose move is
forged stops trusting its own view (it raises the alarm on its next turn)."""
CLAIMS = ("silent",)
"""Messages any seat may send at any time, counted only when complete."""


class Session(Movements):
    """One seat's side of a table: every deal of a game, in turn with the others."""

    def __init__(self, roster: Roster, me: int, identity: Ed25519PrivateKey | None,
                 source: SecretSource | None = None, *, keep_states: bool = False,
                 forge: Forge | None = None):
        """``me``: this peer's seat, or :data:`WATCHER` for a session that only checks
        the others' messages (``p2pcards verify``; it needs no identity).  ``forge``:
        a cheat, for tests (:data:`Forge`)."""
        if me != WATCHER:
            if not 0 <= me < roster.players:
                raise ValueError(f"seat {me} is not at this table")
            if identity is None or \
                    public_bytes(identity.public_key()) != roster.seats[me].identity:
                raise ValueError(f"this identity is not seat {me}'s in the roster")
        self.roster = roster
        self.me = me
        self.identity = identity
        self.source: SecretSource = SystemSource() if source is None else source
        self.keep_states = keep_states
        self.forge = forge
        self.game = roster.rules
        self.players = roster.players
        self.options = roster.resolved_options()
        self.table = roster.table
        self.hash = genesis(self.table)
        self.seq_out = 0
        self.seq_in = [0] * self.players
        self.transcript: list[Envelope] = []
        self.events: list[Event] = []
        self.rejections: list[Rejection] = []
        self.outbox: list[bytes] = []
        self.claims: dict[int, tuple[Envelope, Silent]] = {}
        """Claims of silence on the transcript as it stands, by claimant."""
        self.held_claims: dict[int, bytes] = {}
        """Seat -> its claim on a transcript this seat has not reached yet."""
        self.settled: set[bytes] = set()
        """The claims last taken (forwarded copies of them are ignored)."""
        self.payloads: dict[tuple[int, int], bytes] = {}
        """(seat, sequence number) -> the payload taken (a second version is proof)."""
        self.equivocations: dict[int, tuple[bytes, bytes]] = {}
        """Seat -> two payloads it signed with one sequence number."""
        self.forked: dict[int, bytes] = {}
        """Seat -> its message refused as sent on another transcript (not silent)."""
        self.held: dict[int, bytes] = {}
        """Seat -> its next message, sent on a transcript this seat has not reached."""
        self.resend: dict[int, bytes] = {}
        """Sequence number -> the bytes this seat sent before a restart (from its
        journal): when that message is due again it goes out as it was, never in a
        second version (sealed bodies are not reproducible)."""
        self.phase = SEATING
        self.queue: deque[Step] = deque(Step("sign", s) for s in range(self.players))
        self.draw = JointRandom(b"p2pcards/first-dealer/" + self.table, self.players, me,
                                self.source)
        self.dealer = -1
        self.deals = 0
        self.scored = 0
        self.totals = [0] * self.game.unit_count(self.players)
        self.winner: int | list[int] | None = None
        self.run: DealRun | None = None
        self._own_code = -1
        self.finished: list[DealRun] = []
        self._pump()

    # ================================================================ the driver's API

    def take_outbox(self) -> list[bytes]:
        out, self.outbox = self.outbox, []
        return out

    def due(self) -> Step | None:
        """The message due next, and from whom (None: the game is over)."""
        if self.queue:
            return self.queue[0]
        run = self.run
        if self.phase in (DECK, PLAY) and run is not None:
            expected = run.deck.expected()
            if expected is not None:
                return Step(expected[0], expected[1])
        if self.phase == PLAY and run is not None and run.public is not None:
            player = run.public.current_player()
            if player >= 0:
                return Step("act", player)
        return None

    def decision(self) -> HandState | None:
        """This seat's view when it is this seat's move (None otherwise)."""
        step = self.due()
        if step is None or step.kind != "act" or step.seat != self.me or self.run is None:
            return None
        if self._forced() is not None or self.run.suspect:
            return None
        return self.run.view

    def act(self, code: int) -> None:
        """Make this seat's move ``code``; :class:`IllegalAction` (nothing changes) if
        the rules forbid it."""
        view = self.decision()
        if view is None:
            raise IllegalAction("turn", f"it is not seat {self.me}'s move")
        view.check(code)
        self._send_act(view, code)
        self._pump()

    def _send_act(self, view: HandState, code: int) -> None:
        run = self.run
        assert run is not None
        public = view.format_action(code, seat=SPECTATOR)
        full = view.format_action(code)
        hidden = [w for w, p in zip(full.split(), public.split(), strict=True) if p == "?"]
        mine = {run.deck.opened[s]: s for s in run.place
                if run.place[s] == self.me and s in run.deck.opened}
        by_name = {self.game.notation.name(run.ids[c]): s for c, s in mine.items()}
        slots = tuple(by_name[name] for name in hidden)
        self._own_code = code
        shown = []
        for card in view.shown_cards(code):
            slot = by_name[self.game.notation.name(card)]
            shown.append((slot, tuple(sorted(run.deck.keys[slot].items()))))
        step = Step("act", self.me)
        honest = Act(action=public, shown=tuple(shown), slots=slots)
        message = self._made(step, lambda: honest)
        if message is not honest:  # its own view no longer follows what it sent
            run.suspect = run.suspect or "this seat sent a move it did not make"
        self._send(message, step)

    def _made(self, step: Step, make: Callable[[], Message]) -> Message:
        """This seat's message for ``step``: ``make()``, unless a cheat forges it."""
        return make() if self.forge is None else self.forge(self, step, make)

    def claim_silent(self, *, forked: bool = False) -> None:
        """The seat whose message is due has been silent past the table's grace period
        (the driver's clock says so): claim it.  With every other seat's claim on the
        same transcript, it forfeits the deal (RULINGS.md); a message from it that
        arrives first wins.

        A seat whose message came on another transcript is not silent: another seat may
        have signed two versions of an earlier message, and it saw the other.  The relay
        brings every version to every seat, so once that has had time (the driver's
        second grace period: ``forked=True``) and still no seat is proven to have
        equivocated, the other transcript exists nowhere but in its own messages, and it
        may be claimed like a silent seat."""
        step = self.due()
        if step is None or self.me in (step.seat, WATCHER):
            raise ValueError("no other seat's message is due")
        if step.seat in self.forked and (not forked or self.equivocations):
            raise ValueError(f"seat {step.seat} is not silent: its message came on another"
                             " transcript (an earlier message was sent in two versions)")
        self._own_claim(Silent(seat=step.seat))

    def propose_void(self, reason: str) -> None:
        """Propose, instead of this seat's move, to void the deal; every other seat then
        answers in turn (:meth:`answer_void`), and with every seat's consent the deal is
        void (audited, so that its cards are known; it does not count)."""
        if self.decision() is None:
            raise ValueError("a seat proposes to void the deal in place of its move")
        self._send(Void(reason=clip(reason or "voided by every seat", 80)),
                   Step("void", self.me))
        self._pump()

    def void_question(self) -> str | None:
        """The proposal to void the deal that this seat must now answer, if any."""
        step = self.due()
        if step is None or step.kind != "consent" or step.seat != self.me or self.run is None:
            return None
        return self.run.vote[1] if self.run.vote else None

    def answer_void(self, agree: bool) -> None:
        """This seat's answer to the proposal to void the deal."""
        if self.void_question() is None:
            raise ValueError("no proposal to void the deal awaits this seat's answer")
        self._send(Consent(agree=agree), Step("consent", self.me))
        self._pump()

    def receive(self, wire: bytes) -> Rejection | None:
        """Take a message from the network: None if accepted (or held until its turn
        comes), else the :class:`Rejection` (the session unchanged)."""
        rejection = self._receive(wire)
        if rejection is None:
            self._retry_held()
        else:
            self.rejections.append(rejection)
        return rejection

    @property
    def over(self) -> bool:
        return self.phase == OVER

    def export(self) -> bytes:
        """The transcript as a file for ``p2pcards verify``: the roster and every
        accepted message, in order."""
        return pack({"format": TRANSCRIPT_FORMAT, "roster": self.roster.encode(),
                     "messages": [env.wire for env in self.transcript]})

    # ============================================================== receiving

    def _receive(self, wire: bytes) -> Rejection | None:
        try:
            env = open_envelope(wire, self.roster.keys)
        except CodecError as error:
            return Rejection(error.sender, "malformed" if error.sender is None else "signature",
                             str(error))
        sender = env.sender
        if env.table != self.table:
            return Rejection(sender, "table", "a message of another table")
        if env.kind in CLAIMS:
            return self._claim(env, wire)
        if self._claimed_silent(sender) and env.prior == self.hash:
            return Rejection(sender, "silent", f"this seat has claimed seat {sender} silent on"
                                               " this transcript")
        if sender == self.me:
            return Rejection(sender, "replay", "a message in this seat's own name")
        expected = self.seq_in[sender]
        if env.seq < expected:
            taken = self.payloads.get((sender, env.seq))
            if taken is not None and taken != env.payload:  # two signed versions: proof
                self.equivocations.setdefault(sender, (taken, env.payload))
                self.events.append(Event("equivocation", f"seat {sender} signed two different"
                                         f" messages with sequence number {env.seq}", sender))
                return Rejection(sender, "equivocation", f"a second, different message with"
                                                         f" sequence number {env.seq}")
            return Rejection(sender, "replay", f"sequence number {env.seq} again (next is"
                                               f" {expected}): a duplicate or replay")
        if env.seq > expected:
            return Rejection(sender, "order", f"sequence number {env.seq}, but {expected} is"
                                              " next: a message is missing or reordered")
        try:
            message = kinds.decode_body(env.kind, env.body, sender)
        except CodecError as error:
            return Rejection(sender, "malformed", str(error))
        step = self.due()
        if env.prior != self.hash:
            if step is not None and step.seat == sender:
                self.forked[sender] = wire
                return Rejection(sender, "transcript", "sent on another transcript than this"
                                 " seat's (a fork: its signed message proves it)")
            held = self.held.get(sender)
            if held is not None and held != wire:
                return Rejection(sender, "transcript", f"two different messages with sequence"
                                                       f" number {env.seq}")
            self.held[sender] = wire  # its sender saw a message this seat has not yet
            return None
        stands_in = env.kind in ("alarm", "void") and step is not None and step.kind == "act"
        if step is None or step.seat != sender or (step.kind != env.kind and not stands_in):
            what = "the game is over" if step is None else f"{step.kind} from seat {step.seat}"
            return Rejection(sender, "turn", f"{env.kind} out of turn ({what} is due)")
        if env.deal != self._deal_index():
            return Rejection(sender, "deal", f"deal {env.deal}, but this is deal"
                                             f" {self._deal_index()}")
        try:
            self._apply(env, message, step)
        except CodecError as error:
            return Rejection(sender, "malformed", str(error))
        except Refused as refused:
            return Rejection(sender, refused.rule, refused.reason)
        self._accepted(env)
        self._pump()
        return None

    # ================================================================== claims

    def _own_claim(self, message: Silent) -> None:
        if self.me in self.claims:
            raise ValueError("this seat has made its claim on this transcript already")
        kind, body = kinds.encode_body(message)
        assert self.identity is not None
        env = seal_envelope(self.identity, table=self.table, deal=self._deal_index(),
                            sender=self.me, seq=self.seq_out, prior=self.hash, kind=kind,
                            body=body)
        self.claims[self.me] = (env, message)
        self.outbox.append(env.wire)
        self._settle()

    def _claimed_silent(self, seat: int) -> bool:
        """Whether this seat has claimed ``seat`` silent on the transcript as it stands:
        then it refuses ``seat``'s message on it, so that a complete set of claims
        means that no honest seat took that message."""
        own = self.claims.get(self.me)
        return own is not None and own[1].seat == seat

    def _claim(self, env: Envelope, wire: bytes) -> Rejection | None:
        """A claim of silence: sent by any seat at any time, on the transcript as it
        stands, one per seat; the claims count only once every seat but the silent one
        has made one on the same transcript, and are then taken in seat order."""
        sender = env.sender
        if wire in self.settled:
            return None  # a claim already taken, forwarded by another seat
        if sender == self.me:
            return Rejection(sender, "replay", "a message in this seat's own name")
        if env.seq < self.seq_in[sender]:
            return Rejection(sender, "replay", f"a claim with sequence number {env.seq},"
                                               f" already used")
        if env.seq > self.seq_in[sender]:
            return Rejection(sender, "order", f"a claim with sequence number {env.seq}, but"
                                              f" {self.seq_in[sender]} is next")
        if env.prior != self.hash:  # its sender saw more, or less: held, the latest
            self.held_claims[sender] = wire  # (a claim is about one transcript only)
            return None
        if env.deal != self._deal_index():
            return Rejection(sender, "deal", f"a claim for deal {env.deal}")
        try:
            message = kinds.decode_body(env.kind, env.body, sender)
        except CodecError as error:
            return Rejection(sender, "malformed", str(error))
        assert isinstance(message, Silent)
        step = self.due()
        if message.seat == self.me:
            return Rejection(sender, "silent", "claims this seat silent: it is here")
        if step is None or step.seat != message.seat or message.seat == sender:
            return Rejection(sender, "turn", f"seat {message.seat} is not the seat due")
        known = self.claims.get(sender)
        if known is not None:
            return None if known[0].wire == env.wire else Rejection(
                sender, "replay", "a second, different claim on one transcript")
        self.claims[sender] = (env, message)
        self._settle()
        return None

    def _settle(self) -> None:
        """Take the claims once they are complete (every seat but the silent one), in seat
        order; forward them, so that every seat that has seen them takes them too."""
        made = self.claims
        if not made:
            return
        silent = next(iter(made.values()))[1].seat
        if set(made) != set(range(self.players)) - {silent}:
            return
        self.claims = {}
        self.settled = set()
        for sender in sorted(made):
            env = made[sender][0]
            self.settled.add(env.wire)
            self.payloads[sender, env.seq] = env.payload
            if sender != self.me:
                self.outbox.append(env.wire)
            self.transcript.append(env)
            if self.run is not None and self.phase not in (SEATING, DRAW):
                self.run.envelopes.append(env)
            self.hash = chain(self.hash, env.payload)
            self.seq_in[sender] = env.seq + 1
            if sender == self.me:
                self.seq_out += 1
        self._silenced(silent)
        self._advance()
        self._pump()

    def _silenced(self, seat: int) -> None:
        """``seat`` forfeits the deal: the game's penalty against it, the deal scored as
        played so far for the others (RULINGS.md); its secrets never came, so the record
        keeps no cards.  Before the first deal, or at a table of two (where one seat's
        word would be all it takes), the table breaks up instead; at the agreement the
        result stands without its signature; a deal already void stays void."""
        run = self.run
        if run is None or self.players == 2:
            self.phase = OVER
            self.run = None
            self.queue.clear()
            self.events.append(Event("over", f"seat {seat} was silent: the table breaks up",
                                     seat))
            return
        if self.phase == AGREE:
            self.queue = deque(step for step in self.queue if step.seat != seat)
            run.signers = [s for s in run.signers if s != seat]
            return
        reason = "refused audit" if self.phase == AUDIT else "silent"
        run.outcome = forfeit(self.game, self.players, self.options, run.dealer, run.number,
                              self._blank_deck(run), [], {}, seat, reason)
        public = run.public
        rules_void = public.void_reason if public is not None else None
        if run.consented or rules_void is not None:
            run.outcome.record.forfeit = None
            run.outcome.record.void = True
            run.outcome.record.reason = run.consented or rules_void or ""
            run.verdict = clip(f"void: {run.outcome.record.reason}")
        else:
            if public is not None:
                played = public.clone()  # the deal as played so far, the penalty applied
                played.penalize(seat, reason)
                run.outcome.state = played
            run.verdict = f"seat {seat} forfeits the deal: {reason}"
        run.points = run.outcome.points
        run.agree_hash = self.hash
        run.signers = [s for s in range(self.players) if s != seat]
        self.queue = deque(Step("agree", s) for s in run.signers)
        self.phase = AGREE
        self.events.append(Event("forfeit", run.verdict, seat))

    def _consent(self, run: DealRun, sender: int, message: Consent) -> None:
        """An answer to the proposal to void: a refusal ends the vote (the proposer moves
        after all); the last consent voids the deal."""
        assert run.vote is not None
        if not message.agree:
            self.queue = deque(step for step in self.queue if step.kind != "consent")
            self.events.append(Event("vote", f"seat {sender} does not consent: the deal goes"
                                             " on", sender))
            run.vote = None
            return
        if any(step.kind == "consent" and step.seat != sender for step in self.queue):
            return
        run.consented = run.vote[1]
        run.vote = None
        self._alarm(run)  # audited at once, so that its cards are known
        self.events.append(Event("void", f"every seat consents to void the deal"
                                         f" ({run.consented})"))

    def _retry_held(self) -> None:
        """Take the held messages whose turn has come (at most one per sender: its next
        one); one whose sender is due but that names another transcript is refused."""
        for sender in sorted(self.held_claims):
            wire = self.held_claims.get(sender)
            if wire is None:
                continue  # taken by a set completed meanwhile
            env = open_envelope(wire, self.roster.keys)
            if env.seq < self.seq_in[sender]:
                self.held_claims.pop(sender, None)
            elif env.prior == self.hash:
                self.held_claims.pop(sender, None)
                rejection = self._claim(env, wire)
                if rejection is not None:
                    self.rejections.append(rejection)
        progress = True
        while progress and self.held:
            progress = False
            for sender, wire in list(self.held.items()):
                env = open_envelope(wire, self.roster.keys)
                step = self.due()
                if env.seq < self.seq_in[sender]:
                    self.held.pop(sender, None)  # overtaken: that sequence number is taken
                elif env.prior == self.hash or (step is not None and step.seat == sender):
                    self.held.pop(sender, None)
                    rejection = self._receive(wire)
                    if rejection is not None:
                        self.rejections.append(rejection)
                    progress = True
                    break

    def _deal_index(self) -> int:
        return self.run.index if self.run is not None else 0

    def _accepted(self, env: Envelope) -> None:
        self.claims = {}  # the transcript moves on: claims on the old one lapse
        self.forked = {}
        self.payloads[env.sender, env.seq] = env.payload
        self.transcript.append(env)
        if self.run is not None and self.phase not in (SEATING, DRAW):
            self.run.envelopes.append(env)
        self.hash = chain(self.hash, env.payload)
        self.seq_in[env.sender] = env.seq + 1
        if self.queue and self.queue[0].seat == env.sender and self.queue[0].kind == env.kind:
            self.queue.popleft()
        self._advance()

    # ================================================================= sending

    def _send(self, message: Message, step: Step) -> None:
        """Sign and send ``message``, the step due from this seat (computed before the
        message was made: making a deck step already moves the deck on)."""
        kind, body = kinds.encode_body(message)
        assert step.seat == self.me and step.kind == kind, (step, kind)
        kinds.decode_body(kind, body, self.me)  # what this seat sends, the others accept
        assert self.identity is not None
        env = seal_envelope(self.identity, table=self.table, deal=self._deal_index(),
                            sender=self.me, seq=self.seq_out, prior=self.hash, kind=kind,
                            body=body)
        journaled = self.resend.pop(self.seq_out, None)
        if journaled is not None:
            env = self._as_sent(journaled, env)
        self.seq_out += 1
        self._apply(env, message, step)
        self.claims = {}
        self.transcript.append(env)
        if self.run is not None and self.phase not in (SEATING, DRAW):
            self.run.envelopes.append(env)
        self.hash = chain(self.hash, env.payload)
        if self.queue and self.queue[0] == step:
            self.queue.popleft()
        self.outbox.append(env.wire)
        self._advance()

    def _as_sent(self, wire: bytes, made: Envelope) -> Envelope:
        """The message this seat sent before a restart, checked to be the one it would
        send now (the same step, the same content; a sealed body's bytes differ)."""
        sent = open_envelope(wire, self.roster.keys)
        same = (sent.sender, sent.seq, sent.prior, sent.kind, sent.deal) == \
            (made.sender, made.seq, made.prior, made.kind, made.deal)
        if not same or (made.kind != "keys" and sent.body != made.body):
            raise ValueError(f"the journal's message {made.seq} of seat {self.me} is not"
                             f" the one this seat sends now ({sent.kind}, {made.kind}): the"
                             " journal belongs to another game or its secrets changed")
        return sent

    def _pump(self) -> None:
        """Send every automatic step that is this seat's (not its moves: :meth:`act`)."""
        while True:
            step = self.due()
            if step is None or step.seat != self.me or step.kind == "consent":
                return
            if step.kind == "act" and self.run is not None and self.run.suspect:
                self._send(Alarm(problem=clip(self.run.suspect)), Step("alarm", self.me))
                continue
            if step.kind == "act":
                forced = self._forced()
                if forced is None or self.run is None or self.run.view is None:
                    return
                self._send_act(self.run.view, forced)
                continue
            self._send(self._made(step, partial(self._make, step)), step)

    def _make(self, step: Step) -> Message:
        run = self.run
        kind = step.kind
        if kind == "sign":
            return Sign(roster=self.roster.digest())
        if kind == "commit":
            return self._draw().commit()
        if kind == "share":
            return self._draw().reveal()
        assert run is not None
        if kind == "hello":
            return Hello(seal_key=public_bytes(run.seal_private.public_key()))
        if kind in ("unlock", "shuffle", "lock"):
            return run.deck.step()
        if kind == "remix":
            return run.deck.remix(list(step.slots))
        if kind == "keys":
            return self._make_keys(run, step)
        if kind == "opened":
            return Opened(problem=clip(run.problem))
        if kind == "audit":
            return Audit(reveal=run.deck.secrets(), seal_secret=private_bytes(run.seal_private))
        if kind == "agree":
            return Agree(transcript=run.agree_hash, points=tuple(run.points),
                         verdict=run.verdict)
        raise AssertionError(kind)

    def _make_keys(self, run: DealRun, step: Step) -> Keys:
        sealed = []
        public: list[tuple[int, int]] = []
        for recipient, slots in step.grants:
            if recipient == EVERYONE:
                public.extend((s, run.deck.release(s).key) for s in slots)
                continue
            content = [[s, run.deck.release(s, recipient).key.to_bytes(32, "big")]
                       for s in slots]
            assert self.identity is not None
            sealed.append((recipient, seal(self.identity, run.seal_keys[recipient],
                                           table=self.table, deal=run.index, sender=self.me,
                                           recipient=recipient, content=content)))
        return Keys(sealed=tuple(sealed), public=tuple(public))

    # ================================================================ applying

    def _apply(self, env: Envelope, message: Message, step: Step) -> None:
        """Check ``message`` against the state and apply it, or raise :class:`Refused`
        (before changing anything)."""
        sender = env.sender
        own = sender == self.me
        run = self.run
        if isinstance(message, Sign):
            if message.roster != self.roster.digest():
                raise Refused("roster", "signed another roster than this seat's")
        elif isinstance(message, Commit | Reveal):
            if not own:
                try:
                    self._draw().receive(message)
                except (ValueError, RemoteProtocolError) as error:
                    raise Refused("draw", str(error)) from None
        elif run is None:
            raise AssertionError("deal message before a deal")
        elif isinstance(message, Hello):
            if message.seal_key in run.seal_keys.values():
                raise Refused("hello", "a sealing key already used at this deal")
            if not usable_seal_key(message.seal_key):
                raise Refused("hello", "not a usable X25519 public key (a low-order point)")
            run.seal_keys[sender] = message.seal_key
        elif isinstance(message, Unlocked | Shuffled | Locked | Remixed):
            if not own:
                if isinstance(message, Remixed) and message.slots != step.slots:
                    raise Refused("remix", "a re-mix of other slots than the cards it holds")
                try:
                    run.deck.receive(message)
                except (RemoteProtocolError, EarlyMessage) as error:
                    raise Refused(f"deck {env.kind}", str(error)) from None
            if isinstance(message, Remixed):
                self._remixed(run, sender, message)
        elif isinstance(message, Keys):
            self._keys(run, env, message, step)
        elif isinstance(message, Opened):
            if message.problem:
                run.alarms[sender] = message.problem
                self.events.append(Event("alarm", f"seat {sender}: {message.problem}", sender))
        elif isinstance(message, Void):
            run.vote = (sender, message.reason)
            seats = [(sender + i) % self.players for i in range(1, self.players)]
            self.queue.extend(Step("consent", seat) for seat in seats)
            self.events.append(Event("vote", f"seat {sender} proposes to void the deal:"
                                             f" {message.reason}", sender))
        elif isinstance(message, Consent):
            self._consent(run, sender, message)
        elif isinstance(message, Alarm):
            run.alarms[sender] = message.problem
            self.events.append(Event("alarm", f"seat {sender}: {message.problem}", sender))
        elif isinstance(message, Act):
            self._act(run, sender, message)
        elif isinstance(message, Audit):
            self._audit(run, sender, message)
        elif isinstance(message, Agree):
            self._agree(run, sender, message)

    def _keys(self, run: DealRun, env: Envelope, message: Keys, step: Step) -> None:
        sender = env.sender
        grants = dict(step.grants)
        private = {r for r in grants if r != EVERYONE}
        if {r for r, _ in message.sealed} != private:
            raise Refused("keys", f"sealed keys for seats {sorted(r for r, _ in message.sealed)},"
                                  f" not {sorted(private)}")
        if [s for s, _ in message.public] != list(grants.get(EVERYONE, ())):
            raise Refused("keys", "public keys of other slots than the step shows")
        for slot, key in message.public:
            if not run.deck.key_matches(sender, slot, key):
                raise Refused("key", f"the key of slot {slot} does not match its commitment")
        releases = [KeyRelease(party=sender, slot=s, key=k) for s, k in message.public]
        mine = dict(message.sealed).get(self.me)
        if mine is not None and sender != self.me:
            pairs, problem = self._unseal_keys(run, sender, mine, grants[self.me])
            if problem:  # signed and in turn: taken, and reported for the audit
                run.problem = run.problem or f"seat {sender}: {problem}"
            else:
                releases += [KeyRelease(party=sender, slot=s, key=k, to=self.me)
                             for s, k in pairs]
        run.key_steps.append((sender, step, message))
        if sender != self.me:
            for release in releases:
                run.deck.receive(release)
        for recipient, slots in grants.items():
            for slot in slots:
                if recipient == EVERYONE:
                    run.knows[slot] = set(range(self.players))
                    if run.deck.can_open(slot):
                        self._show(run, slot)
                elif self.me not in (sender, recipient):
                    run.deck.holder[slot] = recipient

    def _unseal_keys(self, run: DealRun, sender: int, sealed: bytes, slots: tuple[int, ...]
                     ) -> tuple[tuple[tuple[int, int], ...], str]:
        """The keys ``sender`` sealed to this seat, or what is wrong with them."""
        pairs, problem = open_sealed(sealed, run.seal_private, self.roster.keys[sender],
                                     table=self.table, deal=run.index, sender=sender,
                                     recipient=self.me, slots=slots)
        for slot, key in pairs:
            if not run.deck.key_matches(sender, slot, key):
                return (), f"the key of slot {slot} sent to seat {self.me} does not match" \
                           " its commitment"
        return pairs, problem

    def _act(self, run: DealRun, sender: int, message: Act) -> None:
        """A move: checked against what everyone knows (the public view), so that every
        honest seat takes or refuses it alike; then applied to this seat's own view,
        unless its own cards prove the move false (then it raises the alarm on its
        turn)."""
        public = run.public
        assert public is not None
        try:
            code = public.parse_action(message.action)
        except ActionSyntaxError as error:
            raise Refused("syntax", str(error)) from None
        if message.action != public.format_action(code, seat=SPECTATOR):
            raise Refused("syntax", f"{message.action!r} is not the public form of a move")
        if sender != self.me:
            try:
                public.check(code)
            except IllegalAction as error:
                raise Refused(error.code, f"{message.action}: {error.reason}") from None
        hidden = message.action.split().count("?")
        if len(message.slots) != hidden or len(set(message.slots)) != hidden:
            raise Refused("slots", f"{hidden} face-down cards need {hidden} distinct slots")
        for slot in message.slots:
            if run.place.get(slot) != sender or slot in run.deck.retired:
                raise Refused("not-held", f"slot {slot} is not a card seat {sender} holds")
        doubles = self._check_shown(run, sender, message, public.shown_cards(code))
        private = self._own_code if sender == self.me else code
        own = run.view
        if sender != self.me and own is not None and own is not public and not run.suspect:
            try:
                own.check(private)
            except IllegalAction as error:
                run.suspect = f"seat {sender}'s {message.action}: {error.reason}"
            if doubles:
                run.suspect = run.suspect or f"seat {sender} showed a card this seat holds"
        before = public.clone()
        self._apply_both(run, code, private)
        run.acts.append((sender, message))
        for slot, keys in message.shown:
            run.place[slot] = SHOWN
            run.knows[slot] = set(range(self.players))
            if sender != self.me:
                for party, key in keys:
                    if party != self.me and party not in run.deck.keys.get(slot, {}):
                        run.deck.receive(KeyRelease(party=party, slot=slot, key=key))
                if slot not in doubles:
                    run.deck.open(slot)
        self._reconcile(run)
        self._moved(run, before, public, message.slots)
        self.events.append(Event("act", f"seat {sender}: {message.action}", sender))

    def _check_shown(self, run: DealRun, sender: int, message: Act,
                     cards: list[int]) -> set[int]:
        """Every card the move shows comes from a slot ``sender`` holds, with every key
        of the slot, and the slots open to exactly those cards; returns the slots whose
        card this seat has privately opened elsewhere (its own: proof of a cheat that
        only it can see)."""
        if len(message.shown) != len(cards):
            raise Refused("slots", f"the move shows {len(cards)} card(s), the message"
                                   f" {len(message.shown)} slot(s)")
        name = self.game.notation.name
        opened = []
        doubles: set[int] = set()
        for slot, pairs in message.shown:
            if run.place.get(slot) != sender or not run.deck.in_play(slot):
                raise Refused("not-held", f"slot {slot} is not a card seat {sender} holds")
            keys = dict(pairs)
            if len(keys) != len(pairs) or set(keys) != set(run.deck.lockers[slot]):
                raise Refused("keys", f"slot {slot} needs the keys of seats"
                                      f" {list(run.deck.lockers[slot])}")
            for party, key in keys.items():
                if not run.deck.key_matches(party, slot, key):
                    raise Refused("key", f"seat {party}'s key of slot {slot} does not match"
                                         " its commitment")
            card = run.deck.peek(slot, keys)
            if card is None:
                raise Refused("not-held", f"slot {slot} opens to no card")
            for other, seen in run.deck.opened.items():
                if seen == card and other != slot:
                    if len(run.knows.get(other, ())) == self.players:
                        raise Refused("not-held", f"slot {slot} holds a card already shown")
                    doubles.add(slot)
            opened.append(run.ids[card])
        if sorted(opened) != sorted(cards):
            raise Refused("not-held", f"showed {' '.join(name(c) for c in opened) or 'nothing'}"
                                      f" as {' '.join(name(c) for c in cards)}")
        return doubles

    def _audit(self, run: DealRun, sender: int, message: Audit) -> None:
        try:
            secret = X25519PrivateKey.from_private_bytes(message.seal_secret)
        except ValueError as error:
            raise Refused("audit", f"not a sealing key: {error}") from None
        if public_bytes(secret.public_key()) != run.seal_keys.get(sender):
            raise Refused("audit", "the sealing secret does not match the deal's hello")
        if message.reveal.party != sender:
            raise Refused("audit", "secrets in another seat's name")
        run.audits[sender] = message

    def _agree(self, run: DealRun, sender: int, message: Agree) -> None:
        run.agrees[sender] = message
        mine = (run.agree_hash, tuple(run.points), run.verdict)
        theirs = (message.transcript, message.points, message.verdict)
        if theirs != mine:
            what = "transcript" if message.transcript != run.agree_hash else "result"
            self.events.append(Event("disagree", f"seat {sender} signed another {what} of"
                                     f" deal {run.index}: {message.points} {message.verdict!r}"
                                     f" (this seat: {run.points} {run.verdict!r})", sender))

    # ================================================================ phases

    def _advance(self) -> None:
        """Move to the next phase when the current one is complete."""
        while True:
            run = self.run
            if self.phase == DEAL and run is not None and not run.opened \
                    and self.queue and self.queue[0].kind == "opened":
                self._dealt(run)
            if self.phase == PLAY and run is not None:
                if run.alarms:
                    self._alarm(run)
                elif run.view is not None:
                    self._open_stolen(run)
                    self._observe(run)
            if self.queue:
                return
            phase = self.phase
            if phase == SEATING:
                self.phase = DRAW
                self.queue.extend(Step("commit", s) for s in range(self.players))
                self.queue.extend(Step("share", s) for s in range(self.players))
                number = self.roster.safety_number()
                self.events.append(Event("seated", "every seat signed the roster (safety"
                                                   f" number {number})"))
            elif phase == DRAW:
                rng = random.Random(self.draw.seed())
                self.dealer = self.game.first_dealer(self.players, rng)
                self._begin_deal()
            elif phase == HELLO:
                self.phase = DECK
            elif phase == DECK:
                assert self.run is not None
                if self.run.deck.expected() is not None:
                    return
                self._queue_deal(self.run)
            elif phase == DEAL:
                assert self.run is not None
                if self.run.alarms:
                    self._alarm(self.run)
                else:
                    self._after_deal(self.run)
            elif phase == PLAY:
                run = self.run
                assert run is not None and run.public is not None
                player = run.public.current_player()
                if player == CHANCE:
                    reshuffle = run.public.table_chance().kind == ChanceKind.RESHUFFLE
                    made = self._reshuffle(run) if reshuffle else self._chance(run)
                    if made:
                        continue
                    return
                if player != TERMINAL:
                    self._reveal_blind(run, player)
                    return
                self.phase = AUDIT
                self.queue.extend(Step("audit", s) for s in range(self.players))
            elif phase == AUDIT:
                assert self.run is not None
                self._conclude(self.run)
                self.phase = AGREE
                self.run.signers = list(range(self.players))
                self.queue.extend(Step("agree", s) for s in range(self.players))
            elif phase == AGREE:
                assert self.run is not None
                self._score(self.run)
                if self.phase == OVER:
                    return
            else:
                return

    def _draw(self) -> JointRandom:
        """The joint draw the ``commit`` and ``share`` messages are for."""
        run = self.run
        if run is not None and run.draw is not None:
            return run.draw
        return self.draw

    def _begin_deal(self) -> None:
        index = self.deals
        ids = self.game.deck(self.players, self.options)
        context = DeckContext(self.table, index, self.players, len(ids))
        seal_private = X25519PrivateKey.from_private_bytes(self.source.token_bytes(32))
        self.run = DealRun(index, self.scored, self.dealer, Deck(context, self.me, self.source),
                           ids, seal_private)
        self.run.deck_mask = sum(1 << card for card in ids)
        self.phase = HELLO
        self.queue.extend(Step("hello", s) for s in range(self.players))
        self.events.append(Event("deal", f"deal {index + 1}, dealer seat {self.dealer}"))

    def _conclude(self, run: DealRun) -> None:
        """Every secret is in: the verdict (:func:`p2pcards.table.judge.judge`)."""
        deal = Deal(
            self.game, self.players, self.options, run.dealer, run.number, run.ids,
            run.deck.context, run.deck.log, run.deck.releases,
            [KeyStep(sender, step.grants, message) for sender, step, message in run.key_steps],
            run.acts, run.alarms, {s: a.reveal for s, a in run.audits.items()},
            {s: a.seal_secret for s, a in run.audits.items()}, self.roster.keys,
            self._blank_deck(run))
        run.outcome, run.verdict = judge(deal, lifted=run.deck.lifted,
                                         keep_states=self.keep_states)
        if run.consented:  # every seat's consent: the deal does not count
            record = run.outcome.record
            record.void, record.reason = True, run.consented
            record.actions, record.penalty, record.forfeit = [], None, None
            run.verdict = clip(f"void: {run.consented}")
        run.points = run.outcome.points
        run.agree_hash = self.hash

    def _score(self, run: DealRun) -> None:
        void = run.outcome is not None and run.outcome.void
        for unit, points in enumerate(run.points):
            self.totals[unit] += points
        self.finished.append(run)
        self.deals += 1
        self.scored += 0 if void else 1
        self.events.append(Event("result", f"deal {run.index + 1}: {run.points} ({run.verdict});"
                                           f" totals {self.totals}"))
        self.winner = self.game.winner(self.totals, self.scored, self.options)
        if self.winner is not None:
            self.phase = OVER
            self.run = None
            self.events.append(Event("over", f"the game is over: {self.winner}"))
            return
        self.dealer = self.game.next_dealer(self.dealer, self.players, void)
        self._begin_deal()


__all__ = [
    "EVERYONE",
    "TRANSCRIPT_FORMAT",
    "WATCHER",
    "DealRun",
    "Event",
    "Forge",
    "Rejection",
    "Session",
    "Step",
]
