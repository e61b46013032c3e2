"""Root parallelism: several processes search the same view, their root statistics merged.

Each worker runs an independent SO-ISMCTS from the same view with its own
seed; the visits of the root moves are summed and the most visited move is
played.  Workers are persistent (a process pool kept for the life of the
:class:`RootParallel`), so a game pays the start-up once, not per move.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ProcessPoolExecutor

from .ismcts import Node, SearchResult, most_visited, root_moves, search
from .protocol import Policy, SearchState


def _work(view: SearchState, seed: int, *, iterations: int | None,
          seconds: float | None, root_actions: list[int] | None = None,
          policy: Policy | None = None) -> tuple[dict[int, int], int]:
    result = search(view, random.Random(seed), iterations=iterations, seconds=seconds,
                    root_actions=root_actions, policy=policy)
    return result.visits, result.iterations


class RootParallel:
    """A pool of ``workers`` processes that search views together."""

    def __init__(self, workers: int = 2):
        if workers < 1:
            raise ValueError("at least one worker")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> RootParallel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def search(self, view: SearchState, seed: int, *, iterations: int | None = None,
               seconds: float | None = None, root_actions: list[int] | None = None,
               policy: Policy | None = None) -> SearchResult:
        """Search ``view`` on every worker (``iterations`` each, or ``seconds`` of wall
        time) with seeds ``seed``, ``seed + 1`` ...; merged root visits decide."""
        _, legal = root_moves(view, root_actions)
        start = time.perf_counter()
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        futures = [self._pool.submit(_work, view, seed + i, iterations=iterations,
                                      seconds=seconds, root_actions=root_actions,
                                      policy=policy)
                   for i in range(self.workers)]
        visits: dict[int, int] = {}
        done = 0
        for future in futures:
            counts, iterations_done = future.result()
            done += iterations_done
            for action, count in counts.items():
                visits[action] = visits.get(action, 0) + count
        action = most_visited(legal, visits)
        return SearchResult(action, visits, done, time.perf_counter() - start, Node(-1))
