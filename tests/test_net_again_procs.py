"""Another game with the same players, in real processes on loopback: a person hosts
Pasur at a real pseudo-terminal (its turn timer plays the moves), two headless joiners
(``--bot``) take the other seats; at the end the person asks for a game that does not
fit (refused), then ``again``; the second game is played with no new invite, ``score``
shows the match, ``quit`` ends the table for everyone, and both games' hand histories
and transcripts verify, each on its own, the same at every peer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from p2pcards.history import load, replay
from p2pcards.table.verify import verify
from tests.test_net_procs import free_port

pytestmark = pytest.mark.slow  # real processes and a pseudo-terminal: about 15 s

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
OFFER = "type again for another game with the same players"


def test_again_at_a_real_terminal_with_headless_joiners(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("p2pcards")
    invite = tmp_path / "invite"
    env = {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1",
           "P2PCARDS_HOME": str(tmp_path / "ana")}

    def outputs(name: str) -> list[str]:
        return ["--save", str(tmp_path / f"{name}.json"),
                "--transcript", str(tmp_path / f"{name}.bin")]

    host = pexpect.spawn(str(script), [
        "host", "pasur", "--players", "3", "--bind", "127.0.0.1", "--port", str(free_port()),
        "-o", "target=1", "--timer", "0.05", "--name", "ana", "--invite-file", str(invite),
        "--pace", "0", "--pause", "0",  # (the screen's pacing: tests/test_net_polish.py)
        *outputs("ana")], env=env, dimensions=(50, 200), encoding="utf-8", timeout=90,
        cwd=str(tmp_path))
    joiners: list[subprocess.Popen[bytes]] = []
    try:
        deadline = time.monotonic() + 30
        while not invite.exists():
            assert host.isalive() and time.monotonic() < deadline, "no invite"
            time.sleep(0.05)
        for name in ("ben", "cy"):
            with (tmp_path / f"{name}.log").open("w") as log:  # (the process has its own)
                joiners.append(subprocess.Popen(
                    [str(script), "join", invite.read_text().strip(), "--bot", "heuristic",
                     "--name", name, "--seed", "3", *outputs(name)],
                    env={**os.environ, "P2PCARDS_HOME": str(tmp_path / name)},
                    stdout=log, stderr=subprocess.STDOUT))
        host.expect(OFFER)  # the first game is over
        host.sendline("again bidwhist")
        host.expect("again: Bid Whist needs 4 seats; this table has 3")
        host.sendline("again")
        host.expect("you propose another game: Pasur \\(target=1\\)")
        host.expect("game 2: Pasur, the same players")
        host.expect(r"safety number: ([\d ]+) \(compare it aloud\)")
        second_number = host.match.group(1)
        host.expect(OFFER)  # the second game is over
        host.sendline("score")
        host.expect("games won: [^\r\n]+")
        won = ANSI.sub("", host.match.group(0))
        host.sendline("quit")
        host.expect("you left: no more games at this table")
        host.expect(pexpect.EOF)
    finally:
        host.close()
        for proc in joiners:
            if proc.poll() is None:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    assert host.exitstatus == 0
    assert [proc.returncode for proc in joiners] == [0, 0]
    tally = dict(re.findall(r"(\w+) (\d)", won.removeprefix("games won:")))
    assert set(tally) == {"ana", "ben", "cy"}  # (in seat order: the joiners in any)
    assert sum(map(int, tally.values())) == 2  # one winner a game
    for name in ("ben", "cy"):
        log = (tmp_path / f"{name}.log").read_text()
        assert "ana left: no more games at this table" in log
        assert f"safety number: {second_number}" in log and "Traceback" not in log
    tables: set[bytes] = set()
    for suffix in ("", "-2"):
        histories = {(tmp_path / f"{n}{suffix}.json").read_bytes() for n in ("ana", "ben", "cy")}
        assert len(histories) == 1  # byte for byte at every peer
        result = replay(load(str(tmp_path / f"ana{suffix}.json")))
        assert result.complete and result.winner is not None
        transcripts = {(tmp_path / f"{n}{suffix}.bin").read_bytes() for n in ("ana", "ben", "cy")}
        for data in transcripts:  # (each distinct transcript)
            report = verify(data)
            assert report.ok, report.problem
            assert report.history is not None and \
                report.history.dumps().encode() in histories
            tables.add(report.roster.table)
    assert len(tables) == 2  # each game under its own table id
