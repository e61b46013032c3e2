"""A whole networked game with every link 150 ms round trip (p2pcards/net/latency.py) on
Trio's autojump clock: a host and three joiners in one process, each joiner's link to
the host delayed both ways, the bots deciding on the loop (no thread for the clock to
jump over).  The game ends, verifies alike at every peer, and each move reaches every
seat when the links say: half a round trip from the host, a whole one from a joiner."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from p2pcards.bench.rtt import move_ms
from p2pcards.net import host as host_module
from p2pcards.net import join as join_module
from p2pcards.net.driver import Driver
from p2pcards.net.latency import Delay, DelayedStream
from p2pcards.net.moveclock import MoveClock
from p2pcards.net.tls import Dial
from tests.net_helpers import histories, make_host, make_joiner, memory_dial

RTT = 0.150


def delayed(dial: Dial, delay: Delay, nursery: trio.Nursery) -> Dial:
    async def dial_far(address: str, port: int) -> tuple[trio.abc.Stream, bytes]:
        stream, seen = await dial(address, port)
        return DelayedStream(stream, delay, nursery), seen
    return dial_far


def on_the_test_clock(*args: Any, **kwargs: Any) -> Driver:
    """A driver whose bots decide on the loop and whose moves are timed by Trio's clock."""
    return Driver(*args, **kwargs, inline=True, moves=MoveClock(clock=trio.current_time))


@pytest.mark.timeout(60)
async def test_a_game_with_every_link_a_round_trip_away(
        tmp_path: Path, autojump_clock: trio.testing.MockClock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host_module, "Driver", on_the_test_clock)
    monkeypatch.setattr(join_module, "Driver", on_the_test_clock)
    host = make_host(tmp_path, "bidwhist", players=4, options={"target": 7})
    joiners = []
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        far = delayed(memory_dial(host), Delay(RTT), nursery)
        for name in ("ana", "bo", "cy"):
            joiners.append(make_joiner(tmp_path, invite, name, dial=far))
            nursery.start_soon(joiners[-1].run)
    took = trio.current_time() - start
    peers = [host.peer, *(j.peer for j in joiners)]
    assert all(p is not None and p.over for p in peers)
    assert len(histories(*peers)) == 1  # every seat verified the one game
    assert not host.closed_reasons
    drivers = [host.driver, *(j.driver for j in joiners)]
    stats = [d.moves.stats() for d in drivers if d is not None]
    assert len(stats) == 4
    moves = move_ms(stats)
    made = {key: seat for seat, s in enumerate(stats) for key in s["made"]}
    assert len(moves) == len(made) > 50
    # the host's moves reach the joiners one way down; a joiner's, the host one way up and
    # the other joiners one way down again: the bots answer in no time on this clock
    by_seat = {0: [], 1: []}  # type: dict[int, list[float]]
    for (key, seat), ms in zip(made.items(), _per_move(stats), strict=True):
        by_seat[min(seat, 1)].append(ms)
        del key
    assert set(by_seat[0]) == {RTT / 2 * 1000}
    assert set(by_seat[1]) == {RTT * 1000}
    assert statistics.median(moves) == RTT * 1000
    waits = [w for s in stats for w in s["turn_wait_ms"]]
    hops = [w / (RTT / 2 * 1000) for w in waits]  # (a wait is the hops between turns;
    assert waits and all(abs(h - round(h)) < 1e-3 for h in hops)  # 0: a seat's 2nd move)
    assert statistics.median(hops) >= 3  # (three seats move between, a hop at least each)
    assert took > len(moves) * RTT / 2  # the game took the links' time


def _per_move(stats: list[dict[str, Any]]) -> list[float]:
    """:func:`move_ms` in the order of the moves' makers (a check of its pairing)."""
    out = []
    for made in stats:
        for key in made["made"]:
            times = [peer["moves"][key] for peer in stats]
            out.append(round((max(times) - made["moves"][key]) * 1000, 6))
    return out

