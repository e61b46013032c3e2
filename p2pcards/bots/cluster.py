"""``p2pcards arena ... --cluster ADDRESS``: the sets of an arena run played by the
workers of a Dask distributed cluster (the optional extra ``cluster``:
``pip install -e ".[cluster]"``; docs/bots.md, "Long measurements on a cluster").

A set is :func:`~p2pcards.bots.arena.play_set_kept` on a worker: everything random
in it follows from the arena's seed and the set's number, so the results, the
results file and the report are those of a local run of the same seeds (with an
iteration budget; a time budget depends on each machine's speed, as it does on one
machine).  Its hand histories, where ``--save`` asks for them, come back with it and
are written here.  Every worker must run this very build: the workers' fingerprint of
the installed code is checked against this one's before any set is sent.
"""

from __future__ import annotations

import hashlib
import importlib
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from p2pcards.bots.arenalog import SetResult, Setup

__all__ = ["EXTRA", "Numbered", "build_fingerprint", "play_on"]

EXTRA = 'the cluster extra is not installed: pip install -e ".[cluster]" (Dask distributed)'
CONNECT_SECONDS = 20
"""How long to try to reach the scheduler before saying it cannot be reached."""


def build_fingerprint() -> str:
    """The SHA-256 of this installation's Python code (every ``.py`` file of p2pcards,
    its ``ai`` and ``protocol`` packages included, by module path and content, however
    it is installed): equal on two machines exactly when they play a set alike."""
    digest = hashlib.sha256()
    files: dict[str, Path] = {}
    for name in ("p2pcards", "p2pcards.ai", "p2pcards.protocol"):
        package = importlib.import_module(name)
        for root in map(Path, package.__path__):
            for path in root.rglob("*.py"):
                relative = path.relative_to(root).as_posix()
                if name == "p2pcards" and relative.split("/")[0] in ("ai", "protocol"):
                    continue  # (an installed copy holds them inside: taken as their own)
                files[f"{name}/{relative}"] = path
    for key in sorted(files):
        digest.update(key.encode() + b"\0" + files[key].read_bytes() + b"\0")
    return digest.hexdigest()


def fingerprint_here() -> str:
    """This process's :func:`build_fingerprint`, the workers' is checked against."""
    return build_fingerprint()


def _save(setup: Setup, histories: Sequence[tuple[str, str]]) -> None:
    for name, text in histories:
        assert setup.save is not None
        (Path(setup.save) / name).write_text(text, encoding="utf-8")


class Numbered(Protocol):
    """A set to play (the arena's ``SetSpec``): its number in the run."""

    @property
    def n(self) -> int: ...


Played = tuple[SetResult, list[tuple[str, str]]]
"""A set's result and its hand histories (file name, text)."""


def play_on(address: str, setup: Setup, todo: Sequence[Numbered], *,
            play: Callable[[Setup, Any], Played], finished: Callable[[int, SetResult], None],
            say: Callable[[str], None] | None = None) -> None:
    """Play the sets ``todo`` on the Dask cluster whose scheduler is at ``address``
    (``tcp://host:8786``), each by ``play`` on a worker (the arena's ``play_set_kept``,
    picklable by name), telling ``finished`` of each as it ends (in the order they
    end).  ValueError, naming what is wrong, when the extra is
    missing, the scheduler cannot be reached, it has no worker, or a worker runs
    another build."""
    try:
        from distributed import Client, as_completed  # noqa: PLC0415 (an optional extra)
    except ImportError:
        raise ValueError(f"--cluster: {EXTRA}") from None
    try:
        client = Client(address, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError, ValueError) as error:
        raise ValueError(f"--cluster: cannot reach the Dask scheduler at {address}:"
                         f" {error or type(error).__name__}") from None
    futures: dict[Any, int] = {}
    try:
        _check_workers(client, address, say)
        run = secrets.token_hex(8)  # (a scheduler may serve other runs: keys of our own)
        futures = {client.submit(play, setup, spec, pure=False,
                                 key=f"p2pcards-arena-{run}-{spec.n}"): spec.n
                   for spec in todo}
        for future in as_completed(futures):
            result, histories = future.result()
            _save(setup, histories)
            finished(futures[future], result)
    finally:
        if futures:
            client.cancel(list(futures))  # (a stop: the sets not ended are dropped)
        client.close()


def _check_workers(client: Any, address: str, say: Callable[[str], None] | None) -> None:
    """The workers there, each running this build; tells ``say`` how many."""
    workers = client.scheduler_info().get("workers", {})
    if not workers:
        raise ValueError(f"--cluster: the Dask scheduler at {address} has no worker yet:"
                         " start some (dask worker ADDRESS)")
    mine = fingerprint_here()
    theirs = client.run(build_fingerprint)
    other = sorted(worker for worker, fingerprint in theirs.items() if fingerprint != mine)
    if other:
        raise ValueError(f"--cluster: {len(other)} worker(s) run another build of p2pcards"
                         f" than this one ({', '.join(other[:3])}): install the same on"
                         " every machine")
    if say is not None:
        threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
        say(f"arena: {len(workers)} workers at {address} ({threads} threads), each running"
            " this build")
