"""Two kept match runs over the same deals, paired deal by deal (pure Python).

    python -m p2pcards.compare.pair A.txt B.txt

Each file is a match's output kept with its command: a first line ``$ python -m
p2pcards.compare.match ...``, then the match's lines (a ``deal I: ...`` line for each
deal, then the report).  Two runs with the same game, deals, seed, opponent (bot,
sampler, exploration constant), passing and time per move deal the same cards and
seed the opponent alike; they may differ in our side only (``--ours``, ``--rollouts``,
``--worlds``).  The difference of their margins, deal by deal, then says what our
change did with the deals' own spread taken out.  (Runs of one command on other days
pair too: they differ in where each time-budgeted search stopped.)

Each file is checked against itself: its command must be one the match takes, its
report's first line must be what that command prints today (so a default that has
changed since, such as OpenSpiel's exploration constant, is caught), it must hold
every deal once, and its deals' margins must average to its report's margin.  The
report gives each run's margin and the paired difference A minus B with its 95%
interval, by the match's own statistics (:func:`p2pcards.compare.tally.mean_ci`:
Student's t up to 30 degrees of freedom, 1.96 beyond).  A file that fails a check is
refused, naming the file, the line and what is wrong.
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

from .match import Config, header, parse
from .tally import mean_ci

COMMAND = "python -m p2pcards.compare.match"
NUMBER = r"[+-]?\d{1,6}(?:\.\d{1,6})?"
DEAL = re.compile(rf"deal (\d{{1,9}}): ours {NUMBER}, theirs {NUMBER}, margin ({NUMBER})")
REPORTED = re.compile(rf"  our margin per deal \(paired\): ({NUMBER}) \[")
OURS = ("ours", "rollouts", "worlds")
"""What may differ between two runs that pair: our side's settings."""
ROUNDING = 0.05 + 1e-9
"""How far the mean of the deal lines (margins printed to a tenth) may be from the
report's (of the exact margins).  Hearts' and spades' margins are multiples of a half,
so today the two agree to the hundredth; the allowance keeps a finer margin honest."""


class PairError(ValueError):
    """A kept run that cannot be paired: what is wrong, and where."""


@dataclass(frozen=True)
class Run:
    path: str
    config: Config
    margins: dict[int, float]


def _command(path: str, head: str) -> Config:
    if not head.startswith(f"$ {COMMAND} "):
        raise PairError(f"{path} line 1: not a kept match run (it must begin with "
                        f"'$ {COMMAND} ...')")
    try:
        argv = shlex.split(head)[len(COMMAND.split()) + 1:]
    except ValueError as error:
        raise PairError(f"{path} line 1: the command cannot be read ({error})") from None
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            return parse(argv)
    except SystemExit as stop:
        why = said.getvalue().strip().split("\n")[-1] if stop.code else "it asks for help"
        raise PairError(f"{path} line 1: the command is refused: {why[:200]}") from None


def read(path: str) -> Run:
    """A kept match run: its command's settings and each deal's margin."""
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise PairError(f"{path}: cannot be read ({error})") from None
    config = _command(path, lines[0])
    margins: dict[int, float] = {}
    reported: float | None = None
    headed = False
    expected = header(config, config.deals)
    for number, line in enumerate(lines[1:], start=2):
        if m := DEAL.fullmatch(line):
            index = int(m.group(1))
            if index in margins:
                raise PairError(f"{path} line {number}: deal {index} again")
            if index >= config.deals:
                raise PairError(f"{path} line {number}: deal {index}, of a run of "
                                f"{config.deals} deals")
            margins[index] = float(m.group(2))
        elif line.startswith("deal "):
            raise PairError(f"{path} line {number}: not a deal's line: {line[:80]!r}")
        elif line.startswith(f"{config.game}: ours ("):
            if line != expected:
                raise PairError(f"{path} line {number}: the report says {line[:300]!r}, "
                                f"its command today says {expected!r}")
            headed = True
        elif m := REPORTED.match(line):
            reported = float(m.group(1))
    if len(margins) < config.deals:
        missing = min(set(range(config.deals)) - set(margins))
        raise PairError(f"{path}: {len(margins)} of its {config.deals} deals (deal "
                        f"{missing} is missing): the run was cut short")
    if not headed or reported is None:
        raise PairError(f"{path}: no report (its first line, or 'our margin per deal "
                        "(paired)'): the run was cut short")
    mean = mean_ci(list(margins.values()))[0]
    if abs(mean - reported) > ROUNDING:
        raise PairError(f"{path}: its deals' margins average {mean:+.2f}, its report says "
                        f"{reported:+.2f}")
    return Run(path, config, margins)


def _flag(name: str) -> str:
    return "the game" if name == "game" else "--" + name.replace("_", "-")


def _value(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else repr(value)


def pair(a: Run, b: Run) -> list[str]:
    """The report: each run's margin, and A minus B deal by deal."""
    differ = [f"{_flag(f.name)} ({_value(getattr(a.config, f.name))} against "
              f"{_value(getattr(b.config, f.name))})" for f in fields(Config)
              if f.name not in OURS and getattr(a.config, f.name) != getattr(b.config, f.name)]
    if differ:
        raise PairError(f"{a.path} and {b.path} were not run with the same settings: they "
                        f"differ in {', '.join(differ)} (only our side's --ours, --rollouts "
                        "and --worlds may differ)")
    deals = sorted(a.margins)
    diff = [a.margins[i] - b.margins[i] for i in deals]
    mean, low, high = mean_ci(diff)
    more = sum(d > 0 for d in diff)
    less = sum(d < 0 for d in diff)
    c = a.config

    def side(name: str, run: Run) -> str:
        worlds = "" if run.config.worlds == "native" else f", {run.config.worlds} worlds"
        return (f"  {name} {run.path}: ours {run.config.ours}, {run.config.rollouts} "
                f"rollouts{worlds}; margin per deal "
                f"{mean_ci(list(run.margins.values()))[0]:+.2f}")

    return [
        f"{c.game}{', no passing' if c.no_pass else ''}: {len(deals)} deals x 2 seatings, "
        f"seed {c.seed}, {c.think:g} s per move, against OpenSpiel {c.opponent} ISMCTS "
        f"({c.sampler} sampler, uct_c {c.uct_c:g})",
        side("A", a),
        side("B", b),
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
