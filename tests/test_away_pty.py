"""Away and back as a person lives it, in a real pseudo-terminal among real processes
(docs/playing.md, "Away and back"): the countdown and the bell before a forfeit, the
prompt that says the person is away and how to come back, nothing said for them
while they stay away, their seat back at the next deal once they type, and their
first move taken.  No peer prints a refusal, a fork or a bad signature."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.test_net_procs import free_port
from tests.test_prompt_pty import ANSI, MOVE, first_legal, spawn, terminal_env

pytestmark = pytest.mark.slow  # real processes in a real pseudo-terminal

GRACE = 14
ALARMS = ("refused a message", "fork", "bad signature", "Traceback", "sequence number")
"""What no honest peer may print because a person stepped away."""


class Peers:
    """A headless host and a headless joiner, bots in their seats, of a three-seat
    Nullern table whose third seat is the person's."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.invite = tmp / "invite"
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def start(self, name: str, args: list[str]) -> None:
        env = dict(os.environ, P2PCARDS_HOME=str(self.tmp / name))
        with (self.tmp / f"{name}.log").open("a") as log:
            self.procs[name] = subprocess.Popen(
                [sys.executable, "-m", "p2pcards", *args, "--bot", "heuristic",
                 "--name", name, "--transcript", str(self.tmp / f"{name}.transcript")],
                env=env, stdout=log, stderr=subprocess.STDOUT, text=True)

    def host(self) -> None:
        self.start("ana", ["host", "nullern", "--players", "3", "--bind", "127.0.0.1",
                           "--port", str(free_port()), "--grace", str(GRACE),
                           "--invite-file", str(self.invite)])
        deadline = time.monotonic() + 30
        while not self.invite.exists():
            assert time.monotonic() < deadline, self.log("ana")
            time.sleep(0.05)

    def log(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text() if path.exists() else ""

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def shown_once(child: pexpect.spawn, seen: Any, text: str, pattern: str) -> str:
    """Everything the terminal has shown, once it holds ``text`` and a match of
    ``pattern`` (reading on for up to 60 s): the screen without its colours."""
    deadline = time.monotonic() + 60
    while True:
        shown = ANSI.sub("", seen.getvalue())
        if text in shown and re.search(pattern, shown):
            return shown
        assert time.monotonic() < deadline, shown[-2000:]
        child.expect([pexpect.TIMEOUT], timeout=0.5)


def test_a_person_who_steps_away_is_warned_stood_in_for_and_comes_back(
        tmp_path: Path) -> None:
    peers = Peers(tmp_path)
    peers.host()
    child, seen = spawn(["join", peers.invite.read_text().strip(), "--name", "pat",
                         "--pace", "0", "--pause", "0"],  # (tests/test_net_polish.py)
                        terminal_env(tmp_path / "pat"), tmp_path)
    try:
        peers.start("cy", ["join", peers.invite.read_text().strip()])
        child.expect(MOVE, timeout=90)  # pat's first move: pat steps away
        child.expect(r"your move: 10 s left, then you forfeit the deal", timeout=30)
        child.expect("you forfeit the deal", timeout=60)
        told = set()  # the away prompt and the stand-in's deal, in either order (the
        while len(told) < 2:  # person is told at the clock's tick after the forfeit,
            told.add(child.expect([re.escape("away (type back)>"), r"deal 2, dealer"],
                                  timeout=120))  # which a loaded machine may make late)
        # (the lines may come a moment after the prompt, which a fast next deal redraws:
        # read on until they have, then look at everything shown)
        shown = shown_once(child, seen, "you were away: a stand-in plays your seat from the"
                                        " next deal", r"you \(pat\) are away: a heuristic bot"
                                                      r" run by \w+ stands in")
        assert "are back" not in shown
        child.sendline("hand")  # its first key: back (and the key typed)
        child.expect("welcome back: your seat is yours again from the next deal")
        child.expect("hand: a stand-in plays your seat this deal")  # (its cards: its own)
        child.expect(r"you \(pat\) are back", timeout=120)
        child.expect(MOVE, timeout=120)
        move = first_legal(child)
        child.expect(MOVE)
        child.sendline(move)
        child.expect(re.escape(f"you: {move}"))  # its first move is taken
        child.expect(MOVE, timeout=120)
        child.sendcontrol("c")
        child.expect(r"Leave the table\? \[y/N\]")
        time.sleep(0.3)
        child.sendcontrol("c")
        child.expect("the same command resumes it", timeout=30)
        child.expect(pexpect.EOF, timeout=30)
    except BaseException:
        for name in ("ana", "cy"):
            print(f"--- {name}'s log, its end:", peers.log(name)[-3000:], sep="\n")
        print("--- the terminal, its end:", ANSI.sub("", seen.getvalue())[-4000:], sep="\n")
        raise
    finally:
        child.close()
        peers.stop()
    terminal = seen.getvalue()
    assert "\a" in terminal  # the bell with the warnings
    for text in (ANSI.sub("", terminal), peers.log("ana"), peers.log("cy")):
        assert not [word for word in ALARMS if word in text], text[-3000:]
    host = peers.log("ana")
    assert "cy forfeits" not in host and "ana forfeits" not in host and "pat forfeits" in host
