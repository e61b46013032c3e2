"""A local game kept as it goes: a person who leaves mid-deal (Ctrl-D, quit) finds the
game where it stopped; a kept file that cannot be resumed is said and set aside."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from p2pcards.cli import localsave, repl
from tests.test_prompt_pty import MOVE, first_legal, spawn, terminal_env
from tests.test_repl import player, seated


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("P2PCARDS_HOME", str(tmp_path))
    return tmp_path


def leave_after(moves: int, rng: random.Random) -> repl.Answer:
    """Plays ``moves`` of the person's moves, then leaves as Ctrl-D does."""
    played = [0]
    plays = player(rng)

    def answer(r: repl.Repl, message: str) -> str | None:
        if message.startswith("your move"):
            played[0] += 1
            if played[0] > moves:
                r.session.app.input.send_text("\x04")  # Ctrl-D
                return None
        return plays(r, message)

    return answer


@pytest.mark.parametrize(("game", "players", "moves"), [
    ("bidwhist", 4, 5), ("pasur", 2, 14), ("nullern", 4, 9), ("controlnut", 4, 6)])
def test_a_game_left_mid_deal_resumes_where_it_stopped(home: Path, game: str, players: int,
                                                       moves: int) -> None:
    path = localsave.path_for(game)
    with seated(game, leave_after(moves, random.Random(2)), players=players,
                options={"target": 1} if game != "nullern" else {}) as r:
        r.keeper = localsave.Keeper(path, r.seat, ["heuristic" if s != r.seat else None
                                                   for s in range(players)])
        r.resume_hint = f"p2pcards play {game}"
        assert repl.play(r) == 0
        state, totals = r.table.state, list(r.table.totals)
    assert r.transcript[-1] == f"left the game; p2pcards play {game} resumes it"
    saved = localsave.read(path)
    assert saved.seat == 0 and saved.bots[0] is None
    table = saved.table(seed=99)
    assert state is not None and table.state is not None
    assert table.state.view(0).legal_actions() == state.view(0).legal_actions()
    assert table.state.may == state.may and table.totals == totals
    assert table.history.dumps() == r.table.history.dumps()
    assert "under way" in saved.describe()


def test_a_game_played_to_its_end_leaves_nothing_to_resume(home: Path) -> None:
    path = localsave.path_for("pasur")
    with seated("pasur", player(random.Random(3)), players=2, options={"target": 1}) as r:
        r.keeper = localsave.Keeper(path, 0, [None, "heuristic"])
        repl.play(r)
    assert r.table.winner is not None and not path.exists()


def test_choose_asks_and_sets_aside_what_it_does_not_resume(home: Path) -> None:
    path = localsave.path_for("pasur")
    said: list[str] = []
    with seated("pasur", leave_after(3, random.Random(4)), players=2,
                options={"target": 1}) as r:
        r.keeper = localsave.Keeper(path, 0, [None, "heuristic"])
        repl.play(r)
    asked: list[str] = []

    def answering(reply: str):  # type: ignore[no-untyped-def]
        def ask(question: str) -> str:
            asked.append(question)
            return reply
        return ask

    kept = localsave.choose("pasur", answering(""), say=said.append)
    assert kept is not None and "Resume it? [Y/n]" in asked[-1] and path.exists()

    def no_terminal(question: str) -> str:
        raise EOFError

    with pytest.raises(localsave.Unanswered, match=r"--resume .* --new"):
        localsave.choose("pasur", no_terminal, say=said.append)
    assert localsave.choose("pasur", no_terminal, resume=True, say=said.append) is not None
    assert localsave.choose("pasur", answering("n"), say=said.append) is None
    assert not path.exists() and path.with_name("pasur.json.old").exists()
    assert "set aside" in said[-1]


@pytest.mark.parametrize(("damage", "why"), [
    (lambda doc: "{not json", "not a kept game"),
    (lambda doc: json.dumps({**doc, "kind": "other"}), "not a kept game of this version"),
    (lambda doc: json.dumps({**doc, "seat": 7}), "'seat' is not a seat"),
    (lambda doc: json.dumps({**doc, "bots": ["x", "y"]}), "'bots' does not name"),
    (lambda doc: json.dumps({**doc, "bots": [None, "nonsense"]}), "unknown bot 'nonsense'"),
    (lambda doc: json.dumps({**doc, "history": {**doc["history"], "hands": [
        {**doc["history"]["hands"][0], "public": True}]}}), "do not replay"),
    (lambda doc: json.dumps({**doc, "history": {**doc["history"], "hands": [
        {**doc["history"]["hands"][0], "actions": [[1, "play AS"]]}]}}), "do not replay"),
])
def test_a_damaged_kept_game_is_named_and_set_aside_and_a_new_game_begins(
        home: Path, damage, why: str) -> None:  # type: ignore[no-untyped-def]
    path = localsave.path_for("pasur")
    with seated("pasur", leave_after(2, random.Random(5)), players=2,
                options={"target": 1}) as r:
        r.keeper = localsave.Keeper(path, 0, [None, "heuristic"])
        repl.play(r)
    path.write_text(damage(json.loads(path.read_text())))
    with pytest.raises(localsave.SavedGameError, match=why):
        localsave.read(path)
    said: list[str] = []
    assert localsave.choose("pasur", lambda q: "", say=said.append) is None
    assert len(said) == 1 and str(path) in said[0] and why in said[0]
    assert "\n" not in said[0] and path.with_name("pasur.json.unreadable").exists()
    path.write_text("{not json")  # a second one: the first stays where it was put
    assert localsave.choose("pasur", lambda q: "", say=said.append) is None
    assert path.with_name("pasur.json.unreadable.2").exists()


def test_a_kept_game_of_another_game_is_not_resumed_as_this_one(home: Path) -> None:
    with seated("bidwhist", leave_after(2, random.Random(6)), options={"target": 1}) as r:
        r.keeper = localsave.Keeper(localsave.path_for("bidwhist"), 0,
                                    [None, "heuristic", "heuristic", "heuristic"])
        repl.play(r)
    localsave.path_for("bidwhist").rename(localsave.path_for("pasur"))
    with pytest.raises(localsave.SavedGameError, match="a game of bidwhist, not pasur"):
        localsave.read(localsave.path_for("pasur"))


def test_resume_with_nothing_kept_says_so(home: Path) -> None:
    said: list[str] = []
    assert localsave.choose("pasur", lambda q: "", resume=True, say=said.append) is None
    assert said == [f"no unfinished game of pasur is kept ({localsave.path_for('pasur')}):"
                    " a new game begins"]


@pytest.mark.slow
def test_ctrl_d_in_a_real_terminal_loses_nothing_and_the_same_command_resumes(
        tmp_path: Path) -> None:
    """In a pseudo-terminal: a move, Ctrl-D (the game kept, the way back said), the same
    command (asks; Enter resumes the deal where it stopped: the same hand less the card
    played), Ctrl-C at the question (the shell's line not glued to ``^C``), and no
    terminal at all (one line saying what to add, status 2)."""
    env = terminal_env(tmp_path)
    args = ["play", "pasur", "--players", "2", "--seed", "4", "--pace", "0",
            "--iterations", "20"]
    child, seen = spawn(args, env, tmp_path)
    try:
        child.expect(MOVE)
        move = first_legal(child)
        child.expect(MOVE)
        child.sendline(move)
        child.expect(r"your hand: ([^\r\n]+)")
        hand = child.match.group(1).strip()
        child.expect(MOVE)
        child.sendcontrol("d")
        child.expect("left the game; p2pcards play pasur resumes it")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close()
    assert child.exitstatus == 0
    child, seen2 = spawn(args, env, tmp_path)
    try:
        child.expect(r"an unfinished game: Pasur, deal 1 under way: .*Resume it\? \[Y/n\] ")
        child.sendline("")
        child.expect("deal 1 resumes where it stopped")
        child.expect(r"your hand: ([^\r\n]+)")
        assert child.match.group(1).strip() == hand
        child.expect(MOVE)
        child.sendline("quit")
        child.expect(r"Leave the game\? \[y/N\]")
        child.sendline("y")
        child.expect("resumes it")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close()
    child, seen3 = spawn(args, env, tmp_path)
    try:
        child.expect(r"Resume it\? \[Y/n\] ")
        child.sendcontrol("c")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close()
    assert child.exitstatus == 130
    assert "^C" in seen3.getvalue() and "\n" in seen3.getvalue().split("^C")[-1]
    for output in (seen, seen2, seen3):
        assert "Traceback" not in output.getvalue()
    piped = subprocess.run([sys.executable, "-m", "p2pcards", *args], env=env, cwd=tmp_path,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                           check=False)
    assert piped.returncode == 2 and piped.stdout == ""
    assert piped.stderr.count("\n") == 1 and "--resume" in piped.stderr and "--new" in piped.stderr
    assert (tmp_path / "local" / "pasur.json").exists()  # (nothing was lost on the way)
