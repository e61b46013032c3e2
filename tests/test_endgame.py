"""Exact endgames (ai/endgame.py): the solver against brute force, the policy, the key."""

from __future__ import annotations

import random

import pytest

from p2pcards.ai.endgame import Exact, Solver, solvable_now
from p2pcards.ai.ismcts import Known, search
from p2pcards.ai.protocol import SearchState
from p2pcards.bots import make_bot
from p2pcards.games import CHANCE, GAMES, HandState
from p2pcards.games.core import PAST
from tests.sim import choose


def brute(world: SearchState) -> tuple[float, ...]:
    """Every line searched: each player takes the move best for itself (first on ties)."""
    if world.is_terminal():
        return tuple(world.rewards())
    actor = world.current_player()
    best: tuple[float, ...] = ()
    for action in world.legal_actions():
        child = world.clone()
        child.step(action)
        found = brute(child)
        if not best or found[actor] > best[actor]:
            best = found
    return best


def endgame(name: str, rng: random.Random, left: int, players: int = 0) -> HandState | None:
    """A full deal of ``name`` played at random until at most ``left`` moves remain (at
    ``players`` seats: the game's usual number if 0)."""
    game = GAMES[name]
    players = players or game.default_players
    options = game.resolve_options({})
    full = game.deal(game.shuffled_deck(players, options, rng), 0, players, options,
                     number=9 % game.numbered_deals)
    while not full.is_terminal():
        moves = full.moves_left()
        if moves is not None and moves <= left:
            return full
        seat = full.current_player()
        full.apply(full.chance_action(rng) if seat == CHANCE else choose(full, rng))
    return None


@pytest.mark.parametrize(("name", "players"), [("bidwhist", 4), ("nullern", 4), ("pasur", 4),
                                               ("nullern", 2), ("pasur", 2)])
def test_the_solver_finds_what_every_line_searched_finds(name, players):
    rng = random.Random(f"endgame:{name}:{players}")
    solved = 0
    for _ in range(12):
        world = endgame(name, rng, 8, players)
        if world is None:
            continue
        before = world.solve_key()
        solver = Solver()
        found = solver.solve(world)
        assert world.solve_key() == before  # the world is left as it was
        truth = brute(world.clone())
        assert found is not None
        # alpha-beta (two units, rewards adding to one) finds the value, so the same
        # rewards; max^n the same line, ties to the first move
        assert tuple(found) == pytest.approx(truth)
        assert solver.nodes > 0 and solver.solves == 1
        solved += 1
    assert solved >= 10


def positions(world: HandState) -> int:
    """The positions with a move to make in the whole tree below ``world``."""
    if world.is_terminal():
        return 0
    total = 1
    for action in world.legal_actions():
        child = world.clone()
        child.step(action)
        total += positions(child)
    return total


def test_alpha_beta_prunes_and_the_table_is_reused():
    rng = random.Random(2)
    world = endgame("bidwhist", rng, 12)
    assert world is not None
    solver = Solver()
    first = solver.solve(world)
    nodes = solver.nodes
    assert nodes * 3 < positions(world.clone())  # pruned and transposed: far fewer
    again = solver.solve(world)
    assert first == again and solver.nodes == nodes  # the root's entry answers at once
    fresh = Solver(entries=0)  # a table cleared before every solve: the same answer
    assert fresh.solve(world) == first


def test_the_exact_policy_solves_only_where_it_may():
    rng = random.Random(3)
    world = endgame("pasur", rng, 6, 2)
    assert world is not None
    policy = Exact(6)
    assert solvable_now(world, 6) and not solvable_now(world, world.moves_left() - 1)
    rewards = policy.rollout(world.clone(), rng)
    assert rewards == Solver().solve(world)
    early = endgame("pasur", random.Random(4), 8, 2)
    while early is not None and early.moves_left() <= 6:
        early = endgame("pasur", rng, 8, 2)
    assert early is not None and early.moves_left() > 6
    playing = early.clone()
    assert policy.rollout(playing, rng) is None and playing.is_terminal()  # rolled out
    game = GAMES["bidwhist"]
    options = game.resolve_options({})
    auction = game.deal(game.shuffled_deck(4, options, rng), 0, 4, options)
    assert auction.moves_left() is None and not solvable_now(auction, 60)
    assert GAMES["controlnut"].deal(
        GAMES["controlnut"].shuffled_deck(4, GAMES["controlnut"].resolve_options({}), rng), 0, 4,
        GAMES["controlnut"].resolve_options({})).moves_left() is None


def test_the_search_with_exact_endgames_plays_a_best_move():
    """On a known world, the search whose every iteration is solved plays a move of
    the solver's value."""
    rng = random.Random(9)
    checked = 0
    while checked < 4:
        world = endgame("pasur", rng, 6, 2)
        if world is None:  # the deal ended first (a round the rules make void)
            continue
        checked += 1
        actor = world.current_player()
        result = search(Known(world), random.Random(1), iterations=200, policy=Exact(60))
        values = {}
        for action in world.legal_actions():
            child = world.clone()
            child.step(action)
            values[action] = Solver().solve(child)[actor]
        assert values[result.action] == max(values.values())


def test_the_solve_key_leaves_out_the_past_only():
    rng = random.Random(5)
    world = endgame("nullern", rng, 20)
    assert world is not None
    twin = world.clone()
    twin.moves += 7
    twin.last_trick = None
    twin.played_by = [0] * world.players
    assert twin.solve_key() == world.solve_key()  # the record of the past is not in it
    moved = world.clone()
    moved.step(moved.legal_actions()[0])
    assert moved.solve_key() != world.solve_key()
    assert {"last_trick", "moves", "played_by"} <= PAST


def test_a_bot_solving_endgames_plays_legal_moves_to_the_end():
    rng = random.Random(12)
    game = GAMES["bidwhist"]
    options = game.resolve_options({})
    full = game.deal(game.shuffled_deck(4, options, rng), 0, 4, options)
    bot = make_bot("ismcts:e=12;i=1", iterations=80)
    while not full.is_terminal():
        seat = full.current_player()
        full.apply(bot(full.view(seat), rng))
    assert full.is_terminal()
