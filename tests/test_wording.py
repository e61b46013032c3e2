"""How the program's lines read: the narration to "you", and the command line's words."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.cli import wording
from p2pcards.cli.main import main
from p2pcards.games import get_game
from p2pcards.local import LocalGame
from p2pcards.table.memory import MemoryTable
from p2pcards.table.verify import format_report, verify


def narrated(game_name: str, players: int, seeds: range) -> list[str]:
    """Every line of a few deals at tables where one seat is "you", as narrated."""
    game = get_game(game_name)
    lines: list[str] = []
    for seed in seeds:
        names = ["you" if s == seed % players else f"bot{s}" for s in range(players)]
        table = LocalGame(game, players, {}, seed, names=names)
        rng = random.Random(seed)
        for _ in range(3):
            out = table.start_deal()
            state = table.state
            assert state is not None
            while not state.is_terminal():
                mover = state.current_player()
                out += table.act_chance(observer=0) if mover < 0 else \
                    table.act(mover, heuristic_bot(state.view(mover), rng), observer=0)
            out += table.end_deal()
            lines += [wording.narration(line, game.notation) for line in out]
            if table.winner is not None:
                break
    return lines


@pytest.mark.parametrize(("game", "players", "sentence"), [
    ("bidwhist", 4, r"you win the bid with \d \w+ and take the kitty$"),
    ("nullern", 4, r"; you lead$"),
    ("pasur", 3, r"you (clear the pool|take the \d+ cards? left)"),
    ("controlnut", 4, r"you win the trick"),
])
def test_the_narration_speaks_to_you_in_every_game(game: str, players: int,
                                                   sentence: str) -> None:
    lines = narrated(game, players, range(8))
    assert any(re.search(sentence, line) for line in lines)
    third_person = re.compile(r"\byou (?!&)[a-z]+s\b|\byou win\b.* and takes\b")
    wrong = [line for line in lines if third_person.search(line)]
    assert wrong == []
    assert not [line for line in lines if re.search(r"\b1 (tricks|cards)\b", line)]


def test_control_nut_added_tricks_follow_the_trick_count_they_add_to() -> None:
    lines = narrated("controlnut", 4, range(12))
    found = 0
    for i, line in enumerate(lines):
        m = re.search(r"it adds (\d+) tricks? \(tricks (\d+)-(\d+)\)", line)
        if not m:
            continue
        before = re.search(r"wins? the trick \(tricks (\d+)-(\d+)\)", lines[i - 1])
        assert before is not None, lines[i - 1]
        added = int(m.group(1))
        was = (int(before.group(1)), int(before.group(2)))
        now = (int(m.group(2)), int(m.group(3)))
        assert sum(now) - sum(was) == added and added >= 1
        found += 1
    assert found


def test_refusals_name_seats_and_the_person() -> None:
    names = ["you", "ben", "cy", "dee"]
    assert wording.speak("seat 0 does not hold AS", names) == "you do not hold A♠"
    assert wording.speak("seat 2 does not hold TH", names) == "cy does not hold 10♥"
    assert wording.speak("out of turn: it is seat 1's turn, not seat 0's", names) \
        == "out of turn: it is ben's turn, not yours"
    assert wording.speak("TH is in seat 0's hand", names) == "10♥ is in your hand"
    assert wording.speak("seat 0 has a legal bid and must bid", names) \
        == "you have a legal bid and must bid"
    assert wording.unseen_runs("stock " + " ".join("?" * 9)) == "stock (9 unseen)"


def test_p2pcards_alone_prints_its_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "play" in out and "replay" in out and "host" in out and "--help" in out


def test_version_and_help_texts() -> None:
    script = Path(sys.executable).with_name("p2pcards")
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True,
                             check=True)
    assert re.fullmatch(r"p2pcards \d+\.\d+\.\d+\S*\n", version.stdout)
    arena = subprocess.run([str(script), "arena", "--help"], capture_output=True, text=True,
                           check=True)
    assert "95% confidence" in arena.stdout and "%%" not in arena.stdout
    host = subprocess.run([str(script), "host", "--help"], capture_output=True, text=True,
                          check=True)
    assert re.search(r"--bots-kind KIND\s+the kind of the --bots", host.stdout)
    words = " ".join(host.stdout.split())
    assert "--deck {proved,lock} the deck every deal uses: proved" in words
    assert "the default) or lock (the older commit-reveal deck" in words


def test_replay_names_a_bad_file_once(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "garbage.json"
    bad.write_bytes(b"\xff\xfe not text")
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("garbage.json") == 1 and "not UTF-8" in err


def test_verify_names_the_winner() -> None:
    table = MemoryTable("bidwhist", 4, 21, [heuristic_bot] * 4)
    table.play()
    report = verify(table.sessions[0].export())
    text = format_report(report)
    assert "None" not in text and "[" not in text
    assert re.search(r"^totals \d+ \d+; winner: team \d \(seat\d & seat\d\)$", text, re.M)
    report.winner = None
    assert "; the game is not over" in format_report(report)
