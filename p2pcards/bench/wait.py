"""``p2pcards bench wait``: how long a person waits for the bots at ``p2pcards play``.

Scripted deals of every registered game at its usual table
(:mod:`p2pcards.bots.waiting`): the person in seat 0 plays the heuristic's move
at once, the bots are ``play``'s default (``ismcts``, 1 second a move), the
display pace is not counted.  Each game gives the median and the 90th
percentile of the person's waits; ``wait.all`` pools every game's waits.

``python -m p2pcards.bench wait`` takes the options: ``--bots ismcts-full`` (the
search without its early stop: the bots as they were), ``--person SECONDS`` at
each prompt, ``--ponder`` (the bots ponder meanwhile), ``--deals``, ``--think``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace

from p2pcards.bench.record import Record, format_table
from p2pcards.bots import BOT_NAMES, parse_options
from p2pcards.bots.waiting import WaitSetup, measure, quantile
from p2pcards.games import GAMES

DEALS = 2
"""Deals per game of ``p2pcards bench wait`` (a Nullern deal is one round)."""


def bench_wait(seconds: float = 2.0, *, games: Sequence[str] | None = None,
               setup: WaitSetup | None = None) -> list[Record]:
    """The person's waits per game, each game played as ``setup`` says (default: the
    defaults of ``p2pcards play``, :data:`DEALS` deals).  ``seconds``, the other suites'
    measuring time, is not used: the deals take as long as the bots think."""
    setup = setup or WaitSetup("", DEALS)
    records: list[Record] = []
    pooled: list[float] = []
    for name in games or list(GAMES):
        report = measure(replace(setup, game=name))
        waits = report.waits
        pooled += waits
        records += [Record(f"wait.{name}.median", round(quantile(waits, 0.5), 3), "s"),
                    Record(f"wait.{name}.p90", round(quantile(waits, 0.9), 3), "s"),
                    Record(f"wait.{name}.waits", len(waits), "waits"),
                    Record(f"wait.{name}.searches", report.searches, "searches"),
                    Record(f"wait.{name}.iterations_per_search",
                           round(report.iterations / max(report.searches, 1), 1), "iterations"),
                    Record(f"wait.{name}.reused_per_search",
                           round(report.reused / max(report.searches, 1), 1), "iterations")]
    records += [Record("wait.all.median", round(quantile(pooled, 0.5), 3), "s"),
                Record("wait.all.p90", round(quantile(pooled, 0.9), 3), "s")]
    return records


def _bot_name(text: str) -> str:
    try:
        parse_options(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m p2pcards.bench wait",
                                     description="The person's waits at scripted deals.")
    parser.add_argument("--games", default=",".join(GAMES),
                        help="games, comma-separated (default: all)")
    parser.add_argument("--deals", type=int, default=DEALS, help=f"deals per game ({DEALS})")
    parser.add_argument("--bots", default="ismcts", type=_bot_name,
                        help=f"the bots ({', '.join(BOT_NAMES)}, with a searching bot's"
                        " parameters, ismcts:i=1;e=8; default ismcts)")
    parser.add_argument("--think", type=float,
                        help="seconds a move (default: as p2pcards play, 0.5 on two workers)")
    parser.add_argument("--workers", type=int,
                        help="processes per searching bot (default: as p2pcards play, 2 where"
                        " the machine has two cores or more)")
    parser.add_argument("--person", type=float, default=0.0,
                        help="seconds the person spends at each move prompt (0)")
    parser.add_argument("--ponder", action="store_true",
                        help="the bots ponder while the person thinks (play --ponder)")
    parser.add_argument("--no-ponder", action="store_true",
                        help="the bots do not ponder (the default)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print a JSON list of records")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    bad_think = args.think is not None and args.think <= 0
    bad_workers = args.workers is not None and args.workers < 1
    if unknown or args.deals < 1 or bad_think or args.person < 0 or bad_workers:
        problem = (f"unknown game {unknown[0]!r}" if unknown else
                   "--deals must be at least 1" if args.deals < 1 else
                   "--workers must be at least 1" if args.workers < 1 else
                   "--think must be more than 0" if bad_think else
                   "--person must not be negative")
        print(f"p2pcards bench wait: {problem}", file=sys.stderr)
        return 2
    records = bench_wait(games=games, setup=WaitSetup(
        "", args.deals, args.bots, args.think, args.person,
        args.ponder and not args.no_ponder, args.seed, args.workers))
    if args.json:
        print(json.dumps([r.as_json() for r in records]))
    else:
        print(format_table(records))
    return 0
