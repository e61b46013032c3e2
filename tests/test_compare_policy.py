"""The rollout policy for OpenSpiel's spades and hearts (p2pcards/compare/policy.py): its
rules on positions made by hand.  Pure Python: the module imports no OpenSpiel; its
play-outs against OpenSpiel's own states are in tests/compare."""

from __future__ import annotations

from p2pcards.compare import policy
from p2pcards.compare.rules import CLUBS, DIAMONDS, HEARTS, HEARTS_RULES, SPADES, SPADES_RULES

S, H = SPADES_RULES, HEARTS_RULES
ACE, KING, QUEEN, JACK, TEN = 12, 11, 10, 9, 8


def test_spades_winner_trumps_and_follows_suit() -> None:
    trick = [(0, S.card(DIAMONDS, KING)), (1, S.card(DIAMONDS, ACE)), (2, S.card(SPADES, 0)),
             (3, S.card(CLUBS, ACE))]
    assert policy.winner(S, trick) == (2, S.card(SPADES, 0))
    assert policy.winner(S, trick[:2]) == (1, S.card(DIAMONDS, ACE))
    # off-suit cards never win, however high
    assert policy.winner(S, [(0, S.card(CLUBS, 0)), (1, S.card(DIAMONDS, ACE))]) == \
        (0, S.card(CLUBS, 0))


def test_spades_partner_winning_gets_the_lowest_card() -> None:
    trick = [(1, S.card(HEARTS, 3)), (2, S.card(HEARTS, ACE)), (3, S.card(HEARTS, 5))]
    legal = [S.card(HEARTS, KING), S.card(HEARTS, 2), S.card(HEARTS, TEN)]
    assert policy._play(S, 0, legal, trick) == S.card(HEARTS, 2)
    # void, partner winning: the lowest card outside spades, not a trump
    legal = [S.card(SPADES, 4), S.card(CLUBS, 9), S.card(CLUBS, 1)]
    assert policy._play(S, 0, legal, trick) == S.card(CLUBS, 1)


def test_spades_beats_an_opponent_cheaply_when_last_and_high_when_not() -> None:
    legal = [S.card(HEARTS, KING), S.card(HEARTS, 2), S.card(HEARTS, QUEEN)]
    last = [(1, S.card(HEARTS, JACK)), (2, S.card(HEARTS, 3)), (3, S.card(HEARTS, 5))]
    assert policy._play(S, 0, legal, last) == S.card(HEARTS, QUEEN)
    second = [(3, S.card(HEARTS, JACK))]
    assert policy._play(S, 0, legal, second) == S.card(HEARTS, KING)
    # cannot beat it: the lowest
    over = [(3, S.card(HEARTS, ACE))]
    assert policy._play(S, 0, legal, over) == S.card(HEARTS, 2)


def test_spades_trumps_an_opponent_with_its_lowest_winning_spade() -> None:
    trick = [(1, S.card(HEARTS, 3)), (2, S.card(HEARTS, 4)), (3, S.card(SPADES, 6))]
    legal = [S.card(SPADES, 4), S.card(SPADES, 9), S.card(SPADES, ACE), S.card(CLUBS, 0)]
    assert policy._play(S, 0, legal, trick) == S.card(SPADES, 9)
    # no spade wins: the lowest card outside spades
    legal = [S.card(SPADES, 4), S.card(CLUBS, 7), S.card(CLUBS, 3)]
    assert policy._play(S, 0, legal, trick) == S.card(CLUBS, 3)


def test_spades_leads_an_ace_else_its_lowest_outside_spades() -> None:
    legal = [S.card(CLUBS, 3), S.card(DIAMONDS, ACE), S.card(SPADES, 0)]
    assert policy._play(S, 0, legal, []) == S.card(DIAMONDS, ACE)
    legal = [S.card(CLUBS, 3), S.card(DIAMONDS, 1), S.card(SPADES, 0)]
    assert policy._play(S, 0, legal, []) == S.card(DIAMONDS, 1)
    legal = [S.card(SPADES, 7), S.card(SPADES, 2)]
    assert policy._play(S, 0, legal, []) == S.card(SPADES, 2)


def test_spades_bids_its_sure_tricks_and_never_nil() -> None:
    bids = list(range(policy.NIL, policy.NIL + 14))
    hand = [S.card(CLUBS, ACE), S.card(CLUBS, 4), S.card(CLUBS, 5), S.card(CLUBS, 6),
            S.card(DIAMONDS, KING), S.card(DIAMONDS, 3), S.card(DIAMONDS, 7),
            S.card(HEARTS, KING),  # a bare king: no trick
            S.card(SPADES, ACE), S.card(SPADES, 5), S.card(SPADES, 4), S.card(SPADES, 3),
            S.card(SPADES, 2)]
    # ace of clubs, guarded king of diamonds, ace of spades, two spades past the third
    assert policy._before_play(S, 0, bids, [hand] * 4) == policy.NIL + 5
    weak = [S.card(suit, rank) for suit in (CLUBS, DIAMONDS, HEARTS) for rank in range(4)]
    weak.append(S.card(SPADES, 0))
    assert policy._before_play(S, 0, bids, [weak] * 4) == policy.NIL + 1


def test_hearts_ducks_under_the_winner_and_dumps_when_void() -> None:
    qs = H.card(SPADES, QUEEN)
    trick = [(1, H.card(DIAMONDS, JACK))]
    legal = [H.card(DIAMONDS, ACE), H.card(DIAMONDS, TEN), H.card(DIAMONDS, 2)]
    assert policy._play(H, 0, legal, trick) == H.card(DIAMONDS, TEN)  # highest under the jack
    # nothing under it: the highest but the queen of spades
    trick = [(1, H.card(SPADES, 1))]
    legal = [qs, H.card(SPADES, KING), H.card(SPADES, 5)]
    assert policy._play(H, 0, legal, trick) == H.card(SPADES, KING)
    legal = [qs, H.card(SPADES, 5)]
    assert policy._play(H, 0, legal, trick) == H.card(SPADES, 5)
    # void: the queen, else the highest heart, else the highest card
    trick = [(1, H.card(CLUBS, 4))]
    assert policy._play(H, 0, [H.card(HEARTS, ACE), qs, H.card(DIAMONDS, 3)], trick) == qs
    assert policy._play(H, 0, [H.card(HEARTS, 3), H.card(HEARTS, JACK), H.card(DIAMONDS, ACE)],
                        trick) == H.card(HEARTS, JACK)
    assert policy._play(H, 0, [H.card(DIAMONDS, 3), H.card(SPADES, ACE)], trick) == \
        H.card(SPADES, ACE)


def test_hearts_leads_low_and_safe_and_passes_high_spades_first() -> None:
    legal = [H.card(HEARTS, 0), H.card(SPADES, ACE), H.card(CLUBS, 6), H.card(DIAMONDS, 4)]
    assert policy._play(H, 0, legal, []) == H.card(DIAMONDS, 4)
    assert policy._play(H, 0, [H.card(HEARTS, 5), H.card(HEARTS, 2)], []) == H.card(HEARTS, 2)
    hand = [H.card(CLUBS, ACE), H.card(SPADES, QUEEN), H.card(HEARTS, KING), H.card(CLUBS, 2)]
    assert policy._before_play(H, 0, hand, None) == H.card(SPADES, QUEEN)
    assert policy._before_play(H, 0, [c for c in hand if c != H.card(SPADES, QUEEN)],
                               None) == H.card(CLUBS, ACE)


def test_the_trick_under_way_is_read_from_the_history() -> None:
    # spades: 52 dealt cards, four bids, then seat 0 leads; the trick's winner leads next
    deal = list(range(52))
    bids = [policy.NIL + 3] * 4
    first = [S.card(CLUBS, 2), S.card(CLUBS, ACE), S.card(CLUBS, 5), S.card(CLUBS, 7)]
    history = deal + bids + first + [S.card(HEARTS, 4)]
    assert policy.current_trick(S, history) == [(1, S.card(HEARTS, 4))]  # seat 1 took the ace
    assert policy.current_trick(S, deal + bids + first) == []
    assert policy.current_trick(S, deal + bids + first[:2]) == [(0, first[0]), (1, first[1])]
