"""The arena runs kept in docs/runs are the ones the docs report.

A measurement of hours keeps its sets in ``docs/runs/NAME.jsonl`` (an arena
``--results`` file), and a doc shows its report as a ``console`` block: a
``$ p2pcards arena ... --results docs/runs/NAME.jsonl`` line and the report that
command prints.  Each block is run here on a copy of its file: since the file
holds every set the command asks for, nothing is played, and the report must be
the block's, figure for figure (the iterations a second included: they are
the file's).  A kept file that no block reports, a file short of its block's
sets, or a report that drifts from its file fails.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from p2pcards.bots.arenalog import FORMAT
from p2pcards.cli.main import main

ROOT = Path(__file__).parent.parent
RUNS = ROOT / "docs" / "runs"
BLOCK = re.compile(r"^```console\n\$ (p2pcards arena [^\n]*)\n(.*?)^```",
                   re.MULTILINE | re.DOTALL)


def reported() -> list[tuple[str, int, list[str], str]]:
    """Every arena report in docs/: (doc, line, command's arguments, report)."""
    found = []
    for doc in sorted((ROOT / "docs").glob("*.md")):
        text = doc.read_text()
        for m in BLOCK.finditer(text):
            found.append((doc.name, text.count("\n", 0, m.start()) + 2,
                          shlex.split(m.group(1))[1:], m.group(2)))
    return found


def _kept(argv: list[str]) -> str:
    assert "--results" in argv, "a reported run names its kept sets with --results"
    return argv[argv.index("--results") + 1]


def test_every_kept_run_is_reported():
    kept = {f"docs/runs/{path.name}" for path in RUNS.glob("*.jsonl")}
    assert kept, "docs/runs keeps the sets of the long measurements"
    shown = {_kept(argv) for _, _, argv, _ in REPORTS}
    assert kept <= shown, f"kept but reported nowhere: {sorted(kept - shown)}"


REPORTS = reported()


@pytest.mark.parametrize("case", REPORTS, ids=[f"{doc}:{line}" for doc, line, _, _ in REPORTS])
def test_a_reported_run_is_what_its_kept_sets_make(case, tmp_path, capsys):
    doc, line, command, text = case
    where, argv = f"{doc} line {line}", list(command)
    source = ROOT / _kept(argv)
    assert source.is_file(), f"{where}: {_kept(argv)} is not kept"
    lines = source.read_text().split("\n")
    assert lines[-1] == "", f"{_kept(argv)} ends part way through a line"
    assert FORMAT in lines[0]
    sets = len(lines) - 2
    asked = int(argv[argv.index("--deals") + 1])
    assert sets >= asked, f"{where}: the report is over {asked} sets, {_kept(argv)} holds {sets}"
    copy = tmp_path / source.name
    shutil.copyfile(source, copy)
    argv[argv.index("--results") + 1] = str(copy)
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out == text, f"{where}: the report is not what {_kept(argv)} makes"
    assert err == f"arena: {asked} of the {asked} sets are in {copy}; 0 to play\n"
    assert copy.read_bytes() == source.read_bytes()  # nothing played, nothing added
