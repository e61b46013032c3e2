"""``p2pcards bench``: speed measurements, printed as a table or as JSON records.

Records are ``{"name": "engines.bidwhist.plays", "value": 512000.0, "unit": "per_s"}``:
names dotted and stable, units ``ms``, ``per_s`` or ``x``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from p2pcards.bench.ai import bench_ai
from p2pcards.bench.deck import bench_deck
from p2pcards.bench.engines import bench_engines
from p2pcards.bench.table import bench_table

Record = dict[str, Any]


def bench_net(seconds: float = 2.0) -> list[Record]:
    from p2pcards.bench.net import bench_net as run  # noqa: PLC0415 - spawns processes

    return run(seconds)


SUITES: dict[str, Callable[[float], list[Record]]] = {
    "engines": bench_engines, "ai": bench_ai, "deck": bench_deck, "table": bench_table,
    "net": bench_net}


def format_table(records: list[Record]) -> str:
    width = max(len(r["name"]) for r in records)
    lines = [f"{'measurement':<{width}}  {'value':>12}  unit"]
    for r in records:
        lines.append(f"{r['name']:<{width}}  {r['value']:>12,.1f}  {r['unit']}")
    return "\n".join(lines)
