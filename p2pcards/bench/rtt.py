"""``p2pcards bench net --rtt MS [MS ...]``: the games of ``bench net`` across the
internet.

For each round-trip time and each game, a host and its joiners (real processes,
heuristic bots in every seat, the host's default deck) play a whole game over TLS
on loopback with every joiner's link to the host through a proxy of that round
trip (:mod:`p2pcards.net.proxy`): a move from one joiner to another crosses two
such links, one round trip in all.  Reported, as ``net.rttMS.GAME.*``:

- ``deal_median``: a deal's shuffle and deal as the host sees it, as ``bench net``;
- ``move_median`` (and ``move_p90``): from a move leaving its seat to every seat
  having applied it (each peer's ``--stats`` times every move on the machine's one
  monotonic clock: :mod:`p2pcards.net.moveclock`);
- ``next_hand_median`` (and ``next_hand_p90``): from a deal's last message leaving
  its sender to every seat holding its hand of the next deal
  (:mod:`p2pcards.net.handclock`, :mod:`p2pcards.bench.peers`);
- ``turn_wait_median``: what a person waits at the table, from their move leaving
  to their next move asked for in the same deal (the bots answering at once), pooled
  over every seat;
- ``whole_game``, ``deals`` and ``moves``.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path

from p2pcards.bench.net import play_peers
from p2pcards.bench.peers import move_ms, wait_records
from p2pcards.bench.record import Record
from p2pcards.games import GAMES

__all__ = ["bench_net_rtt", "move_ms", "rtt_name"]


def rtt_name(rtt_ms: float) -> str:
    """``rtt150`` (``rtt37_5`` for a fraction: a record's name stays dotted by suite)."""
    return f"rtt{rtt_ms:g}".replace(".", "_")


def bench_net_rtt(rtts: Sequence[float], games: Sequence[str] | None = None
                  ) -> list[Record]:
    records: list[Record] = []
    for rtt in rtts:
        for game in games or list(GAMES):
            with tempfile.TemporaryDirectory(prefix="p2pcards-bench-") as tmp:
                peers = play_peers(game, Path(tmp), deck=None, rtt_ms=rtt)
            host = peers[0]
            deals, moves = host["deal_ms"], move_ms(peers)
            waits = [w for peer in peers for w in peer["turn_wait_ms"]]
            name = f"net.{rtt_name(rtt)}.{game}"
            records += [Record(f"{name}.deal_median", statistics.median(deals), "ms"),
                        *wait_records(name, peers),
                        Record(f"{name}.turn_wait_median", statistics.median(waits), "ms"),
                        Record(f"{name}.whole_game", host["game_seconds"], "s"),
                        Record(f"{name}.deals", host["deals"], "deals"),
                        Record(f"{name}.moves", len(moves), "moves")]
    return records
