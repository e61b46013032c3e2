"""Hand histories: reading, writing, and `p2pcards replay` with its exit codes and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2pcards.cli.main import main
from p2pcards.games import bidwhist, pasur
from p2pcards.games.cards import STANDARD
from tests.helpers import pasur_deck

DATA = Path(__file__).parent / "data"
ODD_BOOK = DATA / "bidwhist_odd_book.json"
PROVED_RENEGE = DATA / "proved_bidwhist_renege.json"
"""A public entry, written by a table of the proved deck (tests/test_proved_history.py's
Bid Whist renege: seat 2 plays 2H on a trump lead, then BJ, a trump, at move 11)."""


def odd_book() -> dict[str, Any]:
    return json.loads(ODD_BOOK.read_text())


def proved_renege() -> dict[str, Any]:
    return json.loads(PROVED_RENEGE.read_text())


def replay(tmp_path: Path, doc: dict[str, Any] | str, capsys: pytest.CaptureFixture[str],
           *flags: str) -> tuple[int, str, str]:
    path = tmp_path / "game.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    code = main(["replay", str(path), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_replay_of_the_seed_odd_book_example(tmp_path, capsys):
    code, out, _ = replay(tmp_path, odd_book(), capsys, "--json")
    assert code == 0
    result = json.loads(out)
    hand = result["hands"][0]
    assert hand["detail"]["bid"] == "4 cards" and hand["detail"]["books"] == [6, 7]
    assert hand["points"] == [0, 5] and result["totals"] == [0, 5]
    assert result["units"] == "teams" and result["winner"] is None and not result["complete"]
    code, out, _ = replay(tmp_path, odd_book(), capsys)
    assert code == 0 and "books 6-7; set; points 0-5" in out


def renege_index(doc: dict[str, Any]) -> tuple[int, str, str]:
    """An action that can be replaced by a card that fails to follow suit."""
    hand = doc["hands"][0]
    state = bidwhist.GAME.deal([STANDARD.parse(c) for c in hand["deck"]], hand["dealer"], 4,
                               bidwhist.GAME.resolve_options({}))
    for i, (seat, text) in enumerate(hand["actions"]):
        if text.startswith("play") and state.led >= 0:
            follow = state.legal_mask()
            others = state.may[seat] & ~follow
            if others and follow != state.may[seat]:
                bad = STANDARD.name((others & -others).bit_length() - 1)
                return i, f"play {bad}", text
        state.apply_text(text, seat)
    raise AssertionError("no renege opportunity in the fixture")


def test_illegal_action_exits_1_naming_hand_index_actor_and_rule(tmp_path, capsys):
    doc = odd_book()
    index, bad, _ = renege_index(doc)
    seat = doc["hands"][0]["actions"][index][0]
    doc["hands"][0]["actions"][index][1] = bad
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 1
    error = json.loads(out)["error"]
    assert error["hand"] == 0 and error["index"] == index and error["actor"] == seat
    assert error["action"] == bad
    assert error["reason"].startswith(f"must follow suit: seat {seat} holds")
    code, _, err = replay(tmp_path, doc, capsys)
    assert code == 1 and f"action {index}" in err and "must follow suit" in err


def test_penalty_entry_checks_the_renege_and_applies_the_penalty(tmp_path, capsys):
    doc = odd_book()
    index, bad, _ = renege_index(doc)
    seat = doc["hands"][0]["actions"][index][0]
    doc["hands"][0]["actions"][index][1] = bad
    doc["hands"][0]["penalty"] = {"seat": seat, "index": index, "reason": "renege"}
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 0
    hand = json.loads(out)["hands"][0]
    offenders = seat % 2
    expected = [0, 0]
    expected[1 - offenders] = 4  # the bid, 4 cards
    assert hand["points"] == expected
    assert hand["detail"]["penalty"] == {"seat": seat, "reason": "renege"}
    doc["hands"][0]["penalty"]["reason"] = "not-held"
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 1 and "another rule" in json.loads(out)["error"]["reason"]


def test_penalty_on_a_legal_action_is_refused(tmp_path, capsys):
    doc = odd_book()
    doc["hands"][0]["penalty"] = {"seat": 1, "index": 7, "reason": "renege"}
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 1 and "this action is legal" in json.loads(out)["error"]["reason"]


def test_forfeit_stops_the_deal_and_applies_the_penalty(tmp_path, capsys):
    doc = odd_book()
    doc["hands"][0]["actions"] = doc["hands"][0]["actions"][:20]
    doc["hands"][0]["forfeit"] = {"seat": 2, "reason": "silent"}
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 0
    assert json.loads(out)["hands"][0]["points"] == [0, 4]


def test_a_forfeit_midway_scores_the_points_the_table_signed(tmp_path, capsys):
    """A networked deal stopped midway, its cards never revealed: replay takes the score
    the table signed (it cannot recompute one from cards it does not have)."""
    doc = odd_book()
    doc["hands"][0]["actions"] = doc["hands"][0]["actions"][:20]
    doc["hands"][0]["forfeit"] = {"seat": 2, "reason": "silent", "points": [0, 3]}
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 0 and json.loads(out)["hands"][0]["points"] == [0, 3]
    doc["hands"][0]["forfeit"]["points"] = [0, 3, 1]
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 2 and "forfeit points" in out


def test_unfinished_last_deal_scores_nothing_yet(tmp_path, capsys):
    doc = odd_book()
    doc["hands"][0]["actions"] = doc["hands"][0]["actions"][:20]
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    result = json.loads(out)
    assert code == 0 and result["hands"][0]["points"] is None and result["totals"] == [0, 0]


def pasur_doc(hands: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "p2pcards-history/1", "game": "pasur", "options": {},
            "players": ["ana", "ben"], "hands": hands}


def test_void_pasur_deal_is_redealt_by_the_same_dealer(tmp_path, capsys):
    void_deck = [STANDARD.name(c) for c in pasur_deck({}, "JH JS 3S 4S", players=2, dealer=1)]
    doc = pasur_doc([{"dealer": 1, "deck": void_deck, "actions": [], "void": True}])
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 0 and json.loads(out)["hands"][0]["points"] is None
    # the next deal must be dealt by the same seat
    doc["hands"].append({"dealer": 0, "deck": void_deck, "actions": [], "void": True})
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 1 and "seat 1 deals this deal" in json.loads(out)["error"]["reason"]
    # a deal the jacks void must say so
    doc = pasur_doc([{"dealer": 1, "deck": void_deck, "actions": []}])
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 1 and "the rules void this deal (jacks in the opening pool)" in \
            json.loads(out)["error"]["reason"]


def test_void_by_consent_needs_a_reason(tmp_path, capsys):
    deck = [STANDARD.name(c) for c in pasur_deck({}, "2S 3S 4S 5S", players=2, dealer=1)]
    doc = pasur_doc([{"dealer": 1, "deck": deck, "actions": [], "void": True}])
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 1 and "needs a reason" in json.loads(out)["error"]["reason"]
    doc["hands"][0]["reason"] = "every seat agreed"
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 0


def test_saved_auto_game_replays_with_totals_and_winner(tmp_path, capsys):
    path = tmp_path / "pasur.json"
    assert main(["play", "pasur", "--auto", "--seed", "4", "--players", "3", "--quiet",
                 "--save", str(path)]) == 0
    capsys.readouterr()
    assert main(["replay", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    scored = [h["points"] for h in result["hands"] if h["points"] is not None]
    assert result["totals"] == [sum(p[i] for p in scored) for i in range(3)]
    assert result["complete"] and max(result["totals"]) >= 62
    assert result["winner"] == result["totals"].index(max(result["totals"]))
    doc = json.loads(path.read_text())
    doc["hands"][1]["dealer"] = (doc["hands"][1]["dealer"] + 1) % 3
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 1 and json.loads(out)["error"]["hand"] == 1


def test_seat_change_is_accepted(tmp_path, capsys):
    doc = odd_book()
    doc["hands"][0]["players"] = ["ana", "bot-1", "cy", "dee"]
    code, _, _ = replay(tmp_path, doc, capsys)
    assert code == 0


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update(game="chess"), "game: unknown game \"chess\""),
    (lambda d: d.update(format="other/1"), "format: expected"),
    (lambda d: d["hands"][0]["deck"].__setitem__(5, "ZZ"), "hand 0, deck[5]: unknown card 'ZZ'"),
    (lambda d: d["hands"][0]["deck"].pop(), "hand 0, deck: 53 cards, a Bid Whist deck has 54"),
    (lambda d: d["hands"][0]["deck"].__setitem__(1, d["hands"][0]["deck"][0]),
     "hand 0, deck[1]:"),
    (lambda d: d["hands"][0]["actions"][6].__setitem__(1, "play QX"),
     "hand 0, action 6: cannot read action 'play QX'"),
    (lambda d: d["hands"][0]["actions"][6].__setitem__(0, 9), "hand 0, action 6, actor"),
    (lambda d: d.update(players=["a", "b", "c"]), "players: Bid Whist is played by 4"),
    (lambda d: d.update(options={"kitty": 4}), "options: option 'kitty' must be 5 or 6"),
    (lambda d: d["hands"][0]["actions"][5].__setitem__(1, "discard ? ? ? ? ? ?"),
     "hides cards"),
    (lambda d: d["hands"][0].update(dealer=4), "hand 0, dealer: 4 is out of range"),
])
def test_malformed_history_exits_2_naming_what_and_where(tmp_path, capsys, mutate, message):
    doc = odd_book()
    mutate(doc)
    code, out, err = replay(tmp_path, doc, capsys, "--json")
    assert code == 2
    assert message in err
    assert message in json.loads(out)["error"]["malformed"]


def test_bad_json_and_missing_file_exit_2(tmp_path, capsys):
    code, _, err = replay(tmp_path, "{not json", capsys)
    assert code == 2 and "not JSON" in err
    assert main(["replay", str(tmp_path / "absent.json")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_history_written_by_play_is_canonical_json(tmp_path, capsys):
    path = tmp_path / "bw.json"
    main(["play", "bidwhist", "--auto", "--seed", "9", "--quiet", "--save", str(path)])
    text = path.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert text == json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    assert doc["format"] == "p2pcards-history/1" and doc["options"] == {}
    assert pasur.GAME.name != doc["game"]


ACTION_WORDS = ["play", "bid", "pass", "trump", "direction", "discard", "take", "stock", "4",
                "cards", "notrump", "uptown", "AS", "10h", "BJ", "?", "", "JH", "h", "9"]


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_damaged_history_gets_status_0_1_or_2_never_a_crash(tmp_path, capsys, data):
    source = data.draw(st.sampled_from(["odd book", "pasur", "public"]))
    doc = odd_book() if source == "odd book" else proved_renege() if source == "public" \
        else pasur_doc([
        {"dealer": 1, "deck": [STANDARD.name(c) for c in
                               pasur_deck({}, "2S 3S 4S 5S", players=2, dealer=1)],
         "actions": [[0, "play 2C"], [1, "play 3C"]]}])
    hand = doc["hands"][0]
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(["action", "actor", "deck", "field"]))
        if where == "action" and hand["actions"]:
            i = data.draw(st.integers(0, len(hand["actions"]) - 1))
            words = data.draw(st.lists(st.sampled_from(ACTION_WORDS), max_size=4))
            hand["actions"][i][1] = " ".join(words)
        elif where == "actor" and hand["actions"]:
            i = data.draw(st.integers(0, len(hand["actions"]) - 1))
            hand["actions"][i][0] = data.draw(st.one_of(st.integers(-2, 5), st.just("chance"),
                                                        st.none(), st.text(max_size=3)))
        elif where == "deck":
            i = data.draw(st.integers(0, len(hand["deck"]) - 1))
            hand["deck"][i] = data.draw(st.sampled_from(["AS", "2C", "XX", "", "LJ", "10d",
                                                         "?"]))
        else:
            key = data.draw(st.sampled_from(["dealer", "void", "penalty", "forfeit", "extra",
                                             "public", "secret"]))
            hand[key] = data.draw(st.one_of(st.integers(-1, 60), st.booleans(), st.none(),
                                            st.just({"seat": 1, "index": 3, "reason": "renege"}),
                                            st.just({"seat": 0, "reason": "silent"}),
                                            st.just({"points": [1, 2]})))
    code, out, err = replay(tmp_path, doc, capsys, "--json")
    assert code in (0, 1, 2)
    assert "Traceback" not in err
    result = json.loads(out)
    assert ("error" in result) == (code != 0)


def test_penalty_must_name_a_rule_breach_before_the_deal_is_over(tmp_path, capsys):
    doc = odd_book()
    doc["hands"][0]["actions"][1] = [3, "pass"]
    doc["hands"][0]["penalty"] = {"seat": 3, "index": 1, "reason": "turn"}
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 2 and "penalty reason: expected one of" in json.loads(out)["error"]["malformed"]
    doc = odd_book()
    doc["hands"][0]["actions"].append([1, "play AS"])
    doc["hands"][0]["penalty"] = {"seat": 1, "index": 54, "reason": "not-held"}
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    assert code == 1 and "after the deal was over" in json.loads(out)["error"]["reason"]


def test_actions_after_a_penalty_must_still_be_well_formed(tmp_path, capsys):
    doc = odd_book()
    index, bad, _ = renege_index(doc)
    seat = doc["hands"][0]["actions"][index][0]
    doc["hands"][0]["actions"][index][1] = bad
    doc["hands"][0]["penalty"] = {"seat": seat, "index": index, "reason": "renege"}
    doc["hands"][0]["actions"][index + 1][1] = "play ZZ"
    code, _, err = replay(tmp_path, doc, capsys)
    assert code == 2 and f"action {index + 1}: cannot read action 'play ZZ'" in err


def test_unfinished_deal_detail_shows_no_contract_before_the_auction_ends(tmp_path, capsys):
    doc = odd_book()
    doc["hands"][0]["actions"] = doc["hands"][0]["actions"][:1]
    doc["hands"][0]["players"] = ["W", "X", "Y", "Z"]
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    detail = json.loads(out)["hands"][0]["detail"]
    assert code == 0 and "bid" not in detail and "trump" not in detail
    doc["hands"][0]["actions"] = odd_book()["hands"][0]["actions"][:4]
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    detail = json.loads(out)["hands"][0]["detail"]
    assert detail["bid"] == "4 cards" and "trump" not in detail
    code, out, _ = replay(tmp_path, doc, capsys)
    assert "W bid 4 cards" in out and "dealer Z" in out


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (json.dumps({"format": "p2pcards-history/1", "game": "pasur", "players": ["a", "\ud800"],
                 "hands": []}), "players[1]: not valid Unicode text"),
])
def test_hostile_json_exits_2(tmp_path, capsys, text, message):
    code, _, err = replay(tmp_path, text, capsys)
    assert code == 2 and message in err


def test_reason_without_void_is_malformed(tmp_path, capsys):
    doc = odd_book()
    doc["hands"][0]["reason"] = "why"
    code, _, err = replay(tmp_path, doc, capsys)
    assert code == 2 and 'a reason goes with "void": true' in err


def test_a_public_entry_replays_as_everyone_saw_it_and_scores_its_proven_renege(
        tmp_path, capsys):
    code, out, _ = replay(tmp_path, proved_renege(), capsys, "--json")
    assert code == 0
    hand = json.loads(out)["hands"][0]
    # scored as an audit would: as the deal stood before the renege (move 7), the
    # bidders' discard their only book, the offenders' team nothing
    assert hand["points"] == [0, 4]
    assert hand["detail"]["penalty"] == {"seat": 2, "reason": "renege"}
    assert hand["detail"]["books"] == [0, 1]
    code, out, _ = replay(tmp_path, proved_renege(), capsys)
    assert code == 0 and "renege by seat2; points 0-4" in out


@pytest.mark.parametrize(("mutate", "status", "message"), [
    (lambda h: h["deck"].__setitem__(1, "KD"), 2,
     "hand 0, deck[1]: KD is never shown in this deal"),
    (lambda h: h["deck"].__setitem__(0, "?"), 0, ""),  # (a position may stay unnamed)
    (lambda h: h["actions"].__setitem__(5, [1, "discard 2C 3C 4C 5C 6C 7C"]), 2,
     "hand 0, action 5: 'discard 2C 3C 4C 5C 6C 7C' names cards a seat with no cards"),
    (lambda h: h["actions"].__setitem__(8, [3, "play ?"]), 2, "hand 0, action 8: cannot read"),
    (lambda h: h["actions"].__setitem__(9, [0, "play 2H"]), 1,
     "hand 0, action 9 (0: play 2H): seat 0 cannot hold 2H: it is face up"),
    (lambda h: h.pop("penalty"), 1, "hand 0, action 11 (2: play BJ): this action proves that"
     " seat 2 broke the rules at action 7 (renege): the entry must end with that penalty"),
    (lambda h: (h["actions"].pop(), h["deck"].__setitem__(12, "?")), 1,
     "hand 0, action 7 (2: play 2H): no card shown in this deal proves the penalty (renege"
     " by seat 2)"),
])
def test_a_malformed_public_entry_is_refused_naming_what_and_where(tmp_path, capsys, mutate,
                                                                    status, message):
    doc = proved_renege()
    mutate(doc["hands"][0])
    code, _, err = replay(tmp_path, doc, capsys)
    assert code == status, err
    assert message in err and "Traceback" not in err


def test_an_old_secret_entry_still_reads_and_scores_the_points_the_table_signed(
        tmp_path, capsys):
    blank = [STANDARD.name(c) for c in bidwhist.GAME.blank_deck(4, {"kitty": 6})]
    doc = odd_book()
    doc["hands"].insert(0, {"dealer": 2, "deck": blank, "actions": [],
                            "secret": {"points": [5, 0]}})
    code, out, _ = replay(tmp_path, doc, capsys, "--json")
    result = json.loads(out)
    assert code == 0 and result["hands"][0] == {"points": [5, 0], "detail": {"secret": True}}
    assert result["totals"] == [5, 5]  # and the odd book's deal after it
    doc["hands"][0]["actions"] = [[0, "pass"]]
    code, _, err = replay(tmp_path, doc, capsys)
    assert code == 2 and "hand 0, secret: a deal whose cards stay secret has no actions" in err
