"""The claims a seat makes and takes, and a benched seat's return: the part of
:class:`~p2pcards.table.session.Session` that is not in turn (see
:mod:`p2pcards.table.claims` for the rules, and docs/protocol.md, "Proof of
equivocation" and "Seats that change hands").
"""

from __future__ import annotations

from collections import deque

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.table import kinds
from p2pcards.table.claims import CheatClaim, Claims
from p2pcards.table.codec import (
    CodecError,
    Envelope,
    chain,
    open_envelope,
    public_bytes,
    read_envelope,
    seal_envelope,
)
from p2pcards.table.kinds import Back, Cheat, Kind, Silent
from p2pcards.table.phases import PhaseMachine
from p2pcards.table.proofs import proof_problem
from p2pcards.table.roster import Roster
from p2pcards.table.state import WATCHER, Phase, Rejection, Step
from p2pcards.table.transcript import Transcript


class Claiming:
    """Claims of silence and of cheats, and ``back``, for a session."""

    claims: Claims
    transcript: Transcript
    machine: PhaseMachine
    outbox: list[bytes]
    rejections: deque[Rejection]
    table: bytes
    back_sent: int

    @property
    def roster(self) -> Roster:
        raise NotImplementedError

    @property
    def me(self) -> int:
        raise NotImplementedError

    @property
    def identity(self) -> Ed25519PrivateKey | None:
        raise NotImplementedError

    def due(self) -> Step | None:
        raise NotImplementedError

    def _pump(self) -> None:
        raise NotImplementedError

    # ================================================================== claims

    def _own_claim(self, message: Silent) -> None:
        if self.me in self.claims.made:
            raise ValueError("this seat has made its claim on this transcript already")
        kind, body = kinds.encode_body(message)
        assert self.identity is not None
        env = self.transcript.seal(self.identity, self.machine.deal_index(), kind, body,
                                   journaled=False)
        self.claims.add(env, message)
        self.outbox.append(env.wire)
        self._settle()

    def _claim(self, env: Envelope, wire: bytes) -> Rejection | None:
        """A claim of silence from another seat (see :mod:`p2pcards.table.claims`)."""
        sender = env.sender
        transcript = self.transcript
        if wire in self.claims.settled:
            return None  # a claim already taken, forwarded by another seat
        if sender == self.me:
            return Rejection(sender, "replay", "a message in this seat's own name")
        if env.kind == Kind.CHEAT:
            return self._cheat_claim(env, wire)
        if env.seq < transcript.seq_in[sender]:
            if env.prior in transcript.positions:  # a claim its sender gave up, come late
                return Rejection(sender, "stale", f"a claim of silence overtaken: its"
                                                  f" number {env.seq} went to a later message")
            return Rejection(sender, "replay", f"a claim with sequence number {env.seq},"
                                               f" already used")
        if env.prior != transcript.hash:  # its sender saw more, or less: held, the latest
            if not self._behind(env):  # (a claim is about one transcript only)
                self.claims.held[sender] = wire
            return None
        if env.seq > transcript.seq_in[sender]:
            return Rejection(sender, "order", f"a claim with sequence number {env.seq}, but"
                                              f" {transcript.seq_in[sender]} is next")
        if env.deal != self.machine.deal_index():
            return Rejection(sender, "deal", f"a claim for deal {env.deal}")
        try:
            message = kinds.decode_body(env.kind, env.body, sender)
        except CodecError as error:
            return Rejection(sender, "malformed", str(error))
        assert isinstance(message, Silent)
        step = self.due()  # (a claim against this seat counts too: when the others' are
        if step is None or step.seat != message.seat or message.seat == sender:
            return Rejection(sender, "turn", f"seat {message.seat} is not the seat due")
        # complete, it was silent, and it follows the table rather than stay behind)
        if sender not in self.roster.others(message.seat):
            return Rejection(sender, "turn", f"seat {sender} is run by the peer of seat"
                                             f" {message.seat}: its word does not count")
        known = sender in self.claims.made
        rejection = self.claims.add(env, message)
        if rejection is None and not known:
            self._settle()
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
        if machine.crossed(position):  # (its agreement was the deal's last message)
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
        crossed = self.machine.crossed(position)
        claims = self.claims
        claims.behind, claims.made, claims.late, claims.held = {}, {}, {}, {}
        claims.settled = {env.wire for env in taken}
        dropped = self.transcript.rewind(position)
        if crossed:
            self.machine.unscore()
        else:
            self.machine.rewound(position, len(dropped))
            self.machine.back_to(dropped[0].kind)
        for env in taken:
            self._take_claim(env)
        self.machine.silenced(seat)
        self.machine.advance()
        self._pump()

    def _cheat_claim(self, env: Envelope, wire: bytes) -> Rejection | None:
        """A claim of a cheat from another seat, at the cheat's point (held until this
        seat has reached that point)."""
        sender = env.sender
        try:
            message = kinds.decode_body(env.kind, env.body, sender)
        except CodecError as error:
            return Rejection(sender, "malformed", str(error))
        assert isinstance(message, Cheat)
        problem = proof_problem(message, self.roster.keys, self.table)
        if problem is None and (message.seat == sender
                                or sender not in self.roster.others(message.seat)):
            problem = f"seat {sender} is run by the peer of seat {message.seat}"
        if problem is not None:
            return Rejection(sender, "proof", f"a claim that seat {message.seat} cheated:"
                                              f" {problem}")
        point = self._point(message)
        if point is None or env.prior != self.transcript.marks[point][0]:
            self.claims.held_cheats[sender] = wire  # (a point this seat has not reached)
            return None
        if env.seq != self.transcript.marks[point][1][sender] \
                or env.deal != self.machine.deal_index():
            return Rejection(sender, "order", "a claim of a cheat not numbered as its sender"
                                              " was at the cheat's point")
        claim = CheatClaim(env, message, point)
        known = self.claims.cheat(sender)
        rejection = self.claims.add_cheat(claim)
        if rejection is None and (known is None or known.env.wire != wire):
            self._learn(message)
            self._settle()
        return rejection

    def _point(self, proof: Cheat) -> int | None:
        """The cheat's point of a proof (None: this seat has not reached it)."""
        first = self._kept(proof.first)
        parted = self.transcript.positions.get(first.prior)
        return None if parted is None else max(parted, self.machine.deal_start)

    def _learn(self, proof: Cheat) -> None:
        """A proof another seat sent: this seat claims it too (:meth:`_claim_cheats`)."""
        transcript = self.transcript
        seq = self._kept(proof.first).seq
        if proof.seat not in transcript.equivocations \
                and (proof.seat, seq) not in transcript.punished:
            transcript.equivocations[proof.seat] = (proof.first, proof.second)

    def _withdraw(self) -> None:
        """Take a message refused because this seat had claimed its sender silent, once a
        message or claim held here is seen built on it (its sender took it before it
        could claim: the claims on this transcript can never complete)."""
        claims, transcript = self.claims, self.transcript
        if not claims.late:
            return
        priors = {self._kept(w).prior
                  for w in (*transcript.held.values(), *claims.held.values())}
        for wire in list(claims.late.values()):
            env = self._kept(wire)
            if chain(transcript.hash, env.payload) in priors:
                self.take_late(wire)
                return

    def last_word(self) -> bytes | None:
        """The game's last message (:meth:`PhaseMachine.last_word`), if this seat refused
        it because it had claimed its sender silent: nothing will ever be built on it,
        so :meth:`_withdraw` would never see that another seat took it.  The driver
        calls this once twice the grace period has passed with the claims incomplete
        (they would have completed by then had every other seat claimed), and takes it
        with :meth:`take_late`; the result is the same either way (a seat silent at
        the agreement changes no verdict), and the game ends here as it did there."""
        step = self.due()
        if step is None or not self.machine.last_word():
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

    def _receive(self, wire: bytes) -> Rejection | None:
        raise NotImplementedError

    def _kept(self, wire: bytes) -> Envelope:
        """A message this seat checked when it came (held, a proof), read again."""
        return read_envelope(wire, self.roster.players)

    def _still(self, wire: bytes) -> Envelope | None:
        """A held claim, if its signer still holds its seat (None: the seat changed
        hands meanwhile, and the claim is dropped)."""
        try:
            return open_envelope(wire, self.roster.keys)
        except CodecError:
            return None

    def _accusing(self) -> bool:
        """Whether this seat holds a proof of another peer's equivocation not yet
        punished (it then sends nothing but its claim)."""
        return self.me != WATCHER and any(self.me in self.roster.others(seat)
                                          for seat in self.transcript.equivocations)

    def _claim_cheats(self) -> None:
        """Claim the cheat of the earliest point (then the lowest seat) this seat holds
        a pending proof of, unless it has claimed it already; take the claims of
        others held until this seat reached their point."""
        for sender, wire in sorted(self.claims.held_cheats.items()):
            env = self._still(wire)
            if env is None or env.prior in self.transcript.positions:
                del self.claims.held_cheats[sender]
            if env is not None and env.prior in self.transcript.positions:
                rejection = self._cheat_claim(env, wire)
                if rejection is not None:
                    self.rejections.append(rejection)
        if not self._accusing() or self.due() is None:
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
        assert self.identity is not None
        env = self.transcript.seal_at(self.identity, point, self.machine.deal_index(), kind,
                                      body)
        self.claims.add_cheat(CheatClaim(env, proof, point))
        self.outbox.append(env.wire)
        self._settle()

    def _settle(self) -> None:
        """Take the claims once they are complete (every seat but the one claimed), in
        seat order; forward them, so that every seat that has seen them takes them too.
        Claims of a cheat first take the transcript back to the cheat's point."""
        cheat = self.claims.cheat_complete(self.roster.others)
        if cheat is not None:
            claim, taken = cheat
            dropped = self.transcript.rewind(claim.point)
            self.machine.rewound(claim.point, len(dropped))
            seqs = set()
            for made in taken:
                self._take_claim(made.env)
                seqs.add(self._kept(made.message.first).seq)
            for seq in seqs:
                self.transcript.punish(claim.message.seat, seq)
            self.machine.silenced(claim.message.seat, cheated=min(seqs))
        else:
            complete = self.claims.complete(self.roster.others)
            if complete is None:
                return
            silent, silence = complete
            for env in silence:
                self._take_claim(env)
            if not self.machine.resolve(force=True):  # (a shuffle proof refused first:
                self.machine.silenced(silent)  # its shuffler forfeits, not the silent seat)
        self.machine.advance()
        self._pump()

    def _take_claim(self, env: Envelope) -> None:
        if env.sender != self.me:
            self.outbox.append(env.wire)
        self.transcript.record(env)
        self.machine.recorded(env)

    # ========================================================= a benched seat

    def _back(self, wire: bytes, error: CodecError) -> Rejection | bool | None:
        """A ``back`` from a person whose seat a stand-in holds (signed with the seat's
        own identity): True once noted, a Rejection if it is no good; None if ``wire``
        is not signed by a benched seat at all (the caller's refusal stands)."""
        machine = self.machine
        sender = error.sender
        if sender is None or sender not in machine.seats.stand_ins(self.roster):
            return None
        try:
            env = open_envelope(wire, machine.seats.home.keys)
        except CodecError:
            return None
        if env.kind != Kind.BACK or env.table != self.table:
            return Rejection(sender, "signature", "a benched seat's own identity signs only"
                                                  " its return (back) at this table")
        try:
            message = kinds.decode_body(env.kind, env.body, sender)
        except CodecError as problem:
            return Rejection(sender, "malformed", str(problem))
        assert isinstance(message, Back)
        if message.seat != sender:
            return Rejection(sender, "malformed", "a return (back) for another seat")
        position = self.transcript.positions.get(env.prior)
        if position is not None and position >= machine.boundary:
            machine.seats.came_back(sender)  # (one of an earlier deal changes nothing: a
        return True  # peer catching up says it once a deal on its way)

    def _say_back(self) -> None:
        """A session benched from its own seat says, once a deal, that it is back (it
        takes the seat again at the next boundary)."""
        machine = self.machine
        if self.me != WATCHER or self.identity is None or self.due() is None:
            return
        mine = public_bytes(self.identity.public_key())
        home = [s for s, e in enumerate(machine.seats.home.seats) if e.identity == mine]
        deal = machine.deal_index()
        if not home or home[0] not in machine.seats.stand_ins(self.roster) \
                or self.back_sent == deal:
            return
        self.back_sent = deal
        kind, body = kinds.encode_body(Back(seat=home[0]))
        self.outbox.append(seal_envelope(
            self.identity, table=self.table, deal=deal, sender=home[0],
            seq=self.transcript.seq_in[home[0]], prior=self.transcript.hash, kind=kind,
            body=body).wire)
