"""``p2pcards bench net``'s game: real processes on loopback play a whole game, and the
host's stats are what the records are made of; with ``--rtt``, behind the delaying proxy,
every peer's times of the moves."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from p2pcards import bench
from p2pcards.bench import Record
from p2pcards.bench.net import bench_net, play_game, play_peers
from p2pcards.bench.peers import next_hand_ms
from p2pcards.bench.rtt import move_ms, rtt_name
from p2pcards.cli.main import main


@pytest.mark.slow
def test_a_benchmarked_game_is_played_to_its_end_with_its_deck(tmp_path: Path) -> None:
    stats = play_game("pasur", tmp_path, players=2, deck="proved")
    assert stats["deals"] >= 1
    # a deal is timed when the host saw its hellos due and then its first move; one
    # whose hellos all came in one batch has no time (the records are medians and bests)
    assert 0 < len(stats["deal_ms"]) <= stats["deals"]
    assert all(ms > 0 for ms in stats["deal_ms"])
    assert stats["messages"] > stats["deals"]
    assert stats["game_seconds"] > 0
    # every deal's end and the seat's hand of it, each with the multiplications by then:
    # the first hand comes after its deck's keys and shuffles (more than the shuffle's 52
    # and 52); a later one, its deck shuffled ahead on the moves of the deal before, after
    # its shares alone (fewer) when the deal before had moves enough to carry its two key
    # shares and two shuffles (not a deal void before any move: Pasur's jacks in the
    # opening pool)
    deals = list(range(stats["deals"]))
    assert [d for d, _, _ in stats["deal_ends"]] == deals
    assert [d for d, _, _ in stats["hands"]] == deals
    ends = {d: (at, count) for d, at, count in stats["deal_ends"]}
    waits = {}
    for deal, at, count in stats["hands"]:
        assert at < ends[deal][0] and count < ends[deal][1]
        before = (0.0, 0) if deal == 0 else ends[deal - 1]
        # (the host signs first: the other seat's agreement, the deal's last message,
        # carries the last shares the host's next hand needs, so it may hold that hand
        # in the same instant: docs/protocol.md, "Shares on the agreement")
        assert before[0] < at and before[1] < count if deal == 0 else \
            before[0] <= at and before[1] <= count
        waits[deal] = count - before[1]
    assert waits[0] > 104
    applied = sorted(stats["moves"].values())  # (when this seat applied each move)
    for deal in deals[1:]:
        start = ends[deal - 2][0] if deal >= 2 else 0.0
        played = sum(start < at <= ends[deal - 1][0] for at in applied)
        assert waits[deal] < 104 or played < 4, (deal, played, waits)


@pytest.mark.slow
def test_the_lock_deck_makes_no_multiplication_of_the_proved_decks_kind(
        tmp_path: Path) -> None:
    """Today's deck multiplies on P-256 through ``cryptography``, not through coincurve:
    its counts stay 0 (and bench net reports none for it)."""
    peers = play_peers("pasur", tmp_path, players=2, deck="lock")
    for stats in peers:
        assert stats["deals"] >= 2 and len(stats["hands"]) == stats["deals"]
        assert {count for _, _, count in stats["deal_ends"] + stats["hands"]} == {0}
    assert next_hand_ms(peers) and all(ms > 0 for ms in next_hand_ms(peers))


@pytest.mark.slow
def test_bench_net_reports_each_decks_waits_and_the_proved_decks_multiplications() -> None:
    records = {r.name: r for r in bench_net(games=["pasur"], players=2)}
    for prefix in ("net.pasur", "net.proved.pasur"):
        for what in ("move", "next_hand"):
            median, p90 = records[f"{prefix}.{what}_median"], records[f"{prefix}.{what}_p90"]
            assert 0 < median.value <= p90.value and median.unit == "ms"
        assert records[f"{prefix}.deals"].value >= 2
    # a deal's work is every step of its deck and the next's (shuffled ahead): more than
    # a shuffle (52 and 52); the wait for a hand holds some of it (its shares at least)
    hand, deal = records["net.proved.pasur.next_hand_mults"], records["net.proved.pasur.deal_mults"]
    assert hand.value > 0 and deal.value > 104 and hand.unit == deal.unit == "mults"
    assert "net.pasur.next_hand_mults" not in records and "net.pasur.deal_mults" not in records


@pytest.mark.slow
def test_a_benchmarked_game_behind_the_delaying_proxy_times_every_move(
        tmp_path: Path) -> None:
    """Every joiner's link to the host through the proxy, 100 ms round trip: the host's
    moves reach every seat at least half a round trip after they leave, a joiner's a
    whole one (up to the host and down to the other joiners)."""
    rtt = 100
    peers = play_peers("bidwhist", tmp_path, deck=None, rtt_ms=rtt, options=["target=1"])
    host = peers[0]
    assert len(peers) == 4 and host["deals"] >= 1 and host["deal_ms"]
    moves = {key for peer in peers for key in peer["made"]}
    assert len(moves) >= 52 and all(set(peer["moves"]) == moves for peer in peers)
    for seat, made in enumerate(peers):
        slowest = [max(p["moves"][key] for p in peers) - made["moves"][key]
                   for key in made["made"]]
        assert min(slowest) >= (rtt / 2 if seat == 0 else rtt) / 1000
    assert len(move_ms(peers)) == len(moves)
    waits = [w for peer in peers for w in peer["turn_wait_ms"]]
    assert statistics.median(waits) >= 3 * rtt / 2  # three seats move between, a hop each


def test_the_rtt_records_are_named_by_round_trip_and_game() -> None:
    assert rtt_name(150) == "rtt150" and rtt_name(37.5) == "rtt37_5"
    peers = [{"made": ["0:1"], "moves": {"0:1": 10.0, "1:1": 10.2}},
             {"made": ["1:1"], "moves": {"0:1": 10.05, "1:1": 10.1}},
             {"made": [], "moves": {"0:1": 10.075, "1:1": 10.3}}]
    assert move_ms(peers) == [75.0, 200.0]  # (to the last seat to apply it)


def test_rtt_is_refused_outside_bench_net(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engines", "--rtt", "50"]) == 2
    assert "--rtt goes with net" in capsys.readouterr().err
    assert main(["bench", "net", "--rtt", "50", "--games", "poker"]) == 2
    assert "unknown game 'poker'" in capsys.readouterr().err
    assert main(["bench", "net", "--games", "poker"]) == 2
    assert "unknown game 'poker'" in capsys.readouterr().err
    assert main(["bench", "engines", "--games", "pasur"]) == 2
    assert "--games goes with net" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "net", "--rtt", ","])
    assert "a round trip in ms, or several" in capsys.readouterr().err


def test_several_round_trips_are_given_at_once_or_one_by_one(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    asked: list[tuple[list[float], list[str] | None]] = []

    def bench_net_rtt(rtts: list[float], games: list[str] | None) -> list[Record]:
        asked.append((list(rtts), games))
        return [Record("net.rtt50.pasur.move_median", 50.0, "ms")]
    monkeypatch.setattr(bench, "bench_net_rtt", bench_net_rtt)
    assert main(["bench", "net", "--rtt", "50,150,300", "--games", "pasur"]) == 0
    assert main(["bench", "net", "--rtt", "50", "150", "--rtt", "300"]) == 0
    assert asked == [([50, 150, 300], ["pasur"]), ([50, 150, 300], None)]
    assert "net.rtt50.pasur.move_median" in capsys.readouterr().out
