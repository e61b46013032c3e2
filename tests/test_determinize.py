"""Determinization: worlds that never contradict the view they come from."""

from __future__ import annotations

import random

import pytest

from p2pcards.bench.ai import ai_positions
from p2pcards.games import CHANCE, bidwhist, controlnut, nullern, pasur
from p2pcards.games.cards import bits
from p2pcards.games.core import HandState
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


@pytest.mark.parametrize("position", ["bidwhist.first_lead", "nullern.first_play_10"])
def test_the_shuffled_deal_of_unconstrained_cards_is_uniform(position):
    """With no claim on the unknown cards the determinizer deals them by a partial
    shuffle (the largest place takes the rest): each unknown card lands in each
    hidden place in proportion to its room (chi-square over cards x places)."""
    view = ai_positions(1)[position]
    rng = random.Random("uniform")
    hidden = [p for p in range(len(view.may)) if not view.visible(p, view.observer)
              and view.count[p] > 0]
    seen = 0
    for p in range(len(view.may)):
        if view.visible(p, view.observer):
            seen |= view.may[p]
    unknown = view.hidden_mask() & ~seen
    cards = bits(unknown)
    total = sum(view.count[p] for p in hidden)
    assert total == len(cards) and len(hidden) > 2
    draws = 3000
    tally = {(c, p): 0 for c in cards for p in hidden}
    for _ in range(draws):
        world = view.determinize(rng)
        for p in hidden:
            for c in bits(world.may[p]):
                tally[c, p] += 1
    chi2 = 0.0
    for (_, p), observed in tally.items():
        expected = draws * view.count[p] / total
        chi2 += (observed - expected) ** 2 / expected
    dof = (len(cards) - 1) * (len(hidden) - 1)
    # mean dof, sd sqrt(2 dof): five standard deviations is a failure, not bad luck
    assert chi2 < dof + 5 * (2 * dof) ** 0.5, (chi2, dof)


@pytest.mark.parametrize(("game", "players", "number"), CONFIGS,
                         ids=[f"{g.name}-{n}p-{r}" for g, n, r in CONFIGS])
def test_games_own_observations_equal_the_generic_one(game, players, number):
    """Bid Whist and Nullern compute the search's observation token directly; it must
    be the token of :meth:`HandState.observation` in every state and view."""
    rng = random.Random(f"observation:{game.name}:{number}")
    options = game.resolve_options({})
    compared = 0
    for _ in range(10):
        full = game.deal(game.shuffled_deck(players, options, rng), rng.randrange(players),
                         players, options, number=number)
        views = [full.view(s) for s in range(players)]
        while not full.is_terminal():
            for state in [full, *views]:
                for seat in range(players):
                    assert state.observation(seat) == HandState.observation(state, seat)
                    compared += 1
            seat = full.current_player()
            action = full.chance_action(rng) if seat == CHANCE else choose(full, rng)
            full.apply(action)
            views = [full.view(s) for s in range(players)]
    assert compared > 1000
