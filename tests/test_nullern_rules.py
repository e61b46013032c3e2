"""Nullern: one test per ruling of p2pcards/rules/nullern.md, and random play with exact views."""

from __future__ import annotations

import random
from typing import Any

import pytest

from p2pcards.games import ActionSyntaxError, IllegalAction, OptionError
from p2pcards.games.core import HandState, pick
from p2pcards.games.nullern import (
    BID,
    BIDDING,
    BLIND_ROUND,
    DONE,
    GAME,
    NULLERN,
    PLAY,
    ROUND_CARDS,
    NullernState,
    parse_action,
    prize,
    random_playout,
)
from p2pcards.history import HandRecord, History, loads, replay
from tests import sim
from tests.helpers import arrange

OPTIONS = GAME.resolve_options({})


def cards(text: str) -> list[int]:
    return NULLERN.parse_many(text.split())


def mask(text: str) -> int:
    return sum(1 << c for c in cards(text))


def nullern_deck(hands: dict[int, str], trump: str, players: int = 4, dealer: int = 3,
                 number: int = 1) -> list[int]:
    """A deck dealing ``hands`` and turning ``trump`` in round ``number + 1``."""
    dealt = ROUND_CARDS[number] * players
    slots = [(dealer + 1 + i) % players if i < dealt else (-1 if i == dealt else -2)
             for i in range(80)]
    wanted = {seat: cards(text) for seat, text in hands.items()}
    wanted[-1] = cards(trump)
    return arrange(slots, wanted, list(range(80)))


def deal(hands: dict[int, str], trump: str, players: int = 4, dealer: int = 3,
         number: int = 1) -> NullernState:
    deck = nullern_deck(hands, trump, players, dealer, number)
    return GAME.deal(deck, dealer, players, OPTIONS, number=number)


def run(state: HandState, *moves: tuple[int, str]) -> HandState:
    for seat, text in moves:
        state.apply_text(text, seat)
    return state


def bid_all(state: NullernState, bids: list[int]) -> NullernState:
    """Every seat bids ``bids[seat]``, in turn from the dealer's left."""
    for i in range(state.players):
        seat = (state.dealer + 1 + i) % state.players
        state.apply_text(f"bid {bids[seat]}", seat)
    return state


def trick_winner(state: NullernState, plays: str) -> int:
    before = state.tricks[:]
    leader = state.current_player()
    for i, card in enumerate(plays.split()):
        state.apply_text(f"play {card}", (leader + i) % state.players)
    won = [s for s in range(state.players) if state.tricks[s] > before[s]]
    assert len(won) == 1
    return won[0]


# Two cards each (round 2), dealer 3: seat 0 bids first. Trump blue.
TWO_CARD_HANDS = {0: "R20 G1", 1: "Y5 Y6", 2: "G7 G8", 3: "R2 R3"}


def two_card_round(bids: list[int]) -> NullernState:
    """Seat 0 takes R20's trick and leads G1, which seat 2's G8 takes."""
    state = bid_all(deal(TWO_CARD_HANDS, "B20"), bids)
    assert trick_winner(state, "R20 Y5 G7 R2") == 0
    assert trick_winner(state, "G1 Y6 G8 R3") == 2
    assert state.is_terminal()
    return state


# ------------------------------------------------------------ deck and seats


def test_deck_has_80_cards_in_four_colours_ranked_1_to_20():
    assert GAME.deck(4, OPTIONS) == list(range(80))
    assert NULLERN.parse("R1") == 0 and NULLERN.parse("Y1") == 20
    assert NULLERN.parse("G20") == 59 and NULLERN.parse("B20") == 79
    assert NULLERN.name(45) == "G6"
    assert {NULLERN.name(c)[0] for c in range(80)} == set("RYGB")
    assert sorted({int(NULLERN.name(c)[1:]) for c in range(80)}) == list(range(1, 21))


def test_two_to_seven_players_default_four_each_for_themselves():
    assert GAME.player_counts == (2, 3, 4, 5, 6, 7) and GAME.default_players == 4
    assert GAME.units == "seats" and GAME.unit_count(6) == 6 and GAME.options == {}
    with pytest.raises(OptionError, match="Nullern is played by 2, 3, 4, 5, 6, 7 players"):
        GAME.check_players(8)
    state = GAME.deal(list(range(80)), 0, 7, OPTIONS, number=9)
    assert state.count == [10] * 7 + [80 - 71]  # 10 cards each and the trump card for 7


def test_twenty_rounds_one_to_ten_to_one_then_blind():
    assert ROUND_CARDS == (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1)
    for number, k in enumerate(ROUND_CARDS):
        state = GAME.deal(list(range(80)), 0, 4, OPTIONS, number=number)
        assert state.count[:4] == [k] * 4 and state.cards == k
        assert state.blind == (number == BLIND_ROUND == 19)
        assert state.detail()["round"] == number + 1
    with pytest.raises(ValueError, match="20 rounds"):
        GAME.deal(list(range(80)), 0, 4, OPTIONS, number=20)


def test_all_80_cards_are_reshuffled_every_round():
    rng = random.Random(3)
    for number in (0, 9, 19):
        deck = GAME.shuffled_deck(5, OPTIONS, rng)
        assert sorted(deck) == list(range(80))
        state = GAME.deal(deck, 0, 5, OPTIONS, number=number)
        placed = 0
        for m in state.may:
            placed |= m
        assert placed | 1 << state.trump_card == (1 << 80) - 1


def test_first_dealer_random_then_the_deal_rotates_clockwise():
    rng = random.Random(1)
    assert {GAME.first_dealer(5, rng) for _ in range(100)} == set(range(5))
    assert GAME.next_dealer(4, 5, False) == 0 and GAME.next_dealer(1, 5, False) == 2


def test_deal_mapping_left_of_the_dealer_then_the_trump_card_then_the_rest():
    state = GAME.deal(list(range(80)), 1, 3, OPTIONS, number=1)  # 2 cards each
    assert state.may[2] == (1 << 0) | (1 << 3)
    assert state.may[0] == (1 << 1) | (1 << 4)
    assert state.may[1] == (1 << 2) | (1 << 5)
    assert state.trump_card == 6 and state.count[3] == 73
    assert state.may[3] == ((1 << 80) - 1) & ~((1 << 7) - 1)


def test_trump_is_the_colour_of_the_turned_card():
    state = deal({}, "G13", number=2)
    assert state.trump == 2 and state.trump_card == NULLERN.parse("G13")
    assert state.detail()["trump"] == "G"
    for seat in range(4):
        view = state.view(seat)
        assert view.trump_card == state.trump_card  # turned face up: public
        assert not any(m >> state.trump_card & 1 for m in view.may)


def test_each_seat_sees_its_own_hand_and_the_turned_card_only():
    deck = nullern_deck({0: "R1 R2", 1: "Y1 Y2", 2: "G1 G2", 3: "B1 B2"}, "B20")
    observed = GAME.observed_deck(deck, 3, 4, OPTIONS, 2, number=1)
    assert [c for c in observed if c is not None] == cards("G1 G2 B20")
    view = GAME.deal(observed, 3, 4, OPTIONS, observer=2, number=1)
    full = GAME.deal(deck, 3, 4, OPTIONS, number=1)
    assert view.may[2] == mask("G1 G2")
    assert view.may[0] == view.may[4] == ((1 << 80) - 1) & ~mask("G1 G2 B20")
    assert sim.state_key(view) == sim.state_key(full.view(2))


# ------------------------------------------------------------------ bidding


def test_bidding_goes_once_around_from_the_dealers_left():
    state = deal({}, "B20", dealer=1, number=2)
    assert state.phase == BIDDING and state.current_player() == 2
    with pytest.raises(IllegalAction, match="out of turn"):
        state.apply_text("bid 1", 0)
    run(state, (2, "bid 1"), (3, "bid 0"), (0, "bid 2"), (1, "bid 0"))
    assert state.phase == PLAY and state.bids == [2, 0, 1, 0]


def test_bids_run_from_zero_to_the_cards_dealt():
    state = deal({}, "B20", number=2)  # 3 cards
    assert state.legal_actions() == [BID, BID + 1, BID + 2, BID + 3]
    with pytest.raises(IllegalAction, match="bids run from 0 to 3 this round") as err:
        state.apply_text("bid 4", 0)
    assert err.value.code == "bid"
    with pytest.raises(IllegalAction, match="no card is played during the bidding"):
        state.apply(state.may[0].bit_length() - 1)


def test_no_restriction_on_the_total_of_the_bids():
    assert bid_all(deal({}, "B20", number=2), [3, 3, 3, 3]).phase == PLAY
    assert bid_all(deal({}, "B20", number=2), [0, 0, 0, 0]).phase == PLAY


def test_highest_bidder_leads_earliest_on_a_tie():
    state = bid_all(deal({}, "B20", dealer=3, number=2), [1, 2, 2, 0])
    assert state.current_player() == 1 and state.leader == 1
    # dealer 1: the bidding order is 2, 3, 0, 1, so seat 2 is earlier than seat 0
    state = bid_all(deal({}, "B20", dealer=1, number=2), [3, 0, 3, 1])
    assert state.current_player() == 2
    state = bid_all(deal({}, "B20", dealer=0, number=2), [0, 0, 0, 0])
    assert state.current_player() == 1  # all zero: the first bidder leads


# --------------------------------------------------------------------- play


def test_leading_anything_is_allowed():
    hands = {0: "R5 B3 G2", 1: "Y1 Y2 Y3", 2: "G4 G5 G6", 3: "R1 R2 R3"}
    state = bid_all(deal(hands, "B20", number=2), [1, 0, 0, 0])
    assert state.legal_mask() == mask("R5 B3 G2")
    assert state.is_legal(state.parse_action("play B3"))


def test_no_need_to_follow_a_non_trump_colour():
    hands = {0: "R5 R6 G2", 1: "R7 Y2 Y3", 2: "R8 B4 G6", 3: "R1 R2 R3"}
    state = bid_all(deal(hands, "B20", number=2), [1, 0, 0, 0])
    state.apply_text("play R5", 0)
    assert state.legal_mask() == mask("R7 Y2 Y3")
    state.apply_text("play Y2", 1)  # holds R7, need not play it
    state.apply_text("play B4", 2)  # a trump is allowed too
    assert state.void[1] == 0 and state.void[2] == 0  # nothing is claimed


def test_trump_lead_obliges_a_trump_if_held():
    hands = {0: "B10 R6 G2", 1: "B3 Y19 Y3", 2: "R8 R4 G6", 3: "B12 B2 R3"}
    state = bid_all(deal(hands, "B20", number=2), [1, 0, 0, 0])
    state.apply_text("play B10", 0)
    assert state.legal_mask() == mask("B3")
    with pytest.raises(IllegalAction, match="a trump was led: seat 1 holds a trump") as err:
        state.apply_text("play Y19", 1)
    assert err.value.code == "renege"
    state.apply_text("play B3", 1)  # a lower trump: it need not beat the lead
    assert state.legal_mask() == mask("R8 R4 G6")  # no trump: anything
    state.apply_text("play G6", 2)
    assert state.void[2] == 0xFFFFF << 60  # failing to play a trump is a public claim
    assert state.legal_mask() == mask("B12 B2")


def test_a_trump_played_by_a_follower_obliges_nobody():
    hands = {0: "R10 R6 G2", 1: "B3 Y19 Y3", 2: "B8 R4 G6", 3: "B12 B2 R3"}
    state = bid_all(deal(hands, "B20", number=2), [1, 0, 0, 0])
    run(state, (0, "play R10"), (1, "play B3"))
    assert state.legal_mask() == mask("B8 R4 G6")
    state.apply_text("play R4", 2)


def test_strong_enough_remark_for_zero_bidders_is_not_applied():
    """p2pcards/rules/nullern.md: the unclear "strong enough" remark is not applied."""
    hands = {0: "B10 R6 G2", 1: "R1 Y19 Y3", 2: "R8 R4 G6", 3: "B12 B2 R3"}
    state = bid_all(deal(hands, "B20", number=2), [1, 0, 0, 0])
    state.apply_text("play B10", 0)
    assert state.legal_mask() == mask("R1 Y19 Y3")  # the zero bidder may play its weakest
    state.apply_text("play R1", 1)


def test_highest_rank_of_any_colour_wins_without_trumps():
    hands = {0: "R5 R6", 1: "Y17 Y3", 2: "G3 G6", 3: "R9 R3"}
    state = bid_all(deal(hands, "B20"), [1, 0, 0, 0])
    assert trick_winner(state, "R5 Y17 G3 R9") == 1


def test_equal_ranks_first_played_wins():
    hands = {0: "R5 R6", 1: "Y12 Y3", 2: "G12 G6", 3: "R12 R3"}
    state = bid_all(deal(hands, "B20"), [1, 0, 0, 0])
    assert trick_winner(state, "R5 Y12 G12 R12") == 1


def test_trump_beats_higher_ranks():
    hands = {0: "R20 R6", 1: "B1 Y3", 2: "G19 G6", 3: "R12 R3"}
    state = bid_all(deal(hands, "B18"), [1, 0, 0, 0])
    assert trick_winner(state, "R20 B1 G19 R12") == 1
    hands = {0: "R20 R6", 1: "B1 Y3", 2: "B2 G6", 3: "R12 R3"}
    state = bid_all(deal(hands, "B18"), [1, 0, 0, 0])
    assert trick_winner(state, "R20 B1 B2 R12") == 2  # between trumps the rank decides


def test_trick_winner_leads_the_next_trick():
    hands = {0: "R5 R6", 1: "Y17 Y3", 2: "G3 G6", 3: "R9 R3"}
    state = bid_all(deal(hands, "B20"), [1, 0, 0, 0])
    trick_winner(state, "R5 Y17 G3 R9")
    assert state.current_player() == 1 and state.leader == 1
    assert trick_winner(state, "Y3 G6 R3 R6") == 2
    assert state.is_terminal() and state.tricks == [0, 1, 1, 0]


# ------------------------------------------------------------------ scoring


def test_exact_zero_scores_20():
    assert prize(0, 0) == (20, 0)
    state = two_card_round([1, 0, 1, 0])
    assert state.points()[1] == 20 and state.points()[3] == 20


def test_exact_bid_scores_10_plus_bid():
    assert prize(1, 1) == (11, 0)  # "10 + 1" for one trick guessed
    assert prize(3, 3) == (13, 0)  # the rulebook: bid 3, got exactly 3: 13
    assert prize(10, 10) == (20, 0)
    state = two_card_round([1, 0, 1, 0])
    assert state.points() == [11, 20, 11, 20]


def test_missed_bid_scores_tricks_and_a_grasshopper():
    assert prize(1, 0) == (0, 1)  # bid 1, took none: nothing and a grasshopper
    assert prize(2, 4) == (4, 1)  # too many: the tricks taken and a grasshopper
    assert prize(3, 1) == (1, 1)  # too few alike
    assert prize(0, 2) == (2, 1)  # bid zero but took tricks
    state = two_card_round([2, 1, 0, 1])
    detail = state.detail()
    assert detail["bids"] == [2, 1, 0, 1] and detail["tricks"] == [1, 0, 1, 0]
    assert detail["prizes"] == [1, 0, 1, 0] and detail["grasshoppers"] == [1, 1, 1, 1]


def test_grasshopper_costs_5_in_the_final_score():
    state = two_card_round([2, 1, 0, 0])
    assert state.points() == [1 - 5, 0 - 5, 1 - 5, 20]
    assert state.returns() == [-4.0, -5.0, -4.0, 20.0]


def test_final_ranking_highest_wins_tie_is_shared():
    assert GAME.winner([100, 90, 80], 19, OPTIONS) is None  # only after the 20th round
    assert GAME.winner([100, 90, 80], 20, OPTIONS) == 0
    assert GAME.winner([-5, -3, -9], 20, OPTIONS) == 1
    assert GAME.winner([90, 120, 85, 120], 20, OPTIONS) == [1, 3]


# -------------------------------------------------------------- blind round


def test_blind_round_nobody_sees_their_own_card():
    rng = random.Random(8)
    deck = GAME.shuffled_deck(4, OPTIONS, rng)
    full = GAME.deal(deck, 2, 4, OPTIONS, number=BLIND_ROUND)
    assert full.cards == 1 and full.count[:4] == [1, 1, 1, 1]
    views = []
    for seat in range(4):
        observed = GAME.observed_deck(deck, 2, 4, OPTIONS, seat, number=BLIND_ROUND)
        assert [c for c in observed if c is not None] == [deck[4]]  # the trump card only
        view = GAME.deal(observed, 2, 4, OPTIONS, observer=seat, number=BLIND_ROUND)
        assert view.candidates(deck[seat - 3]) == [0, 1, 2, 3, 4]  # own card unknown
        assert sim.state_key(view) == sim.state_key(full.view(seat))
        assert full.view(seat).may[seat] != full.may[seat]
        views.append(view)
    assert full.legal_actions() == [BID, BID + 1]  # bid 0 or 1
    for seat, text in [(3, "bid 0"), (0, "bid 1"), (1, "bid 0"), (2, "bid 1")]:
        full.apply_text(text, seat)
        for view in views:
            view.apply_text(text, seat)
    assert full.current_player() == 0  # the earliest of the highest bidders leads
    for seat in (0, 1, 2, 3):  # the cards are revealed as plays in order from the leader
        assert full.legal_actions() == [full.may[seat].bit_length() - 1]
        text = full.format_action(full.legal_actions()[0])
        full.apply_text(text, seat)
        for view in views:
            view.apply_text(text, seat)
            assert sim.state_key(view) == sim.state_key(full.view(view.observer))
    assert full.is_terminal()
    dealt = sum(1 << deck[i] for i in range(4))
    assert full.played == dealt and all(v.played == dealt for v in views)  # all known now
    assert all(v.may[:4] == [0, 0, 0, 0] and not v.proofs for v in views)


def test_blind_card_is_checked_by_the_full_engine_only():
    deck = nullern_deck({0: "R3", 1: "Y4", 2: "G5", 3: "B6"}, "B20", number=BLIND_ROUND)
    full = GAME.deal(deck, 3, 4, OPTIONS, number=BLIND_ROUND)
    view = GAME.deal(GAME.observed_deck(deck, 3, 4, OPTIONS, 0, number=BLIND_ROUND), 3, 4,
                     OPTIONS, observer=0, number=BLIND_ROUND)
    for state in (full, view):
        bid_all(state, [0, 0, 0, 1])
        assert state.current_player() == 3
    with pytest.raises(IllegalAction, match="seat 3 does not hold R3"):
        full.apply_text("play R3", 3)
    assert view.is_legal(view.parse_action("play R3"))  # seat 0 cannot know its own card
    with pytest.raises(IllegalAction, match="face up"):
        view.apply_text("play B20", 3)
    run(full, (3, "play B6"), (0, "play R3"), (1, "play Y4"), (2, "play G5"))
    assert full.tricks == [0, 0, 0, 1] and full.points() == [20, 20, 20, 11]


# ---------------------------------------------------- claims, proofs, penalty


def test_failing_to_play_a_trump_to_a_trump_lead_is_a_claim_a_later_trump_proves():
    hands = {0: "B1 R2", 1: "G5 B9", 2: "Y1 Y2"}
    deck = nullern_deck(hands, "B20", players=3, dealer=2)
    full = GAME.deal(deck, 2, 3, OPTIONS, number=1)
    view = GAME.deal(GAME.observed_deck(deck, 2, 3, OPTIONS, 2, number=1), 2, 3, OPTIONS,
                     observer=2, number=1)
    for state in (full, view):
        bid_all(state, [1, 0, 1])
        state.apply_text("play B1", 0)
    with pytest.raises(IllegalAction, match="a trump was led: seat 1 holds a trump"):
        full.apply_text("play G5", 1)
    view.apply_text("play G5", 1)  # seat 2 cannot tell: it records the claim
    assert not view.may[1] & 0xFFFFF << 60
    run(view, (2, "play Y1"), (0, "play R2"), (1, "play B9"))
    assert [(p.seat, p.code) for p in view.proofs] == [(1, "renege")]


def test_penalty_offender_scores_zero_and_takes_a_grasshopper():
    """p2pcards/rules/nullern.md: the offender scores 0 and takes a grasshopper; the others
    score the round as played, their bids against the tricks taken when it stopped."""
    state = bid_all(deal(TWO_CARD_HANDS, "B20"), [1, 0, 1, 0])
    assert trick_winner(state, "R20 Y5 G7 R2") == 0
    state.apply_text("play G1", 0)  # an unfinished trick counts for nobody
    state.penalize(1, "renege")
    assert state.is_terminal()
    assert state.points() == [11, -5, 0 - 5, 20]
    detail = state.detail()
    assert detail["penalty"] == {"seat": 1, "reason": "renege"}
    assert detail["prizes"] == [11, 0, 0, 20] and detail["grasshoppers"] == [0, 1, 1, 0]


def test_penalty_during_the_bidding_scores_nothing_for_seats_yet_to_bid():
    state = deal({}, "B20", number=2)
    run(state, (0, "bid 0"), (1, "bid 2"))
    state.penalize(2, "silent")
    assert state.points() == [20, 0 - 5, -5, 0]
    assert state.detail()["bids"] == [0, 2, None, None]


def test_proven_illegal_play_in_a_history_is_penalized():
    deck = nullern_deck({0: "R3", 1: "Y4", 2: "G5", 3: "B6"}, "B20", number=0)
    actions: list[tuple[int | str, str]] = [(0, "bid 1"), (1, "bid 0"), (2, "bid 0"),
                                            (3, "bid 0"), (0, "play R3"), (1, "play Y5")]
    record = HandRecord(3, [NULLERN.name(c) for c in deck], actions,
                        penalty={"seat": 1, "index": 5, "reason": "not-held"})
    result = replay(loads(History("nullern", ["a", "b", "c", "d"], {}, [record]).dumps()))
    assert result.hands[0].points == [0 - 5, -5, 20, 20]  # seat 0 had not taken its trick
    assert result.totals == [-5, -5, 20, 20] and result.winner is None


# ------------------------------------------------------------------ texts


def test_actions_parse_in_any_case_and_format_canonically():
    state = deal({}, "B20", number=9)
    for text, canonical in [("BID 3", "bid 3"), ("Bid 0", "bid 0"), ("play r7", "play R7"),
                            ("PLAY b20", "play B20"), ("play  g1", "play G1")]:
        assert state.format_action(state.parse_action(text)) == canonical
        assert state.format_action(state.parse_action(text), seat=2) == canonical
    assert parse_action("bid 10") == BID + 10 and parse_action("play Y1") == 20


@pytest.mark.parametrize("text", ["", "bid", "bid 11", "bid -1", "bid two", "play", "play R21",
                                  "play X3", "play ?", "pass", "play R1 R2"])
def test_unreadable_actions_are_syntax_errors(text):
    with pytest.raises(ActionSyntaxError):
        parse_action(text)


def test_summary_detail_and_narration_name_the_trick_winners():
    state = bid_all(deal(TWO_CARD_HANDS, "B20"), [2, 0, 1, 0])
    names = ["ana", "ben", "cy", "dee"]
    before = state.clone()
    state.apply_text("play R20", 0)
    assert state.narrate(before, 0, names) == []
    run(state, (1, "play Y5"), (2, "play G7"))
    before = state.clone()
    state.apply_text("play R2", 3)
    assert state.narrate(before, NULLERN.parse("R2"), names) == [
        "trick 1: ana wins with R20 (1 taken, bid 2)"]
    run(state, (0, "play G1"), (1, "play Y6"), (2, "play G8"), (3, "play R3"))
    assert state.summary(names) == ("round 2, 2 cards, trump blue (B20 turned); bids 2/0/1/0; "
                                    "tricks 1/0/1/0; grasshoppers: ana; points -4 20 11 20")
    assert state.detail() == {"round": 2, "cards": 2, "trump": "B", "bids": [2, 0, 1, 0],
                              "tricks": [1, 0, 1, 0], "prizes": [1, 20, 11, 20],
                              "grasshoppers": [1, 0, 0, 0]}
    fresh = deal(TWO_CARD_HANDS, "B20")
    before = fresh.clone()
    bid_all(fresh, [0, 0, 1, 0])
    assert fresh.narrate(before, BID, names) == ["bids total 1 for 2 tricks; cy leads"]


# ------------------------------------------------------------- random play


# rounds checked for each player count: all sizes, the 10-card round and the blind one
SIM_ROUNDS = {2: 1200, 3: 900, 4: 700, 5: 500, 6: 400, 7: 300}


@pytest.mark.parametrize("players", sorted(SIM_ROUNDS))
def test_random_rounds_keep_every_view_exact(players):
    rng = random.Random(f"nullern-views:{players}")
    deals = SIM_ROUNDS[players]
    numbers = [9, BLIND_ROUND] + [rng.randrange(20) for _ in range(deals - 2)]
    for number in numbers:
        run = sim.run_deal(GAME, players, {}, rng, number=number)
        state = run.state
        assert isinstance(state, NullernState) and state.phase == DONE
        k = ROUND_CARDS[number]
        assert sum(state.tricks) == k and run.views_checked == players * (players + k * players)
        prizes, hoppers = state.results()
        assert state.points() == [p - 5 * g for p, g in zip(prizes, hoppers, strict=True)]


def test_random_playout_plays_legal_rounds_to_the_end():
    rng = random.Random(4)
    for number in range(20):
        for players in (2, 4, 7):
            state = GAME.deal(GAME.shuffled_deck(players, OPTIONS, rng), number % players,
                              players, OPTIONS, number=number)
            random_playout(state, rng)
            assert state.is_terminal() and sum(state.tricks) == ROUND_CARDS[number]
            assert state.moves == players * (1 + ROUND_CARDS[number])
            assert all(0 <= b <= ROUND_CARDS[number] for b in state.bids)


def play_game(players: int, seed: int) -> tuple[History, list[int]]:
    """A whole 20-round game at random with full information; its history and totals."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    history = History(GAME.name, names, {}, [])
    totals = [0] * players
    dealer = GAME.first_dealer(players, rng)
    for number in range(20):
        deck = GAME.shuffled_deck(players, OPTIONS, rng)
        state = GAME.deal(deck, dealer, players, OPTIONS, number=number)
        record = HandRecord(dealer, [NULLERN.name(c) for c in deck])
        while not state.is_terminal():
            actions = state.legal_actions()
            action = actions[rng.randrange(len(actions))]
            record.actions.append((state.current_player(), state.format_action(action)))
            state.apply(action)
        totals = [t + p for t, p in zip(totals, state.points(), strict=True)]
        history.hands.append(record)
        dealer = GAME.next_dealer(dealer, players, False)
    return history, totals


def test_a_whole_game_replays_from_its_history():
    for players, seed in [(3, 1), (5, 2), (7, 3)]:
        history, totals = play_game(players, seed)
        result = replay(loads(history.dumps()))
        assert result.totals == totals and result.complete
        assert result.winner == GAME.winner(totals, 20, OPTIONS)
        details: list[Any] = [h.detail for h in result.hands]
        assert [d["cards"] for d in details] == list(ROUND_CARDS)
        assert all(sum(d["tricks"]) == d["cards"] for d in details)


def test_the_rollout_loop_plays_exactly_like_one_card_at_a_time():
    """``random_playout`` finishes full-information rounds in one tight loop; it must
    make the same moves from the same random draws as ``_play`` card by card, for
    every round size and player count, from the first lead and from mid-trick."""
    rng = random.Random("rollout-loop")
    checked = 0
    for _ in range(300):
        players = rng.randrange(2, 8)
        state = GAME.deal(GAME.shuffled_deck(players, OPTIONS, rng), rng.randrange(players),
                          players, OPTIONS, number=rng.randrange(20))
        while state.phase == BIDDING:
            actions = state.legal_actions()
            state.apply(actions[rng.randrange(len(actions))])
        for _ in range(rng.randrange(players * state.cards)):
            actions = state.legal_actions()
            state.apply(actions[rng.randrange(len(actions))])
        if state.is_terminal():
            continue
        checked += 1
        one_by_one = state.clone()
        seed = rng.random()
        draws = random.Random(seed).random
        while not one_by_one.is_terminal():
            one_by_one._play(pick(one_by_one.legal_mask(), draws()))
            one_by_one.moves += 1
        random_playout(state, random.Random(seed))
        assert state.is_terminal()
        assert state.tricks == one_by_one.tricks and state.played == one_by_one.played
        assert state.may == one_by_one.may and state.count == one_by_one.count
        assert (state.moves, state.turn, state.leader) == (
            one_by_one.moves, one_by_one.turn, one_by_one.leader)
        assert state.points() == one_by_one.points()
    assert checked > 200
