"""The rule-based ``heuristic`` bots: legal from their own view, and clearly better than chance."""

from __future__ import annotations

import random

import pytest

from p2pcards.bots import SearchBot, arena, heuristic_bot, make_bot
from p2pcards.bots.heuristics.bidwhist import bidding_candidates
from p2pcards.games import CHANCE, bidwhist, controlnut, nullern, pasur


@pytest.mark.parametrize(("game", "players", "number"),
                         [(bidwhist.GAME, 4, 0), (nullern.GAME, 5, 9), (nullern.GAME, 3, 19),
                          (pasur.GAME, 3, 0), (controlnut.GAME, 4, 0)],
                         ids=["bidwhist", "nullern-5p", "nullern-blind", "pasur-3p", "controlnut"])
def test_heuristic_moves_are_legal_from_the_bots_own_view(game, players, number):
    rng = random.Random(f"heuristic:{game.name}:{players}")
    options = game.resolve_options({})
    for _ in range(150):
        full = game.deal(game.shuffled_deck(players, options, rng), rng.randrange(players),
                         players, options, number=number)
        while not full.is_terminal():
            seat = full.current_player()
            forced = full.forced_action()
            if seat == CHANCE:
                action = full.chance_action(rng)
            else:
                action = forced if forced is not None else heuristic_bot(full.view(seat), rng)
            full.apply(action)  # raises if the bot chose an illegal move


@pytest.mark.parametrize("game", [bidwhist.GAME, nullern.GAME, pasur.GAME, controlnut.GAME],
                         ids=["bidwhist", "nullern", "pasur", "controlnut"])
def test_heuristic_beats_random_over_duplicate_deals(game):
    result = arena.run(arena.Setup(game.name, ("heuristic", "random", "heuristic", "random"),
                                   seed=5), 30)
    by_bot = {e["bot"]: e for e in result["entries"]}
    assert by_bot["heuristic"]["points_ci95"][0] > by_bot["random"]["points_ci95"][1]


def test_searching_bots_search_the_bid_among_the_models_and_declare_by_it():
    full = bidwhist.GAME.deal(bidwhist.GAME.shuffled_deck(4, {"kitty": 6}, random.Random(3)), 3, 4,
                              bidwhist.GAME.resolve_options({}))
    bot = make_bot("ismcts", iterations=50)
    assert isinstance(bot, SearchBot)
    view = full.view(0)
    candidates = bidding_candidates(view, random.Random(1))
    assert candidates and len(candidates) > 1
    bid = bot(view, random.Random(1))
    assert bid in candidates and bot.done == 50  # the bid was searched
    for seat, text in [(0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass")]:
        full.apply_text(text, seat)
    declarer = full.view(0)
    before = bot.done
    assert bot(declarer, random.Random(1)) == heuristic_bot(declarer, random.Random(1))
    assert bot.done == before  # the declaration is the model's: no search spent
