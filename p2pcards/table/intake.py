"""A message from the network, checked in order before it is taken (docs/protocol.md,
"Checking a message").

:class:`Intake` is one of a :class:`~p2pcards.table.session.Session`'s parts: each of
its checks (:data:`CHECKS`), each named for the rule it keeps, refuses the message (a
:class:`~p2pcards.table.state.Rejection` naming the rule), settles it (held until its
turn comes, or taken by the claim desk or the bench) or passes it on; a message
that passes every check goes to its phase's handler and into the transcript.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Final

from p2pcards.table import kinds
from p2pcards.table.benched import Returns
from p2pcards.table.claiming import ClaimDesk
from p2pcards.table.claims import Claims
from p2pcards.table.codec import CodecError, Envelope, open_envelope
from p2pcards.table.decks import ACTS
from p2pcards.table.events import Equivocated
from p2pcards.table.kinds import Kind, Message
from p2pcards.table.phases import PhaseMachine, refute
from p2pcards.table.state import WATCHER, ProvenCheat, RefusedMessage, Rejection, Rule, Step
from p2pcards.table.transcript import Transcript


class Next(Enum):
    """A check of a message that neither refuses it nor settles it: the next check."""

    ON = "on"


ON: Final = Next.ON
Checked = Rejection | None | Next
"""What a check of a message says: refused (the rule it breaks), settled (None: held
for its turn, or taken by another part), or :data:`ON` to the next check."""


@dataclass
class Incoming:
    """A message from the network, as its checks read it."""

    wire: bytes
    env: Envelope | None = None
    message: Message | None = None
    step: Step | None = None




def record(transcript: Transcript, machine: PhaseMachine, env: Envelope) -> None:
    """``env`` (applied) goes into the transcript; the game moves on."""
    transcript.record(env)
    machine.recorded(env)
    machine.advance()


class Intake:
    """The checks of a message from the network, and its taking, for one seat's session."""

    def __init__(self, transcript: Transcript, claims: Claims, machine: PhaseMachine,
                 desk: ClaimDesk, returns: Returns, *, rejections: deque[Rejection],
                 pump: Callable[[], None], settle_round: Callable[[], None]):
        self.transcript = transcript
        self.claims = claims
        self.machine = machine
        self.desk = desk
        self.returns = returns
        self.rejections = rejections
        self._pump = pump
        self._settle_round = settle_round

    def receive(self, wire: bytes) -> Rejection | None:
        """A message from the network through :data:`CHECKS`, in order, then taken:
        None if it was taken (or held until its turn comes), else the
        :class:`Rejection` (nothing changed)."""
        self._settle_round()  # (at a round's end its deferred proofs come before any
        incoming = Incoming(wire)  # message)
        for check in CHECKS:
            checked = check(self, incoming)
            if checked is not ON:
                return checked
        return self._take(incoming)

    def _opens(self, incoming: Incoming) -> Checked:
        """Its envelope decodes and its signature is its seat's in the roster (or it is a
        benched seat's return, signed with the seat's own identity)."""
        try:
            incoming.env = open_envelope(incoming.wire, self.machine.roster.keys)
        except CodecError as error:
            back = self.returns.take(incoming.wire, error)
            if back is not None:
                return back if isinstance(back, Rejection) else None
            return Rejection(error.sender, Rule.MALFORMED if error.sender is None
                             else Rule.SIGNATURE, str(error))
        return ON

    def _of_this_table(self, incoming: Incoming) -> Checked:
        env = incoming.env
        assert env is not None
        if env.table != self.machine.table:
            return Rejection(env.sender, Rule.TABLE, "a message of another table")
        return ON

    def _a_return(self, incoming: Incoming) -> Checked:
        """A return (``back``) is never a message of the transcript: one signed by the key
        the roster now holds for its seat came after the seat was given back (a benched
        seat says it once a deal, and one said as the seat changed hands crosses the
        ``seat`` message): there is nothing left to do.  It is refused as overtaken
        (``stale``: never shown, and neither kept nor relayed, so that a seat cannot make
        a peer journal returns without end)."""
        env = incoming.env
        assert env is not None
        if env.kind != Kind.BACK:
            return ON
        return Rejection(env.sender, Rule.STALE, "a return (back) from a seat that holds its"
                                                 " seat: overtaken, nothing to do")

    def _a_claim(self, incoming: Incoming) -> Checked:
        """A claim of silence or of a cheat is the claim desk's."""
        env = incoming.env
        assert env is not None
        if env.kind in (Kind.SILENT, Kind.CHEAT):
            return self.desk.claim(env, incoming.wire)
        return ON

    def _not_claimed_silent(self, incoming: Incoming) -> Checked:
        """Not from a seat this seat has claimed silent on this transcript (kept: taken
        after all if another seat is seen to have taken it)."""
        env = incoming.env
        assert env is not None
        sender = env.sender
        if self.claims.names(self.machine.me, sender) and env.prior == self.transcript.hash:
            self.claims.late[sender] = incoming.wire
            return Rejection(sender, Rule.SILENT, f"this seat has claimed seat {sender}"
                                                  " silent on this transcript")
        return ON

    def _not_own(self, incoming: Incoming) -> Checked:
        env = incoming.env
        assert env is not None
        if env.sender == self.machine.me:
            return Rejection(env.sender, Rule.REPLAY, "a message in this seat's own name")
        return ON

    def _in_sequence(self, incoming: Incoming) -> Checked:
        """Its sender's next sequence number; the next but one, named on a transcript its
        sender has seen more of, is held (the rest comes first); a second version of
        one taken is kept as proof of equivocation."""
        env = incoming.env
        assert env is not None
        sender, transcript = env.sender, self.transcript
        rejection = transcript.in_sequence(env)
        if rejection is None:
            return ON
        if rejection.rule == Rule.ORDER and env.seq == transcript.seq_in[sender] + 1 \
                and env.prior != transcript.hash and sender not in transcript.held:
            transcript.held[sender] = incoming.wire  # its sender saw more (its claim
            return None  # taken, say): the rest comes first
        if rejection.rule == Rule.EQUIVOCATION:
            self.machine.events.append(Equivocated(sender, env.seq))
        return rejection

    def _decodes(self, incoming: Incoming) -> Checked:
        env = incoming.env
        assert env is not None
        try:
            incoming.message = kinds.decode_body(env.kind, env.body, env.sender)
        except CodecError as error:
            return Rejection(env.sender, Rule.MALFORMED, str(error))
        return ON

    def _on_this_transcript(self, incoming: Incoming) -> Checked:
        """Named on this seat's transcript as it stands: from the seat due, another is a
        fork (its signed message proves it); from another seat, held until this seat
        has seen what its sender saw."""
        env = incoming.env
        assert env is not None
        sender, transcript = env.sender, self.transcript
        incoming.step = step = self.machine.due()
        if env.prior == transcript.hash:
            return ON
        if step is not None and step.seat == sender:
            new = sender not in transcript.forked  # (one per seat and transcript)
            transcript.forked.setdefault(sender, incoming.wire)
            return Rejection(sender, Rule.TRANSCRIPT, "sent on another transcript than this"
                             " seat's (a fork: its signed message proves it)", evidence=new)
        held = transcript.held.get(sender)
        if held is not None and held != incoming.wire:
            return Rejection(sender, Rule.TRANSCRIPT, f"two different messages with"
                                                      f" sequence number {env.seq}")
        transcript.held[sender] = incoming.wire  # its sender saw a message this seat has
        return None  # not yet

    def _in_turn(self, incoming: Incoming) -> Checked:
        """The message due, from the seat due (an alarm or a proposal to void in place of
        a move)."""
        env, step = incoming.env, incoming.step
        assert env is not None
        stands_in = env.kind in (Kind.ALARM, Kind.VOID) and step is not None \
            and step.kind in ACTS
        if step is None or step.seat != env.sender or (step.kind != env.kind
                                                       and not stands_in):
            what = "the game is over" if step is None else f"{step.kind} from seat {step.seat}"
            return Rejection(env.sender, Rule.TURN, f"{env.kind} out of turn ({what} is due)")
        return ON

    def _of_this_deal(self, incoming: Incoming) -> Checked:
        env = incoming.env
        assert env is not None
        deal = self.machine.deal_index()
        if env.deal != deal:
            return Rejection(env.sender, Rule.DEAL, f"deal {env.deal}, but this is deal {deal}")
        return ON

    def _take(self, incoming: Incoming) -> Rejection | None:
        """A message that passed every check: its phase's handler applies it (or refuses
        it, nothing changed), and it goes into the transcript."""
        env, message, step = incoming.env, incoming.message, incoming.step
        assert env is not None and message is not None and step is not None
        sender = env.sender
        proven: ProvenCheat | None = None
        try:
            self.machine.taken(env, message, step)
        except CodecError as error:
            return Rejection(sender, Rule.MALFORMED, str(error))
        except ProvenCheat as error:  # the signed message is the proof: it is taken into
            proven = error  # the transcript, and its sender forfeits the deal
        except RefusedMessage as refused:
            return Rejection(sender, refused.rule, refused.reason, detail=refused.detail)
        self.claims.lapse()  # the transcript moves on: claims on the old one lapse
        roster, me = self.machine.roster, self.machine.me
        if roster.process_of(sender) != roster.process_of(me) or me == WATCHER:
            self.claims.behind = {}  # (another peer took what this one sent)
        self.transcript.forked = {}
        record(self.transcript, self.machine, env)
        if proven is not None:  # (docs/protocol.md, "A refused step")
            if proven.seat is None:
                proven.seat, proven.kind = sender, env.kind
            refute(self.machine, proven)
        self._pump()
        return None

    def retry_held(self) -> None:
        """Take the held messages whose turn has come (at most one per sender: the first
        that came ahead of this seat); one whose sender is due but that names another
        transcript is refused."""
        desk = self.desk
        desk.withdraw()
        transcript, claims = self.transcript, self.claims
        for sender in sorted(claims.held):
            wire = claims.held.get(sender)
            if wire is None:
                continue  # taken by a set completed meanwhile
            env = desk.still(wire)
            if env is None or env.seq < transcript.seq_in[sender]:
                claims.held.pop(sender, None)
            elif env.prior == transcript.hash:
                claims.held.pop(sender, None)
                rejection = desk.claim(env, wire)
                if rejection is not None:
                    self.rejections.append(rejection)
        progress = True
        while progress and transcript.held:
            progress = False
            for sender, wire in list(transcript.held.items()):
                env = desk.kept(wire)
                step = self.machine.due()
                if env.seq < transcript.seq_in[sender]:
                    transcript.held.pop(sender, None)  # overtaken: that number is taken
                elif env.seq == transcript.seq_in[sender] and (
                        env.prior == transcript.hash or (step is not None
                                                         and step.seat == sender)):
                    transcript.held.pop(sender, None)
                    rejection = self.receive(wire)
                    if rejection is not None:
                        self.rejections.append(rejection)
                    progress = True
                    break


CHECKS: tuple[Callable[[Intake, Incoming], Checked], ...] = (
    Intake._opens, Intake._of_this_table, Intake._a_return, Intake._a_claim,
    Intake._not_claimed_silent, Intake._not_own, Intake._in_sequence, Intake._decodes,
    Intake._on_this_transcript, Intake._in_turn, Intake._of_this_deal)
"""The checks of :meth:`Intake.receive`, in order."""
