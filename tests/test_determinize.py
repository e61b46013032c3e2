"""Determinization: worlds that never contradict the view they come from."""

from __future__ import annotations

import random

import pytest

from p2pcards.cards import bits
from p2pcards.games import CHANCE, bidwhist, controlnut, nullern, pasur
from p2pcards.games.determinize import assign
from tests.sim import choose, state_key

CONFIGS = [(bidwhist.GAME, 4, 0), (pasur.GAME, 3, 0), (nullern.GAME, 5, 9),
           (nullern.GAME, 4, 19), (controlnut.GAME, 4, 0)]


@pytest.mark.parametrize(("game", "players", "number"), CONFIGS,
                         ids=[f"{g.name}-{n}p-{r}" for g, n, r in CONFIGS])
def test_worlds_honour_every_candidate_set_and_count_and_keep_the_view(game, players, number):
    rng = random.Random(f"determinize:{game.name}:{players}:{number}")
    options = game.resolve_options({})
    worlds = 0
    for _ in range(60):
        deck = game.shuffled_deck(players, options, rng)
        full = game.deal(deck, rng.randrange(players), players, options, number=number)
        while not full.is_terminal():
            if rng.random() < 0.3:
                seat = rng.randrange(players)
                view = full.view(seat)
                for _ in range(5):
                    world = view.determinize(rng)
                    worlds += 1
                    assert world.is_full and world.count == view.count
                    placed = 0
                    for place, cards in enumerate(world.may):
                        assert cards.bit_count() == world.count[place]
                        assert not placed & cards  # no card in two places
                        placed |= cards
                        assert cards & ~view.may[place] == 0, "a card outside its candidates"
                    assert placed == full.hidden_mask()
                    assert state_key(world.view(seat)) == state_key(view)
                    if full.current_player() == seat and full.forced_action() is None:
                        assert world.legal_actions() == view.legal_actions()
            chance = full.current_player() == CHANCE
            full.apply(full.chance_action(rng) if chance else choose(full, rng))
    assert worlds > 500


def test_assignment_is_maximal_and_uses_augmenting_paths():
    rng = random.Random(1)
    # card 0 fits only place 0; card 1 fits places 0 and 1; place 0 has room for one
    for _ in range(50):
        holder, left = assign({1: [0, 1], 0: [0]}, [1, 1], rng)
        assert left == [] and holder == {0: 0, 1: 1}
    holder, left = assign({0: [0], 1: [0]}, [1, 5], rng)
    assert len(left) == 1


def test_a_view_with_a_proven_renege_still_gets_a_world():
    full = bidwhist.GAME.deal(list(range(54)), 3, 4, bidwhist.GAME.resolve_options({}))
    view = full.view(0)
    stolen = bits(view.may[1])[0]
    for place in range(len(view.may)):  # suppose claims had ruled this card out everywhere
        view.may[place] &= ~(1 << stolen)
    world = view.determinize(random.Random(2))
    assert world.count == view.count
    assert sum(m.bit_count() for m in world.may) == 54
