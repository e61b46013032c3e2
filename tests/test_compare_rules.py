"""What a play reveals under OpenSpiel's spades and hearts (p2pcards/compare/rules.py),
told by each game's descriptor (``Rules``), on plays made by hand; and the scoring
the match reads from the descriptors.  Pure Python: tests/compare checks the same
rules against OpenSpiel's own states."""

from __future__ import annotations

from p2pcards.compare.rules import (
    CARDS,
    CLUBS,
    DIAMONDS,
    HEARTS,
    HEARTS_RULES,
    RULES,
    SPADES,
    SPADES_RULES,
    forbidden,
    queen_of_spades,
)
from p2pcards.compare.tally import DealResult, GameRecord, tricks_taken

S, H = SPADES_RULES, HEARTS_RULES
ACE, KING, QUEEN = 12, 11, 10
EVERY = frozenset(range(CARDS))


def test_spades_a_spade_led_shows_a_hand_of_spades_for_they_are_never_broken() -> None:
    first = [(0, S.card(SPADES, 3)), (1, S.card(SPADES, 5)), (2, S.card(CLUBS, 2)),
             (3, S.card(SPADES, ACE))]
    out = forbidden(S, first)
    assert out[0] == EVERY - S.of_suit(SPADES)  # led a spade: holds nothing else
    assert out[2] == S.of_suit(SPADES)  # did not follow
    assert out[1] == out[3] == set()
    # spades played since do not break them: a later spade lead still tells the same
    later = [*first, (3, S.card(SPADES, KING))]
    assert forbidden(S, later)[3] == EVERY - S.of_suit(SPADES)
    assert forbidden(S, [*first, (3, S.card(HEARTS, 4))])[3] == set()


def test_hearts_the_first_lead_is_forced_and_shows_nothing() -> None:
    two_of_clubs = H.card(CLUBS, 0)
    out = forbidden(H, [(2, two_of_clubs), (3, H.card(CLUBS, 5))])
    assert out == [set(), set(), set(), set()]


def test_hearts_a_heart_led_before_they_are_broken_shows_a_hand_of_hearts() -> None:
    first = [(0, H.card(CLUBS, 0)), (1, H.card(CLUBS, 4)), (2, H.card(CLUBS, 6)),
             (3, H.card(CLUBS, 9))]
    out = forbidden(H, [*first, (3, H.card(HEARTS, 2))])
    assert out[3] == EVERY - H.of_suit(HEARTS)
    # once a heart has been played (a void), they are broken and a heart lead is free
    broken = [*first, (3, H.card(DIAMONDS, 2)), (0, H.card(HEARTS, 7)), (1, H.card(DIAMONDS, 3)),
              (2, H.card(DIAMONDS, 4)), (2, H.card(HEARTS, 3))]
    out = forbidden(H, broken)
    assert out[2] == set() and out[0] == H.of_suit(DIAMONDS)


def test_hearts_a_penalty_card_on_the_first_trick_shows_a_hand_of_them_alone() -> None:
    qs = queen_of_spades(H)
    out = forbidden(H, [(0, H.card(CLUBS, 0)), (1, qs)])
    points = H.penalty_cards()
    assert qs in points and len(points) == 14 and S.penalty_cards() == frozenset()
    assert out[1] == H.of_suit(CLUBS) | (EVERY - points)


def test_tricks_and_points_follow_the_descriptors() -> None:
    trick = [(0, S.card(DIAMONDS, ACE)), (1, S.card(SPADES, 0)), (2, S.card(DIAMONDS, KING)),
             (3, S.card(CLUBS, ACE))]
    assert tricks_taken(S, trick) == [0, 1, 0, 0]  # a trump wins
    trick = [(0, H.card(DIAMONDS, QUEEN)), (1, H.card(SPADES, ACE)), (2, H.card(DIAMONDS, KING)),
             (3, H.card(CLUBS, ACE))]
    assert tricks_taken(H, trick) == [0, 0, 1, 0]  # no trump: the suit led
    spades = DealResult(0, [GameRecord((0, 2), [120.0, -40.0, 120.0, -40.0], [4, 3, 3, 2],
                                       [4, 3, 3, 3])])
    assert spades.points(S, True) == 120.0 and spades.margin(S) == 160.0
    assert spades.games[0].exact_bids(True) == (2, 2)
    hearts = DealResult(0, [GameRecord((0, 2), [26.0, 20.0, 16.0, 20.0], [], [])])
    assert hearts.points(H, True) == 5.0 and hearts.points(H, False) == 6.0
    assert hearts.margin(H) == 1.0  # penalty points: fewer is better


def test_each_descriptor_says_what_its_game_has() -> None:
    assert list(RULES) == ["spades", "hearts"]
    assert (S.trump, S.bidding, S.passing, S.penalties, S.first_lead) == \
        (SPADES, True, False, False, None)
    assert (H.trump, H.bidding, H.passing, H.penalties, H.first_lead) == \
        (None, False, True, True, (CLUBS, 0))
    assert (S.resampler, S.information_state, S.native_worlds) == (False, False, False)
    assert (H.resampler, H.information_state, H.native_worlds) == (True, True, True)
