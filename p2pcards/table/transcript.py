"""A seat's transcript: the messages it took, in the one order every honest seat takes them.

Every message is due from one seat at a time, so honest seats take the same
messages in the same order; each envelope names the transcript hash its sender
had (``prior``), and the hash chains every payload onto the last.  Each sender
numbers its messages; a second, different message with a number already taken
is proof of equivocation, a message on another transcript than this seat's is
a fork.  A message that arrives before this seat has reached the transcript
its sender saw is held until it has.  :meth:`Transcript.record` is the one
place a message enters the transcript.

Evidence is bounded: of the messages refused as proof, a seat keeps one proof
of equivocation per seat (until the table has punished it; a proof punished
once is never news again) and one fork per seat on the transcript as it
stands.  Only a message kept as new evidence is worth journaling and relaying
(:attr:`~p2pcards.table.state.Rejection.evidence`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from p2pcards.table.codec import Envelope, chain, genesis, open_envelope, seal_envelope
from p2pcards.table.kinds import MAX_PROOF, Kind
from p2pcards.table.state import Rejection, Rule


class Transcript:
    """The messages taken, the hash chain, the sequence numbers, the evidence."""

    def __init__(self, table: bytes, keys: list[Ed25519PublicKey], me: int):
        self.table = table
        self.keys = keys
        self.me = me
        self.hash = genesis(table)
        self.seq_out = 0
        """This seat's next sequence number."""
        self.seq_in = [0] * len(keys)
        """Each seat's next sequence number, as taken here."""
        self.envelopes: list[Envelope] = []
        self.marks: list[tuple[bytes, tuple[int, ...]]] = [(self.hash, tuple(self.seq_in))]
        """Position -> the hash and every seat's next sequence number after that many
        messages (where a claim of a cheat may take the transcript back to)."""
        self.positions: dict[bytes, int] = {self.hash: 0}
        """Hash -> the position it stands for in this transcript."""
        self.signed: dict[tuple[int, int], Envelope] = {}
        """(seat, sequence number) -> the message taken (a second version is proof)."""
        self.equivocations: dict[int, tuple[bytes, bytes]] = {}
        """Seat -> two messages it signed with one sequence number (the one taken first),
        as it signed them: the proof, not yet punished."""
        self.punished: set[tuple[int, int]] = set()
        """(seat, sequence number) of the proofs of equivocation the table has punished."""
        self.forked: dict[int, bytes] = {}
        """Seat -> its message refused as sent on another transcript (not silent)."""
        self.held: dict[int, bytes] = {}
        """Seat -> its next message, sent on a transcript this seat has not reached."""
        self.resend: dict[tuple[int, bytes], bytes] = {}
        """(sequence number, prior) -> the bytes this seat sent before a restart (from
        its journal): when that message is due again it goes out as it was, never in a
        second version (sealed bodies are not reproducible).  Keyed by the transcript it
        named too: a message dropped when the transcript was taken back has a successor
        with its number on another transcript."""
        self.dropped: list[bytes] = []
        """This seat's messages dropped when the transcript was taken back (never to be
        sent again: its peer forgets them, :meth:`p2pcards.net.peer.Peer._forget_dropped`)."""

    def __iter__(self) -> Iterator[Envelope]:
        return iter(self.envelopes)

    def __len__(self) -> int:
        return len(self.envelopes)

    def __getitem__(self, index: int) -> Envelope:
        return self.envelopes[index]

    def record(self, env: Envelope) -> None:
        """Take ``env`` into the transcript: the hash moves on, and its sender's number."""
        self.signed[env.sender, env.seq] = env
        self.envelopes.append(env)
        self.hash = chain(self.hash, env.payload)
        self.seq_in[env.sender] = env.seq + 1
        if env.sender == self.me:
            self.seq_out = env.seq + 1
        self.positions[self.hash] = len(self.envelopes)
        self.marks.append((self.hash, tuple(self.seq_in)))

    def rewind(self, position: int) -> list[Envelope]:
        """Take the transcript back to its first ``position`` messages (a proven cheat
        ends the deal there); the messages dropped, which no longer count (their
        senders number their next messages as if they had never been sent)."""
        dropped = self.envelopes[position:]
        del self.envelopes[position:]
        self.dropped.extend(env.wire for env in dropped if env.sender == self.me)
        for env in dropped:
            self.positions.pop(chain(env.prior, env.payload), None)
            self.signed.pop((env.sender, env.seq), None)
        del self.marks[position + 1:]
        self.hash, seqs = self.marks[position]
        self.seq_in = list(seqs)
        if 0 <= self.me < len(seqs):
            self.seq_out = seqs[self.me]
        self.forked, self.held = {}, {}
        return dropped

    def seal_at(self, identity: Ed25519PrivateKey, position: int, deal: int, kind: Kind,
                body: dict[str, Any]) -> Envelope:
        """This seat's message signed on the transcript as it stood after ``position``
        messages, numbered as it then was (a claim of a cheat: never journaled)."""
        prior, seqs = self.marks[position]
        return seal_envelope(identity, table=self.table, deal=deal, sender=self.me,
                             seq=seqs[self.me], prior=prior, kind=kind, body=body)

    def in_sequence(self, env: Envelope) -> Rejection | None:
        """Whether ``env`` (another seat's, not a claim) is its sender's next message;
        a second version of one already taken is kept as proof of equivocation."""
        sender = env.sender
        expected = self.seq_in[sender]
        if env.seq < expected:
            taken = self.signed.get((sender, env.seq))
            if taken is not None and taken.payload != env.payload \
                    and taken.prior == env.prior:  # two versions of one message: proof
                new = sender not in self.equivocations \
                    and (sender, env.seq) not in self.punished \
                    and max(len(taken.wire), len(env.wire)) <= MAX_PROOF
                if new:
                    self.equivocations[sender] = (taken.wire, env.wire)
                return Rejection(sender, Rule.EQUIVOCATION, f"a second, different message with"
                                                         f" sequence number {env.seq}",
                                 evidence=new)
            return Rejection(sender, Rule.REPLAY, f"sequence number {env.seq} again (next is"
                                               f" {expected}): a duplicate or replay")
        if env.seq > expected:
            return Rejection(sender, Rule.ORDER, f"sequence number {env.seq}, but {expected} is"
                                              " next: a message is missing or reordered")
        return None

    def punish(self, seat: int, seq: int) -> None:
        """The table took the proof that ``seat`` signed two versions of message ``seq``:
        it is no longer pending, and that pair is never news again."""
        self.punished.add((seat, seq))
        self.equivocations.pop(seat, None)

    def seal(self, identity: Ed25519PrivateKey, deal: int, kind: Kind, body: dict[str, Any],
             *, journaled: bool = True) -> Envelope:
        """This seat's next message, signed on the transcript as it stands; the bytes it
        sent before a restart, if its journal has them (``journaled``)."""
        env = seal_envelope(identity, table=self.table, deal=deal, sender=self.me,
                            seq=self.seq_out, prior=self.hash, kind=kind, body=body)
        sent = self.resend.pop((self.seq_out, self.hash), None) if journaled else None
        return env if sent is None else self._as_sent(sent, env)

    def _as_sent(self, wire: bytes, made: Envelope) -> Envelope:
        """The message this seat sent before a restart, checked to be the one it would
        send now (the same step, the same content; a sealed body's bytes differ)."""
        sent = open_envelope(wire, self.keys)
        same = (sent.sender, sent.seq, sent.prior, sent.kind, sent.deal) == \
            (made.sender, made.seq, made.prior, made.kind, made.deal)
        if not same or (made.kind != Kind.KEYS and sent.body != made.body):
            raise ValueError(f"the journal's message {made.seq} of seat {self.me} is not"
                             f" the one this seat sends now ({sent.kind}, {made.kind}): the"
                             " journal belongs to another game or its secrets changed")
        return sent

