"""``bench net``'s peers side by side (p2pcards/bench/peers.py), the marks each peer
keeps (p2pcards/net/handclock.py) and the count of multiplications they carry
(protocol/proved/counting.py), on made-up marks and on a table in memory."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from coincurve import PublicKey

from p2pcards.bench import rtt
from p2pcards.bench.peers import (
    deal_mults,
    move_ms,
    next_hand_ms,
    next_hand_mults,
    quantile,
    wait_records,
)
from p2pcards.bots import heuristic_bot
from p2pcards.net.handclock import HandClock
from p2pcards.net.moveclock import MOVES
from p2pcards.protocol.proved import group
from p2pcards.protocol.proved.counting import COUNT_VARIABLE, count_if_asked, counted
from p2pcards.protocol.proved.simulate import measure
from p2pcards.table.decks import ACTS, FLAVORS
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import LOCK_DECK

# Three peers, three deals: deal 0 ends (its last message leaves its sender, peer 1)
# at 10.000 and peer 2, last to hold its next hand, holds it at 10.250; deal 1 ends
# at 20.000 (peer 0 sent it) and the last hand of deal 2 is peer 0's at 20.400.
PEERS: list[dict[str, Any]] = [
    {"deal_ends": [[0, 10.010, 100], [1, 20.000, 300], [2, 30.0, 500]],
     "hands": [[0, 5.0, 40], [1, 10.100, 160], [2, 20.400, 380]],
     "made": [], "moves": {}},
    {"deal_ends": [[0, 10.000, 110], [1, 20.020, 320], [2, 30.1, 530]],
     "hands": [[0, 5.1, 50], [1, 10.200, 150], [2, 20.300, 400]],
     "made": [], "moves": {}},
    {"deal_ends": [[0, 10.030, 90], [1, 20.050, 290], [2, 30.2, 480]],
     "hands": [[0, 5.2, 45], [1, 10.250, 200], [2, 20.350, 350]],
     "made": [], "moves": {}},
]


def test_the_next_hand_runs_from_the_first_end_of_a_deal_to_the_last_hand_after_it() -> None:
    assert next_hand_ms(PEERS) == [250.0, 400.0]


def test_the_next_hand_counts_the_most_multiplications_of_one_peer_in_its_own_wait() -> None:
    # deal 0 to 1: 160 - 100, 150 - 110, 200 - 90 (peer 2's 110, not a sum, not 200 - 100);
    # deal 1 to 2: 380 - 300, 400 - 320, 350 - 290
    assert next_hand_mults(PEERS) == [110, 80]


def test_a_deals_multiplications_run_from_the_end_of_the_deal_before() -> None:
    assert deal_mults(PEERS) == [100, 200, 200, 110, 210, 210, 90, 200, 190]


def test_a_boundary_some_peer_did_not_mark_is_left_out() -> None:
    partial = [dict(peer) for peer in PEERS]
    partial[2] = dict(PEERS[2], hands=[[0, 5.2, 45], [2, 20.350, 350]])  # (no hand of 1)
    assert next_hand_ms(partial) == [400.0]
    assert next_hand_mults(partial) == [80]
    assert next_hand_ms([]) == [] and deal_mults([]) == []


def test_the_records_of_a_game_name_its_waits_and_the_proved_decks_counts() -> None:
    peers = [dict(peer) for peer in PEERS]
    peers[0].update(made=["0:1"], moves={"0:1": 11.0, "1:1": 12.2})
    peers[1].update(made=["1:1"], moves={"0:1": 11.05, "1:1": 12.0})
    peers[2].update(moves={"0:1": 11.002, "1:1": 12.3})
    assert move_ms(peers) == [50.0, 300.0]
    records = {r.name: (r.value, r.unit) for r in wait_records("net.proved.x", peers,
                                                                 mults=True)}
    assert records == {
        "net.proved.x.move_median": (175.0, "ms"), "net.proved.x.move_p90": (300.0, "ms"),
        "net.proved.x.next_hand_median": (325.0, "ms"),
        "net.proved.x.next_hand_p90": (400.0, "ms"),
        "net.proved.x.next_hand_mults": (95, "mults"),
        "net.proved.x.deal_mults": (200, "mults")}
    lock = {r.name for r in wait_records("net.x", peers)}
    assert lock == {"net.x.move_median", "net.x.move_p90", "net.x.next_hand_median",
                    "net.x.next_hand_p90"}
    one_deal = [dict(peer, deal_ends=peer["deal_ends"][:1], hands=peer["hands"][:1],
                     made=[], moves={}) for peer in PEERS]
    assert {r.name for r in wait_records("net.x", one_deal)} == set()
    assert quantile([5, 1, 4, 2, 3, 6, 7, 8, 9, 10], 0.9) == 10


def test_a_move_is_any_kind_the_table_takes_as_a_move() -> None:
    # one set for the table, the driver's timeline and the moves' clock: a move of a new
    # kind added to the table's set is timed with nothing else to change
    assert MOVES is ACTS
    assert {flavor.act for flavor in FLAVORS.values()} <= MOVES


def test_each_peer_marks_each_deals_end_and_its_hand_as_the_table_reaches_them() -> None:
    """Seat 0's marks at a Pasur table of two (lock deck), looked at after every message
    any seat sends, on a clock that ticks once a look and a count of the looks."""
    ticks = itertools.count()
    looks = itertools.count(1000)
    clock = HandClock(clock=lambda: float(next(ticks)), count=lambda: next(looks))
    at_hand: dict[int, tuple[int, bool]] = {}

    def look(sender: int, wire: bytes) -> list[bytes]:
        main = table.sessions[0]
        before = set(clock.hands)
        clock.see(main)
        for deal in set(clock.hands) - before:
            assert main.run is not None
            at_hand[deal] = (main.run.index, main.run.opened)
        return [wire]
    table = MemoryTable("pasur", 2, "handclock", [heuristic_bot] * 2, deck=LOCK_DECK,
                        tamper=look)
    table.play(deals=3)
    main = table.sessions[0]
    clock.see(main)
    deals = sorted(clock.ends)
    assert deals == sorted({env.deal for env in main.transcript}) and len(deals) >= 3
    assert sorted(clock.hands) == deals
    assert at_hand == {d: (d, True) for d in deals}  # (the deal's own cards open)
    for deal in deals[1:]:  # the deal before ends, then this seat holds its next hand,
        assert clock.ends[deal - 1][0] < clock.hands[deal][0] < clock.ends[deal][0]
        assert clock.ends[deal - 1][1] < clock.hands[deal][1]  # (the counts run along)
    stats = clock.stats()
    assert [d for d, _, _ in stats["deal_ends"]] == deals
    assert all(isinstance(at, float) and count >= 1000 for _, at, count in stats["hands"])


def test_counting_tells_each_multiplication_and_puts_coincurve_back() -> None:
    multiply, from_secret = PublicKey.multiply, PublicKey.__dict__["from_secret"]
    points: list[int] = []
    bases: list[int] = []
    with counted(lambda: points.append(1), lambda: bases.append(1)):
        group.mul(5, group.G)
        group.mul(7, group.base_mul(3))
        group.msm([(2, group.G), (1, group.G)], base=4)  # (a term of 1 is no multiplication)
    assert (len(points), len(bases)) == (3, 2)
    assert PublicKey.multiply is multiply and PublicKey.__dict__["from_secret"] is from_secret
    assert group.mul(5, group.G) == group.base_mul(5)  # (the arithmetic is unchanged)


def test_a_process_counts_only_when_asked() -> None:
    multiply = PublicKey.multiply
    assert count_if_asked({}) is None and count_if_asked({COUNT_VARIABLE: "0"}) is None
    assert PublicKey.multiply is multiply  # (nothing wrapped: it costs nothing)
    script = ("from p2pcards.protocol.proved import group\n"
              "from p2pcards.protocol.proved.counting import count_if_asked\n"
              "tally = count_if_asked()\n"
              "assert count_if_asked() is tally\n"  # (asked twice, counted once)
              "group.mul(3, group.base_mul(2))\n"
              "print(tally.points, tally.base, tally.total)\n")
    env = dict(os.environ, **{COUNT_VARIABLE: "1"})
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True, timeout=60)
    assert done.stdout.split() == ["1", "1", "2"]


def test_the_rtt_records_carry_the_next_hand_at_each_round_trip(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench net --rtt``'s records of a game, from its peers' stats (made up here)."""
    played: list[tuple[str, float]] = []

    def play_peers(game: str, directory: Path, *, deck: str | None, rtt_ms: float
                   ) -> list[dict[str, Any]]:
        played.append((game, rtt_ms))
        return [dict(peer, deal_ms=[900.0], game_seconds=9.0, deals=3, turn_wait_ms=[1.0],
                     made=[], moves={}) for peer in PEERS]
    monkeypatch.setattr(rtt, "play_peers", play_peers)
    records = {r.name: r.value for r in rtt.bench_net_rtt([50, 150], ["pasur"])}
    assert played == [("pasur", 50), ("pasur", 150)]
    for name in ("rtt50", "rtt150"):
        assert records[f"net.{name}.pasur.next_hand_median"] == 325.0
        assert records[f"net.{name}.pasur.next_hand_p90"] == 400.0


def test_the_measure_counts_a_partys_multiplications_as_the_docs_give_them() -> None:
    """``python -m p2pcards.protocol.proved.simulate`` counts through the same wrapping:
    a 4-party 52-card deal is 1,821 multiplications of points and 431 of G a party
    (docs/proved-deck.md, "Figures": each Shares message's proofs checked together)."""
    assert [(m, g) for _, m, g in measure(4, 52, 1)] == [(1821, 431)] * 4
