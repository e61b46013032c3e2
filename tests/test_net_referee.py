"""What the host lets through from a seated link, on its own (no Trio, no sockets, the
time passed in): table messages screened and judged, replays, lateness and chat
floods."""

from __future__ import annotations

import pytest

from p2pcards.net.frames import FrameError
from p2pcards.net.links import Chat
from p2pcards.net.peer import Peer
from p2pcards.net.referee import (
    CHAT_WINDOW,
    MAX_CHATS,
    MAX_REFUSED,
    RELAY,
    Conduct,
    Referee,
    excused,
)
from p2pcards.table.codec import public_bytes, seal_envelope
from p2pcards.table.memory import seat_identity
from p2pcards.table.roster import make_roster
from p2pcards.table.state import Rejection, Rule

KEYS = [seat_identity("referee", s) for s in range(3)]
PUBLICS = [public_bytes(k.public_key()) for k in KEYS]


def table() -> tuple[Referee, list[Peer]]:
    """Three peers of one seat each, every message delivered; the first is the host's,
    with a referee."""
    roster = make_roster(b"T" * 16, "pasur", PUBLICS, options={"target": 20})
    peers = [Peer(roster, {s: KEYS[s]}, bytes([s]) * 32) for s in range(3)]
    return Referee(peers[0], Chat()), peers


def deliver(peers: list[Peer]) -> None:
    moved = True
    while moved:
        moved = False
        for peer in peers:
            for wire in peer.take_outgoing():
                moved = True
                for other in peers:
                    if other is not peer:
                        other.receive(wire)
        if not moved:  # idle: the deferred shuffle proofs
            for peer in peers:
                peer.check_pending()
                moved = moved or bool(peer.outgoing)


def forged(seat: int, table: bytes = b"T" * 16, seq: int = 0, signer: int | None = None
           ) -> bytes:
    key = KEYS[seat if signer is None else signer]
    return seal_envelope(key, table=table, deal=0, sender=seat, seq=seq, prior=b"\0" * 32,
                         kind="sign", body={"roster": b"\0" * 32}).wire


def test_a_message_is_screened_relayed_once_and_judged() -> None:
    referee, peers = table()
    (first,) = peers[0].take_outgoing()  # seat 0 signs the roster first, then seat 1
    peers[1].receive(first)
    (wire,) = peers[1].take_outgoing()
    joe = Conduct(PUBLICS[1])
    env = referee.screen(joe, wire)
    assert env is not None and env.sender == 1
    assert referee.judge(joe, wire, env)  # kept: relayed
    assert wire in referee.peer.known
    with pytest.raises(FrameError, match="a replay of seat 1's message 0"):
        referee.screen(joe, wire)
    assert referee.screen(Conduct(PUBLICS[1]), wire) is None  # sent again after a reconnection


SCREENED = [
    (b"junk", "a table message that does not verify"),
    (forged(2, signer=1), "a table message that does not verify"),
    (forged(1, table=b"\1" * 16), "a message of another table"),
    (forged(2), "a message for seat 2, not one of its seats"),
]


@pytest.mark.parametrize(("wire", "reason"), SCREENED, ids=["junk", "forged", "table", "seat"])
def test_what_is_not_relayed(wire: bytes, reason: str) -> None:
    referee, _peers = table()
    with pytest.raises(FrameError, match=reason):
        referee.screen(Conduct(PUBLICS[1]), wire)


def test_a_refused_message_closes_the_link_and_lateness_is_counted() -> None:
    referee, peers = table()
    joe = Conduct(PUBLICS[1])
    wire = forged(1, seq=9)
    env = referee.screen(joe, wire)
    assert env is not None
    with pytest.raises(FrameError, match="seat 1's message 9 is refused: order:"):
        referee.judge(joe, wire, env)
    deliver(peers)
    assert referee.peer.due() is not None and referee.peer.due().seat == 0  # type: ignore
    session = peers[1].main  # seat 0, the host's, is due: a claim against another seat
    claim = seal_envelope(KEYS[1], table=session.table, deal=0, sender=1,  # (crossed
                          seq=session.transcript.seq_out,  # by its move) is late
                          prior=session.hash,
                          kind="silent", body={"seat": 2}).wire
    env = referee.screen(joe, claim)
    assert env is not None
    assert not referee.judge(joe, claim, env)  # refused as late: not relayed, the link stays
    record = referee.records[PUBLICS[1]]
    assert len(record.refused) == 1
    back = Conduct(PUBLICS[1])  # joe comes back, and sends it again: not counted again
    env = referee.screen(back, claim)
    assert env is not None and not referee.judge(back, claim, env)
    assert len(record.refused) == 1
    spent = Referee(referee.peer, Chat())  # the same, for an identity whose budget is spent
    again = Conduct(PUBLICS[1])
    spent.record(again).refused.update(bytes([i]) * 32 for i in range(MAX_REFUSED))
    env = spent.screen(again, claim)
    assert env is not None
    with pytest.raises(FrameError, match=f"{MAX_REFUSED + 1} of its messages refused as late"
                                         " or as evidence already held: a flood"):
        spent.judge(again, claim, env)


def test_chat_is_checked_and_floods_are_stopped() -> None:
    referee, _peers = table()
    joe, speaker = Conduct(PUBLICS[1]), Chat()
    for i in range(MAX_CHATS):
        line = speaker.frame(KEYS[1], b"T" * 16, 1, f"line {i}\n")
        assert referee.chat(joe, line, now=100.0 + i / 10) == (1, f"line {i}?")
    line = speaker.frame(KEYS[1], b"T" * 16, 1, "one too many")
    with pytest.raises(FrameError, match=f"more than {MAX_CHATS} chat lines in 10 s"):
        referee.chat(joe, line, now=101.5)
    later = Conduct(PUBLICS[1])  # joe comes back once the window has passed
    assert referee.chat(later, line, now=101.5 + CHAT_WINDOW) == (1, "one too many")
    with pytest.raises(FrameError, match="chat in seat 2's name"):
        referee.chat(joe, Chat().frame(KEYS[2], b"T" * 16, 2, "hello"), now=500.0)
    with pytest.raises(FrameError, match="shown again"):
        referee.chat(Conduct(PUBLICS[1]), line, now=600.0)


def test_coming_back_does_not_reset_the_chat_limit() -> None:
    """A peer sends chat as fast as it can for 20 s and comes back each time its link is
    closed for flooding: the table sees MAX_CHATS lines in all (counted per link, as
    they were, it saw MAX_CHATS per return: 2,730 lines in 20 s)."""
    referee, _peers = table()
    speaker = Chat()
    shown = returns = 0
    link = Conduct(PUBLICS[1])
    for tick in range(2000):  # a line every 10 ms
        line = speaker.frame(KEYS[1], b"T" * 16, 1, "spam")
        try:
            referee.chat(link, line, now=tick / 100)
            shown += 1
        except FrameError:
            link = Conduct(PUBLICS[1])  # closed: back at once
            returns += 1
    assert returns > 1000 and shown == MAX_CHATS


def test_the_relay_policy_judges_every_rule_of_refusal() -> None:
    """The host's relay policy is a table over the rules a refusal names: every rule is
    placed in it (a new rule must be), lateness and evidence keep a link, a claim's
    race too, anything else closes it."""
    assert set(RELAY) == set(Rule)
    late = Rejection(1, Rule.TURN, "out of turn")
    race = Rejection(1, Rule.ORDER, "a number ahead")
    fork = Rejection(1, Rule.TRANSCRIPT, "another transcript", evidence=True)
    bad = Rejection(1, Rule.ILLEGAL, "play AS: it is not yours", detail="not-held")
    assert excused(late, claim=False) and excused(fork, claim=False)
    assert excused(race, claim=True) and not excused(race, claim=False)
    assert not excused(bad, claim=False) and not excused(bad, claim=True)
