"""Two kept match runs paired deal by deal (p2pcards/compare/pair.py).  Pure Python: no
OpenSpiel is needed to read kept runs, so these run in the default suite."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from p2pcards.compare import pair

ROOT = Path(__file__).parent.parent
COMMAND = ("$ python -m p2pcards.compare.match hearts --opponent cpp --sampler shipped "
           "--ours {ours} --no-pass --rollouts policy --think 0.2 --deals {deals} "
           "--seed 101 --jobs 1")


def kept(path: Path, margins: list[float], *, ours: str = "search", deals: int | None = None,
         report: float | None = None, command: str = COMMAND) -> str:
    """A kept run as the match prints it: its command, a line a deal, then the report."""
    lines = [command.format(ours=ours, deals=len(margins) if deals is None else deals)]
    for i, m in enumerate(margins):
        ours_points = (13 - m) / 2
        lines.append(f"deal {i}: ours {ours_points:.1f}, theirs {13 - ours_points:.1f}, "
                     f"margin {m:+.1f}")
    mean = statistics.fmean(margins) if report is None else report
    lines += ["hearts: ours (...) vs OpenSpiel cpp ISMCTS (...)",
              f"  our margin per deal (paired): {mean:+.2f} [-9.99, +9.99]", ""]
    path.write_text("\n".join(lines))
    return str(path)


def test_two_runs_of_the_same_deals_pair_deal_by_deal(tmp_path: Path) -> None:
    a = kept(tmp_path / "a.txt", [2.0, -1.0, 0.5, 3.0, 0.0], ours="search:e=8")
    b = kept(tmp_path / "b.txt", [1.0, -1.0, 1.5, -0.5, -2.0], ours="search")
    lines = pair.pair(pair.read(a), pair.read(b))
    # A - B deal by deal: +1, 0, -1, +3.5, +2: mean +1.10, sd 1.7464, t(4) = 2.776
    assert lines[0] == ("hearts: 5 deals x 2 seatings, seed 101, 0.2 s per move, against "
                        "OpenSpiel cpp ISMCTS (shipped sampler)")
    assert lines[1] == f"  A {a}: ours search:e=8, margin per deal +0.90"
    assert lines[2] == f"  B {b}: ours search, margin per deal -0.20"
    assert lines[3] == ("  A - B, paired deal by deal: +1.10 [-1.07, +3.27]; A's margin "
                        "larger in 3, the same in 1, smaller in 1")


def refusal(tmp_path: Path, a: str, b: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert pair.main([a, b]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("pair: ") and err.count("\n") == 1, err
    return err


def test_runs_of_other_deals_or_opponents_are_refused_naming_what_differs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = kept(tmp_path / "a.txt", [1.0, 2.0])
    other_seed = kept(tmp_path / "b.txt", [1.0, 2.0],
                      command=COMMAND.replace("--seed 101", "--seed 102"))
    assert "differ in seed (only --ours and --jobs may)" in refusal(tmp_path, a, other_seed,
                                                                    capsys)
    other_bot = kept(tmp_path / "c.txt", [1.0, 2.0],
                     command=COMMAND.replace("--opponent cpp", "--opponent python"))
    assert "differ in opponent" in refusal(tmp_path, a, other_bot, capsys)
    more_jobs = kept(tmp_path / "d.txt", [0.0, 2.0],
                     command=COMMAND.replace("--jobs 1", "--jobs 2"))
    assert pair.main([a, more_jobs]) == 0
    assert "A - B, paired deal by deal: +0.50" in capsys.readouterr().out


def test_a_cut_short_broken_or_foreign_file_is_refused_by_name_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = kept(tmp_path / "good.txt", [1.0, 2.0, 0.5])
    short = kept(tmp_path / "short.txt", [1.0, 2.0], deals=3)
    assert f"{short}: 2 of its 3 deals (deal 2 is missing)" in refusal(tmp_path, good, short,
                                                                       capsys)
    lying = kept(tmp_path / "lying.txt", [1.0, 2.0, 0.5], report=1.5)
    assert f"{lying}: its deals' margins average +1.17, its report says +1.50" in refusal(
        tmp_path, good, lying, capsys)

    text = Path(good).read_text().split("\n")
    again = tmp_path / "again.txt"
    again.write_text("\n".join([*text[:3], text[2], *text[3:]]))
    assert f"{again} line 4: deal 1 again" in refusal(tmp_path, good, str(again), capsys)
    garbled = tmp_path / "garbled.txt"
    garbled.write_text("\n".join([text[0], "deal 0: ours \x1b[2J", *text[2:]]))
    err = refusal(tmp_path, good, str(garbled), capsys)
    assert f"{garbled} line 2: not a deal's line: 'deal 0: ours \\x1b[2J'" in err
    foreign = tmp_path / "foreign.txt"
    foreign.write_text("$ p2pcards arena hearts\n")
    assert f"{foreign} line 1: not a kept match run" in refusal(tmp_path, good, str(foreign),
                                                                capsys)
    refused = kept(tmp_path / "refused.txt", [1.0], command=COMMAND.replace(" --no-pass", ""))
    assert f"{refused} line 1: the command is refused: " in refusal(tmp_path, good, refused,
                                                                   capsys)
    missing = str(tmp_path / "missing.txt")
    assert f"{missing}: cannot be read" in refusal(tmp_path, good, missing, capsys)
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
