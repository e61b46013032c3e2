"""A benched seat's return: the ``back`` a person whose seat a stand-in holds sends, and
the taking of it (docs/protocol.md, "Seats that change hands").

A person whose seat a bot took keeps its session, with no seat (its identity is
no longer in the roster), checking the table as a watcher does.  Once a deal it
says it is back, signed with its seat's own identity; every seat notes it, and
the runner gives the seat back at the next deal boundary.  A person who was at
the prompt all along and did not move is not back until they act
(:attr:`Returns.ready`).  Part of a
:class:`~p2pcards.table.session.Session`, sharing its transcript, phase machine
and outbox.
"""

from __future__ import annotations

from p2pcards.table import kinds
from p2pcards.table.codec import CodecError, open_envelope, public_bytes, seal_envelope
from p2pcards.table.kinds import Back, Kind
from p2pcards.table.phases import PhaseMachine
from p2pcards.table.state import WATCHER, Rejection, Rule
from p2pcards.table.transcript import Transcript


class Returns:
    """Returns from the bench, taken and said, for one seat's session."""

    def __init__(self, transcript: Transcript, machine: PhaseMachine, outbox: list[bytes]):
        self.transcript = transcript
        self.machine = machine
        self.outbox = outbox
        self.back_sent = -1
        """The deal in which this seat, benched, last said it is back."""
        self.ready = True
        self.heard: dict[int, int] = {}
        """Benched seat -> the deal of the last return taken from it (one a deal: the
        seat says no more, and a peer journals and relays no more)."""
        """Whether this seat's person is back: False while a person who stayed at a live,
        connected prompt past the grace period has not acted since (the driver's
        :class:`~p2pcards.net.presence.Presence`); nothing is said until then."""

    def take(self, wire: bytes, error: CodecError) -> Rejection | bool | None:
        """A ``back`` from a person whose seat a stand-in holds (signed with the seat's
        own identity): True once noted, a Rejection if it is no good; None if ``wire``
        is not signed by a benched seat at all (the caller's refusal stands)."""
        machine = self.machine
        sender = error.sender
        if sender is None or sender not in machine.seats.stand_ins(machine.roster):
            return None
        try:
            env = open_envelope(wire, machine.seats.home.keys)
        except CodecError:
            return None
        if env.kind != Kind.BACK or env.table != machine.table:
            return Rejection(sender, Rule.SIGNATURE, "a benched seat's own identity signs"
                                                     " only its return (back) at this table")
        try:
            message = kinds.decode_body(env.kind, env.body, sender)
        except CodecError as problem:
            return Rejection(sender, Rule.MALFORMED, str(problem))
        assert isinstance(message, Back)
        if message.seat != sender:
            return Rejection(sender, Rule.MALFORMED, "a return (back) for another seat")
        deal = machine.deal_index()
        if env.deal <= self.heard.get(sender, -1) or env.deal > deal + 1:
            return Rejection(sender, Rule.STALE, f"a return (back) of deal {env.deal} from a"
                                                 " seat that has said it once a deal already")
        self.heard[sender] = env.deal
        position = self.transcript.positions.get(env.prior)
        if position is not None and position >= machine.boundary:
            machine.seats.came_back(sender)  # (one of an earlier deal changes nothing: a
        return True  # peer catching up says it once a deal on its way)

    def say_back(self) -> None:
        """A session benched from its own seat says, once a deal, that it is back (it
        takes the seat again at the next boundary)."""
        machine = self.machine
        identity = machine.identity
        if not self.ready or machine.me != WATCHER or identity is None \
                or machine.due() is None:
            return
        mine = public_bytes(identity.public_key())
        home = [s for s, e in enumerate(machine.seats.home.seats) if e.identity == mine]
        deal = machine.deal_index()
        if not home or home[0] not in machine.seats.stand_ins(machine.roster) \
                or self.back_sent == deal:
            return
        self.back_sent = deal
        kind, body = kinds.encode_body(Back(seat=home[0]))
        self.outbox.append(seal_envelope(
            identity, table=machine.table, deal=deal, sender=home[0],
            seq=self.transcript.seq_in[home[0]], prior=self.transcript.hash, kind=kind,
            body=body).wire)
