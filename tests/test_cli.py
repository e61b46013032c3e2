"""The command line: play --auto, bench."""

from __future__ import annotations

import json

from p2pcards.cli.main import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_auto_play_same_seed_same_game(tmp_path, capsys):
    first, second, other = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    code, out_a, _ = run(capsys, "play", "pasur", "--auto", "--seed", "12", "--save", str(first))
    assert code == 0
    _, out_b, _ = run(capsys, "play", "pasur", "--auto", "--seed", "12", "--save", str(second))
    run(capsys, "play", "pasur", "--auto", "--seed", "13", "--save", str(other))
    assert out_a.replace("a.json", "b.json") == out_b
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()


def test_auto_play_prints_a_readable_log_and_the_winner(capsys):
    code, out, _ = run(capsys, "play", "bidwhist", "--auto", "--seed", "5")
    assert code == 0
    assert "deal 1, dealer" in out and "result:" in out and "totals:" in out
    assert "trick 12:" in out
    assert out.rstrip().splitlines()[-1].startswith("winner: team")


def test_auto_play_variants_and_players(tmp_path, capsys):
    path = tmp_path / "v.json"
    code, _, _ = run(capsys, "play", "bidwhist", "--auto", "--seed", "1", "--kitty", "5",
                     "--target", "3", "--quiet", "--save", str(path))
    assert code == 0
    doc = json.loads(path.read_text())
    assert doc["options"] == {"kitty": 5, "target": 3}
    assert all(len(h["deck"]) == 53 for h in doc["hands"])
    code, _, _ = run(capsys, "play", "pasur", "--auto", "--seed", "1", "--players", "2",
                     "--sur", "10", "--quiet", "--save", str(path))
    doc = json.loads(path.read_text())
    assert code == 0 and len(doc["players"]) == 2 and doc["options"] == {"sur": 10}


def test_bad_options_are_refused_with_the_reason(capsys):
    code, _, err = run(capsys, "play", "bidwhist", "--auto", "--kitty", "4")
    assert code == 2 and "option 'kitty' must be 5 or 6, not 4" in err
    code, _, err = run(capsys, "play", "pasur", "--auto", "--players", "5")
    assert code == 2 and "Pasur is played by 2, 3, 4 players, not 5" in err
    code, _, err = run(capsys, "play", "pasur", "--auto", "--kitty", "5")
    assert code == 2 and "unknown pasur option 'kitty'" in err


def test_bench_engines_json_records(capsys):
    code, out, _ = run(capsys, "bench", "engines", "--json", "--seconds", "0.05")
    assert code == 0
    records = json.loads(out)
    names = {r["name"] for r in records}
    assert {"engines.bidwhist.plays", "engines.pasur.4p.plays"} <= names
    for record in records:
        assert record["unit"] == "per_s" and record["value"] > 0
    code, out, _ = run(capsys, "bench", "--seconds", "0.05")
    assert code == 0 and "engines.pasur.2p.plays" in out


def test_unwritable_save_file_is_refused_before_playing(tmp_path, capsys):
    code, out, err = run(capsys, "play", "pasur", "--auto", "--seed", "1", "--save",
                         str(tmp_path / "missing" / "x.json"))
    assert code == 2 and "cannot write" in err and "deal 1" not in out


def test_zero_players_is_refused(capsys):
    code, _, err = run(capsys, "play", "pasur", "--auto", "--players", "0")
    assert code == 2 and "not 0" in err


def test_a_zero_budget_is_refused_not_taken_for_the_default(capsys):
    for argv, why in [(("play", "bidwhist", "--think", "0"), "--think must be more than 0"),
                      (("play", "bidwhist", "--workers", "0"), "--workers must be at least 1"),
                      (("play", "bidwhist", "--iterations", "0"), "--iterations must be at least"),
                      (("arena", "pasur", "--players", "ismcts,random", "--think", "0"),
                       "--think must be more than 0"),
                      (("host", "pasur", "--think", "0"), "--think must be more than 0")]:
        code, _, err = run(capsys, *argv)
        assert code == 2 and why in err, argv


def test_auto_play_with_searching_bots_finishes_and_replays(tmp_path, capsys):
    path = tmp_path / "s.json"
    code, _, _ = run(capsys, "play", "nullern", "--auto", "--bots", "ismcts", "--iterations", "20",
                     "--workers", "2", "--players", "3", "--seed", "2", "--quiet", "--save",
                     str(path))
    assert code == 0
    code, out, _ = run(capsys, "replay", str(path), "--json")
    assert code == 0 and json.loads(out)["complete"]


def test_bench_ai_json_records(capsys):
    code, out, _ = run(capsys, "bench", "ai", "--json", "--seconds", "0.1")
    assert code == 0
    records = json.loads(out)
    assert {r["name"] for r in records} == {
        "ai.ismcts.bidwhist.first_lead", "ai.ismcts.nullern.first_play_10",
        "ai.ismcts.pasur.mid_round", "ai.ismcts.controlnut.first_trick",
        "ai.ismcts.bidwhist.first_lead.2proc_speedup",
        *(f"ai.{bot}.{position}" for bot in ("ismcts-mo", "ismcts-own", "ismcts-backoff")
          for position in ("bidwhist.first_lead", "nullern.first_play_10", "pasur.mid_round",
                           "controlnut.first_trick"))}
    assert all(r["unit"] in ("per_s", "x") and r["value"] > 0 for r in records)


def test_bench_infer_json_records(capsys):
    code, out, _ = run(capsys, "bench", "infer", "--json", "--seconds", "0.2")
    assert code == 0
    records = {r["name"]: r for r in json.loads(out)}
    figures = ("placed_uniform", "placed_inferred", "placed_plays", "loglik_uniform",
               "loglik_inferred", "loglik_plays", "effective_share", "effective_share_plays",
               "positions",
               *(f"{figure}{end}" for figure in ("gain", "deal_gain", "gain_plays",
                                                  "deal_gain_plays", "plays_over_bids")
                 for end in ("", "_low", "_high")))
    assert set(records) == {f"infer.{game}.{kind}.{figure}" for game in ("bidwhist", "nullern")
                            for kind in ("heuristic", "ismcts") for figure in figures}
    for game in ("bidwhist", "nullern"):
        for kind in ("heuristic", "ismcts"):
            def value(figure: str, prefix: str = f"infer.{game}.{kind}") -> float:
                return float(records[f"{prefix}.{figure}"]["value"])
            assert value("positions") >= 4
            assert 0 < value("placed_uniform") < 1 and 0 < value("placed_inferred") < 1
            assert 0 < value("placed_plays") < 1
            assert value("plays_over_bids_low") <= value("plays_over_bids") \
                <= value("plays_over_bids_high")
            assert value("deal_gain_low") <= value("deal_gain") <= value("deal_gain_high")
            assert 0 < value("effective_share") <= 1


def test_bench_deck_json_records(capsys):
    code, out, _ = run(capsys, "bench", "deck", "--json", "--seconds", "0.1")
    assert code == 0
    records = {r["name"]: r for r in json.loads(out)}
    for tag, parties in (("54x4", 4), ("80x7", 7)):
        critical = records[f"deck.shuffle_lock_deal.{tag}"]["value"]
        assert 0 < critical < records[f"deck.shuffle_lock_deal.{tag}.all_parties"]["value"]
        assert records[f"deck.audit.{tag}"]["value"] > 0
        # two passes of N*M multiplications, and one more per position to open it
        assert records[f"deck.multiplications.{tag}.over_floor"]["value"] == round(
            1 + 1 / (2 * parties), 3)
