"""An arena run (:class:`Setup`, what :mod:`p2pcards.bots.arena` plays) and its
results file (``--results FILE``): one JSON line per set played, so that a long
run stopped part way (killed, the machine restarted) goes on where it stopped,
and one run can be played in several sittings.

The first line names the run: the game, the line-up, the seed, duplicate deals
or whole games, and the search budget.  Every other line is one set: its number,
each bot's tally and the iterations and seconds each search spent.  The sets of a
run are drawn in order from its seed (``arena.plan``), so set ``n`` is the same
set whatever the run's length: a file of 200 sets serves a run of 500, which
plays the other 300 and reports on all 500.  A file is read whole before any
set is played; a line cut short at the end (the process killed while it wrote)
is dropped, and anything else wrong is an error naming the file and the line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

FORMAT = "p2pcards-arena/1"


@dataclass(frozen=True)
class Setup:
    """An arena run: the game (by name), the bots seat by seat, the seed, duplicate deals
    (``deals``) or whole games, the search's budget, where to keep the hand histories;
    what every process of the arena needs to play any set (picklable)."""

    game: str
    lineup: tuple[str, ...]
    seed: int = 0
    deals: bool = True
    iterations: int | None = None
    think: float | None = None
    save: str | None = None


@dataclass
class Tally:
    """What one bot earned, per deal or per game."""

    seats: set[int] = field(default_factory=set)
    wins: list[float] = field(default_factory=list)
    points: list[float] = field(default_factory=list)
    bids: int = 0
    exact: int = 0


SetResult = tuple[dict[str, Tally], dict[str, tuple[int, float]]]
"""One set: each bot's tally, and the iterations and seconds each search spent."""

_RUN_FIELDS = ("game", "lineup", "seed", "deals", "iterations", "think")


def describe(setup: Setup) -> dict[str, Any]:
    """The first line of a results file: what makes two runs the same run."""
    return {"format": FORMAT, "game": setup.game, "lineup": list(setup.lineup),
            "seed": setup.seed, "deals": setup.deals, "iterations": setup.iterations,
            "think": setup.think}


def encode(n: int, result: SetResult) -> str:
    """One set as a line (no newline)."""
    pair, searched = result
    tallies = {kind: {"seats": sorted(t.seats), "wins": t.wins, "points": t.points,
                      "bids": t.bids, "exact": t.exact} for kind, t in pair.items()}
    spent = {kind: [done, secs] for kind, (done, secs) in searched.items()}
    return json.dumps({"set": n, "tallies": tallies, "searched": spent}, sort_keys=True)


def _numbers(value: Any, what: str) -> list[float]:
    if not isinstance(value, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise ValueError(f"{what} is not a list of numbers")
    return [float(x) for x in value]


def _count(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} is not a count")
    return value


def decode(line: str, kinds: set[str]) -> tuple[int, SetResult]:
    """A set from its line; ValueError saying what is wrong with it."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    if not isinstance(obj, dict) or set(obj) != {"set", "tallies", "searched"}:
        raise ValueError("not a set: the keys are set, tallies and searched")
    n = _count(obj["set"], "its set number")
    tallies, spent = obj["tallies"], obj["searched"]
    if not isinstance(tallies, dict) or set(tallies) != kinds:
        raise ValueError(f"its tallies are not those of the bots {', '.join(sorted(kinds))}")
    pair: dict[str, Tally] = {}
    for kind, t in tallies.items():
        if not isinstance(t, dict) or set(t) != {"seats", "wins", "points", "bids", "exact"}:
            raise ValueError(f"the tally of {kind} is not seats, wins, points, bids, exact")
        if not isinstance(t["seats"], list):
            raise ValueError(f"the seats of {kind} are not a list")
        seats = {_count(s, f"a seat of {kind}") for s in t["seats"]}
        pair[kind] = Tally(seats, _numbers(t["wins"], f"the wins of {kind}"),
                           _numbers(t["points"], f"the points of {kind}"),
                           _count(t["bids"], f"the bids of {kind}"),
                           _count(t["exact"], f"the exact bids of {kind}"))
    if not isinstance(spent, dict) or not set(spent) <= kinds:
        raise ValueError("its searched counts name a bot not in the line-up")
    searched: dict[str, tuple[int, float]] = {}
    for kind, value in spent.items():
        counts = _numbers(value, f"the search counts of {kind}")
        if len(counts) != 2 or min(counts) < 0:
            raise ValueError(f"the search counts of {kind} are not iterations and seconds")
        searched[kind] = (int(counts[0]), counts[1])
    return n, (pair, searched)


class ResultsFile:
    """The results file of one run: read once at the start, a line added per set."""

    def __init__(self, path: str, setup: Setup) -> None:
        self.path = path
        self.run = describe(setup)
        self.kinds = set(setup.lineup)

    def _mismatch(self, found: dict[str, Any]) -> str | None:
        for key in _RUN_FIELDS:
            if found.get(key) != self.run[key]:
                return (f"it holds another run: its {key} is {json.dumps(found.get(key))}, "
                        f"this run's is {json.dumps(self.run[key])}")
        return None

    def load(self) -> dict[int, SetResult]:
        """The sets already played, by number (none if the file does not exist yet; it is
        then made with its first line).  A line cut short at the end is taken off."""
        if not os.path.exists(self.path):
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(json.dumps(self.run, sort_keys=True) + "\n")
            return {}
        try:
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            raise ValueError(f"--results {self.path}: the file is not text, not an arena's "
                             "results") from None
        except OSError as exc:
            raise ValueError(f"--results {self.path}: cannot read it ({exc.strerror})") from None
        lines = text.split("\n")
        complete, tail = lines[:-1], lines[-1]  # tail: what follows the last newline
        if tail:  # the process stopped while it wrote this line
            with open(self.path, "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in complete))
        if not complete:
            raise ValueError(f"--results {self.path}: the file is empty, not an arena's "
                             "results (remove it to start the run afresh)")
        try:
            first = json.loads(complete[0])
        except json.JSONDecodeError:
            first = None
        if not isinstance(first, dict) or first.get("format") != FORMAT:
            raise ValueError(f"--results {self.path}: line 1 is not the head of an arena's "
                             f"results ({FORMAT})")
        problem = self._mismatch(first)
        if problem:
            raise ValueError(f"--results {self.path}: {problem}")
        sets: dict[int, SetResult] = {}
        for number, line in enumerate(complete[1:], 2):
            try:
                n, result = decode(line, self.kinds)
            except ValueError as exc:
                raise ValueError(f"--results {self.path}: line {number}: {exc}") from None
            if n in sets:
                raise ValueError(f"--results {self.path}: line {number}: set {n} again")
            sets[n] = result
        return sets

    def append(self, n: int, result: SetResult) -> None:
        """Keep one set, on disk before the next is taken."""
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(encode(n, result) + "\n")
            f.flush()
            os.fsync(f.fileno())
