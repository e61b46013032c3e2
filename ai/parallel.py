"""Root parallelism: several processes search the same view, their root statistics merged.

Each worker runs an independent SO-ISMCTS from the same view with its own
seed; the visits of the root moves are summed and the most visited move is
played.  Workers are persistent (one process each, kept for the life of the
:class:`RootParallel`), so a game pays the start-up once, not per move.

The workers search in rounds (an eighth of the budget each), each keeping its
tree between rounds, so that the merged visits can be checked as in a single
search: once the most visited move cannot be overtaken by all the iterations
the workers have left, the search stops, and under an iteration budget the
move is the one the whole budget would have chosen.  Searching in rounds
builds the same trees as searching at once (the same seeds, the same visits).
"""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

from .ismcts import (
    EXPLORATION,
    Node,
    SearchResult,
    Tree,
    grow_tree,
    make_tree,
    most_visited,
    root_moves,
    settled,
)
from .protocol import Policy, SearchState, SearchView

ROUNDS = 8
"""A search's budget is spent in this many rounds at most (fewer if it stops early)."""

@dataclass
class _Work:
    """In a worker process: the search in progress."""

    view: SearchView[SearchState]
    rng: random.Random
    tree: Tree


@dataclass(frozen=True)
class _Budget:
    """A search's budget and settings, as :meth:`RootParallel.search` takes them."""

    iterations: int | None
    seconds: float | None
    root_actions: list[int] | None
    policy: Policy | None
    early_stop: bool
    exploration: float
    variant: str


_WORK: list[_Work] = []
"""The worker's one search in progress (replaced by the next)."""


def _begin(view: SearchView[SearchState], seed: int, root_actions: list[int] | None,
           policy: Policy | None, *, exploration: float = EXPLORATION,
           variant: str = "single") -> None:
    seat, legal = root_moves(view, root_actions)
    tree = make_tree(variant, seat, exploration=exploration,
                     only=legal if root_actions is not None else None, policy=policy)
    _WORK[:] = [_Work(view, random.Random(seed), tree)]


def _more(iterations: int | None, seconds: float | None) -> tuple[dict[int, int], int]:
    """Grow the worker's tree by ``iterations`` or for ``seconds``; its root visits so
    far and the iterations of this round."""
    work = _WORK[0]
    until = None if seconds is None else time.perf_counter() + seconds
    done = grow_tree(work.view, work.tree, work.rng, iterations=iterations, until=until)
    return {a: child.visits for a, child in work.tree.root.children.items()}, done


def _context() -> multiprocessing.context.BaseContext:
    """How the workers start: from a fork server where there is one (a clean process,
    never a fork of a process with threads running, as a prompt's is), else spawned."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _ready(preload: Callable[[], object] | None) -> None:
    """In a worker just started: import what its searches will need."""
    if preload is not None:
        preload()


class RootParallel:
    """A pool of ``workers`` processes that search views together (one search at a
    time: searches from several threads wait for each other)."""

    def __init__(self, workers: int = 2):
        if workers < 1:
            raise ValueError("at least one worker")
        self.workers = workers
        self._pools: list[ProcessPoolExecutor] = []
        self._lock = threading.Lock()
        self.closed = False

    def __enter__(self) -> RootParallel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers at once, a search under way included (its caller gets
        BrokenProcessPool): the pool's owner is done with it."""
        self.closed = True
        self._discard()

    def _start(self) -> None:
        if self._pools:  # one process per worker: a worker keeps its tree
            return
        context = _context()
        self._pools = [ProcessPoolExecutor(max_workers=1, initializer=worker_signals,
                                           mp_context=context) for _ in range(self.workers)]
        # Stopped as this process exits, if its owner has not closed them: a process
        # started by multiprocessing (an arena's, say) joins its children as it exits,
        # before the executors' own exit hook runs, and these workers would wait for
        # ever for a task (they end with their parent: the parent waits for them).
        multiprocessing.util.Finalize(self, stop_pools, args=(self._pools,), exitpriority=10)
        with sigint_ignored():  # the first task starts the process (and the fork server)
            for pool in self._pools:
                pool.submit(_ready, None)

    def warm(self, preload: Callable[[], object] | None = None) -> None:
        """Start the processes now, each running ``preload`` (a module-level function:
        the imports the searches need), without waiting for them: the first search then
        does not pay their start.  Called from the main thread, as the owner sets the
        table, the workers ignore Ctrl-C from their first instruction."""
        with self._lock:
            self._start()
            for pool in self._pools:
                pool.submit(_ready, preload)

    def search(  # noqa: PLR0913  (the search's settings, every one keyword-only)
            self, view: SearchView[SearchState], seed: int, *, iterations: int | None = None,
               seconds: float | None = None, root_actions: list[int] | None = None,
               policy: Policy | None = None, early_stop: bool = True,
               exploration: float = EXPLORATION, variant: str = "single") -> SearchResult:
        """Search ``view`` on every worker (``iterations`` each, or ``seconds`` of wall
        time) with seeds ``seed``, ``seed + 1`` ...; merged root visits decide.
        ``early_stop``: stop once the merged leader cannot be overtaken (above);
        ``exploration`` and ``variant`` as in :func:`~.ismcts.search`."""
        if iterations is None and seconds is None:
            raise ValueError("give an iteration or a time budget")
        budget = _Budget(iterations, seconds, root_actions, policy, early_stop, exploration,
                         variant)
        with self._lock:
            if self.closed:
                raise BrokenProcessPool("the pool is closed")
            try:
                return self._run(view, seed, budget)
            except BrokenProcessPool:  # a worker died (killed, out of memory): new ones
                if self.closed:
                    raise
                self._discard()
                return self._run(view, seed, budget)

    def _discard(self) -> None:
        pools, self._pools = self._pools, []
        stop_pools(pools)

    def _run(self, view: SearchView[SearchState], seed: int, budget: _Budget) -> SearchResult:
        iterations, seconds, root_actions = budget.iterations, budget.seconds, budget.root_actions
        _, legal = root_moves(view, root_actions)
        start = time.perf_counter()
        self._start()
        visits: dict[int, int] = {}
        done = [0] * self.workers
        if len(legal) > 1:
            for begun in [pool.submit(_begin, view, seed + i, root_actions, budget.policy,
                                      exploration=budget.exploration, variant=budget.variant)
                          for i, pool in enumerate(self._pools)]:
                begun.result()
            step = None if iterations is None else max(1, math.ceil(iterations / ROUNDS))
            while True:
                futures = [pool.submit(_more, None if step is None or iterations is None
                                       else min(step, iterations - done[i]),
                                       None if seconds is None else seconds / ROUNDS)
                           for i, pool in enumerate(self._pools)]
                visits = {}
                for i, future in enumerate(futures):
                    counts, more = future.result()
                    done[i] += more
                    for action, count in counts.items():
                        visits[action] = visits.get(action, 0) + count
                elapsed = time.perf_counter() - start
                left = float(iterations * self.workers - sum(done)) if iterations is not None \
                    else sum(done) / max(elapsed, 1e-9) * ((seconds or 0.0) - elapsed)
                if left <= 0 or (budget.early_stop and settled(legal, visits, left)):
                    break
        visits = {a: visits[a] for a in legal if a in visits}
        action = most_visited(legal, visits)
        return SearchResult(action, visits, sum(done), time.perf_counter() - start, Node(-1))


STOP_WAIT = 10.0
"""Seconds :func:`stop_pools` waits at most for an executor's own thread to end."""


def stop_pools(pools: list[ProcessPoolExecutor]) -> None:
    """Stop these executors' workers at once, a search under way included, and wait
    (a moment: the workers are gone) for each executor's managing thread to end.
    Python 3.11's exit hook for executors writes to the wakeup pipe of every such
    thread; one closing its pipe at that moment makes the hook print a traceback
    (EBADF) on the way out, which a program leaving just after it closed its pool
    (SIGTERM at a prompt) showed now and then.  A thread that has ended has closed
    its pipe, and the hook leaves a closed pipe alone."""
    threads: list[threading.Thread | None] = []
    for pool in pools:
        # (no public way to stop a worker before Python 3.14)
        for process in list((pool._processes or {}).values()):
            if process.is_alive():
                process.terminate()
        # (typeshed calls this attribute a _ThreadWakeup: it is the thread)
        threads.append(cast("threading.Thread | None", pool._executor_manager_thread))
        pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + STOP_WAIT
    for thread in threads:
        if thread is not None and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ctrl-C ignored while the workers start, on the main thread (elsewhere the signal
    cannot be changed): a process started meanwhile, the fork server first of all,
    inherits that, and Python keeps it.  A terminal's Ctrl-C reaches every process of
    the foreground group; a worker still starting would die of it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def worker_signals() -> None:
    """A worker leaves Ctrl-C to its parent: it ignores SIGINT, and drops a signal
    wakeup descriptor inherited from the parent's event loop (through which every
    signal it received would reach the parent again).  And it ends when its parent
    does, however the parent ended: a worker waiting for its next task holds both ends
    of its task queue, so it would wait for ever after a parent killed outright."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.set_wakeup_fd(-1)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_end_with, args=(parent.sentinel,), daemon=True).start()


def _end_with(sentinel: int) -> None:
    """In a worker: wait for the parent's end, then end at once."""
    multiprocessing.connection.wait([sentinel])
    os._exit(0)
