"""The claims a seat makes and takes: the part of a session that is not in turn (see
:mod:`p2pcards.table.claims` for the rules, and docs/protocol.md, "Silence and
consent" and "Proof of equivocation").

A :class:`ClaimDesk` is one of a :class:`~p2pcards.table.session.Session`'s parts:
it shares the session's transcript, record of claims, phase machine and outbox,
and reaches the session only through the two callables it is given (send what
is due, take a message after all).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from p2pcards.table import kinds
from p2pcards.table.claims import CheatClaim, Claims
from p2pcards.table.codec import CodecError, Envelope, chain, open_envelope, read_envelope
from p2pcards.table.kinds import Cheat, Kind, Silent
from p2pcards.table.phases import PhaseMachine, back_to, crossed, resolve, silenced, unscore
from p2pcards.table.proofs import proof_problem
from p2pcards.table.roster import Roster
from p2pcards.table.state import WATCHER, Phase, Rejection, Rule
from p2pcards.table.transcript import Transcript

Receive = Callable[[bytes], Rejection | None]
"""The session's own taking of a message (:meth:`ClaimDesk.take_late` takes one after
all)."""


class ClaimDesk:
    """Claims of silence and of cheats, made and taken, for one seat's session."""

    def __init__(self, transcript: Transcript, claims: Claims, machine: PhaseMachine,
                 outbox: list[bytes], rejections: deque[Rejection], *,
                 pump: Callable[[], None], receive: Receive):
        self.transcript = transcript
        self.claims = claims
        self.machine = machine
        self.outbox = outbox
        """The session's outbox (shared: what this part sends goes out with the rest)."""
        self.rejections = rejections
        self._pump = pump
        self._receive = receive

    @property
    def roster(self) -> Roster:
        return self.machine.roster

    @property
    def me(self) -> int:
        return self.machine.me

    # ================================================================ claims of silence

    def own_claim(self, message: Silent) -> None:
        """This seat's claim that the seat due is silent."""
        if self.me in self.claims.made:
            raise ValueError("this seat has made its claim on this transcript already")
        kind, body = kinds.encode_body(message)
        identity = self.machine.identity
        assert identity is not None
        env = self.transcript.seal(identity, self.machine.deal_index(), kind, body,
                                   journaled=False)
        self.claims.add(env, message)
        self.outbox.append(env.wire)
        self.settle()

    def claim(self, env: Envelope, wire: bytes) -> Rejection | None:
        """A claim of silence or of a cheat from another seat (see
        :mod:`p2pcards.table.claims`)."""
        sender = env.sender
        transcript = self.transcript
        if wire in self.claims.settled:
            return None  # a claim already taken, forwarded by another seat
        if sender == self.me:
            return Rejection(sender, Rule.REPLAY, "a message in this seat's own name")
        if env.kind == Kind.CHEAT:
            return self.cheat_claim(env, wire)
        if env.seq < transcript.seq_in[sender]:
            if env.prior in transcript.positions:  # a claim its sender gave up, come late
                return Rejection(sender, Rule.STALE, f"a claim of silence overtaken: its"
                                                     f" number {env.seq} went to a later"
                                                     " message")
            return Rejection(sender, Rule.REPLAY, f"a claim with sequence number {env.seq},"
                                                  " already used")
        if env.prior != transcript.hash:  # its sender saw more, or less: held, the latest
            if not self._behind(env):  # (a claim is about one transcript only)
                self.claims.held[sender] = wire
            return None
        if env.seq > transcript.seq_in[sender]:
            return Rejection(sender, Rule.ORDER, f"a claim with sequence number {env.seq},"
                                                 f" but {transcript.seq_in[sender]} is next")
        if env.deal != self.machine.deal_index():
            return Rejection(sender, Rule.DEAL, f"a claim for deal {env.deal}")
        try:
            message = kinds.decode_body(env.kind, env.body, sender)
        except CodecError as error:
            return Rejection(sender, Rule.MALFORMED, str(error))
        assert isinstance(message, Silent)
        step = self.machine.due()  # (a claim against this seat counts too: when the others'
        if step is None or step.seat != message.seat or message.seat == sender:  # are
            return Rejection(sender, Rule.TURN, f"seat {message.seat} is not the seat due")
        # complete, it was silent, and it follows the table rather than stay behind)
        if sender not in self.roster.others(message.seat):
            return Rejection(sender, Rule.TURN, f"seat {sender} is run by the peer of seat"
                                                f" {message.seat}: its word does not count")
        known = sender in self.claims.made
        rejection = self.claims.add(env, message)
        if rejection is None and not known:
            self.settle()
        return rejection

    def _behind(self, env: Envelope) -> bool:
        """A claim of silence against this seat's peer on a transcript this seat has moved
        past with its own messages only (they came too late for the claimants): noted,
        and once every other peer's seat has made it, this seat goes back there and
        forfeits with the table.  False if ``env`` is not such a claim."""
        transcript, machine = self.transcript, self.machine
        position = transcript.positions.get(env.prior)
        if self.me == WATCHER or position is None or position >= len(transcript):
            return False
        if crossed(machine, position):  # (its agreement was the deal's last message)
            last = machine.finished[-1] if machine.finished else None
            start = machine.deal_start if machine.phase == Phase.OVER \
                else machine.previous_start
            if last is None or env.deal != last.index or position < start:
                return False
        elif env.deal != machine.deal_index():
            return False
        mine = self.roster.process_of(self.me)
        after = transcript.envelopes[position:]
        if any(self.roster.process_of(e.sender) != mine for e in after):
            return False
        try:
            message = kinds.decode_body(env.kind, env.body, env.sender)
        except CodecError:
            return False
        if not isinstance(message, Silent) or message.seat != after[0].sender \
                or env.sender not in self.roster.others(message.seat) \
                or env.seq != transcript.marks[position][1][env.sender]:
            return False
        self.claims.behind[env.sender] = (env, message, position)
        self._settle_behind()
        return True

    def _settle_behind(self) -> None:
        """The claims against this seat's peer at a position it has moved past, once
        complete: back there, the claims taken in seat order, the forfeit."""
        behind = self.claims.behind
        if not behind:
            return
        first = behind[min(behind)]
        seat, position = first[1].seat, first[2]
        if set(behind) != self.roster.others(seat) or any(
                (m.seat, p) != (seat, position) for _, m, p in behind.values()):
            return
        taken = [behind[s][0] for s in sorted(behind)]
        machine = self.machine
        went_past = crossed(machine, position)
        claims = self.claims
        claims.behind, claims.made, claims.late, claims.held = {}, {}, {}, {}
        claims.settled = {env.wire for env in taken}
        dropped = self.transcript.rewind(position)
        if went_past:
            unscore(machine)
        else:
            machine.rewound(position, len(dropped))
            back_to(machine, dropped[0].kind)
        for env in taken:
            self._take_claim(env)
        silenced(machine, seat)
        machine.advance()
        self._pump()

    # ================================================================ claims of a cheat

    def cheat_claim(self, env: Envelope, wire: bytes) -> Rejection | None:
        """A claim of a cheat from another seat, at the cheat's point (held until this
        seat has reached that point)."""
        sender = env.sender
        try:
            message = kinds.decode_body(env.kind, env.body, sender)
        except CodecError as error:
            return Rejection(sender, Rule.MALFORMED, str(error))
        assert isinstance(message, Cheat)
        problem = proof_problem(message, self.roster.keys, self.machine.table)
        if problem is None and (message.seat == sender
                                or sender not in self.roster.others(message.seat)):
            problem = f"seat {sender} is run by the peer of seat {message.seat}"
        if problem is not None:
            return Rejection(sender, Rule.PROOF, f"a claim that seat {message.seat} cheated:"
                                                 f" {problem}")
        point = self._point(message)
        if point is None or env.prior != self.transcript.marks[point][0]:
            self.claims.held_cheats[sender] = wire  # (a point this seat has not reached)
            return None
        if env.seq != self.transcript.marks[point][1][sender] \
                or env.deal != self.machine.deal_index():
            return Rejection(sender, Rule.ORDER, "a claim of a cheat not numbered as its"
                                                 " sender was at the cheat's point")
        claim = CheatClaim(env, message, point)
        known = self.claims.cheat(sender)
        rejection = self.claims.add_cheat(claim)
        if rejection is None and (known is None or known.env.wire != wire):
            self._learn(message)
            self.settle()
        return rejection

    def _point(self, proof: Cheat) -> int | None:
        """The cheat's point of a proof (None: this seat has not reached it)."""
        first = self.kept(proof.first)
        parted = self.transcript.positions.get(first.prior)
        return None if parted is None else max(parted, self.machine.deal_start)

    def _learn(self, proof: Cheat) -> None:
        """A proof another seat sent: this seat claims it too (:meth:`claim_cheats`)."""
        transcript = self.transcript
        seq = self.kept(proof.first).seq
        if proof.seat not in transcript.equivocations \
                and (proof.seat, seq) not in transcript.punished:
            transcript.equivocations[proof.seat] = (proof.first, proof.second)

    def accusing(self) -> bool:
        """Whether this seat holds a proof of another peer's equivocation not yet
        punished (it then sends nothing but its claim)."""
        return self.me != WATCHER and any(self.me in self.roster.others(seat)
                                          for seat in self.transcript.equivocations)

    def claim_cheats(self) -> None:
        """Claim the cheat of the earliest point (then the lowest seat) this seat holds
        a pending proof of, unless it has claimed it already; take the claims of
        others held until this seat reached their point."""
        for sender, wire in sorted(self.claims.held_cheats.items()):
            env = self.still(wire)
            if env is None or env.prior in self.transcript.positions:
                del self.claims.held_cheats[sender]
            if env is not None and env.prior in self.transcript.positions:
                rejection = self.cheat_claim(env, wire)
                if rejection is not None:
                    self.rejections.append(rejection)
        if not self.accusing() or self.machine.due() is None:
            return
        candidates = []
        for seat, (first, second) in self.transcript.equivocations.items():
            proof = Cheat(seat=seat, first=first, second=second)
            point = self._point(proof)
            if point is not None and self.me in self.roster.others(seat):
                candidates.append((point, seat, proof))
        if not candidates:
            return
        point, _, proof = min(candidates, key=lambda c: c[:2])
        made = self.claims.cheat(self.me)
        if made is not None and made.order <= (point, proof.seat):
            return
        kind, body = kinds.encode_body(proof)
        identity = self.machine.identity
        assert identity is not None
        env = self.transcript.seal_at(identity, point, self.machine.deal_index(), kind, body)
        self.claims.add_cheat(CheatClaim(env, proof, point))
        self.outbox.append(env.wire)
        self.settle()

    # ================================================================ complete claims

    def settle(self) -> None:
        """Take the claims once they are complete (every seat but the one claimed), in
        seat order; forward them, so that every seat that has seen them takes them too.
        Claims of a cheat first take the transcript back to the cheat's point."""
        machine = self.machine
        cheat = self.claims.cheat_complete(self.roster.others)
        if cheat is not None:
            claim, taken = cheat
            dropped = self.transcript.rewind(claim.point)
            machine.rewound(claim.point, len(dropped))
            seqs = set()
            for made in taken:
                self._take_claim(made.env)
                seqs.add(self.kept(made.message.first).seq)
            for seq in seqs:
                self.transcript.punish(claim.message.seat, seq)
            silenced(machine, claim.message.seat, cheated=min(seqs))
        else:
            complete = self.claims.complete(self.roster.others)
            if complete is None:
                return
            silent, silence = complete
            for env in silence:
                self._take_claim(env)
            if not resolve(machine, force=True):  # (a shuffle proof refused first: its
                silenced(machine, silent)  # shuffler forfeits, not the silent seat)
        machine.advance()
        self._pump()

    def _take_claim(self, env: Envelope) -> None:
        if env.sender != self.me:
            self.outbox.append(env.wire)
        self.transcript.record(env)
        self.machine.recorded(env)

    # ================================================================ late messages

    def withdraw(self) -> None:
        """Take a message refused because this seat had claimed its sender silent, once a
        message or claim held here is seen built on it (its sender took it before it
        could claim: the claims on this transcript can never complete)."""
        claims, transcript = self.claims, self.transcript
        if not claims.late:
            return
        priors = {self.kept(w).prior
                  for w in (*transcript.held.values(), *claims.held.values())}
        for wire in list(claims.late.values()):
            env = self.kept(wire)
            if chain(transcript.hash, env.payload) in priors:
                self.take_late(wire)
                return

    def late_word(self) -> bytes | None:
        """The message of the seat due that this seat refused because it had claimed its
        sender silent, while the claims stay incomplete.  :meth:`withdraw` takes it once
        another seat is seen building on it; but nothing may ever be built on it by
        another seat (the game's last message; or the move after it is this seat's
        own, so that the others wait on this seat).  The driver asks for it once a
        quarter of the grace period has passed since its own claim with the claims
        still incomplete (had every other seat claimed, its claim would have come by
        then: the seats' clocks start within a message's travel of each other), and
        takes it with :meth:`take_late`, before the others' clocks can claim this seat
        silent in turn."""
        step = self.machine.due()
        if step is None:
            return None
        return self.claims.late.get(step.seat)

    def take_late(self, wire: bytes) -> None:
        """Take after all a message refused because this seat had claimed its sender
        silent (this seat's claims on the transcript lapse)."""
        claims = self.claims
        claims.made, claims.late = {}, {}
        rejection = self._receive(wire)
        if rejection is not None:
            self.rejections.append(rejection)

    def kept(self, wire: bytes) -> Envelope:
        """A message this seat checked when it came (held, a proof), read again."""
        return read_envelope(wire, self.roster.players)

    def still(self, wire: bytes) -> Envelope | None:
        """A held claim, if its signer still holds its seat (None: the seat changed
        hands meanwhile, and the claim is dropped)."""
        try:
            return open_envelope(wire, self.roster.keys)
        except CodecError:
            return None
