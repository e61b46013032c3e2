"""``p2pcards arena --cluster``: the sets played by the workers of a Dask cluster (a
local one, in this process) give the results, the results file, the hand histories and
the report of a local run of the same seeds; a run goes on from its results file; a
scheduler that cannot be reached, workers of another build and a missing extra are
refused naming what is wrong.  Needs the extra: ``pip install -e ".[cluster]"``, then
``python -m pytest tests/cluster``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from p2pcards.bots import arena, cluster
from p2pcards.bots.arenalog import decode
from p2pcards.cli.main import main

distributed = pytest.importorskip("distributed", reason=cluster.EXTRA)

SETUP = arena.Setup("pasur", ("random", "ismcts"), seed=7, iterations=12)


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    """A scheduler and one worker in this process (one thread: the bots of a process are
    shared by its sets, as in a local run), talking in memory (its HTTP server on a free
    loopback port, no dashboard: xdist's workers each start one)."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address="127.0.0.1:0",
                                  scheduler_kwargs={"dashboard": False}) as local:
        yield local.scheduler_address


def without_rates(result: dict[str, Any]) -> dict[str, Any]:
    for entry in result["entries"]:
        entry.pop("iterations_per_s")
    return result


def sets_of(path: Path) -> list[tuple[int, Any]]:
    """A results file's sets, each bot's tally (the seconds searched left out)."""
    kinds = set(SETUP.lineup)
    out = []
    for line in path.read_text().splitlines()[1:]:
        n, (pair, spent) = decode(line, kinds)
        out.append((n, {kind: (t.seats, t.wins, t.points, t.bids, t.exact)
                        for kind, t in pair.items()},
                    {kind: done for kind, (done, _) in spent.items()}))
    return sorted(out)


def test_a_run_on_a_cluster_is_the_local_run(address: str, tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    local = arena.run(arena.Setup(**{**SETUP.__dict__, "save": str(here / "h")}), 4,
                      results=str(here.with_suffix(".jsonl")))
    heard: list[str] = []
    remote = arena.run(arena.Setup(**{**SETUP.__dict__, "save": str(there / "h")}), 4,
                       results=str(there.with_suffix(".jsonl")), cluster=address,
                       say=heard.append)
    assert heard == [f"arena: 1 workers at {address} (1 threads), each running this build"]
    assert without_rates(remote) == without_rates(local)
    # the same sets, set by set (the iterations searched too), whatever order they ended in
    assert sets_of(there.with_suffix(".jsonl")) == sets_of(here.with_suffix(".jsonl"))
    # the hand histories, written here, are the local run's, byte for byte
    mine = {p.name: p.read_bytes() for p in (here / "h").iterdir()}
    theirs = {p.name: p.read_bytes() for p in (there / "h").iterdir()}
    assert mine == theirs and len(mine) == 4 * 2


def test_a_cluster_run_goes_on_from_its_results_file(address: str, tmp_path: Path) -> None:
    results = tmp_path / "run.jsonl"
    arena.run(SETUP, 2, results=str(results), cluster=address)
    heard: list[str] = []
    resumed = arena.run(SETUP, 3, results=str(results), cluster=address, say=heard.append)
    assert heard[0] == f"arena: 2 of the 3 sets are in {results}; 1 to play"
    assert without_rates(resumed) == without_rates(arena.run(SETUP, 3))
    assert len(results.read_text().splitlines()) == 4  # (its header and three sets)


def test_the_command_takes_a_cluster(address: str, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    command = ["arena", "pasur", "--players", "random,heuristic", "--deals", "2", "--json"]
    assert main([*command, "--cluster", address]) == 0
    there = json.loads(capsys.readouterr().out)
    assert main(command) == 0
    assert there == json.loads(capsys.readouterr().out)


def test_what_cannot_work_is_refused_naming_it(address: str, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1)
    with pytest.raises(ValueError, match=r"^--cluster: cannot reach the Dask scheduler at"
                                         r" tcp://127\.0\.0\.1:9: "):
        arena.run(SETUP, 1, cluster="tcp://127.0.0.1:9")
    monkeypatch.setattr(cluster, "fingerprint_here", lambda: "another build")
    with pytest.raises(ValueError, match=r"^--cluster: 1 worker\(s\) run another build of"
                                         r" p2pcards than this one \("):
        arena.run(SETUP, 1, cluster=address)
    monkeypatch.setitem(sys.modules, "distributed", None)  # (the extra not installed)
    assert main(["arena", "pasur", "--players", "random,heuristic", "--deals", "1",
                 "--cluster", address]) == 2
    assert capsys.readouterr().err == (
        'p2pcards: --cluster: the cluster extra is not installed: pip install -e'
        ' ".[cluster]" (Dask distributed)\n')
