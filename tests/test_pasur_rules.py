"""Pasur: one test per ruling of p2pcards/rules/pasur.md, and its worked example."""

from __future__ import annotations

import random

import pytest

from p2pcards.games import CHANCE, IllegalAction
from p2pcards.games.cards import STANDARD
from p2pcards.games.pasur import (
    CHANCE_STOCK,
    DONE,
    GAME,
    PLAY,
    VOID,
    PasurState,
    captures,
    stock_code,
)
from tests.helpers import cards, pasur_deck


def mask(text: str) -> int:
    return sum(1 << c for c in cards(text))


def deal(hands: dict[int, str], pool: str, stock: str = "", players: int = 2, dealer: int = 1,
         **options: int) -> PasurState:
    deck = pasur_deck(hands, pool, stock, players, dealer)
    state = GAME.deal(deck, dealer, players, GAME.resolve_options(options))
    assert isinstance(state, PasurState)
    return state


def capture_texts(card: str, pool: str) -> set[str]:
    return {STANDARD.format_mask(m) for m in captures(STANDARD.parse(card), mask(pool))}


# --------------------------------------------------------------- deck and deal


@pytest.mark.parametrize("players", [2, 3, 4])
def test_deal_gives_four_cards_each_four_to_the_pool_and_the_rest_to_the_stock(players):
    state = deal({}, "2S 3S 4S 5S", players=players, dealer=0)
    assert state.count[:players] == [4] * players
    assert state.pool.bit_count() == 4
    assert state.count[players] == 52 - 4 * players - 4


def test_deal_mapping_goes_one_card_at_a_time_from_the_dealers_left():
    deck = list(range(52))
    deck[8:12] = [0, 1, 2, 3]
    deck[0:4] = [8, 9, 10, 11]  # keep jacks out of the pool
    state = GAME.deal(deck, 1, 2, GAME.resolve_options({}))
    assert state.may[0] == (1 << 8) | (1 << 10) | (1 << 4) | (1 << 6)
    assert state.may[1] == (1 << 9) | (1 << 11) | (1 << 5) | (1 << 7)


def test_play_starts_left_of_the_dealer_and_passes_left():
    state = deal({}, "2S 3S 4S 5S", players=3, dealer=2)
    assert state.current_player() == 0
    assert GAME.next_dealer(2, 3, False) == 0
    with pytest.raises(IllegalAction, match="out of turn"):
        state.check_actor(1)


# -------------------------------------------------------------------- captures


def test_seed_example_pool_ace_two_two_four_ten():
    pool = "AS 2H 2D 4C TS"
    assert capture_texts("TH", pool) == {"AS"}
    assert capture_texts("9H", pool) == {"2H", "2D"}
    assert capture_texts("8H", pool) == {"AS 2H", "AS 2D"}
    assert capture_texts("7H", pool) == {"4C", "2H 2D"}
    assert capture_texts("6H", pool) == {"AS 4C", "AS 2H 2D"}
    assert capture_texts("5H", pool) == {"2H 4C", "2D 4C"}
    assert capture_texts("4H", pool) == {"AS 2H 4C", "AS 2D 4C"}
    assert capture_texts("3H", pool) == {"2H 2D 4C"}
    assert capture_texts("2S", pool) == {"AS 2H 2D 4C"}
    assert capture_texts("AH", pool) == {"TS"}


def test_number_card_captures_one_set_of_the_players_choice():
    state = deal({0: "7H 3C 3D 3S"}, "AS 2H 2D 4C")
    state.apply_text("play 7H take 2H 2D", 0)
    assert state.piles[0] == mask("7H 2H 2D") and state.pool == mask("AS 4C")
    other = deal({0: "7H 3C 3D 3S"}, "AS 2H 2D 4C")
    with pytest.raises(IllegalAction, match="one set of number cards totalling 4") as err:
        other.apply_text("play 7H take 2H 2D 4C", 0)  # two sets at once
    assert err.value.code == "capture"
    assert other.is_legal(other.parse_action("play 7H take 4C"))


def test_king_captures_one_king_and_queen_one_queen():
    assert capture_texts("KH", "KS KD QS 5C") == {"KS", "KD"}
    assert capture_texts("QH", "KS KD QS 5C") == {"QS"}
    assert capture_texts("QH", "KS KD 6C 5C") == set()
    state = deal({0: "KH 3C 3D 3S"}, "KS KD QS 5C")
    with pytest.raises(IllegalAction, match="a king takes exactly one king"):
        state.apply_text("play KH take KS KD", 0)


def test_jack_captures_every_jack_and_number_card_but_no_face_card():
    assert capture_texts("JH", "KS QD 5C 9D") == {"9D 5C"}
    state = deal({0: "JH 3C 3D 3S"}, "KS QD 5C 9D", stock="JS")
    with pytest.raises(IllegalAction, match="every jack and number card"):
        state.apply_text("play JH take 5C", 0)
    state.apply_text("play JH take 5C 9D", 0)
    assert state.pool == mask("KS QD")


def test_jack_with_nothing_to_take_is_added_to_the_pool():
    assert capture_texts("JH", "KS QD KD QS") == set()
    state = deal({0: "JH 3C 3D 3S"}, "KS QD KD QS")
    state.apply_text("play JH", 0)
    assert state.pool == mask("KS QD KD QS JH")


def test_card_that_can_capture_may_not_be_added_to_the_pool():
    state = deal({0: "9H 3C QD KS"}, "2S 5D 6D 8C")
    with pytest.raises(IllegalAction, match="can capture") as err:
        state.apply_text("play 9H", 0)
    assert err.value.code == "must-capture"
    state.apply_text("play KS", 0)  # the player may play another card instead
    assert state.pool & mask("KS")


def test_capture_must_take_cards_that_are_in_the_pool():
    state = deal({0: "9H 3C QD KS"}, "2S 5D 6D 8C")
    with pytest.raises(IllegalAction, match="not in the pool"):
        state.apply_text("play 9H take 2H", 0)


# ------------------------------------------------------------------------ surs


def test_capture_that_empties_the_pool_scores_a_sur():
    state = deal({0: "AH 3C 3D 3S"}, "AS 2H 3H 4D")
    state.apply_text("play AH take AS 2H 3H 4D", 0)
    assert state.pool == 0 and state.surs == [1, 0]
    partial = deal({0: "5H 3C 3D 3S"}, "AS 2H 3H KC")
    partial.apply_text("play 5H take AS 2H 3H", 0)
    assert partial.pool == mask("KC") and partial.surs == [0, 0]


def test_no_sur_for_a_capture_made_with_a_jack():
    state = deal({0: "JH 3C 3D 3S"}, "5C 9D 2S 6H", stock="KS")
    state.apply_text("play JH take 5C 9D 2S 6H", 0)
    assert state.pool == 0 and state.surs == [0, 0]


def test_no_sur_during_the_last_deal_of_the_round():
    state = play_to_last_deal()
    assert state.count[state.players] == 0
    clearing = [a for a in state.legal_actions() if a >> 6 == state.pool]
    assert clearing
    for action in clearing:
        probe = state.clone()
        probe.apply(action)
        assert probe.surs == state.surs


def play_to_last_deal() -> PasurState:
    """A round played at random until the stock is empty and a capture clears the pool."""
    rng = random.Random(11)
    for _ in range(2000):
        deck = GAME.shuffled_deck(2, {}, rng)
        if GAME.is_void_deal(deck, 2):
            continue
        state = GAME.deal(deck, 0, 2, GAME.resolve_options({}))
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                state.apply(state.chance_action(rng))
                continue
            if state.count[2] == 0 and any(
                    a >> 6 == state.pool and (a & 63) % 13 != 9 for a in state.legal_actions()):
                return state
            actions = state.legal_actions()
            state.apply(actions[rng.randrange(len(actions))])
    raise AssertionError("no clearing capture in the last deal found")


# ------------------------------------------------------- deals, jacks, the end


def test_hands_are_refilled_with_four_cards_each_when_all_are_empty():
    rng = random.Random(3)
    state = deal({0: "2C 3C 4C 5C", 1: "2D 3D 4D 5D"}, "KS QS KH QH")
    before = state.count[2]
    for _ in range(8):
        actions = state.legal_actions()
        state.apply(actions[rng.randrange(len(actions))])
    assert state.count[:2] == [4, 4] and state.count[2] == before - 8


def test_single_opening_jack_is_replaced_and_the_stock_reshuffled_secretly():
    state = deal({}, "JH 2S 3S 4S", stock="5H 6H")
    assert state.phase == CHANCE_STOCK and state.current_player() == CHANCE
    assert state.pool == mask("5H 2S 3S 4S")
    stock = state.may[2]
    assert stock & mask("JH") and not stock & mask("5H")
    view = state.view(0)
    assert view.candidates(STANDARD.parse("JH")) == [2]  # everyone knows the jack is there
    order = sorted(c for c in range(52) if stock >> c & 1)
    with pytest.raises(IllegalAction, match="exactly the"):
        state.apply(stock_code(order[1:]))
    state.apply_text("stock " + STANDARD.format_cards(order), "chance")
    assert state.phase == PLAY and state.stock[::-1] == order
    assert state.format_action(stock_code(order), seat=0) == "stock" + " ?" * len(order)


def test_opening_jack_replaced_by_a_jack_voids_the_deal():
    state = deal({}, "JH 2S 3S 4S", stock="JC")
    assert state.phase == VOID and state.is_terminal()
    assert GAME.is_void_deal(pasur_deck({}, "JH 2S 3S 4S", "JC"), 2)
    assert GAME.next_dealer(1, 2, True) == 1  # the same dealer deals again


def test_two_opening_jacks_void_the_deal():
    state = deal({}, "JH JS 3S 4S")
    assert state.phase == VOID
    with pytest.raises(IllegalAction, match="over"):
        state.apply_text("play 2C", 0)


def test_last_capture_takes_what_is_left_in_the_pool():
    state = finished_round(seed=5)
    assert state.phase == DONE and state.pool == 0
    assert sum(p.bit_count() for p in state.piles) == 52


def test_pool_goes_to_nobody_if_nobody_captured():
    state = deal({}, "2S 3S 4S 5S", players=2, dealer=1)
    # the last two cards of a round in which nothing was captured (set up by hand)
    state.may[:3] = [mask("KC"), mask("QD"), 0]
    state.count[:3] = [1, 1, 0]
    state.stock = []
    state.apply_text("play KC", 0)
    state.apply_text("play QD", 1)
    assert state.phase == DONE and state.last_capturer == -1
    assert state.pool == mask("2S 3S 4S 5S KC QD") and state.piles == [0, 0]


def finished_round(seed: int, players: int = 2, **options: int) -> PasurState:
    rng = random.Random(seed)
    while True:
        deck = GAME.shuffled_deck(players, {}, rng)
        state = GAME.deal(deck, 0, players, GAME.resolve_options(options))
        if state.phase != VOID:
            break
    while not state.is_terminal():
        if state.current_player() == CHANCE:
            state.apply(state.chance_action(rng))
            continue
        actions = state.legal_actions()
        state.apply(actions[rng.randrange(len(actions))])
    return state


# --------------------------------------------------------------------- scoring


def scored(piles: list[str], surs: list[int], **options: int) -> list[int]:
    state = deal({}, "2S 3S 4S 5S", players=len(piles), **options)
    state.piles = [mask(p) for p in piles]
    state.surs = surs
    state.phase = DONE
    return state.points()


def test_most_clubs_score_7_and_13_as_a_variant():
    assert scored(["3C 4C 5C", "6C 7C"], [0, 0]) == [7, 0]
    assert scored(["3C 4C 5C", "6C 7C"], [0, 0], clubs=13) == [13, 0]


def test_a_tie_for_most_clubs_scores_nobody():
    assert scored(["3C 4C", "6C 7C", "8C"], [0, 0, 0]) == [0, 0, 0]
    assert scored(["3C 4C", "6C 7C"], [0, 0]) == [0, 0]


def test_card_points_ten_of_diamonds_two_of_clubs_aces_and_jacks():
    assert scored(["TD", "2C 3C", "AS AH JD", "JS"], [0, 0, 0, 0]) == [3, 2 + 7, 3, 1]


def test_each_sur_scores_5_or_10_as_a_variant():
    assert scored(["3H", "4H"], [2, 1]) == [10, 5]
    assert scored(["3H", "4H"], [2, 1], sur=10) == [20, 10]


def test_round_points_add_up_to_20_plus_surs_when_one_player_has_most_clubs():
    state = finished_round(seed=8, players=3)
    clubs = sorted(((p >> 39) & 0x1FFF).bit_count() for p in state.piles)
    base = 20 if clubs[-1] > clubs[-2] else 13
    assert sum(state.points()) == base + 5 * sum(state.surs)


def test_game_is_won_at_62_by_the_highest_and_a_tie_for_highest_plays_on():
    options = GAME.resolve_options({})
    assert GAME.winner([61, 50], 3, options) is None
    assert GAME.winner([62, 50], 3, options) == 0
    assert GAME.winner([64, 70, 12], 4, options) == 1
    assert GAME.winner([70, 70, 12], 4, options) is None
    assert GAME.winner([30, 29], 2, GAME.resolve_options({"target": 30})) == 0


def test_proven_illegal_play_scores_zero_for_the_offender_only():
    state = finished_round(seed=4, players=3)
    normal = state.points()
    state.penalize(1, "not-held")
    assert state.points()[1] == 0
    assert [p for i, p in enumerate(state.points()) if i != 1] == \
        [p for i, p in enumerate(normal) if i != 1]


def test_actions_parse_in_any_case_and_format_canonically():
    state = deal({0: "7H 3C 3D 3S"}, "AS 2H 2D 4C")
    assert state.format_action(state.parse_action("PLAY 7h TAKE 2d 2h")) == "play 7H take 2H 2D"
    assert state.format_action(state.parse_action("play 10♣")) == "play TC"
    with pytest.raises(ValueError, match="unknown card 'XZ'"):
        state.parse_action("play XZ")
