"""The arena: duplicate deals, whole games, the report and its confidence intervals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2pcards.bots import arena
from p2pcards.cli.main import main
from p2pcards.games import bidwhist, pasur
from p2pcards.history import load, replay


def test_duplicate_deals_seat_every_bot_on_both_sides():
    result = arena.run(arena.Setup("bidwhist", ("ismcts", "random", "ismcts", "random"), seed=4,
                                   iterations=20), 3)
    assert result["per"] == "deal" and result["games"] == 3
    by_bot = {e["bot"]: e for e in result["entries"]}
    assert by_bot["ismcts"]["seats"] == [0, 1, 2, 3] == by_bot["random"]["seats"]
    # each deal is played twice, a duplicate pair counting once: the wins add up to 3
    assert by_bot["ismcts"]["wins"] + by_bot["random"]["wins"] == 3
    lo, hi = by_bot["ismcts"]["win_rate_ci95"]
    assert 0.0 <= lo <= by_bot["ismcts"]["win_rate"] <= hi <= 1.0
    lo, hi = by_bot["ismcts"]["points_ci95"]
    assert lo <= by_bot["ismcts"]["points_per_game"] <= hi
    assert by_bot["ismcts"]["iterations_per_s"] > 0 and by_bot["random"]["iterations_per_s"] is None
    assert by_bot["random"]["exact_bid_rate"] is None


def test_same_seed_same_report():
    setup = arena.Setup("pasur", ("random", "pimc"), seed=9, iterations=20)
    first = arena.run(setup, 2)
    second = arena.run(setup, 2)
    for entry in first["entries"] + second["entries"]:
        entry.pop("iterations_per_s")
    assert first == second


def test_jobs_play_the_same_sets_and_the_difference_is_paired():
    setup = arena.Setup("bidwhist", ("ismcts", "heuristic", "ismcts", "heuristic"), seed=5,
                        iterations=15)
    one = arena.run(setup, 4)
    two = arena.run(setup, 4, jobs=2)
    assert "ismcts - heuristic" in arena.format_report(one)
    for entry in one["entries"] + two["entries"]:
        rate = entry.pop("iterations_per_s")
        assert rate is None if entry["bot"] == "heuristic" else rate > 0
    assert one == two
    by_bot = {e["bot"]: e for e in one["entries"]}
    diff = one["difference"]
    assert diff["bots"] == ["ismcts", "heuristic"]
    assert diff["points"] == round(by_bot["ismcts"]["points_per_game"]
                                   - by_bot["heuristic"]["points_per_game"], 4)
    lo, hi = diff["points_ci95"]
    assert lo <= diff["points"] <= hi
    assert diff["won"] + diff["tied"] + diff["lost"] == 4
    # a tie counts half a win for each side
    assert by_bot["ismcts"]["wins"] == diff["won"] + diff["tied"] / 2


def test_arena_command_json_whole_games_and_saved_histories(tmp_path, capsys):
    save = tmp_path / "histories"
    code = main(["arena", "nullern", "--players", "random,ismcts,random", "--games", "1",
                 "--iterations", "10", "--json", "--save", str(save)])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["game"] == "nullern" and result["per"] == "game"
    assert {e["bot"] for e in result["entries"]} == {"random", "ismcts"}
    assert all(0 <= e["exact_bid_rate"] <= 1 for e in result["entries"])
    files = sorted(Path(save).iterdir())
    assert len(files) == 1
    replayed = replay(load(str(files[0])))
    assert replayed.complete


def test_progress_off_a_terminal_is_a_line_at_each_tenth_of_the_sets(capsys):
    for done in range(1, 26):
        arena.progress_bar(done, 25)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"arena: {n}/25 sets played" for n in (3, 5, 8, 10, 13, 15, 18, 20, 23, 25)]
    for done in range(1, 4):
        arena.progress_bar(done, 3)
    assert capsys.readouterr().err.splitlines() == [f"arena: {n}/3 sets played" for n in (1, 2, 3)]


def test_duplicate_plays_see_the_same_chance_and_every_seat_takes_every_hand(tmp_path):
    save = tmp_path / "cn"
    arena.run(arena.Setup("controlnut", ("random", "pimc", "random", "pimc"), seed=3,
                          iterations=8, save=str(save)), 2)
    for n in range(2):
        first, second = (json.loads((save / f"controlnut-{n:04d}-{s}.json").read_text())
                         for s in (0, 1))
        chance = [[a for a in doc["hands"][0]["actions"] if a[0] == "chance"][:2]
                  for doc in (first, second)]
        assert chance[0] == chance[1]  # the same controls and the same first draw
        assert first["hands"][0]["deck"] == second["hands"][0]["deck"]
    assert arena.rotations(pasur.GAME, 3) == (0, 1, 2)
    assert arena.rotations(bidwhist.GAME, 4) == (0, 1)


def test_lineups_must_keep_partners_together(capsys):
    assert main(["arena", "bidwhist", "--players", "ismcts,random,random,random"]) == 2
    assert "partners play the same bot" in capsys.readouterr().err
    assert main(["arena", "nullern", "--players", "random,ismcts", "--deals", "1",
                 "--save", "x"]) == 2
    assert "whole games" in capsys.readouterr().err
    assert main(["arena", "pasur", "--players", "random,ismcts", "--deals", "0"]) == 2


def test_arena_command_refuses_unknown_bots_and_seat_counts(capsys):
    assert main(["arena", "pasur", "--players", "random,genius"]) == 2
    assert "unknown bot 'genius'" in capsys.readouterr().err
    assert main(["arena", "bidwhist", "--players", "random,random"]) == 2
    assert "Bid Whist is played by 4 players, not 2" in capsys.readouterr().err


def _without_rates(result: dict) -> dict:
    for entry in result["entries"]:
        entry.pop("iterations_per_s")
    return result


def test_a_run_goes_on_from_its_results_file(tmp_path, monkeypatch):
    setup = arena.Setup("pasur", ("random", "pimc"), seed=4, iterations=10)
    whole = _without_rates(arena.run(setup, 5))
    played: list[int] = []
    play_set = arena.play_set

    def counting(setup: arena.Setup, spec: arena.SetSpec):
        played.append(spec.n)
        return play_set(setup, spec)

    monkeypatch.setattr(arena, "play_set", counting)
    results = tmp_path / "run.jsonl"
    arena.run(setup, 2, results=str(results))
    assert played == [0, 1]
    heard: list[str] = []
    resumed = _without_rates(arena.run(setup, 5, results=str(results), say=heard.append))
    assert played == [0, 1, 2, 3, 4]  # the two kept sets are not played again
    assert heard == [f"arena: 2 of the 5 sets are in {results}; 3 to play"]
    assert resumed == whole
    # a longer file serves a shorter run, and is kept whole
    shorter = _without_rates(arena.run(setup, 3, results=str(results)))
    assert played == [0, 1, 2, 3, 4]
    assert shorter == _without_rates(arena.run(arena.Setup("pasur", ("random", "pimc"),
                                                           seed=4, iterations=10), 3))
    assert len(results.read_text().splitlines()) == 6


def test_a_line_cut_short_at_the_end_is_played_again(tmp_path):
    setup = arena.Setup("pasur", ("random", "heuristic"), seed=6)
    results = tmp_path / "run.jsonl"
    whole = arena.run(setup, 3, results=str(results))
    lines = results.read_text().splitlines()
    results.write_text("\n".join(lines[:3]) + "\n" + lines[3][:25])  # killed as it wrote
    again = arena.run(setup, 3, results=str(results))
    assert again == whole
    assert results.read_text().splitlines() == lines


def test_a_results_file_of_another_run_or_damaged_is_refused_untouched(tmp_path, capsys):
    results = tmp_path / "run.jsonl"
    command = ["arena", "pasur", "--players", "random,heuristic", "--deals", "3",
               "--results", str(results), "--json"]
    assert main([*command, "--seed", "4"]) == 0
    capsys.readouterr()
    kept = results.read_bytes()

    def refused(args: list[str], why: str) -> None:
        assert main(args) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.strip() == f"p2pcards: --results {results}: {why}"

    refused([*command, "--seed", "5"], "it holds another run: its seed is 4, this run's is 5")
    refused(["arena", "pasur", "--players", "heuristic,random", "--deals", "3", "--seed", "4",
             "--results", str(results)],
            'it holds another run: its lineup is ["random", "heuristic"], '
            'this run\'s is ["heuristic", "random"]')
    assert results.read_bytes() == kept
    lines = kept.decode().splitlines()
    for damaged, why in [
            ([lines[0], "{oops", *lines[2:]], "line 2: not JSON (Expecting property name "
             "enclosed in double quotes)"),
            ([lines[0], lines[1], lines[1]], "line 3: set 0 again"),
            ([lines[0], lines[1].replace('"set": 0', '"set": -1')],
             "line 2: its set number is not a count"),
            ([lines[0], lines[1].replace('"random"', '"genius"')],
             "line 2: its tallies are not those of the bots heuristic, random"),
            (['{"format": "p2pcards-history/1"}'],
             "line 1 is not the head of an arena's results (p2pcards-arena/1)"),
            ([], "the file is empty, not an arena's results (remove it to start the run "
             "afresh)")]:
        text = "".join(line + "\n" for line in damaged)
        results.write_text(text)
        refused([*command, "--seed", "4"], why)
        assert results.read_text() == text
    results.write_bytes(b"\xff\xfe\x00")
    refused([*command, "--seed", "4"], "the file is not text, not an arena's results")
    missing = tmp_path / "no" / "run.jsonl"
    assert main([*command[:-3], "--results", str(missing)]) == 2
    assert f"--results {missing}: cannot write there: the directory" in capsys.readouterr().err


def _until_kept(process: subprocess.Popen, results: Path, sets: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None and (
            not results.exists() or results.read_text().count("\n") <= sets):
        time.sleep(0.02)


@pytest.mark.slow
def test_an_arena_run_killed_or_stopped_part_way_goes_on_with_the_same_command(tmp_path):
    results = tmp_path / "run.jsonl"
    command = [sys.executable, "-m", "p2pcards", "arena", "pasur", "--players",
               "random,heuristic", "--deals", "400", "--seed", "8", "--jobs", "2",
               "--results", str(results), "--json"]
    # killed outright (its workers end with it: they hold its pipes, and communicate()
    # would wait for them)
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _until_kept(first, results, 30)
        first.kill()
    finally:
        first.communicate(timeout=60)
    killed = results.read_text().count("\n") - 1
    assert 30 <= killed < 400, killed
    # Ctrl-C at a terminal: SIGINT to the whole foreground group, workers included
    # (SIGINT as a shell leaves it to a command it starts, whatever this test inherited)
    at_terminal = [sys.executable, "-c", "import runpy, signal, sys; "
                   "signal.signal(signal.SIGINT, signal.default_int_handler); "
                   "sys.argv[0] = 'p2pcards'; runpy.run_module('p2pcards', run_name='__main__')",
                   *command[3:]]
    second = subprocess.Popen(at_terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        _until_kept(second, results, killed + 30)
        os.killpg(second.pid, signal.SIGINT)
    finally:
        out, err = second.communicate(timeout=60)
    assert second.returncode == 130, err
    assert "Traceback" not in err and out == ""
    assert err.splitlines()[0] == f"arena: {killed} of the 400 sets are in {results}; " \
        f"{400 - killed} to play"
    assert err.splitlines()[-1] == f"arena: stopped; the sets played are kept in {results}, " \
        "and the same command goes on from there"
    stopped = results.read_text().count("\n") - 1
    assert killed + 30 <= stopped < 400, stopped
    third = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert third.returncode == 0, third.stderr
    assert "Traceback" not in third.stderr
    assert third.stderr.splitlines()[0].startswith(f"arena: {stopped} of the 400 sets")
    fresh = arena.run(arena.Setup("pasur", ("random", "heuristic"), seed=8), 400)
    assert json.loads(third.stdout) == fresh


@pytest.mark.slow
def test_an_arena_of_bots_searching_on_two_processes_ends_under_two_jobs():
    """Each job's bot keeps its search workers open from set to set; as the job's
    process exits they must stop (a process of a pool joins its children first, and
    they would wait for their next task for ever, and the arena with them)."""
    command = [sys.executable, "-m", "p2pcards", "arena", "pasur", "--players",
               "ismcts:w=2,random", "--deals", "3", "--iterations", "20", "--seed", "4",
               "--jobs", "2", "--json"]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 3
