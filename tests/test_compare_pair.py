"""Two kept match runs paired deal by deal (p2pcards/compare/pair.py).  Pure Python: no
OpenSpiel is needed to read kept runs, so these run in the default suite."""

from __future__ import annotations

import re
import shlex
import statistics
from pathlib import Path

import pytest

from p2pcards.compare import match, pair

ROOT = Path(__file__).parent.parent
COMMAND = ("$ python -m p2pcards.compare.match hearts --opponent cpp --sampler shipped "
           "--ours {ours} --no-pass --rollouts policy --think 0.2 --deals {deals} "
           "--seed 101 --jobs 1")


def kept(path: Path, margins: list[float], *, ours: str = "search", deals: int | None = None,
         report: float | None = None, command: str = COMMAND, head: str | None = None) -> str:
    """A kept run as the match prints it: its command, a line a deal, then the report (its
    first line what the command prints today, unless ``head`` is given)."""
    lines = [command.format(ours=ours, deals=len(margins) if deals is None else deals)]
    for i, m in enumerate(margins):
        ours_points = (13 - m) / 2
        lines.append(f"deal {i}: ours {ours_points:.1f}, theirs {13 - ours_points:.1f}, "
                     f"margin {m:+.1f}")
    if head is None:
        config = match.parse(shlex.split(lines[0])[4:])
        head = match.header(config, config.deals)
    mean = statistics.fmean(margins) if report is None else report
    lines += [head, f"  our margin per deal (paired): {mean:+.2f} [-9.99, +9.99]", ""]
    path.write_text("\n".join(lines))
    return str(path)


def test_two_runs_of_the_same_deals_pair_deal_by_deal(tmp_path: Path) -> None:
    a = kept(tmp_path / "a.txt", [2.0, -1.0, 0.5, 3.0, 0.0], ours="search:e=8")
    b = kept(tmp_path / "b.txt", [1.0, -1.0, 1.5, -0.5, -2.0], ours="search")
    lines = pair.pair(pair.read(a), pair.read(b))
    # A - B deal by deal: +1, 0, -1, +3.5, +2: mean +1.10, sd 1.7464, t(4) = 2.776
    assert lines[0] == ("hearts, no passing: 5 deals x 2 seatings, seed 101, 0.2 s per move, "
                        "against OpenSpiel cpp ISMCTS (shipped sampler, uct_c 27.3)")
    assert lines[1] == f"  A {a}: ours search:e=8, policy rollouts; margin per deal +0.90"
    assert lines[2] == f"  B {b}: ours search, policy rollouts; margin per deal -0.20"
    assert lines[3] == ("  A - B, paired deal by deal: +1.10 [-1.07, +3.27]; A's margin "
                        "larger in 3, the same in 1, smaller in 1")
    # our side's rollouts may differ too
    random_rollouts = kept(tmp_path / "c.txt", [1.0, -1.0, 1.5, -0.5, -2.0],
                           command=COMMAND.replace("policy", "random"))
    assert pair.pair(pair.read(a), pair.read(random_rollouts))[3] == lines[3]


def refusal(a: str, b: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert pair.main([a, b]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("pair: ") and err.count("\n") == 1, err
    return err


SPADES = ("hearts --opponent cpp --sampler shipped --ours {ours} --no-pass",
          "spades --opponent python --sampler correct --ours {ours}")


@pytest.mark.parametrize(("change", "named"), [
    (("--seed 101", "--seed 102"), "--seed (101 against 102)"),
    (("--deals {deals}", "--deals 3"), "--deals (2 against 3)"),
    (("--opponent cpp", "--opponent python"), "--opponent ('cpp' against 'python')"),
    (("--think 0.2", "--think 0.4"), "--think (0.2 against 0.4)"),
    (("--jobs 1", "--jobs 2"), "--jobs (1 against 2)"),
    (("--seed 101", "--seed 101 --uct-c 2"), "--uct-c (27.3"),
    (SPADES, "the game ('hearts' against 'spades')"),
])
def test_runs_of_other_settings_are_refused_naming_each_difference(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: tuple[str, str],
        named: str) -> None:
    a = kept(tmp_path / "a.txt", [1.0, 2.0])
    b = kept(tmp_path / "b.txt", [1.0, 2.0, 0.0] if "--deals 3" in change else [1.0, 2.0],
             command=COMMAND.replace(*change))
    err = refusal(a, b, capsys)
    assert f"{a} and {b} were not run with the same settings: they differ in " in err
    assert named in err, err
    assert err.endswith("(only our side's --ours, --rollouts and --worlds may differ)\n")


def test_a_cut_short_broken_or_foreign_file_is_refused_by_name_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = kept(tmp_path / "good.txt", [1.0, 2.0, 0.5])

    def refused(name: str, lines: list[str]) -> str:
        path = tmp_path / name
        path.write_text("\n".join(lines))
        return refusal(good, str(path), capsys)

    short = kept(tmp_path / "short.txt", [1.0, 2.0], deals=3)
    assert f"{short}: 2 of its 3 deals (deal 2 is missing)" in refusal(good, short, capsys)
    lying = kept(tmp_path / "lying.txt", [1.0, 2.0, 0.5], report=1.5)
    assert f"{lying}: its deals' margins average +1.17, its report says +1.50" in refusal(
        good, lying, capsys)
    stale = kept(tmp_path / "stale.txt", [1.0, 2.0, 0.5],
                 head=match.header(match.parse(shlex.split(COMMAND.format(
                     ours="search", deals=3))[4:]), 3).replace("uct_c 27.3", "uct_c 2"))
    assert f"{stale} line 5: the report says " in refusal(good, stale, capsys)

    text = Path(good).read_text().split("\n")
    assert "line 4: deal 1 again" in refused("again.txt", [*text[:3], text[2], *text[3:]])
    assert "line 3: deal 7, of a run of 3 deals" in refused(
        "beyond.txt", [*text[:2], text[2].replace("deal 1", "deal 7"), *text[3:]])
    assert "line 2: not a deal's line: 'deal 0: ours \\x1b[2J'" in refused(
        "garbled.txt", [text[0], "deal 0: ours \x1b[2J", *text[2:]])
    assert "line 2: not a deal's line: 'deal 0: ours 1..5, theirs 2, margin +1..0'" in \
        refused("number.txt", [text[0], "deal 0: ours 1..5, theirs 2, margin +1..0", *text[2:]])
    assert "no report (its first line, or 'our margin per deal (paired)')" in refused(
        "unreported.txt", text[:4])
    assert "line 1: not a kept match run" in refused("foreign.txt", ["$ p2pcards arena hearts"])
    assert "line 1: the command is refused: " in refused(
        "refused.txt", [COMMAND.format(ours="search", deals=3).replace(" --no-pass", "")])
    assert "line 1: the command is refused: it asks for help" in refused(
        "help.txt", [COMMAND.format(ours="search", deals=3) + " -h"])
    missing = str(tmp_path / "missing.txt")
    assert f"{missing}: cannot be read" in refusal(good, missing, capsys)
    assert pair.main([good]) == 2
    assert "usage: python -m p2pcards.compare.pair A.txt B.txt" in capsys.readouterr().err


CONSOLE = re.compile(r"^```console\n\$ (python -m p2pcards\.compare\.pair [^\n]*)\n(.*?)^```",
                     re.MULTILINE | re.DOTALL)


def test_the_pairings_the_docs_report_are_what_the_kept_runs_make(
        capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "bots.md").read_text()
    blocks = CONSOLE.findall(text)
    assert len(blocks) == 2, "docs/bots.md pairs the hearts runs with and without e=8"
    for command, report in blocks:
        assert pair.main(command.split()[3:]) == 0, command
        assert capsys.readouterr().out == report, command
