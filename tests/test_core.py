"""The observer-relative engine core: views, claims, proofs, observations, clones."""

from __future__ import annotations

import random

import pytest

from p2pcards.games import FULL, IllegalAction, KnowledgeError
from p2pcards.games.bidwhist import GAME as BIDWHIST
from p2pcards.games.bidwhist import KITTY, BidWhistState
from p2pcards.games.cards import STANDARD
from p2pcards.games.pasur import GAME as PASUR
from p2pcards.games.pasur import PasurState, random_card_action
from tests.helpers import bidwhist_deck, cards, pasur_deck

HANDS = {0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S", 1: "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H",
         2: "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D", 3: "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C"}


def mask(text: str) -> int:
    return sum(1 << c for c in cards(text))


def full_and_view(seat: int) -> tuple[BidWhistState, BidWhistState]:
    deck = bidwhist_deck(HANDS, "2S 2H 2D 2C BJ LJ")
    options = BIDWHIST.resolve_options({})
    full = BIDWHIST.deal(deck, 3, 4, options)
    view = BIDWHIST.deal(BIDWHIST.observed_deck(deck, 3, 4, options, seat), 3, 4, options,
                         observer=seat)
    assert isinstance(full, BidWhistState) and isinstance(view, BidWhistState)
    return full, view


def test_full_state_has_one_place_per_card_and_a_view_knows_its_own_hand():
    full, view = full_and_view(2)
    for card in range(54):
        assert len(full.candidates(card)) == 1
    assert view.observer == 2 and full.observer == FULL
    assert view.may[2] == mask(HANDS[2])
    spade = STANDARD.parse("AS")
    assert view.candidates(spade) == [0, 1, 3, KITTY]
    assert view.count == full.count


def test_a_renege_seen_by_a_view_is_recorded_as_proof_and_never_raises():
    _, view = full_and_view(2)
    for seat, text in [(0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass"),
                       (0, "trump S"), (0, "discard ? ? ? ? ? ?"), (0, "play AS")]:
        view.apply_text(text, seat)
    view.apply_text("play 7H", 1)  # seat 1 shows no spades (nor jokers): a claim
    assert view.void[1] & mask("2S BJ LJ") == mask("2S BJ LJ")
    assert not view.may[1] & mask("2S BJ LJ")
    view.apply_text("play 7D", 2)
    view.apply_text("play 7C", 3)
    view.apply_text("play KS", 0)
    view.apply_text("play 2S", 1)  # ...and now follows with a spade: proven renege
    assert len(view.proofs) == 1
    proof = view.proofs[0]
    assert proof.seat == 1 and proof.code == "renege" and proof.move == view.moves - 1
    assert "2S" in proof.detail
    view.apply_text("play 6D", 2)  # play goes on
    assert view.trick == cards("KS 2S 6D")


def test_a_view_refuses_a_card_it_knows_is_elsewhere():
    _, view = full_and_view(0)
    for seat, text in [(0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass")]:
        view.apply_text(text, seat)
    view.observe(0, mask(HANDS[0] + " 2S 2H 2D 2C BJ LJ"))
    view.apply_text("trump S", 0)
    view.apply_text("discard 2H 2D 2C 3S 4S 5S", 0)
    view.apply_text("play 6S", 0)
    with pytest.raises(IllegalAction, match="seat 1 cannot hold 6S: it is face up"):
        view.apply_text("play 6S", 1)
    with pytest.raises(IllegalAction, match="cannot hold AS: it is in seat 0's hand"):
        view.apply_text("play AS", 1)


def test_a_void_claim_that_strands_a_known_card_is_a_proof():
    _, view = full_and_view(0)
    king = STANDARD.parse("KH")
    for place in range(len(view.may)):  # suppose seat 0 had learnt KH is with seat 1
        view.may[place] &= ~(1 << king)
    view.may[1] |= 1 << king
    view._claim_void(1, mask("KH QH"), 1)
    assert [p.code for p in view.proofs] == ["renege"]
    assert "KH" in view.proofs[0].detail


def test_observation_that_contradicts_certain_knowledge_is_refused():
    full, view = full_and_view(1)
    for seat, text in [(0, "pass"), (1, "bid 4 cards"), (2, "pass"), (3, "pass")]:
        view.apply_text(text, seat)
        full.apply_text(text, seat)
    assert view.awaiting == 1 << 1
    with pytest.raises(KnowledgeError, match="holds 18 cards"):
        view.observe(1, mask(HANDS[1]))
    view.observe(1, full.may[1])
    assert view.awaiting == 0
    assert view.knowledge() == full.view(1).knowledge()


def test_observing_a_card_known_to_be_elsewhere_is_refused():
    deck = pasur_deck({0: "2C 3C 4C 5C"}, "2S 3S 4S 5S", players=2, dealer=1)
    options = PASUR.resolve_options({})
    view = PASUR.deal(PASUR.observed_deck(deck, 1, 2, options, 0), 1, 2, options, observer=0)
    with pytest.raises(KnowledgeError, match="2S in place 0, where they cannot be"):
        view.observe(0, mask("2C 3C 4C 2S"))


def test_clone_is_cheap_and_independent():
    full, _ = full_and_view(0)
    copy = full.clone()
    copy.apply_text("bid 4 cards", 0)
    assert full.bids == [] and copy.bids == [(0, copy.parse_action("bid 4 cards"))]
    assert full.may == copy.may and full.may is not copy.may


def test_actions_come_only_from_the_player_to_move_or_chance():
    full, _ = full_and_view(0)
    with pytest.raises(IllegalAction, match="not chance's"):
        full.check_actor("chance")
    with pytest.raises(IllegalAction, match="it is seat 0's turn, not seat 2's") as err:
        full.apply_text("pass", 2)
    assert err.value.code == "turn"


def test_pasur_jack_returned_to_the_stock_is_known_to_lie_there_until_dealt():
    deck = pasur_deck({}, "JH 2S 3S 4S", stock="5H", players=2, dealer=1)
    jack = STANDARD.parse("JH")
    options = PASUR.resolve_options({})
    full = PASUR.deal(deck, 1, 2, options)
    assert isinstance(full, PasurState)
    assert full.exposed == {jack: 1 << 2}
    rng = random.Random(1)
    full.apply(full.chance_action(rng))
    view = full.view(0)
    assert view.candidates(jack) == [2]
    stock = full.count[2]
    while full.count[2] == stock:  # until the first refill deals from the stock
        full.apply(random_card_action(full, rng.random(), rng.random()))
    view = full.view(0)
    where = view.candidates(jack)
    assert (full.may[0] >> jack & 1 and where == [0]) or where == [1, 2]


def test_pasur_random_card_action_yields_only_and_all_legal_actions():
    rng = random.Random(5)
    options = PASUR.resolve_options({})
    for _ in range(60):
        state = PASUR.deal(PASUR.shuffled_deck(3, options, rng), 0, 3, options)
        assert isinstance(state, PasurState)
        while not state.is_terminal():
            if state.current_player() < 0:
                state.apply(state.chance_action(rng))
                continue
            legal = set(state.legal_actions())
            seen = {random_card_action(state, rng.random(), rng.random()) for _ in range(80)}
            assert seen <= legal
            if len(legal) <= 6:
                assert seen == legal
            state.apply(sorted(legal)[0])


def test_a_view_awaiting_its_cards_refuses_to_go_on():
    _, view = full_and_view(1)
    for seat, text in [(0, "pass"), (1, "bid 4 cards"), (2, "pass"), (3, "pass")]:
        view.apply_text(text, seat)
    with pytest.raises(KnowledgeError, match="waiting to observe the cards now in place"):
        view.apply_text("trump H", 1)


def test_a_view_refuses_a_card_everyone_knows_is_elsewhere():
    deck = pasur_deck({}, "JH 2S 3S 4S", stock="5H", players=2, dealer=1)
    options = PASUR.resolve_options({})
    full = PASUR.deal(deck, 1, 2, options)
    full.apply(full.chance_action(random.Random(2)))
    view = full.view(0)
    view.apply_text(full.format_action(full.legal_actions()[0]), 0)
    with pytest.raises(IllegalAction, match="cannot hold JH: it is known to be elsewhere"):
        view.apply_text("play JH", 1)  # the jack was seen going back into the stock
