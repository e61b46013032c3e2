"""Inference in the sampling (ai/inference.py) and the games' beliefs (docs/bots.md)."""

from __future__ import annotations

import math
import pickle
import random
import statistics
from dataclasses import dataclass

import pytest

from p2pcards.ai.inference import Inferred, effective_share, systematic
from p2pcards.ai.protocol import SearchState
from p2pcards.bench.infer import measure
from p2pcards.bots import BotSpec, SearchBot, heuristic_bot, make_bot, parse_options, playbook
from p2pcards.games import CHANCE, GAMES, HandState, bidwhist, nullern
from tests.sim import choose, run_deal


@dataclass
class Hidden:
    """A world of a one-card game: the other player's hidden card, 0 to 3."""

    card: int
    players: int = 2


@dataclass
class Guess:
    """The view: the card is unknown, every value as likely."""

    players: int = 2

    def current_player(self) -> int:
        return 0

    def legal_actions(self) -> list[int]:
        return [0, 1]

    def determinize(self, rng: random.Random) -> Hidden:
        return Hidden(int(rng.random() * 4))


@dataclass(frozen=True)
class Leaning:
    """The other player's past action is four times as likely with a high card."""

    def log_weight(self, world: SearchState) -> float:
        return math.log(4.0 if world.card >= 2 else 1.0)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Flat:
    def log_weight(self, world: SearchState) -> float:
        return -3.0


def _clone(self: Hidden) -> Hidden:
    return Hidden(self.card)


Hidden.clone = _clone  # type: ignore[attr-defined]


def test_worlds_follow_the_beliefs_posterior():
    inferred = Inferred(Guess(), Leaning(), pool=64)
    rng = random.Random(5)
    draws = [inferred.determinize(rng).card for _ in range(40_000)]  # type: ignore[attr-defined]
    high = sum(1 for c in draws if c >= 2) / len(draws)
    assert abs(high - 0.8) < 0.02  # 4:1 over two values each: 8/10 of the weight
    assert inferred.generations == math.ceil(40_000 / 64)
    # uniform sampling of the same view gives high cards half the time
    plain = [Guess().determinize(rng).card for _ in range(20_000)]
    assert abs(sum(1 for c in plain if c >= 2) / len(plain) - 0.5) < 0.02


def test_a_flat_belief_hands_out_each_world_once():
    inferred = Inferred(Guess(), Flat(), pool=16)
    rng = random.Random(2)
    for _ in range(5):
        handed = [inferred.determinize(rng) for _ in range(16)]
        assert sorted(map(id, handed)) == sorted(map(id, inferred._worlds))  # each, itself
    assert inferred.generations == 5
    assert inferred.spread / inferred.generations == pytest.approx(1.0)


def test_systematic_resampling_draws_each_index_its_share():
    rng = random.Random(7)
    assert sorted(systematic([1.0] * 8, 8, rng)) == list(range(8))
    for _ in range(200):
        weights = [rng.random() ** 3 for _ in range(10)]
        drawn = systematic(weights, 40, rng)
        total = sum(weights)
        for index, weight in enumerate(weights):  # its expected count, rounded either way
            assert abs(drawn.count(index) - 40 * weight / total) < 1
    assert systematic([0.0, 1.0, 0.0], 5, rng) == [1] * 5
    assert effective_share([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert effective_share([2.0, 2.0]) == pytest.approx(1.0)


def test_an_inferred_view_pickles_without_its_worlds():
    inferred = Inferred(Guess(), Leaning(), pool=8)
    inferred.determinize(random.Random(1))
    copy = pickle.loads(pickle.dumps(inferred))
    assert copy.pool == 8 and copy.generations == 0 and not copy._worlds
    assert copy.players == 2 and copy.legal_actions() == [0, 1]
    assert copy.determinize(random.Random(1)).card in range(4)  # type: ignore[attr-defined]


def test_played_by_records_each_seats_cards_in_every_game():
    rng = random.Random(8)
    for name in ("bidwhist", "nullern", "pasur"):
        game = GAMES[name]
        players = game.default_players
        options = game.resolve_options({})
        full = game.deal(game.shuffled_deck(players, options, rng), 0, players, options,
                         number=3 % game.numbered_deals)
        played = [0] * players
        while not full.is_terminal():
            seat = full.current_player()
            if seat == CHANCE:
                full.apply(full.chance_action(rng))
                continue
            action = choose(full, rng)
            full.apply(action)
            card = {"bidwhist": action if action < 64 else -1,
                    "nullern": action if action < nullern.BID else -1,
                    "pasur": action & 63}[name]
            if card >= 0:
                played[seat] |= 1 << card
        assert full.played_by == played, name
        # a seat's view updated move by move, as at a networked table, keeps the same
        # record: run_deal compares every slot of each such view with the full state's
        run = run_deal(game, players, {}, random.Random(f"played:{name}"),
                       number=3 % game.numbered_deals)
        assert run.views_checked > 0 and any(run.state.played_by)


@pytest.mark.parametrize(("name", "least"), [("nullern", 0.3), ("bidwhist", -0.05)])
def test_the_real_deal_is_likelier_under_the_belief(name, least):
    """On deals the heuristic and the search bid, the belief makes the real hidden cards
    more likely than uniform sampling does (bench infer's ``deal_gain``, nats): much
    more in Nullern; in Bid Whist, whose auction says little (docs/bots.md), at least
    not less likely (a belief that misreads the bids makes it less likely)."""
    for kind in ("heuristic", "ismcts"):
        tally = measure(name, kind, 3, 11)
        assert len(tally.deal) >= 6
        assert statistics.fmean(tally.deal) > least, (name, kind)


def nullern_bid(rng: random.Random, number: int) -> HandState:
    """A four-player Nullern round (``number``: its place in the match) once every seat
    has bid as the heuristic bids."""
    game = GAMES["nullern"]
    options = game.resolve_options({})
    full = game.deal(game.shuffled_deck(4, options, rng), 0, 4, options, number=number)
    while full.phase == nullern.BIDDING:
        full.apply(heuristic_bot(full.view(full.current_player()), rng))
    return full


def test_the_beliefs_read_the_bids_of_other_seats_only():
    rng = random.Random(3)
    full = nullern_bid(rng, 7)
    view = full.view(2)
    belief = playbook(view).belief(view)
    assert belief is not None and {s for s, _ in belief.bids} == {0, 1, 3}
    # the bids are likelier with the real hands than in the average world
    worlds = [belief.log_weight(view.determinize(rng)) for _ in range(200)]
    assert belief.log_weight(full) > statistics.fmean(worlds)
    game = GAMES["bidwhist"]
    options = game.resolve_options({})
    full = game.deal(game.shuffled_deck(4, options, rng), 3, 4, options)
    assert playbook(full.view(0)).belief(full.view(0)) is None  # nobody has bid yet
    full.apply(bidwhist.PASS)
    view = full.view(1)
    assert playbook(view).belief(view) is not None
    seat = full.current_player()
    assert playbook(full.view(seat)).belief(full.view(seat)).bids == ((0, bidwhist.PASS, (4, 4)),)


def test_a_bot_that_infers_searches_the_inferred_view(searched):
    seen = searched
    full = nullern_bid(random.Random(4), 5)
    seat = full.current_player()
    infers = make_bot("ismcts:i=1", iterations=30)
    plain = make_bot("ismcts:i=0", iterations=30)
    default = make_bot("ismcts", iterations=30)
    assert isinstance(infers, SearchBot) and isinstance(plain, SearchBot)
    assert isinstance(default, SearchBot)
    assert (infers.infer, plain.infer, default.infer) == (1, 0, None)
    assert full.is_legal(infers(full.view(seat), random.Random(1)))
    assert isinstance(seen[-1], Inferred) and seen[-1].generations >= 1
    assert full.is_legal(plain(full.view(seat), random.Random(1)))
    assert not isinstance(seen[-1], Inferred)
    # the default search infers where its game's playbook says so: Nullern, not Bid Whist
    assert full.is_legal(default(full.view(seat), random.Random(1)))
    assert isinstance(seen[-1], Inferred)
    game = GAMES["bidwhist"]
    options = game.resolve_options({})
    other = game.deal(game.shuffled_deck(4, options, random.Random(2)), 3, 4, options)
    other.apply(bidwhist.PASS)
    assert default.infers(full.view(seat)) and not default.infers(other.view(1))
    assert infers.infers(other.view(1)) and not plain.infers(full.view(seat))


def test_bot_parameters_for_inference_and_endgames():
    assert parse_options("ismcts:i=1;e=12") == BotSpec("ismcts", 0.7, 1, 1, 12)
    assert parse_options("pimc:e=8") == BotSpec("pimc", endgame=8)
    assert parse_options("ismcts") == BotSpec("ismcts")
    assert parse_options("ismcts:i=0") == BotSpec("ismcts", infer=0)
    bot = make_bot("ismcts:c=1;i=1;e=8;w=2", iterations=100)
    assert isinstance(bot, SearchBot)
    assert (bot.exploration, bot.infer, bot.endgame, bot.workers) == (1.0, 1, 8, 2)
    for bad, why in [("ismcts:i=3", "i must be 0, 1 or 2, not '3'"),
                     ("ismcts:e=61", "e must be a whole number from 0 to 60, not '61'"),
                     ("ismcts:e=-1", "e must be a whole number"),
                     ("ismcts:x=1", "the parameters are c=NUMBER.*e=N")]:
        with pytest.raises(ValueError, match=why):
            parse_options(bad)


def test_a_view_without_a_belief_is_searched_as_before():
    # Pasur has no model: a bot that infers draws its worlds from the view itself
    rng = random.Random(6)
    game = GAMES["pasur"]
    options = game.resolve_options({})
    full = game.deal(game.shuffled_deck(2, options, rng), 0, 2, options)
    while full.current_player() == CHANCE:
        full.apply(full.chance_action(rng))
    view = full.view(full.current_player())
    assert playbook(view).belief(view) is None
    first = make_bot("ismcts:i=1", iterations=60)(view, random.Random(3))
    second = make_bot("ismcts", iterations=60)(view, random.Random(3))
    assert first == second


def test_the_arena_reports_the_candidate_minus_todays_bot():
    from p2pcards.bots import arena  # noqa: PLC0415

    for lineup in (("ismcts", "ismcts:i=1"), ("ismcts:e=8", "ismcts")):
        result = arena.run(arena.Setup("pasur", lineup, seed=3, iterations=10), 1)
        assert result["difference"]["bots"][1] == "ismcts", lineup
