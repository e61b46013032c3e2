"""The command line as a person meets it: the rules shipped with the package and shown in
the terminal, games named in any case, one-line usage errors, the help's bots and
decks, ``play --auto``'s --think, --pace and Pasur's pool, and names (never seat
numbers or Python lists) in what ``play``, ``table``, ``verify`` and ``replay`` print."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pexpect
import pytest

from p2pcards import local
from p2pcards.cli import main as cli
from p2pcards.cli import playcmd
from p2pcards.cli.helptext import full_rules, plain, rules_pages, sections
from p2pcards.games import GAMES

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = str(Path(sys.executable).with_name("p2pcards"))
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
EXPERIMENTAL = ("ismcts-full", "ismcts-mo", "ismcts-own", "ismcts-backoff")


def p2pcards(*argv: str, home: Path, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """The installed command, as a shell runs it (no terminal)."""
    return subprocess.run([SCRIPT, *argv], capture_output=True, text=True, timeout=240,
                          env={**os.environ, "P2PCARDS_HOME": str(home), **(env or {})},
                          check=False)


def one_line_refusal(done: subprocess.CompletedProcess[str]) -> str:
    """A usage error: status 2, nothing on stdout, one line on stderr, no traceback."""
    assert done.returncode == 2, done
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and "usage:" not in done.stderr
    return lines[0]


# ------------------------------------------------------------------- the rules


def test_every_page_of_the_rules_is_a_resource_of_the_package() -> None:
    pages = rules_pages()
    assert pages == [*sorted(GAMES), "common"]
    for page in pages:
        resource = resources.files("p2pcards").joinpath("rules", f"{page}.md")
        assert resource.is_file(), page
        text = resource.read_text("utf-8")
        assert text == full_rules(page) and text.startswith("# ")
        assert sections(text), page  # (help rules full lists them)
    assert not (ROOT / "docs" / "rules").exists()  # (one copy, in the package)


def test_the_build_ships_the_rules_in_the_wheel() -> None:
    """What pip wheel puts in the wheel (checked by hand: p2pcards/rules/*.md) follows
    from these two settings."""
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    assert "p2pcards.rules" in setup["packages"]
    assert setup["package-data"]["p2pcards.rules"] == ["*.md"]


def test_plain_text_drops_the_markdown() -> None:
    text = plain("# Title\n\nSee [the deal](common.md#deal) and **`AS`**.\n\n"
                 "| a | bb |\n| --- | --- |\n| ccc | d |\n")
    assert text == "Title\n=====\n\nSee the deal and AS.\n\na    bb\nccc  d\n"


def test_rules_command_prints_the_rules_as_text_when_piped(tmp_path: Path) -> None:
    done = p2pcards("rules", "Pasur", home=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("Pasur\n=====\n")
    assert "Rulings\n-------\n" in done.stdout and "](" not in done.stdout
    listed = p2pcards("rules", home=tmp_path)
    assert listed.returncode == 0
    assert all(page in listed.stdout for page in rules_pages())
    assert p2pcards("rules", "common", home=tmp_path).stdout.startswith("Rules common")
    line = one_line_refusal(p2pcards("rules", "poker", home=tmp_path))
    assert "'poker'" in line and "common" in line


@pytest.mark.slow
def test_rules_command_pages_in_a_terminal(tmp_path: Path) -> None:
    env = {**os.environ, "TERM": "xterm", "PAGER": "sed s/^/paged:/",
           "P2PCARDS_HOME": str(tmp_path)}
    child = pexpect.spawn(SCRIPT, ["rules", "nullern"], env=env, encoding="utf-8",
                          timeout=60, dimensions=(30, 100))
    child.expect(pexpect.EOF)
    child.close()
    lines = [line for line in child.before.splitlines() if line.strip()]
    assert child.exitstatus == 0
    assert lines[0] == "paged:Nullern" and all(line.startswith("paged:") for line in lines)


@pytest.mark.slow
def test_help_rules_at_the_prompt_in_brief_then_by_section(tmp_path: Path) -> None:
    env = {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1",
           "P2PCARDS_HOME": str(tmp_path)}
    child = pexpect.spawn(SCRIPT, ["play", "PASUR", "--players", "2", "--seed", "4", "--pace",
                                   "0", "--bots", "random"],
                          env=env, dimensions=(50, 200), encoding="utf-8", timeout=60,
                          cwd=str(tmp_path))
    try:
        child.expect("your move>")
        child.sendline("help rules")
        child.expect(r"Full rules: help rules full")
        assert "docs/rules" not in child.before
        child.expect("your move>")
        child.sendline("help rules full")
        child.expect(r"The full rules of Pasur, by section:")
        child.expect(r"(\d+)  Scoring")
        number = child.match.group(1)
        child.expect("your move>")
        child.sendline(f"help rules {number}")
        child.expect(r"Scoring\s+-------")
        child.expect(r"\(next: help rules \d+, End of game\)")
        child.expect("your move>")
        child.sendline("help rules surs")
        child.expect(r"Surs\s+----")
        child.expect(r"\(next: help rules \d+, End of a round\)")
        child.expect("your move>")
        child.sendline("quit")
        child.expect(r"\[y/N\]")
        child.sendline("y")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert "Traceback" not in ANSI.sub("", child.before or "")


# ---------------------------------------------------------- naming a game, errors


def test_a_game_is_named_in_any_case_or_by_its_beginning(tmp_path: Path) -> None:
    for word, title in (("Pasur", "Pasur"), ("BID", "Bid Whist"), ("Bid Whist", "Bid Whist"),
                        ("n", "Nullern")):
        assert cli.game_word(word) in GAMES
        assert GAMES[cli.game_word(word)].title == title
    done = p2pcards("play", "Pasur", "--auto", "--quiet", "--seed", "1", "--players", "2",
                    home=tmp_path)
    assert done.returncode == 0 and "winner: " in done.stdout
    done = p2pcards("arena", "PAS", "--players", "random,random", "--games", "1",
                    home=tmp_path)
    assert done.returncode == 0, done.stderr


def test_an_unknown_game_is_one_line_naming_the_word_and_the_games(tmp_path: Path) -> None:
    for argv in (("play", "poker"), ("table", "Poker"), ("host", "poker"),
                 ("arena", "poker", "--players", "random,random")):
        line = one_line_refusal(p2pcards(*argv, home=tmp_path))
        assert line.startswith(f"p2pcards {argv[0]}: unknown game '{argv[1]}'"), line
        assert all(name in line for name in GAMES)
    line = one_line_refusal(p2pcards("bench", "net", "--games", "pasur,poker", home=tmp_path))
    assert "'poker'" in line and "pasur" in line


def test_any_usage_error_is_one_line(tmp_path: Path) -> None:
    line = one_line_refusal(p2pcards("play", "pasur", "--seat", "x", home=tmp_path))
    assert line.startswith("p2pcards play: argument --seat:") and "--help" in line
    one_line_refusal(p2pcards("play", home=tmp_path))


def test_a_turn_timer_must_be_positive(tmp_path: Path) -> None:
    for value in ("0", "-2", "nan", "soon"):
        line = one_line_refusal(p2pcards("host", "pasur", f"--timer={value}", home=tmp_path))
        assert line.startswith("p2pcards host: argument --timer:"), line
    assert not (tmp_path / "tables").exists()  # (refused before any table opened)


# ----------------------------------------------------------------------- the help


def test_the_help_offers_the_everyday_bots_and_describes_the_decks(tmp_path: Path) -> None:
    play = p2pcards("play", "--help", home=tmp_path).stdout
    assert "{ismcts,heuristic,random,pimc}" in play
    assert not any(name in play for name in EXPERIMENTAL)
    assert not any(name in p2pcards("arena", "--help", home=tmp_path).stdout
                   for name in EXPERIMENTAL)
    table = " ".join(p2pcards("table", "--help", home=tmp_path).stdout.split())
    assert "--seed SEED seed of the seats' keys" in table
    host = " ".join(p2pcards("host", "--help", home=tmp_path).stdout.split())
    for text in (table, host):
        assert "commit-reveal" in text and "today" not in text
    bots = (ROOT / "docs" / "bots.md").read_text("utf-8")
    assert all(f"| `{name}` |" in bots for name in EXPERIMENTAL)
    # the experimental searches are still accepted
    done = p2pcards("play", "pasur", "--players", "2", "--auto", "--quiet", "--seed", "3",
                    "--bots", "ismcts-own", "--iterations", "3", home=tmp_path)
    assert done.returncode == 0, done.stderr
    line = one_line_refusal(p2pcards("play", "pasur", "--bots", "smart", home=tmp_path))
    assert "'smart'" in line and "ismcts, heuristic, random, pimc" in line


def test_the_readme_gives_control_nuts_default_target() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    default = GAMES["controlnut"].options["target"].default
    assert "--target 500" not in readme and f"{default} by default" in readme


# ------------------------------------------------------------------ play --auto


def test_auto_thinks_for_the_time_given(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    made: list[tuple[object, ...]] = []
    make_bot = playcmd.make_bot

    def recording(kind: str, iterations: int | None = None, think: float | None = None,
                  workers: int = 1) -> object:
        made.append((kind, iterations, think))
        return make_bot("random")

    monkeypatch.setattr(playcmd, "make_bot", recording)
    assert cli.main(["play", "pasur", "--auto", "--quiet", "--seed", "1", "--players", "2",
                     "--bots", "ismcts", "--think", "0.25"]) == 0
    assert cli.main(["play", "pasur", "--auto", "--quiet", "--seed", "1", "--players", "2",
                     "--bots", "ismcts"]) == 0
    assert made == [("ismcts", None, 0.25), ("ismcts", 200, None)]
    capsys.readouterr()


def test_auto_pauses_pace_seconds_before_each_play_printed(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Each play printed comes --pace seconds after the one before (the pauses counted,
    not timed); with --quiet nothing is printed, so nothing waits."""
    slept: list[float] = []
    monkeypatch.setattr(local.time, "sleep", slept.append)
    argv = ["play", "bidwhist", "--auto", "--target", "1", "--seed", "1"]
    assert cli.main([*argv, "--pace", "0.05"]) == 0
    plays = [line for line in capsys.readouterr().out.splitlines()
             if re.match(r"  [a-z]+: (pass|bid|trump|play|discard|direction)", line)]
    assert len(plays) > 40 and slept == [0.05] * len(plays)
    slept.clear()
    assert cli.main([*argv, "--pace", "5", "--quiet"]) == 0
    assert slept == []  # (--quiet: no plays, no pauses)
    capsys.readouterr()


def test_auto_pasur_shows_the_pool_each_play_leaves(tmp_path: Path) -> None:
    done = p2pcards("play", "pasur", "--auto", "--players", "2", "--seed", "1", home=tmp_path)
    assert done.returncode == 0
    pool: set[str] | None = None
    checked, last = 0, ""
    for line in done.stdout.splitlines():
        if line.startswith("deal "):
            pool = None
        opening = re.fullmatch(r"  pool: (.*)", line)
        if opening:
            pool = set(opening.group(1).split())
            assert len(pool) == 4
            continue
        play = re.fullmatch(r"  [a-z]+: play (\S+)(?: take ([^;]+))?(?:; pool (.*))?", line)
        if play:
            assert pool is not None, line  # (the opening pool came first)
            card, taken, shown = play.groups()
            pool = pool - set(taken.split()) if taken else pool | {card}
            if shown is None:  # the round's last play: the pool left goes to a player
                last = line
                continue
            assert (set() if shown == "(empty)" else set(shown.split())) == pool, line
            checked += 1
        swept = re.fullmatch(r"    [a-z]+ takes the (\d+) cards? left in the pool", line)
        if swept:
            assert pool is not None and int(swept.group(1)) == len(pool), last
            pool = None
    assert checked > 40


# ------------------------------------------------------------------------ names


def test_auto_quiet_prints_names_not_python(tmp_path: Path) -> None:
    done = p2pcards("play", "pasur", "--auto", "--quiet", "--seed", "1", home=tmp_path)
    assert done.returncode == 0
    seed, totals, winner = done.stdout.splitlines()
    assert seed == "seed 1"
    assert re.fullmatch(r"totals: ana \d+, ben \d+, cy \d+, dee \d+", totals)
    assert re.fullmatch(r"winner: (ana|ben|cy|dee)", winner)
    done = p2pcards("play", "bidwhist", "--auto", "--quiet", "--seed", "1", "--target", "2",
                    home=tmp_path)
    assert re.fullmatch(r"totals: team 0 \(ana & cy\) \d+, team 1 \(ben & dee\) \d+",
                        done.stdout.splitlines()[1])
    assert re.fullmatch(r"winner: team [01] \((ana & cy|ben & dee)\)",
                        done.stdout.splitlines()[2])


@pytest.mark.slow
def test_table_verify_and_replay_name_the_seats(tmp_path: Path) -> None:
    transcript, history = tmp_path / "t.bin", tmp_path / "h.json"
    table = p2pcards("table", "Pasur", "--players", "2", "--seed", "3", "--transcript",
                     str(transcript), home=tmp_path)
    assert table.returncode == 0, table.stderr
    verify = p2pcards("verify", str(transcript), "--history", str(history), home=tmp_path)
    replay = p2pcards("replay", str(history), home=tmp_path)
    replay_json = p2pcards("replay", str(history), "--json", home=tmp_path)
    assert verify.returncode == replay.returncode == replay_json.returncode == 0
    for out in (table.stdout, verify.stdout, replay.stdout):
        # (verify's first line is the roster: "ana (seat 0), ben (seat 1)")
        assert not re.search(r"seat ?\d", out.split("\n", 1)[1]), out
        assert "[" not in out
        assert re.search(r"dealer (ana|ben)\b", out)
    assert re.search(r"winner:? (ana|ben)$", table.stdout.splitlines()[-3])
    assert re.search(r"winner: (ana|ben)$", verify.stdout.splitlines()[-2])
    assert re.fullmatch(r"  totals: ana \d+, ben \d+", replay.stdout.splitlines()[-2])
    assert re.fullmatch(r"winner: (ana|ben)", replay.stdout.splitlines()[-1])
    doc = json.loads(replay_json.stdout)  # (the machine-readable form keeps numbers)
    assert isinstance(doc["winner"], int) and all(isinstance(t, int) for t in doc["totals"])
