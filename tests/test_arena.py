"""The arena: duplicate deals, whole games, the report and its confidence intervals."""

from __future__ import annotations

import json
from pathlib import Path

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
