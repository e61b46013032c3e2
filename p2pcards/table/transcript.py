"""A seat's transcript: the messages it took, in the one order every honest seat takes them.

Every message is due from one seat at a time, so honest seats take the same
messages in the same order; each envelope names the transcript hash its sender
had (``prior``), and the hash chains every payload onto the last.  Each sender
numbers its messages; a second, different message with a number already taken
is proof of equivocation, a message on another transcript than this seat's is
a fork.  A message that arrives before this seat has reached the transcript
its sender saw is held until it has.  :meth:`Transcript.record` is the one
place a message enters the transcript.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from p2pcards.table.codec import Envelope, chain, genesis, open_envelope, seal_envelope
from p2pcards.table.kinds import Kind
from p2pcards.table.state import Rejection


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

    def __iter__(self) -> Iterator[Envelope]:
        return iter(self.envelopes)

    def __len__(self) -> int:
        return len(self.envelopes)

    def __getitem__(self, index: int) -> Envelope:
        return self.envelopes[index]

    def record(self, env: Envelope) -> None:
        """Take ``env`` into the transcript: the hash moves on, and its sender's number."""
        self.payloads[env.sender, env.seq] = env.payload
        self.envelopes.append(env)
        self.hash = chain(self.hash, env.payload)
        self.seq_in[env.sender] = env.seq + 1
        if env.sender == self.me:
            self.seq_out = env.seq + 1

    def in_sequence(self, env: Envelope) -> Rejection | None:
        """Whether ``env`` (another seat's, not a claim) is its sender's next message;
        a second version of one already taken is kept as proof of equivocation."""
        sender = env.sender
        expected = self.seq_in[sender]
        if env.seq < expected:
            taken = self.payloads.get((sender, env.seq))
            if taken is not None and taken != env.payload:  # two signed versions: proof
                self.equivocations.setdefault(sender, (taken, env.payload))
                return Rejection(sender, "equivocation", f"a second, different message with"
                                                         f" sequence number {env.seq}")
            return Rejection(sender, "replay", f"sequence number {env.seq} again (next is"
                                               f" {expected}): a duplicate or replay")
        if env.seq > expected:
            return Rejection(sender, "order", f"sequence number {env.seq}, but {expected} is"
                                              " next: a message is missing or reordered")
        return None

    def seal(self, identity: Ed25519PrivateKey, deal: int, kind: Kind, body: dict[str, Any],
             *, journaled: bool = True) -> Envelope:
        """This seat's next message, signed on the transcript as it stands; the bytes it
        sent before a restart, if its journal has them (``journaled``)."""
        env = seal_envelope(identity, table=self.table, deal=deal, sender=self.me,
                            seq=self.seq_out, prior=self.hash, kind=kind, body=body)
        sent = self.resend.pop(self.seq_out, None) if journaled else None
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
