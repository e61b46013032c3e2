"""The prompt as a person uses it, in a real pseudo-terminal: Ctrl-C at a local table
(at the prompt and while a bot thinks), bytes of every kind pasted at it, and a
person at a networked table who pastes colour codes, chats, reads the score and
the history, loses the host and gets it back (the hand and table drawn again),
leaves with Ctrl-C, resumes with the same command and finishes the game.  No
output may hold a traceback."""

from __future__ import annotations

import io
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.test_net_procs import free_port

pytestmark = pytest.mark.slow  # real processes in a real pseudo-terminal

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
MOVE = "your move>"
OVER = "type again for another game with the same players"
FIRST_ROW = r"\n\s+(\d+)\s+[+-]\d+ =-?\d+"
"""The score table's first row: its deal's number, its points and the running total."""
SCRIPT = str(Path(sys.executable).with_name("p2pcards"))


def terminal_env(home: Path) -> dict[str, str]:
    return {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1",
            "P2PCARDS_HOME": str(home)}


def spawn(args: list[str], env: dict[str, str], cwd: Path) -> tuple[pexpect.spawn, io.StringIO]:
    child = pexpect.spawn(SCRIPT, args, env=env, dimensions=(50, 200), encoding="utf-8",
                          codec_errors="replace", timeout=60, cwd=str(cwd))  # (what the
    # terminal echoes of bytes typed between prompts, not UTF-8 when the test types so)
    seen = io.StringIO()
    child.logfile_read = seen
    return child, seen


def first_legal(child: pexpect.spawn) -> str:
    """At ``your move>``: what a person does who does not know the moves yet."""
    child.sendline("what now?")
    child.expect(r"legal[a-z ]*: ([^\r\n]+)")
    return ANSI.sub("", child.match.group(1)).split(", ")[0].split(" ...")[0]


def test_ctrl_c_in_a_local_game_asks_and_no_keeps_playing(tmp_path: Path) -> None:
    # A search budget too large to finish: Ctrl-C lands while the bot thinks.
    child, seen = spawn(["play", "pasur", "--players", "2", "--seed", "4", "--pace", "0",
                         "--iterations", "50000000"], terminal_env(tmp_path), tmp_path)
    try:
        child.expect(MOVE)
        child.sendcontrol("c")  # at the prompt: asks
        child.expect(r"Leave the game\? \[y/N\]")
        child.sendline("n")
        child.expect(r"\[y/N\] n")
        child.expect(MOVE)  # the same move is asked again
        move = first_legal(child)
        child.expect(MOVE)
        child.sendline(move)
        child.expect(re.escape(f"you: {move}"))
        time.sleep(0.5)  # the bot is thinking: the terminal is not in the prompt
        child.sendcontrol("c")
        child.expect(r"Leave the game\? \[y/N\]")
        child.sendline("n")  # the bot goes on thinking
        child.expect(r"\[y/N\] n")
        time.sleep(0.5)
        assert child.isalive()
        child.sendcontrol("c")
        child.expect(r"Leave the game\? \[y/N\]")
        time.sleep(0.3)
        child.sendcontrol("c")  # a second Ctrl-C leaves at once
        child.expect("left the game")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in seen.getvalue()


def test_sigterm_at_a_local_prompt_leaves_in_one_line(tmp_path: Path) -> None:
    saved = tmp_path / "x.json"
    child, seen = spawn(["play", "pasur", "--players", "2", "--seed", "4", "--pace", "0",
                         "--iterations", "20", "--save", str(saved)], terminal_env(tmp_path),
                        tmp_path)
    try:
        child.expect(MOVE)
        child.kill(signal.SIGTERM)
        child.expect("no deal was finished: nothing was written")
        child.expect("stopped by SIGTERM")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close()
    assert child.exitstatus == 128 + signal.SIGTERM
    assert "Traceback" not in seen.getvalue() and not saved.exists()


PASTES = (
    b"\x1b[31mred\x1b[0m",  # colour codes, which read as a malformed mouse report
    b"\x1b[5M", b"\x1b[<1;2M", b"\x1b[<99;1;1M",  # malformed mouse reports of each kind
    b"\x1b[M\x7f!!", b"\x1b[M\xff\xff\xff", b"\x1b[12;40R",
    b"\x1b[200~\x1b[31mx\x07\x00y\nz\x1b[201~",  # a bracketed paste of anything
    b"\xff\xfe\xc3(", b"\x00\x01\x02\x7f\x1b\x1b[", b"\x1b[", b"\x1b",
)
"""Bytes pasted at a prompt: none of them may end it."""
FUZZ = bytes(sorted({*range(0x20, 0x7F), 0x00, 0x07, 0x09, 0x1B, 0x7F, *range(0x80, 0x100)}))
"""The bytes of the random pastes: text, escapes and what is not UTF-8 (not the keys
that do something by design: Ctrl-C asks to leave, Ctrl-D leaves, Ctrl-R searches)."""


def test_bytes_pasted_at_a_prompt_leave_it_standing(tmp_path: Path) -> None:
    """Colour codes and malformed mouse reports ended the prompt with prompt-toolkit's
    traceback (its reading of a mouse report raises on them); after every paste here,
    fixed and random, the prompt still answers ``help`` and then takes a move."""
    rng = random.Random(7)
    pastes = [*PASTES, *(bytes(rng.choice(FUZZ) for _ in range(rng.randint(1, 24)))
                         for _ in range(40))]
    child, seen = spawn(["play", "pasur", "--players", "2", "--seed", "4", "--pace", "0"],
                        terminal_env(tmp_path), tmp_path)
    try:
        child.expect(MOVE)
        for paste in pastes:
            os.write(child.child_fd, paste + b"\r\r")  # (the second: a menu Tab opened)
            child.sendline("help")
            child.expect("Type a move, or one of these commands", timeout=20)
            child.expect(MOVE)
        move = first_legal(child)
        child.expect(MOVE)
        child.sendline(move)
        child.expect(re.escape(f"you: {move}"))
        child.sendline("quit")
        child.expect(r"Leave the game\? \[y/N\]")
        child.sendline("y")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close()
    assert child.exitstatus == 0
    output = seen.getvalue()
    for sign in ("Traceback", "Unhandled exception", "Press ENTER to continue"):
        assert sign not in output, output[-3000:]


class Host:
    """A headless host (a bot in its seat) of a two-seat Pasur table, to 60 points: the
    test needs a second deal, and against the bot a player who plays the first legal
    move each turn saw one side score 40 or more in about one deal of 1,000 (never
    more than 49 in some 19,000)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.invite = tmp / "invite"
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        env = dict(os.environ, P2PCARDS_HOME=str(self.tmp / "host"))
        with (self.tmp / "host.log").open("a") as log:  # (the process has its own copy)
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "p2pcards", "host", "pasur", "--players", "2",
                 "--bind", "127.0.0.1", "--port", str(self.port), "--bot", "heuristic",
                 "--seed", "5", "-o", "target=60", "--invite-file", str(self.invite),
                 "--grace", "120", "--save", str(self.tmp / "host.json")],
                env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 30
        while not self.invite.exists():
            assert self.proc.poll() is None and time.monotonic() < deadline, self.log()
            time.sleep(0.05)

    def log(self) -> str:
        return (self.tmp / "host.log").read_text()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def shown(child: pexpect.spawn, pattern: str) -> bool:
    """Whether ``pattern`` has shown on the terminal so far (its colours aside)."""
    seen = child.logfile_read
    return isinstance(seen, io.StringIO) and re.search(pattern, ANSI.sub("", seen.getvalue())
                                                      ) is not None


def play_until(child: pexpect.spawn, pattern: str, moves: int = 400) -> int:
    """Play the first legal move at every turn until ``pattern`` shows; moves made."""
    made = 0
    while True:
        which = child.expect([MOVE, pattern, OVER], timeout=120)
        if which == 1 or shown(child, pattern):  # (or read past by an expect of a move:
            return made  # the table's lines and the prompt's come in either order)
        assert which == 0, f"the game ended before {pattern!r} showed"
        move = first_legal(child)
        child.expect(MOVE)
        child.sendline(move)
        child.expect(re.escape(f"you: {move}"))
        made += 1
        assert made < moves, "the game did not end"


def test_a_person_at_a_networked_table(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    env = terminal_env(tmp_path / "pat")
    args = ["join", host.invite.read_text().strip(), "--name", "pat",
            "--pause", "0", "--pace", "0"]  # (the pause and the pace: test_net_polish.py)
    saved = tmp_path / "pat.json"
    outputs: list[str] = []
    try:
        child, seen = spawn(args, env, tmp_path)
        try:
            child.expect(MOVE, timeout=60)
            child.sendline("say hello from pat")
            child.expect("you: hello from pat")
            for paste in PASTES[:5]:  # (each ended this prompt before)
                os.write(child.child_fd, paste + b"\r")
            os.write(child.child_fd, b"say \x1b[31mred\x1b[0m and \xff\xfeblue\r")
            child.expect("you: red and blue")  # (what shows and what is sent: the text)
            child.sendline("score")
            child.expect("no deal has been scored yet")
            # A whole deal scored, then the score table's first row (a deal the rules
            # void, for the jacks in its opening pool, is told and scores no row)
            play_until(child, FIRST_ROW)
            screen = ANSI.sub("", seen.getvalue())
            first = re.search(FIRST_ROW, screen)
            assert first, screen[-2000:]
            number = int(first.group(1))  # (numbered as "deal N, dealer" told it)
            assert f"deal {number}, dealer" in screen
            assert number == 1 or "jacks in the opening pool" in screen, screen[-2000:]
            child.expect(MOVE)
            move = first_legal(child)
            child.expect(MOVE)
            child.sendline(move)
            child.expect(re.escape(f"you: {move}"))
            child.sendline("history")  # this deal as seen: the move just made
            child.expect(re.escape(f"you: {move}"))
            child.sendline("score")
            child.expect(r"deal\s+\S+\s+you\s")
            host.kill()  # the host is gone, then back with the same command
            child.expect("lost the host", timeout=30)
            host.start()
            child.expect("back at the table", timeout=60)
            child.expect("your hand:")  # drawn again
            child.sendcontrol("c")
            child.expect(r"Leave the table\? \[y/N\]")
            child.sendline("n")
            child.expect("staying at the table")
            child.sendcontrol("c")
            child.expect(r"Leave the table\? \[y/N\]")
            time.sleep(0.3)
            child.sendcontrol("c")  # a second Ctrl-C leaves
            child.expect("the same command resumes it")
            child.expect(pexpect.EOF, timeout=30)
        finally:
            child.close()
            outputs.append(seen.getvalue())
        assert child.exitstatus == 0
        child, seen = spawn(args, env, tmp_path)  # the same command: the game goes on
        try:
            child.expect("resuming", timeout=60)
            play_until(child, OVER)
            child.sendline("quit")  # no other game: the table closes
            child.expect("you left: no more games at this table")
            child.expect(r"or Enter to skip")
            child.sendline(str(tmp_path / "missing" / "x.json"))  # a bad path: asked again
            child.expect("try another file name")
            child.sendline(str(saved))
            child.expect("hand history saved to")
            child.expect(pexpect.EOF, timeout=60)
        finally:
            child.close()
            outputs.append(seen.getvalue())
        assert child.exitstatus == 0, outputs[-1][-2000:]
        assert host.proc is not None and host.proc.wait(60) == 0, host.log()[-2000:]
    except BaseException:  # what each side saw, shown with the failure
        print("--- the host's log, its end:", host.log()[-4000:], sep="\n")
        for output in outputs[-1:]:  # (the terminal of the failing run)
            print("--- the terminal, its end:", ANSI.sub("", output)[-4000:], sep="\n")
        raise
    finally:
        host.kill()
    assert "pat: hello from pat" in host.log() and "pat: red and blue" in host.log()
    for output in outputs:
        assert "Traceback" not in output and "Error" not in output, output[-3000:]
        assert "Unhandled exception" not in output, output[-3000:]
    assert saved.read_bytes() == (tmp_path / "host.json").read_bytes()
