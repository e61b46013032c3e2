"""Bid Whist: one test per ruling of p2pcards/rules/bidwhist.md."""

from __future__ import annotations

import random

import pytest

from p2pcards.games import IllegalAction, bidwhist
from p2pcards.games.bidwhist import (
    DECLARE,
    DISCARD_PHASE,
    DISCARD_PILE,
    GAME,
    KITTY,
    PLAY,
    BidWhistState,
    first_dealer,
    hand_points,
    plain_discard,
)
from p2pcards.games.cards import STANDARD
from p2pcards.games.core import pick
from tests.helpers import bidwhist_deck, cards
from tests.sim import choose

SPADES = "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S"
HEARTS = "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H"
DIAMONDS = "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D"
CLUBS = "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C"
TWOS_AND_JOKERS = "2S 2H 2D 2C BJ LJ"


def mask(text: str) -> int:
    return sum(1 << c for c in cards(text))


def deal(hands: dict[int, str], kitty_cards: str = "", dealer: int = 3, **options: int
         ) -> BidWhistState:
    opts = GAME.resolve_options(options)
    deck = bidwhist_deck(hands, kitty_cards, dealer, opts["kitty"])
    state = GAME.deal(deck, dealer, 4, opts)
    assert isinstance(state, BidWhistState)
    return state


def run(state: BidWhistState, *moves: tuple[int, str]) -> BidWhistState:
    for seat, text in moves:
        state.apply_text(text, seat)
    return state


def suits_deal(**options: int) -> BidWhistState:
    """Seat 0 spades, 1 hearts, 2 diamonds, 3 clubs; the twos and jokers in the kitty."""
    return deal({0: SPADES, 1: HEARTS, 2: DIAMONDS, 3: CLUBS}, TWOS_AND_JOKERS, **options)


def won_bid(text: str, declaration: str, discard: str, **options: int) -> BidWhistState:
    """Seat 0 wins with ``text`` (the others pass), declares and discards."""
    state = suits_deal(**options)
    return run(state, (0, f"bid {text}"), (1, "pass"), (2, "pass"), (3, "pass"),
               (0, declaration), (0, f"discard {discard}"))


# ------------------------------------------------------------------ deck, deal


def test_deck_has_54_cards_12_each_and_a_6_card_kitty():
    state = suits_deal()
    assert len(GAME.deck(4, GAME.resolve_options({}))) == 54
    assert state.count[:4] == [12, 12, 12, 12] and state.count[KITTY] == 6


def test_kitty_5_variant_has_53_cards_big_joker_only_and_bids_from_3():
    options = GAME.resolve_options({"kitty": 5})
    deck = GAME.deck(4, options)
    assert len(deck) == 53 and STANDARD.parse("BJ") in deck and STANDARD.parse("LJ") not in deck
    state = deal({0: SPADES}, "2S 2H 2D 2C BJ", kitty=5)
    assert state.count[KITTY] == 5
    run(state, (0, "bid 3 special"), (1, "pass"), (2, "pass"), (3, "pass"), (0, "trump S"))
    with pytest.raises(IllegalAction, match="exactly 5 cards"):
        state.apply_text("discard 2H 2D 2C BJ 3S 4S", 0)
    state.apply_text("discard 2H 2D 2C 3S 4S", 0)
    assert state.phase == PLAY and state.books == [1, 0]
    four = suits_deal()
    with pytest.raises(IllegalAction, match="bids run from 4 to 7"):
        four.apply_text("bid 3 cards", 0)


def test_first_dealer_is_the_first_seat_dealt_a_diamond():
    order = cards("AS KH 2C 3S 4S 9D QC")
    assert first_dealer(order) == 5 % 4
    assert first_dealer(cards("BJ 2D")) == 1


def test_deal_mapping_starts_left_of_the_dealer_and_ends_in_the_kitty():
    deck = list(range(54))
    state = GAME.deal(deck, 1, 4, GAME.resolve_options({}))
    assert state.may[2] >> 0 & 1 and state.may[3] >> 1 & 1 and state.may[0] >> 2 & 1
    assert state.may[KITTY] == sum(1 << c for c in range(48, 54))


def test_deal_rotates_clockwise():
    assert GAME.next_dealer(3, 4, False) == 0


# -------------------------------------------------------------------- bidding


def test_bidding_goes_once_around_starting_left_of_the_dealer():
    state = suits_deal()  # dealer 3
    assert state.current_player() == 0
    with pytest.raises(IllegalAction, match="out of turn"):
        state.apply_text("pass", 1)
    run(state, (0, "pass"), (1, "bid 4 cards"), (2, "pass"), (3, "pass"))
    assert state.phase == DECLARE and state.bidder == 1 and state.current_player() == 1


def test_bids_must_be_strictly_higher_in_the_order_cards_special_notrump():
    state = suits_deal()
    state.apply_text("bid 4 cards", 0)
    with pytest.raises(IllegalAction, match="higher than 4 cards"):
        state.apply_text("bid 4 special", 1)
    with pytest.raises(IllegalAction, match="higher"):
        state.apply_text("bid 4 cards", 1)
    state.apply_text("bid 4 notrump", 1)
    with pytest.raises(IllegalAction, match="higher than 4 notrump"):
        state.apply_text("bid 4 cards", 2)
    state.apply_text("bid 5 special", 2)
    with pytest.raises(IllegalAction):
        state.apply_text("bid 5 cards", 3)


def test_dealer_must_bid_when_the_first_three_pass():
    state = run(suits_deal(), (0, "pass"), (1, "pass"), (2, "pass"))
    with pytest.raises(IllegalAction, match="dealer must bid"):
        state.apply_text("pass", 3)
    assert "pass" not in [state.format_action(a) for a in state.legal_actions()]
    state.apply_text("bid 4 notrump", 3)
    assert state.bidder == 3


def test_bid_winner_takes_the_kitty_unseen_by_the_others():
    state = run(suits_deal(), (0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass"))
    assert state.count[0] == 18 and state.count[KITTY] == 0
    assert state.may[0] & mask(TWOS_AND_JOKERS) == mask(TWOS_AND_JOKERS)
    for seat in (1, 2, 3):
        view = state.view(seat)
        assert view.may[0] & mask(TWOS_AND_JOKERS) == mask(TWOS_AND_JOKERS)
        assert view.may[0] != state.may[0]  # the others cannot tell which 18 cards
    assert state.view(0).may[0] == state.may[0]


def test_trump_bids_name_a_suit_and_notrump_bids_a_direction():
    state = run(suits_deal(), (0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass"))
    with pytest.raises(IllegalAction, match="names a trump suit"):
        state.apply_text("direction uptown", 0)
    state.apply_text("trump H", 0)
    assert state.phase == DISCARD_PHASE and state.trump == 1
    nt = run(suits_deal(), (0, "bid 4 notrump"), (1, "pass"), (2, "pass"), (3, "pass"))
    with pytest.raises(IllegalAction, match="uptown or downtown"):
        nt.apply_text("trump H", 0)
    nt.apply_text("direction downtown", 0)
    assert nt.downtown


def test_discard_is_exactly_six_cards_and_the_bidders_first_book():
    state = run(suits_deal(), (0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass"),
                (0, "trump S"))
    with pytest.raises(IllegalAction, match="exactly 6 cards, not 5"):
        state.apply_text("discard 2H 2D 2C 3S 4S", 0)
    with pytest.raises(IllegalAction, match="does not hold AH"):
        state.apply_text("discard 2H 2D 2C 3S 4S AH", 0)
    state.apply_text("discard 2H 2D 2C 3S 4S 5S", 0)
    assert state.books == [1, 0] and state.count[DISCARD_PILE] == 6 and state.count[0] == 12
    assert state.view(0).may[DISCARD_PILE] == mask("2H 2D 2C 3S 4S 5S")
    assert state.view(1).may[DISCARD_PILE] != state.may[DISCARD_PILE]


def test_notrump_bidder_must_discard_every_joker():
    state = run(suits_deal(), (0, "bid 4 notrump"), (1, "pass"), (2, "pass"), (3, "pass"),
                (0, "direction uptown"))
    with pytest.raises(IllegalAction, match="must discard every joker") as err:
        state.apply_text("discard 2H 2D 2C 2S 3S BJ", 0)
    assert err.value.code == "renege"
    state.apply_text("discard 2H 2D 2C 2S BJ LJ", 0)
    assert state.void[0] & mask("BJ LJ") == mask("BJ LJ")  # claimed by rule for every view


def test_bid_winner_leads_the_first_trick():
    state = won_bid("4 cards", "trump S", "2H 2D 2C 3S 4S 5S")
    assert state.phase == PLAY and state.current_player() == 0


# -------------------------------------------------------------------- ranking


def trick_winner(state: BidWhistState, leader: int, plays: str) -> int:
    """Play one trick from ``leader`` with the given cards; the seat that won it."""
    for i, card in enumerate(plays.split()):
        state.apply_text(f"play {card}", (leader + i) % 4)
    assert state.last_trick is not None
    return state.leader


def ranked_deal(bid: str, declaration: str, hands: dict[int, str], kitty: str) -> BidWhistState:
    state = deal(hands, kitty)
    discard = " ".join(kitty.split())
    return run(state, (0, f"bid {bid}"), (1, "pass"), (2, "pass"), (3, "pass"), (0, declaration),
               (0, f"discard {discard}"))


def test_special_jokers_outrank_ace():
    hands = {0: "AS 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "LJ 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS",
             2: "BJ 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD"}
    state = ranked_deal("4 special", "trump S", hands, "2C 3C 4C 5C 6C 7C")
    assert trick_winner(state, 0, "AS LJ BJ KS") == 2


def test_cards_trump_order_is_big_joker_little_joker_ace_king_down_to_two():
    hands = {0: "2S 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "KS 3S 4S 5S 6S 7S 8S 9S TS JS QS AD",
             2: "AS 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD", 3: "2H 3H KD 2C 3C 4C 5C 6C 7C 8C 9C TC"}
    state = ranked_deal("4 cards", "trump S", hands, "JC QC KC AC BJ LJ")
    assert trick_winner(state, 0, "2S KS AS 8C") == 2


def test_special_trump_order_is_ace_then_two_up_to_king():
    hands = {0: "KS 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS 2H",
             2: "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD", 3: "AD 3H JC 2C 3C 4C 5C 6C 7C 8C 9C TC"}
    state = ranked_deal("4 special", "trump S", hands, "AS QC KC AC BJ LJ")
    assert trick_winner(state, 0, "KS 2S 3D 4C") == 1  # the 2 beats the king downtown
    hands[3] = "AS AD 3H 2C 3C 4C 5C 6C 7C 8C 9C TC"
    state = ranked_deal("4 special", "trump S", hands, "JC QC KC AC BJ LJ")
    assert trick_winner(state, 0, "KS 2S 3D AS") == 3  # the ace stays high


def test_non_trump_suits_follow_the_bid_direction_with_the_ace_high():
    hands = {0: "KD 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "2D 3S 4S 5S 6S 7S 8S 9S TS JS QS AS",
             2: "AD 3D 4D 5D 6D 7D 8D 9D TD JD QD 2S", 3: "2H 3H KS 6C 7C 8C 9C TC JC QC KC AC"}
    down = ranked_deal("4 special", "trump C", hands, "BJ LJ 2C 3C 4C 5C")
    assert trick_winner(down, 0, "KD 2D 3D 2H") == 1  # downtown: 2 beats 3 and K
    up = ranked_deal("4 cards", "trump C", hands, "BJ LJ 2C 3C 4C 5C")
    assert trick_winner(up, 0, "KD 2D AD 2H") == 2


def test_notrump_downtown_ranks_every_suit_ace_two_three_up_to_king():
    hands = {0: "KD 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "3D 3S 4S 5S 6S 7S 8S 9S TS JS QS AS",
             2: "2D 4D 5D 6D 7D 8D 9D TD JD QD AD 2S"}
    state = ranked_deal("4 notrump", "direction downtown", hands, "BJ LJ 2C 3C 4C 5C")
    assert trick_winner(state, 0, "KD 3D 2D 6C") == 2


def test_trump_beats_any_card_of_the_suit_led():
    hands = {0: "AD 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "2C 3S 4S 5S 6S 7S 8S 9S TS JS QS AS",
             2: "KD 3D 4D 5D 6D 7D 8D 9D TD JD QD 2S"}
    state = ranked_deal("4 cards", "trump C", hands, "BJ LJ 2D 3C 4C 5C")
    assert trick_winner(state, 0, "AD 2C KD 6C") == 3  # 6C beats 2C, both beat AD


def test_jokers_never_win_in_notrump():
    hands = {0: "2C 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "BJ 2D 3S 4S 5S 6S 7S 8S 9S TS JS QS",
             2: "LJ 3D 4D 5D 6D 7D 8D 9D TD JD QD AS", 3: "KD AD 3C 4C 5C 6C 7C 8C 9C TC JC QC"}
    state = ranked_deal("4 notrump", "direction uptown", hands, "2S KS 2H 3H KC AC")
    # seat 0 leads a heart; seats 1 and 2 cannot follow and must play their jokers
    assert trick_winner(state, 0, "4H BJ LJ 7C") == 0


def test_must_follow_suit_and_the_error_names_the_rule():
    hands = {0: "AS 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS AD",
             2: "KS 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD"}
    state = ranked_deal("4 cards", "trump C", hands, "BJ LJ 2C 3C 4C 5C")
    state.apply_text("play AS", 0)
    with pytest.raises(IllegalAction, match="must follow suit: seat 1 holds spades") as err:
        state.apply_text("play AD", 1)
    assert err.value.code == "renege"
    with pytest.raises(IllegalAction, match="does not hold KS"):
        state.apply_text("play KS", 1)


def test_jokers_belong_to_the_trump_suit_and_must_follow_a_trump_lead():
    hands = {0: "AS 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "BJ 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD",
             2: "KS 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC"}
    state = ranked_deal("4 cards", "trump S", hands, "2S 3S 4S 5S 6S 7S")
    state.apply_text("play AS", 0)
    with pytest.raises(IllegalAction, match="spades or a joker"):
        state.apply_text("play 2D", 1)
    state.apply_text("play BJ", 1)
    assert state.legal_mask() == mask("KS")


def test_notrump_player_unable_to_follow_holding_a_joker_must_play_it():
    hands = {0: "2C 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "BJ 2D 3S 4S 5S 6S 7S 8S 9S TS JS QS",
             2: "LJ 3D 4D 5D 6D 7D 8D 9D TD JD QD AS"}
    state = ranked_deal("4 notrump", "direction uptown", hands, "KD AD 3C 4C 5C 6C")
    state.apply_text("play 4H", 0)
    with pytest.raises(IllegalAction, match="must play a joker") as err:
        state.apply_text("play 3S", 1)
    assert err.value.code == "renege"
    state.apply_text("play BJ", 1)


def test_notrump_joker_lead_lets_the_next_non_joker_set_the_suit():
    hands = {0: "2D 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "BJ AD 3S 4S 5S 6S 7S 8S 9S TS JS QS",
             2: "LJ 3D 4D 5D 6D 7D 8D 9D TD JD QD KD", 3: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC"}
    state = ranked_deal("4 notrump", "direction uptown", hands, "AC 2S KS AS 2H 3H")
    assert trick_winner(state, 0, "2D AD 3D 2C") == 1
    state.apply_text("play BJ", 1)  # a non-bidder may lead a joker
    assert state.led == -1
    assert state.legal_mask() == state.may[2]  # nothing to follow yet: any card, LJ included
    state.apply_text("play 4D", 2)
    assert state.led == 2  # the first non-joker sets the suit
    state.apply_text("play 3C", 3)
    state.apply_text("play 4H", 0)
    assert state.leader == 2


def bits_of(m: int) -> list[int]:
    return [c for c in range(54) if m >> c & 1]


def test_failing_to_follow_is_recorded_as_a_void_claim():
    hands = {0: "AS 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD"}
    state = ranked_deal("4 cards", "trump C", hands, "BJ LJ 2C 3C 4C 5C")
    state.apply_text("play AS", 0)
    state.apply_text("play 2D", 1)
    assert state.void[1] & mask("2S KS") == mask("2S KS")
    view = state.view(2)
    assert not view.may[1] & mask("KS QS JS")


# -------------------------------------------------------------------- scoring


def test_odd_book_score_bid_4_cards_opponents_take_7_books_score_5():
    assert hand_points(4, False, 6) == (0, 5)


def test_bidders_who_make_it_score_their_books_over_six():
    assert hand_points(5, False, 12) == (6, 0)
    assert hand_points(4, False, 10) == (4, 0)


def test_notrump_scores_double_and_opponents_get_no_odd_books():
    assert hand_points(4, True, 11) == (10, 0)
    assert hand_points(4, True, 6) == (0, 8)


def test_whole_hand_scores_the_bidders_books_over_six():
    state = won_bid("7 cards", "trump S", "2H 2D 2C 2S BJ LJ")
    for _ in range(12):
        seat = state.current_player()
        assert seat == 0
        card = min(bits_of(state.may[0]))
        state.apply_text(f"play {STANDARD.name(card)}", 0)
        for other in (1, 2, 3):
            state.apply_text(f"play {STANDARD.name(min(bits_of(state.legal_mask())))}", other)
    assert state.is_terminal() and state.books == [13, 0]
    assert state.points() == [7, 0]
    assert state.detail()["made"] is True


def test_game_is_won_at_7_points_and_an_exact_tie_plays_on():
    options = GAME.resolve_options({})
    assert GAME.winner([6, 5], 3, options) is None
    assert GAME.winner([7, 2], 3, options) == 0
    assert GAME.winner([8, 9], 3, options) == 1  # both reached it: the higher total
    assert GAME.winner([9, 9], 3, options) is None
    assert GAME.winner([9, 9], 3, GAME.resolve_options({"target": 21})) is None
    assert GAME.winner([21, 9], 3, GAME.resolve_options({"target": 21})) == 0


def test_renege_penalty_gives_the_other_team_the_bid_and_the_offenders_nothing():
    state = won_bid("5 cards", "trump S", "2H 2D 2C 3S 4S 5S")
    state.penalize(1, "renege")
    assert state.is_terminal() and state.points() == [5, 0]
    nt = won_bid("4 notrump", "direction uptown", "2H 2D 2C 2S BJ LJ")
    nt.penalize(0, "renege")
    assert nt.points() == [0, 8]
    early = run(suits_deal(), (0, "bid 5 cards"))
    early.penalize(2, "silent")
    assert early.points() == [0, 4]  # no bid won yet: the minimum bid
    five = deal({}, kitty=5)
    five.penalize(1, "silent")
    assert five.points() == [3, 0]


def test_actions_parse_in_any_case_and_format_canonically():
    state = suits_deal()
    for text, canonical in [("PASS", "pass"), ("Bid 4 NoTrump", "bid 4 notrump"),
                            ("bid 5 Special", "bid 5 special")]:
        assert state.format_action(state.parse_action(text)) == canonical
    assert state.format_action(state.parse_action("trump ♥")) == "trump H"
    assert state.format_action(state.parse_action("play 10♦")) == "play TD"
    assert state.format_action(state.parse_action("discard lj bj 2c 3c 4d 9s")) \
        == "discard 9S 4D 2C 3C BJ LJ"
    assert state.parse_action("discard ? ? ? ? ? ?") == 256



def test_plain_discard_keeps_trumps_and_throws_notrump_jokers():
    fresh = run(suits_deal(), (0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass"),
                (0, "trump S"))
    code = plain_discard(fresh)
    assert fresh.is_legal(code) and not (code >> 9) & mask("BJ LJ AS KS")
    nt = run(suits_deal(), (0, "bid 4 notrump"), (1, "pass"), (2, "pass"), (3, "pass"),
             (0, "direction uptown"))
    code = plain_discard(nt)
    assert nt.is_legal(code) and (code >> 9) & mask("BJ LJ") == mask("BJ LJ")


def test_the_rollout_loop_plays_exactly_like_one_card_at_a_time():
    """``random_playout`` finishes full-information hands in one tight loop; it must
    make the same moves from the same random draws as ``_play`` card by card, for
    trump and notrump contracts, from the first lead and from mid-trick."""
    rng = random.Random("rollout-loop")
    options = bidwhist.GAME.resolve_options({})
    notrump = 0
    for _ in range(300):
        state = bidwhist.GAME.deal(bidwhist.GAME.shuffled_deck(4, options, rng),
                                   rng.randrange(4), 4, options)
        while state.phase != bidwhist.PLAY:
            state.apply(choose(state, rng))
        for _ in range(rng.randrange(40)):
            state.apply(choose(state, rng))
        if state.is_terminal():
            continue
        notrump += state.kind == bidwhist.NOTRUMP_BID
        one_by_one = state.clone()
        seed = rng.random()
        draws = random.Random(seed).random
        while not one_by_one.is_terminal():
            one_by_one._play(pick(one_by_one.legal_mask(), draws()))
            one_by_one.moves += 1
        bidwhist.random_playout(state, random.Random(seed))
        assert state.is_terminal()
        assert state.books == one_by_one.books and state.won == one_by_one.won
        assert state.may[:4] == one_by_one.may[:4] and state.count[:4] == [0] * 4
        assert state.moves == one_by_one.moves and state.points() == one_by_one.points()
    assert notrump > 20
