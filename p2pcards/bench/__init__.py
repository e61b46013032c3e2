"""``p2pcards bench``: speed measurements, printed as a table or as JSON records.

Each suite is a module of this package and returns :class:`Record` values
(JSON ``{"name": "engines.bidwhist.plays", "value": 512000.0, "unit": "per_s"}``):
names dotted and stable.  The games measured are the registered ones
(:data:`p2pcards.games.GAMES`).  docs/benchmarks.md gives the targets and the
figures measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from p2pcards.bench.ai import bench_ai
from p2pcards.bench.deck import bench_deck
from p2pcards.bench.engines import bench_engines
from p2pcards.bench.infer import bench_infer
from p2pcards.bench.proved import bench_proved
from p2pcards.bench.record import Record, format_table
from p2pcards.bench.table import bench_table
from p2pcards.bench.wait import bench_wait


def bench_net(seconds: float = 2.0, games: Sequence[str] | None = None) -> list[Record]:
    """``bench net``: :mod:`p2pcards.bench.net` (``games``: these only)."""
    from p2pcards.bench.net import bench_net as run  # noqa: PLC0415 - spawns processes

    return run(seconds, games)


def bench_net_rtt(rtts: Sequence[float], games: Sequence[str] | None = None) -> list[Record]:
    """``bench net --rtt``: :mod:`p2pcards.bench.rtt`."""
    from p2pcards.bench.rtt import bench_net_rtt as run  # noqa: PLC0415 - spawns processes

    return run(rtts, games)


SUITES: dict[str, Callable[[float], list[Record]]] = {
    "engines": bench_engines, "ai": bench_ai, "deck": bench_deck, "table": bench_table,
    "net": bench_net, "wait": bench_wait, "proved": bench_proved, "infer": bench_infer}


__all__ = ["SUITES", "Record", "bench_net_rtt", "format_table"]
