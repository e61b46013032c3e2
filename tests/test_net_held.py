"""What a seat can make a peer journal and relay with messages that are only held (named
on a transcript the peer has not reached, as a seat inventing transcripts names them)
and with returns (``back``): bounded per seat and transcript position, whatever the
links it comes back on; an honest message held past the bound is journaled and sent on
once taken, and a restored peer is the peer it was."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.net.frames import FrameError
from p2pcards.net.journal import Journal
from p2pcards.net.peer import MAX_HELD, Peer
from p2pcards.net.referee import MAX_REFUSED, Conduct
from p2pcards.table.codec import seal_envelope
from p2pcards.table.decks import ACTS
from p2pcards.table.roster import make_roster
from p2pcards.table.state import Rule
from tests.table_helpers import move
from tests.test_net_referee import KEYS, PUBLICS, deliver, table


def invented(seat: int, peer: Peer, kind: str, body: dict[str, object]) -> bytes:
    """Seat ``seat``'s message of ``kind`` named on a transcript nobody has (its next
    number, the deal in progress)."""
    session = peer.main
    return seal_envelope(KEYS[seat], table=session.table, deal=session.machine.deal_index(),
                         sender=seat, seq=session.transcript.seq_in[seat],
                         prior=os.urandom(32), kind=kind, body=body).wire


def play(peers: list[Peer], moves: int, rng: random.Random) -> None:
    """Every peer moves when due, ``moves`` moves in all, every message delivered."""
    for _ in range(moves):
        deliver(peers)
        for peer in peers:
            for seat, view in peer.decisions().items():
                peer.act(seat, heuristic_bot(view.clone(), rng))
    deliver(peers)


@pytest.mark.parametrize("kind", ["fork", "silent", "back"])
def test_invented_transcripts_cost_a_peer_a_bounded_journal(tmp_path: Path, kind: str) -> None:
    """Seat 1 sends 200 forks of its move (or claims, or returns) on transcripts it
    invents, coming back on a new link every ten: the host's peer journals and relays one
    fork, at most MAX_HELD claims of it at one position of its transcript, and none of
    the returns (a seated seat's return says nothing); it counts the rest against seat 1
    until its link is closed for good.  The sessions still hold the latest claim."""
    referee, peers = table()
    host = Peer(peers[0].roster, {0: KEYS[0]}, bytes(32), journal=Journal.open(
        tmp_path / "host.journal"))
    peers[0] = referee.peer = host
    rng = random.Random(1)
    play(peers, 3, rng)
    while (due := host.due()) is None or due.seat != 1 or due.kind not in ACTS:
        play(peers, 1, rng)
    logged = len(host.log)
    mover = peers[1].sessions[1]
    view = mover.decision()
    assert view is not None
    fork = move(mover, view.format_action(view.legal_actions()[0]))
    kind_, body = {"fork": fork, "silent": ("silent", {"seat": 2}),
                   "back": ("back", {"seat": 1})}[kind]
    relayed, closed = 0, None
    sent: set[bytes] = set()
    for n in range(200):
        if n % 10 == 0:
            joe = Conduct(PUBLICS[1])  # (a new link)
        wire = invented(1, host, kind_, body)
        sent.add(wire)
        try:
            env = referee.screen(joe, wire)
            assert env is not None
            relayed += referee.judge(joe, wire, env)
        except FrameError as error:
            closed = (n, str(error))
            break
    kept = len(host.log) - logged
    assert host.journal is not None
    host.journal.close()
    assert sum(r[0] == "in" and r[1] in sent for r in Journal.open(
        tmp_path / "host.journal").records) == kept
    assert relayed == kept == {"fork": 1, "silent": MAX_HELD, "back": 0}[kind]
    if kind == "silent":
        assert host.main.claims.held[1] == wire  # the latest, held all the same
    if kind == "back":
        assert all(r.rejection.rule == Rule.STALE for r in host.refusals)
    assert closed is not None and closed[0] == relayed + MAX_REFUSED
    assert "refused as late" in closed[1]
    joe = Conduct(PUBLICS[1])
    with pytest.raises(FrameError, match="refused as late"):  # and on the next link
        wire = invented(1, host, kind_, body)
        env = referee.screen(joe, wire)
        assert env is not None
        referee.judge(joe, wire, env)


def test_the_bound_is_per_position_and_an_honest_message_past_it_is_kept_once_taken(
        tmp_path: Path) -> None:
    """Ann's peer (seat 0) lags: seats 1 and 2 play on without it, and seat 2 has sent it
    MAX_HELD invented claims at its position first.  Their messages come last first: the
    held ones over the bound are not journaled, until ann's session takes them; then
    each is journaled and sent on, and the peer restored from the journal is at the
    same transcript, with the same log."""
    roster = make_roster(b"H" * 16, "pasur", PUBLICS, options={"target": 20})
    path = tmp_path / "ann.journal"
    ann = Peer(roster, {0: KEYS[0]}, bytes(32), journal=Journal.open(path))
    others = [Peer(roster, {s: KEYS[s]}, bytes([s]) * 32) for s in (1, 2)]
    rng = random.Random(3)
    play([ann, *others], 2, rng)
    while (due := ann.due()) is None or due.seat != 1 or due.kind not in ACTS:
        play([ann, *others], 1, rng)  # (to where seat 1 moves, then seat 2, then ann)
    for _ in range(MAX_HELD):
        assert ann.receive(invented(2, ann, "silent", {"seat": 1}))[0]
    assert not ann.receive(invented(2, ann, "silent", {"seat": 1}))[0]  # over the bound
    queued: list[bytes] = []
    for _ in range(6):  # seats 1 and 2 move on; ann hears nothing yet
        for peer in others:
            for seat, view in peer.decisions().items():
                peer.act(seat, heuristic_bot(view.clone(), rng))
        moved = True
        while moved:
            moved = False
            for peer in others:
                for wire in peer.take_outgoing():
                    moved = True
                    queued.append(wire)
                    for other in others:
                        if other is not peer:
                            other.receive(wire)
        due = others[0].due()
        if due is not None and due.seat == 0:
            break
    assert len(queued) >= 2
    before = ann.main.hash
    for wire in reversed(queued[1:]):  # all held: ann lacks the first
        ann.receive(wire)
    assert ann.main.hash == before
    assert any(wire not in ann.known for wire in queued[1:])  # over the bound: aside
    ann.take_outgoing()
    ann.receive(queued[0])
    assert all(wire in ann.known for wire in queued)
    sent_on = ann.take_outgoing()
    assert set(sent_on) <= set(queued) and sent_on  # those held past the bound
    assert ann.main.hash == others[0].main.hash
    assert ann.journal is not None
    ann.journal.close()
    again = Peer.restore(Journal.open(path))
    assert again.main.hash == ann.main.hash
    assert set(again.log) == set(ann.log)
    assert [r.rejection.rule for r in ann.refusals] == []
