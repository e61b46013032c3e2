"""End to end in a real pseudo-terminal: the installed console script, a whole game.

The person's moves are found the way a person would: an entry that is no
move makes the REPL list the legal choices, and the first one is played.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from p2pcards.history import load, replay

pytestmark = pytest.mark.slow  # a real pseudo-terminal

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# The prompt's last space is drawn as a cursor move, so the patterns stop at ">".
MOVE, NEXT, SAVE = "your move>", "Enter for the next deal>", "or Enter to skip>"


def test_a_whole_game_in_a_terminal(tmp_path: Path):
    script = Path(sys.executable).with_name("p2pcards")
    env = {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(str(script), ["play", "pasur", "--players", "2", "--bots", "random",
                                        "--seed", "3", "--pace", "0", "--target", "1"],
                          env=env, dimensions=(50, 250), encoding="utf-8", timeout=60,
                          cwd=str(tmp_path))
    saved = tmp_path / "game.json"
    moves = 0
    try:
        child.expect("Pasur")
        while True:
            which = child.expect([MOVE, NEXT, SAVE])
            # After each answer, wait for what it causes: the prompt may be redrawn
            # more than once, and a stale copy must not be taken for the next one.
            if which == 0:
                child.sendline("what now?")
                child.expect(r"legal[a-z ]*: ([^\r\n]+)")
                choices = ANSI.sub("", child.match.group(1)).split(", ")
                move = choices[0].split(" ...")[0]
                child.expect(MOVE)
                child.sendline(move)
                child.expect(re.escape(f"you: {move}"))
                moves += 1
            elif which == 1:
                child.sendline("")
                child.expect(r"deal \d+, dealer")
            else:
                child.sendline(str(saved))
                child.expect("hand history saved to")
                break
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert moves >= 20  # a whole round: 24 cards each
    result = replay(load(str(saved)))
    assert result.complete and result.winner is not None
