"""``p2pcards bench ai``: the search's iterations per second at fixed positions.

Each registered game offers one position (``Game.bench_position``), drawn in
registration order from one seeded random source, so the positions stay the
same from run to run.
"""

from __future__ import annotations

import random

from p2pcards.ai.ismcts import search
from p2pcards.ai.parallel import RootParallel
from p2pcards.bench.record import Record
from p2pcards.bots import playbook
from p2pcards.bots.search import HeuristicPolicy
from p2pcards.games import GAMES, HandState


def ai_positions(seed: int = 1) -> dict[str, HandState]:
    """The fixed positions of ``bench ai``, each a view of the player to move."""
    rng = random.Random(seed)
    out: dict[str, HandState] = {}
    for game in GAMES.values():
        position = game.bench_position(rng)
        if position is not None:
            name, view = position
            out[name] = view
    return out


def bench_ai(seconds: float = 2.0, seed: int = 1) -> list[Record]:
    """ISMCTS iterations per second on one core at fixed positions.

    ``ai.ismcts.*`` is the single-observer search the ``ismcts`` bot runs;
    ``ai.ismcts-mo.*`` and ``ai.ismcts-own.*`` the searches modelling each player
    from its own information (``variant`` ``multiple`` and ``own``), measured after
    the root-parallel figure.  Each round is one search of the bots' default think
    time (1 second, or ``seconds`` when shorter); a figure is the best of ``seconds`` rounds, the
    one least disturbed by whatever else the machine runs.  The first position
    is searched again on two worker processes (root parallelism) for the speed-up.
    """
    records: list[Record] = []
    positions = ai_positions(seed)
    think = min(1.0, seconds)
    rounds = max(1, round(seconds / think))
    for name, view in positions.items():
        policy = playbook(view).policy
        rates = []
        for round_seed in range(rounds):
            result = search(view, random.Random(round_seed), seconds=think, policy=policy)
            rates.append(result.iterations / result.seconds)
        records.append(Record(f"ai.ismcts.{name}", round(max(rates), 1), "per_s"))
    # root parallelism: the same position, two worker processes, the same wall time
    name, view = next(iter(positions.items()))
    policy = playbook(view).policy
    with RootParallel(2) as pool:
        pool.search(view, seed=0, iterations=50, policy=policy)  # start the workers first
        merged = [pool.search(view, seed=1 + 2 * r, seconds=think, policy=policy)
                  for r in range(rounds)]
    single = records[0].value  # the best of as many rounds, as for one process
    best = max(m.iterations / m.seconds for m in merged)
    records.append(Record(f"ai.ismcts.{name}.2proc_speedup", round(best / single, 2), "x"))
    for bot, variant in (("ismcts-mo", "multiple"), ("ismcts-own", "own"),
                         ("ismcts-backoff", "backoff")):
        for name, view in positions.items():
            book = playbook(view)
            policy = HeuristicPolicy(book.heuristic, book.policy)
            rates = []
            for round_seed in range(rounds):
                result = search(view, random.Random(round_seed), seconds=think, policy=policy,
                                variant=variant)
                rates.append(result.iterations / result.seconds)
            records.append(Record(f"ai.{bot}.{name}", round(max(rates), 1), "per_s"))
    return records
