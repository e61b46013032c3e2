"""What the host lets through from a seated link once the game has begun.

No sockets, no Trio, no clock: the relay (:mod:`p2pcards.net.relay`) asks, then
sends what is let through to the other links, and closes a link whose frame
raises :class:`~p2pcards.net.frames.FrameError` (the reason says why).

A table message must verify, be of this table, come from one of the link's
seats and not be sent twice on the link.  The host then judges it with its own
sessions, and relays it only if they keep it (taken, held for its turn, or new
evidence of a fork or of two versions).  A message they refuse closes the link,
unless the refusal is one an honest peer earns by arriving late or is evidence the
host already holds (the policy is a table over the rules a refusal names:
:data:`RELAY`): such a message is not relayed, and counts
against its sender's identity, which may have :data:`MAX_REFUSED` (a message
refused once is not counted again when it is sent again after a reconnection).
A chat line must be signed by one of the link's seats, and an identity may send
:data:`MAX_CHATS` in :data:`CHAT_WINDOW` seconds.  Both counts are kept per
identity, not per link: a peer does not reset them by coming back.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from p2pcards.net.frames import ChatLine, FrameError
from p2pcards.net.links import Chat
from p2pcards.net.lobby import seats_of
from p2pcards.net.peer import Peer
from p2pcards.table.codec import CodecError, Envelope, open_envelope, read_head
from p2pcards.table.kinds import Kind
from p2pcards.table.state import Rejection, Rule


class Judgement(Enum):
    """What the host does with a message its sessions refused, by the rule it breaks."""

    LATE = "late"
    """An honest peer earns it by arriving late (a claim of silence, or another message,
    got in first): the message is not relayed, the link stays (up to MAX_REFUSED)."""
    CLAIM_LATE = "claim late"
    """A claim earns it in a race an honest peer cannot see (its sender has taken a
    message the host has not, or the other way round, while the host was slow): counted
    as late; any other message that earns it closes the link."""
    EVIDENCE = "evidence"
    """Evidence (a fork, a second version): new evidence is kept (and relayed); a copy of
    evidence the host holds already is refused, counted, and not relayed."""
    CLOSE = "close"
    """No honest peer sends it: the link is closed."""


RELAY: Final[Mapping[Rule, Judgement]] = {
    Rule.SILENT: Judgement.LATE, Rule.TURN: Judgement.LATE,
    Rule.ORDER: Judgement.CLAIM_LATE, Rule.REPLAY: Judgement.CLAIM_LATE,
    Rule.STALE: Judgement.CLAIM_LATE, Rule.DEAL: Judgement.CLAIM_LATE,
    Rule.TRANSCRIPT: Judgement.EVIDENCE, Rule.EQUIVOCATION: Judgement.EVIDENCE,
    **{rule: Judgement.CLOSE for rule in (
        Rule.MALFORMED, Rule.SIGNATURE, Rule.TABLE, Rule.PROOF, Rule.ROSTER, Rule.SEAT,
        Rule.DRAW, Rule.HELLO, Rule.DECK, Rule.REMIX, Rule.KEYS, Rule.KEY, Rule.SLOTS,
        Rule.NOT_HELD, Rule.SYNTAX, Rule.ILLEGAL, Rule.AUDIT, Rule.AHEAD)},
}
"""The host's relay policy: each rule a refused message breaks -> what the host does."""


def excused(rejection: Rejection, claim: bool) -> bool:
    """Whether a message refused for ``rejection`` keeps its link open (``claim``: the
    message is a claim of silence or of a cheat, or a return)."""
    judgement = RELAY[rejection.rule]
    return judgement is not Judgement.CLOSE and (judgement is not Judgement.CLAIM_LATE
                                                 or claim)


MAX_REFUSED = 50
"""Messages of one identity that the host's sessions may refuse as late, or as evidence
they hold already, in a whole game.  An honest peer earns a late refusal only when its
claim of silence or its move crosses another seat's message, a few times in a long
game at most; fifty is far more, and bounds what the host checks and remembers
(a digest of each) for a peer that sends such messages on purpose."""
MAX_CHATS = 10
"""Chat lines an identity may send in CHAT_WINDOW seconds: a person types fewer; a
flood reaches every peer at most this fast, however often it comes back."""
CHAT_WINDOW = 10.0


@dataclass
class Conduct:
    """What the host remembers of one link (a link that comes back is a new one)."""

    key: bytes
    """The identity of the peer at the other end."""
    sent: set[bytes] = field(default_factory=set)
    """The table messages it sent."""


@dataclass
class Standing:
    """What the host remembers of one seated identity, across its links."""

    refused: set[bytes] = field(default_factory=set)
    """The digests of its messages refused as late, or as evidence already held."""
    chats: deque[float] = field(default_factory=lambda: deque(maxlen=MAX_CHATS + 1))
    """When it sent its last chat lines."""


class Referee:
    """The host's judgement of seated links, against its own peer's sessions."""

    def __init__(self, peer: Peer, chats: Chat, earlier: frozenset[bytes] = frozenset()):
        self.peer = peer
        self.chats = chats
        self.earlier = earlier
        """The table ids of the games this table played before (another game with the
        same players): their messages, sent again by a peer that comes back, are
        dropped without a word."""
        self.records: dict[bytes, Standing] = {}
        """By identity (only seated ones: a link is screened once it is seated)."""

    def record(self, conduct: Conduct) -> Standing:
        return self.records.setdefault(conduct.key, Standing())

    def seats(self, conduct: Conduct) -> frozenset[int]:
        """The seats the link's peer speaks for in the roster as it stands (its own,
        its bots', the stand-ins it runs)."""
        return seats_of(self.peer.current.seats, conduct.key)

    def _benched(self, wire: bytes, conduct: Conduct) -> Envelope | None:
        """A message signed with the identity the first roster gives one of the link's
        seats, which a stand-in now holds: its return (``back``), one it sent before it
        left (sent again on coming back), or one it made before it learnt that a bot
        took its seat (late, as after a pause); None if ``wire`` is none of these."""
        try:
            env = open_envelope(wire, self.peer.roster.keys)
        except CodecError:
            return None
        home = seats_of(self.peer.roster.seats, conduct.key)
        return env if env.sender in home else None

    def screen(self, conduct: Conduct, wire: bytes) -> Envelope | None:
        """A table message from a link, checked: its envelope if it is new here
        (:meth:`judge` it, then relay it if the host's sessions keep it); None if the
        host has it already (sent again after a reconnection: nothing to do)."""
        if self.earlier and table_of(wire) in self.earlier:
            return None  # (a game over before this one: nothing to do)
        try:
            env = open_envelope(wire, self.peer.current.keys)
        except CodecError as exc:
            benched = self._benched(wire, conduct)
            if benched is None:
                raise FrameError(f"a table message that does not verify: {exc}") from exc
            if benched.kind != Kind.BACK and wire not in self.peer.known:
                self._late(conduct, wire)  # (its seat was taken while it was away)
                return None
            env = benched
        if env.table != self.peer.roster.table:
            raise FrameError("a message of another table")
        if env.sender not in self.seats(conduct) and env.kind != Kind.BACK \
                and wire not in self.peer.known:
            raise FrameError(f"a message for seat {env.sender}, not one of its seats")
        if wire in conduct.sent:
            raise FrameError(f"a replay of seat {env.sender}'s message {env.seq}")
        conduct.sent.add(wire)
        return None if wire in self.peer.known else env

    def judge(self, conduct: Conduct, wire: bytes, env: Envelope) -> bool:
        """The host's sessions take a screened message (``env``, as :meth:`screen`
        returned it): whether they kept it (then relay it).  FrameError if they refuse it
        for anything but lateness or evidence already held, or if its identity has had
        more than MAX_REFUSED refused."""
        record = self.record(conduct)
        if hashlib.sha256(wire).digest() in record.refused:
            return False  # refused before, sent again after a reconnection
        kept, refused = self.peer.receive(wire)
        if kept:
            return True
        claim = env.kind in (Kind.SILENT, Kind.CHEAT, Kind.BACK)  # (a return crosses too)
        wrong = [r.rejection for r in refused if not excused(r.rejection, claim)]
        if wrong:
            raise FrameError(f"seat {env.sender}'s message {env.seq} is refused:"
                             f" {wrong[0].code}: {wrong[0].reason}")
        self._late(conduct, wire)
        return False

    def _late(self, conduct: Conduct, wire: bytes) -> None:
        """Count a message refused as late (or as evidence held already) against its
        identity: FrameError once it has had more than MAX_REFUSED."""
        record = self.record(conduct)
        record.refused.add(hashlib.sha256(wire).digest())
        if len(record.refused) > MAX_REFUSED:
            raise FrameError(f"{len(record.refused)} of its messages refused as late or as"
                             " evidence already held: a flood")

    def chat(self, conduct: Conduct, line: ChatLine, now: float) -> tuple[int, str]:
        """A chat line from a link at time ``now`` (seconds): its seat and printable
        text, to relay and show; FrameError for a flood, a bad line, another's seat."""
        chats = self.record(conduct).chats
        chats.append(now)
        if len(chats) > MAX_CHATS and now - chats[0] < CHAT_WINDOW:
            raise FrameError(f"more than {MAX_CHATS} chat lines in {CHAT_WINDOW:g} s:"
                             " a flood")
        seat, text = self.chats.take(line, self.peer.roster.keys, self.peer.roster.table)
        if seat not in seats_of(self.peer.roster.seats, conduct.key):  # (a person's own)
            raise FrameError(f"chat in seat {seat}'s name")
        return seat, text


def table_of(wire: bytes) -> bytes | None:
    """The table id a message names, unchecked (None: it does not read), from its first
    bytes alone (:func:`~p2pcards.table.codec.read_head`)."""
    head = read_head(wire)
    return None if head is None else head.table
