"""Two kept match runs over the same deals, paired deal by deal (pure Python).

    python -m p2pcards.compare.pair A.txt B.txt

Each file is a match's output kept with its command: a first line ``$ python -m
p2pcards.compare.match ...``, then the match's lines (a ``deal I: ...`` line for each
deal, then the report).  Two runs of the same game, deals, seed, opponent, sampler and
time differ only in our search (``--ours``), or in nothing but where the searches
stopped: their deals are the same, so the difference of their margins, deal by deal,
says what the change did with the deals' own spread taken out.  The report gives each
run's margin (recomputed from its deal lines, and checked against its own report) and
the paired difference A minus B with its 95% interval, the statistics of the match's
own margin (:func:`p2pcards.compare.tally.mean_ci`).  A file that is not such a run,
is cut short, or disagrees with its own report is refused, naming the file and line.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from .match import Config, parse
from .tally import mean_ci

COMMAND = "python -m p2pcards.compare.match"
DEAL = re.compile(r"deal (\d+): ours -?[\d.]+, theirs -?[\d.]+, margin ([+-][\d.]+)")
REPORTED = re.compile(r"  our margin per deal \(paired\): ([+-][\d.]+) \[")
ALLOWED = ("ours", "jobs")
"""What may differ between two runs that pair: our search, and how many deals ran at once."""


class PairError(ValueError):
    """A kept run that cannot be paired: what is wrong, and where."""


@dataclass(frozen=True)
class Run:
    path: str
    config: Config
    margins: dict[int, float]


def read(path: str) -> Run:
    """A kept match run: its command's settings and each deal's margin."""
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise PairError(f"{path}: cannot be read ({error})") from None
    head = lines[0]
    if not head.startswith(f"$ {COMMAND} "):
        raise PairError(f"{path} line 1: not a kept match run (it must begin with "
                        f"'$ {COMMAND} ...')")
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            config = parse(shlex.split(head)[len(COMMAND.split()) + 1:])
    except (SystemExit, ValueError) as error:
        said = errors.getvalue().strip().split("\n")[-1] or str(error)
        raise PairError(f"{path} line 1: the command is refused: {said}") from None
    margins: dict[int, float] = {}
    reported: float | None = None
    for number, line in enumerate(lines[1:], start=2):
        if m := DEAL.fullmatch(line):
            index = int(m.group(1))
            if index in margins:
                raise PairError(f"{path} line {number}: deal {index} again")
            if index >= config.deals:
                raise PairError(f"{path} line {number}: deal {index}, of a run of "
                                f"{config.deals} deals")
            margins[index] = float(m.group(2))
        elif m := REPORTED.match(line):
            reported = float(m.group(1))
        elif line.startswith("deal "):
            raise PairError(f"{path} line {number}: not a deal's line: {line[:80]!r}")
    if len(margins) < config.deals:
        missing = min(set(range(config.deals)) - set(margins))
        raise PairError(f"{path}: {len(margins)} of its {config.deals} deals (deal "
                        f"{missing} is missing): the run was cut short")
    if reported is None:
        raise PairError(f"{path}: no report line ('our margin per deal (paired)'): "
                        "the run was cut short")
    mean = mean_ci(list(margins.values()))[0]
    if f"{mean:+.2f}" != f"{reported:+.2f}":
        raise PairError(f"{path}: its deals' margins average {mean:+.2f}, its report says "
                        f"{reported:+.2f}")
    return Run(path, config, margins)


def pair(a: Run, b: Run) -> list[str]:
    """The report: each run's margin, and A minus B deal by deal."""
    differ = [f.name for f in fields(Config) if f.name not in ALLOWED
              and getattr(a.config, f.name) != getattr(b.config, f.name)]
    if differ:
        raise PairError(f"{a.path} and {b.path} are not runs of the same deals and "
                        f"opponent: they differ in {', '.join(differ)} (only --ours and "
                        "--jobs may)")
    deals = sorted(a.margins)
    diff = [a.margins[i] - b.margins[i] for i in deals]
    mean, low, high = mean_ci(diff)
    more = sum(d > 0 for d in diff)
    less = sum(d < 0 for d in diff)
    c = a.config
    return [
        f"{c.game}: {len(deals)} deals x 2 seatings, seed {c.seed}, {c.think:g} s per move, "
        f"against OpenSpiel {c.opponent} ISMCTS ({c.sampler} sampler)",
        f"  A {a.path}: ours {a.config.ours}, margin per deal "
        f"{mean_ci(list(a.margins.values()))[0]:+.2f}",
        f"  B {b.path}: ours {b.config.ours}, margin per deal "
        f"{mean_ci(list(b.margins.values()))[0]:+.2f}",
        f"  A - B, paired deal by deal: {mean:+.2f} [{low:+.2f}, {high:+.2f}]; "
        f"A's margin larger in {more}, the same in {len(diff) - more - less}, smaller in {less}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or any(arg.startswith("-") for arg in args):
        print("usage: python -m p2pcards.compare.pair A.txt B.txt  (two kept match runs "
              "of the same deals)", file=sys.stderr)
        return 2
    try:
        lines = pair(read(args[0]), read(args[1]))
    except PairError as error:
        print(f"pair: {error}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
