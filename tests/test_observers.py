"""The searches that model each player from its own information (``ai/observers.py``):
a tiny game where that changes the searcher's decision, seeds, budgets, root
parallelism, ``information_key`` in the four games, and the bots' names."""

from __future__ import annotations

import random
from typing import Self

import pytest

from p2pcards.ai.ismcts import VARIANTS, search, tree_stats
from p2pcards.ai.parallel import RootParallel
from p2pcards.ai.protocol import PublicMoves
from p2pcards.bots import SearchBot, make_bot, parse_bot, parse_spec, playbook
from p2pcards.bots.search import HeuristicPolicy
from p2pcards.cli.main import main
from p2pcards.games import bidwhist, controlnut, nullern, pasur
from tests.sim import choose
from tests.test_ismcts import Pile, played_to_a_decision

SAFE, RISKY = 0, 1


class Guess(PublicMoves):
    """A tiny game unknown to ``ai``: seat 1 holds a hidden bit.  Seat 0 takes SAFE
    (0.4 to seat 0, the game ends) or RISKY; after RISKY seat 1 names a bit and
    wins everything if it names its own, else seat 0 does.

    Seat 1 knows its bit, so RISKY is worth 0 to seat 0 and SAFE is right.  A
    search that has seat 1 name its bit without knowing it (the same move
    whatever it holds) finds RISKY worth 0.5 and takes it."""

    players = 2

    def __init__(self, bit: int | None = None):
        self.bit = bit  # None in seat 0's view
        self.moves: list[int] = []

    def current_player(self) -> int:
        return len(self.moves)

    def legal_actions(self) -> list[int]:
        return [SAFE, RISKY] if not self.moves else [0, 1]

    def step(self, action: int) -> None:
        self.moves.append(action)

    def clone(self) -> Self:
        new = type(self)(self.bit)
        new.moves = self.moves[:]
        return new

    def is_terminal(self) -> bool:
        return self.moves == [SAFE] or len(self.moves) == 2

    def rewards(self) -> list[float]:
        if self.moves == [SAFE]:
            return [0.4, 0.6]
        named = self.moves[1] == self.bit
        return [0.0, 1.0] if named else [1.0, 0.0]

    def determinize(self, rng: random.Random) -> Self:
        world = self.clone()
        if world.bit is None:
            world.bit = rng.randrange(2)
        return world

    def information_key(self, seat: int) -> int:
        return ((self.bit or 0) if seat == 1 else 0) << 8 | len(self.moves)


class RandomMoves:
    """A policy with no knowledge: random rollouts, random first moves."""

    def rollout(self, world, rng: random.Random) -> None:
        world.rollout(rng)

    def sampled_move(self, world, seat: int, rng: random.Random) -> int | None:
        return None

    def move(self, world, rng: random.Random) -> int:
        actions = world.legal_actions()
        return actions[int(rng.random() * len(actions))]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_only_the_searches_modelling_the_opponents_own_card_play_safe(seed):
    single = search(Guess(), random.Random(seed), iterations=2000, early_stop=False)
    assert single.action == RISKY  # seat 1 modelled as naming its bit blind
    for variant in ("multiple", "own", "backoff"):
        for policy in (None, RandomMoves()):
            result = search(Guess(), random.Random(seed), iterations=2000, early_stop=False,
                            variant=variant, policy=policy)
            assert result.action == SAFE, (variant, policy)
            risky = result.root.children[RISKY]
            assert risky.reward / risky.visits < 0.3  # seat 1 names its own bit


@pytest.mark.parametrize("variant", ["multiple", "own", "backoff"])
def test_the_new_searches_find_the_winning_move_and_honour_the_budget(variant):
    for counters, winning in [(4, 1), (5, 2), (7, 1)]:
        result = search(Pile(counters, secret=None), random.Random(3), iterations=2000,
                        variant=variant, policy=RandomMoves())
        assert result.action == winning, counters
    whole = search(Pile(9, secret=None), random.Random(4), iterations=300, early_stop=False,
                   variant=variant)
    again = search(Pile(9, secret=None), random.Random(4), iterations=300, early_stop=False,
                   variant=variant)
    assert whole.iterations == 300 == sum(whole.visits.values())
    assert whole.visits == again.visits  # the same seed, the same search
    # early stop: two counters, taking both wins at once
    early = search(Pile(2, secret=None), random.Random(1), iterations=2000, variant=variant)
    assert early.action == 2 and early.iterations < 2000
    assert early.visits[2] - early.visits.get(1, 0) > 2000 - early.iterations
    only = search(Pile(5, secret=None), random.Random(3), iterations=300, root_actions=[1],
                  variant=variant)
    assert only.action == 1 and set(only.visits) <= {1}
    with pytest.raises(ValueError, match="only the single-observer search continues"):
        search(Pile(5, secret=None), random.Random(3), iterations=10, variant=variant,
               root=whole.root)


def test_an_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown search 'bold'"):
        search(Pile(5, secret=None), random.Random(3), iterations=10, variant="bold")


GAMES = [(bidwhist.GAME, 4, 0), (pasur.GAME, 3, 0), (nullern.GAME, 4, 9),
         (controlnut.GAME, 4, 0)]
IDS = ["bidwhist", "pasur", "nullern", "controlnut"]


@pytest.mark.parametrize(("game", "players", "number"), GAMES, ids=IDS)
def test_the_new_searches_play_legal_moves_deterministically_in_every_game(
        game, players, number):
    full, seat = played_to_a_decision(game, players, number,
                                      random.Random(f"observers:{game.name}"))
    view = full.view(seat)
    book = playbook(view)
    policy = HeuristicPolicy(book.heuristic, book.policy)
    for variant in ("multiple", "own", "backoff"):
        first = search(view, random.Random(5), iterations=400, early_stop=False,
                       variant=variant, policy=policy)
        again = search(view, random.Random(5), iterations=400, early_stop=False,
                       variant=variant, policy=policy)
        assert first.action in full.legal_actions()
        assert first.visits == again.visits and first.iterations == 400
        assert sum(first.visits.values()) == 400
        deeper = tree_stats(first.root)
        assert any(count for depth, count in deeper.items() if depth >= 2), (variant, deeper)
        some = full.legal_actions()[:2]
        limited = search(view, random.Random(5), iterations=100, variant=variant,
                         policy=policy, root_actions=some)
        assert limited.action in some and set(limited.visits) <= set(some)


def test_root_parallel_runs_the_new_searches_with_the_same_seeds():
    full, seat = played_to_a_decision(nullern.GAME, 4, 9, random.Random(8))
    view = full.view(seat)
    book = playbook(view)
    policy = HeuristicPolicy(book.heuristic, book.policy)
    with RootParallel(2) as pool:
        for variant in ("multiple", "own", "backoff"):
            merged = pool.search(view, seed=11, iterations=120, early_stop=False,
                                 policy=policy, variant=variant, exploration=0.5)
            alone = [search(view, random.Random(s), iterations=120, early_stop=False,
                            policy=policy, variant=variant, exploration=0.5).visits
                     for s in (11, 12)]
            assert merged.visits == {a: alone[0].get(a, 0) + alone[1].get(a, 0)
                                     for a in set(alone[0]) | set(alone[1])}


def test_the_exploration_constant_changes_the_search():
    view = Pile(12, secret=None)
    low = search(view, random.Random(2), iterations=400, early_stop=False, exploration=0.1)
    high = search(view, random.Random(2), iterations=400, early_stop=False, exploration=3.0)
    default = search(view, random.Random(2), iterations=400, early_stop=False)
    same = search(view, random.Random(2), iterations=400, early_stop=False, exploration=0.7)
    assert low.visits != high.visits
    assert default.visits == same.visits  # 0.7 stays the default


@pytest.mark.parametrize(("game", "players", "number"), GAMES, ids=IDS)
def test_information_key_is_what_the_seat_knows(game, players, number):
    rng = random.Random(f"information_key:{game.name}")
    checked = differ = 0
    options = game.resolve_options({})
    for _ in range(6):
        full = game.deal(game.shuffled_deck(players, options, rng), 0, players, options,
                         number=number)
        while not full.is_terminal():
            seat = full.current_player()
            if seat >= 0 and rng.random() < 0.3:
                for q in range(players):
                    mine = full.information_key(q)
                    # a world the seat cannot tell from this one: the same key
                    same = full.view(q).determinize(rng)
                    assert same.information_key(q) == mine
                    # a world another seat cannot tell from this one: q's cards may differ
                    other = full.view((q + 1) % players).determinize(rng)
                    if other.observation(q) != full.observation(q):
                        assert other.information_key(q) != mine
                        differ += 1
                    checked += 1
            full.apply(full.chance_action(rng) if seat < 0 else choose(full, rng))
    assert checked >= 20 and differ >= 10, (checked, differ)


def test_information_key_tells_points_of_the_deal_apart():
    full = bidwhist.GAME.deal(list(range(54)), 3, 4, bidwhist.GAME.resolve_options({}))
    before = full.information_key(2)
    full.apply_text("bid 4 cards", 0)  # seat 2's cards are the same, the deal moved on
    assert full.information_key(2) != before


def test_bot_names_and_the_exploration_constant():
    assert set(VARIANTS) == {"single", "multiple", "own", "backoff"}
    mo = make_bot("ismcts-mo:c=0.5", iterations=10)
    own = make_bot("ismcts-own", iterations=10)
    today = make_bot("ismcts", iterations=10)
    assert isinstance(mo, SearchBot) and (mo.variant, mo.exploration) == ("multiple", 0.5)
    assert isinstance(own, SearchBot) and (own.variant, own.exploration) == ("own", 0.7)
    assert isinstance(today, SearchBot) and (today.variant, today.exploration) == ("single", 0.7)
    assert parse_bot("pimc:c=1") == ("pimc", 1.0)
    for bad, why in [("ismcts:k=1", "the parameters are c=NUMBER, .*; w=N, .*; e=N"),
                     ("ismcts:w=0", "w must be a whole number from 1 to 8, not '0'"),
                     ("ismcts:w=two", "w must be a whole number"),
                     ("ismcts:c=x", "c must be a number, not 'x'"),
                     ("heuristic:c=1", "takes no parameters"),
                     ("ismcts:c=-1", "from 0 to 100"), ("ismcts-xx", "unknown bot 'ismcts-xx'")]:
        with pytest.raises(ValueError, match=why):
            parse_bot(bad)


def test_a_bot_spreads_its_budget_over_w_processes():
    assert parse_spec("ismcts-own:c=0.5;w=2") == ("ismcts-own", 0.5, 2)
    assert parse_spec("ismcts") == ("ismcts", 0.7, 1)
    counted = make_bot("ismcts:w=2", iterations=1001)
    timed = make_bot("ismcts:c=1;w=4", think=1.0)
    assert isinstance(counted, SearchBot) and (counted.workers, counted.iterations) == (2, 501)
    assert isinstance(timed, SearchBot) and (timed.workers, timed.think) == (4, 0.25)
    assert timed.exploration == 1.0
    # --workers alone gives every process the whole budget (more search, the same wait)
    whole = make_bot("ismcts", iterations=1000, workers=2)
    assert isinstance(whole, SearchBot) and (whole.workers, whole.iterations) == (2, 1000)


def test_the_arena_plays_the_new_searches_with_their_constants(capsys):
    assert main(["arena", "pasur", "--players", "ismcts-own:c=0.5,ismcts-mo", "--deals", "1",
                 "--iterations", "30", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "ismcts-own:c=0.5 seats 0,1" in out and "ismcts-mo" in out
    assert "ismcts-own:c=0.5 - ismcts-mo:" in out
    assert main(["arena", "pasur", "--players", "ismcts:w=2,ismcts", "--deals", "1",
                 "--iterations", "20", "--seed", "3"]) == 0
    assert "ismcts:w=2 seats 0,1" in capsys.readouterr().out
    assert main(["arena", "pasur", "--players", "ismcts:c=lots,ismcts"]) == 2
    assert "--players: bot 'ismcts:c=lots': c must be a number" in capsys.readouterr().err
