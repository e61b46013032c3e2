"""The critical path of a proved deal (protocol/proved/timeline.py): its two schedules
keep the orders the deck needs, laid on the costs measured."""

from __future__ import annotations

from p2pcards.protocol.proved.timeline import _Clocks, deal_timeline
from p2pcards.protocol.steps import DeckContext


def test_a_deal_waits_at_least_for_its_busiest_party_and_pipelining_only_helps() -> None:
    line = deal_timeline(DeckContext(b"timeline-test!!!", 0, 3, 12), "t")
    assert all(c > 0 for c in line.compute)
    assert line.in_turn >= max(line.compute)  # a party's own calls never overlap
    assert line.pipelined >= max(line.compute)
    assert line.pipelined <= line.in_turn
    assert 0 < line.shuffled < line.in_turn  # the cards are opened after the shuffles


def test_a_proof_is_checked_in_idle_time_and_always_before_a_share_leaves() -> None:
    clocks = _Clocks(2)
    out = clocks.work(0, 5.0)  # party 0 shuffles for 5 s
    clocks.arrive(1, out, take=1.0, check=3.0)
    assert clocks.turn[1] == 5.0 + 1.0 + 3.0  # in turn: checked on arrival
    assert clocks.pipe[1] == 6.0 and clocks.backlog[1] == 3.0  # pipelined: held
    clocks.flush(1)  # a release waits for every proof held
    assert clocks.pipe[1] == 9.0 and clocks.backlog[1] == 0.0
    clocks = _Clocks(2)
    clocks.arrive(1, (0.0, 0.0), take=0.0, check=3.0)
    clocks.arrive(1, (10.0, 10.0), take=1.0, check=0.0)  # idle from 0 to 10: checked then
    assert clocks.pipe[1] == 11.0 and clocks.backlog[1] == 0.0
    assert clocks.turn[1] == 11.0
    assert clocks.compute[1] == 4.0
