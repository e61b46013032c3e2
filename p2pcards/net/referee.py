"""What the host lets through from a seated link once the game has begun.

No sockets, no Trio, no clock: the relay (:mod:`p2pcards.net.host`) asks, then
sends what is let through to the other links, and closes a link whose frame
raises :class:`~p2pcards.net.frames.FrameError` (the reason says why).

A table message must verify, be of this table, come from one of the link's
seats and not be sent twice on the link.  The host relays it at once (the
next seat is waiting for it), then judges it with its own sessions: a link
whose message they refuse is closed, unless the refusal is one an honest
peer earns by arriving late (:data:`LATE`), of which a link may earn
:data:`MAX_LATE`.  A chat line must be signed by one of the link's seats,
and a link may send :data:`MAX_CHATS` in :data:`CHAT_WINDOW` seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p2pcards.net.frames import ChatLine, FrameError
from p2pcards.net.links import Chat
from p2pcards.net.lobby import seats_of
from p2pcards.net.peer import Peer
from p2pcards.table.codec import CodecError, Envelope, open_envelope

LATE = frozenset({"silent", "turn"})
"""Refusals an honest peer can earn by arriving late (a claim of silence, or another
message, got in first): the message is not relayed, the link stays (up to MAX_LATE)."""
MAX_LATE = 50
MAX_CHATS = 10
"""Chat lines a link may send in CHAT_WINDOW seconds."""
CHAT_WINDOW = 10.0


@dataclass
class Conduct:
    """What the host remembers of one link (a link that comes back is a new one)."""

    key: bytes
    """The identity of the peer at the other end."""
    sent: set[bytes] = field(default_factory=set)
    """The table messages it sent."""
    late: int = 0
    chats: list[float] = field(default_factory=list)
    """When it sent its chat lines of the last CHAT_WINDOW seconds."""


class Referee:
    """The host's judgement of seated links, against its own peer's sessions."""

    def __init__(self, peer: Peer, chats: Chat):
        self.peer = peer
        self.chats = chats

    def seats(self, conduct: Conduct) -> frozenset[int]:
        return seats_of(self.peer.roster.seats, conduct.key)

    def screen(self, conduct: Conduct, wire: bytes) -> Envelope | None:
        """A table message from a link, checked: its envelope if it is new here (relay
        it, then :meth:`judge` it); None if the host has it already (sent again after a
        reconnection: nothing to do)."""
        try:
            env = open_envelope(wire, self.peer.roster.keys)
        except CodecError as exc:
            raise FrameError(f"a table message that does not verify: {exc}") from exc
        if env.table != self.peer.roster.table:
            raise FrameError("a message of another table")
        if env.sender not in self.seats(conduct):
            raise FrameError(f"a message for seat {env.sender}, not one of its seats")
        if wire in conduct.sent:
            raise FrameError(f"a replay of seat {env.sender}'s message {env.seq}")
        conduct.sent.add(wire)
        return None if wire in self.peer.known else env

    def judge(self, conduct: Conduct, wire: bytes, env: Envelope) -> None:
        """The host's sessions take a screened message (``env``, as :meth:`screen`
        returned it): FrameError if they refuse it for anything but lateness, or if the
        link has been late too often."""
        kept, refused = self.peer.receive(wire)
        if kept:
            return
        wrong = [r.rejection for r in refused if r.rejection.rule not in LATE]
        if wrong:
            raise FrameError(f"seat {env.sender}'s message {env.seq} is refused:"
                             f" {wrong[0].rule}: {wrong[0].reason}")
        conduct.late += 1
        if conduct.late > MAX_LATE:
            raise FrameError(f"{conduct.late} messages refused as late: a flood")

    def chat(self, conduct: Conduct, line: ChatLine, now: float) -> tuple[int, str]:
        """A chat line from a link at time ``now`` (seconds): its seat and printable
        text, to relay and show; FrameError for a flood, a bad line, another's seat."""
        conduct.chats = [t for t in conduct.chats if now - t < CHAT_WINDOW] + [now]
        if len(conduct.chats) > MAX_CHATS:
            raise FrameError(f"more than {MAX_CHATS} chat lines in {CHAT_WINDOW:g} s:"
                             " a flood")
        seat, text = self.chats.take(line, self.peer.roster.keys, self.peer.roster.table)
        if seat not in self.seats(conduct):
            raise FrameError(f"chat in seat {seat}'s name")
        return seat, text
