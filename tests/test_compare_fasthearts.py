"""The native hearts model (p2pcards/compare/fasthearts.py) on deals made by hand.  Pure
Python: the module imports no OpenSpiel; tests/compare proves it equal to OpenSpiel's
hearts move by move."""

from __future__ import annotations

import random

from p2pcards.ai.endgame import Exact, Solver
from p2pcards.compare import policy
from p2pcards.compare.fasthearts import HeartsWorld, cards_of
from p2pcards.compare.rules import CLUBS, DIAMONDS, HEARTS, HEARTS_RULES, SPADES
from p2pcards.compare.seen import seen_by
from tests.test_endgame import brute

H = HEARTS_RULES
ACE, KING, QUEEN = 12, 11, 10


def world_of(hands: list[list[int]], rollouts: str = "random") -> HeartsWorld:
    return HeartsWorld([sum(1 << c for c in hand) for hand in hands], rollouts)


def shuffled_deal(rng: random.Random) -> list[list[int]]:
    cards = list(range(52))
    rng.shuffle(cards)
    return [cards[s::4] for s in range(4)]


def suit(s: int, ranks: range | list[int]) -> list[int]:
    return [H.card(s, r) for r in ranks]


def test_the_first_trick_and_the_hearts_lead_follow_openspiels_rules() -> None:
    clubs, diamonds = suit(CLUBS, range(13)), suit(DIAMONDS, range(13))
    hearts, spades = suit(HEARTS, range(13)), suit(SPADES, range(13))
    qs = spades[QUEEN]
    # seat 1 holds only points; seat 2 a heart and diamonds; seat 3 spades and a diamond
    world = world_of([clubs, [qs, *hearts[:12]], [hearts[12], *diamonds[:12]],
                      [diamonds[12], *spades[:QUEEN], *spades[QUEEN + 1:]]])
    assert world.current_player() == 0 and world.legal_actions() == [clubs[0]]
    world.step(clubs[0])
    assert world.legal_actions() == sorted([qs, *hearts[:12]])  # nothing else: any card
    world.step(hearts[0])
    assert world.legal_actions() == sorted(diamonds[:12])  # no point while it has others
    # hearts may not be led until a heart or the queen of spades is played
    world = world_of([[clubs[0], spades[2], spades[3], *hearts[:10]], [*clubs[1:], spades[0]],
                      diamonds, [*hearts[10:], spades[1], *spades[4:]]])
    for card in (clubs[0], clubs[1], diamonds[0]):
        world.step(card)
    assert world.legal_actions() == sorted([spades[1], *spades[4:QUEEN], *spades[KING:]])
    for card in (spades[1], spades[0], diamonds[1], spades[ACE], spades[2]):
        world.step(card)
    assert world.current_player() == 3  # its ace won the trick
    assert world.legal_actions() == sorted(spades[4:ACE])  # not its hearts
    for card in (qs, spades[3], clubs[2], diamonds[2]):
        world.step(card)
    assert world.current_player() == 3  # the queen won, and broke hearts
    assert world.legal_actions() == sorted([*hearts[10:], *spades[4:QUEEN], spades[KING]])


def test_a_player_taking_every_point_shoots_the_moon() -> None:
    top = [H.card(s, r) for r in (QUEEN, KING, ACE) for s in range(4)] + [H.card(HEARTS, 9)]
    rest = [c for c in range(52) if c not in top]
    world = world_of([top, rest[:13], rest[13:26], rest[26:]])
    while not world.is_terminal():
        legal = world.legal_actions()
        if world.current_player() == 0:
            world.step(max(legal, key=H.rank))
        else:
            world.step(min(legal, key=H.rank))
    assert world.returns() == [26.0, 0.0, 0.0, 0.0]
    assert world.rewards() == H.rewards([26.0, 0.0, 0.0, 0.0])
    assert world.current_player() == -4 and world.legal_actions() == []


def test_information_keys_are_the_views_keys() -> None:
    rng = random.Random(3)
    world = world_of(shuffled_deal(rng))
    while not world.is_terminal():
        history = world.history()
        players = [-1] * 53 + [m >> 6 for m in world.moves]
        pairs = list(zip(players, history, strict=True))
        for seat in range(4):
            assert world.information_key(seat) == seen_by(H, pairs, seat).key()
        world.step(rng.choice(world.legal_actions()))


class Driven:
    """A native world behind OpenSpiel's method names, for :func:`policy.rollout`."""

    def __init__(self, world: HeartsWorld):
        self.world = world

    def is_terminal(self) -> bool:
        return self.world.is_terminal()

    def current_player(self) -> int:
        return self.world.current_player()

    def legal_actions(self) -> list[int]:
        return self.world.legal_actions()

    def apply_action(self, action: int) -> None:
        self.world.step(action)

    def history(self) -> list[int]:
        return self.world.history()


def test_the_native_rollouts_make_the_policy_modules_moves() -> None:
    """From every fourth position of seeded deals, the native policy rollout plays what
    policy.rollout plays on the same world with the same generator; the random rollout
    draws its moves as the OpenSpiel worlds' rollout does."""
    for deal in range(20):
        rng = random.Random(deal)
        world = world_of(shuffled_deal(rng), "policy")
        while not world.is_terminal():
            seed = rng.randrange(2**31)
            native, driven = world.clone(), Driven(world.clone())
            native.rollout(random.Random(seed))
            policy.rollout(H, driven, random.Random(seed))
            assert native.moves == driven.world.moves
            assert native.returns() == driven.world.returns()
            randomly, by_hand = world.clone(), world.clone()
            randomly.rollouts = "random"
            randomly.rollout(random.Random(seed))
            draw = random.Random(seed)
            while not by_hand.is_terminal():
                legal = by_hand.legal_actions()
                by_hand.step(legal[int(draw.random() * len(legal))])
            assert randomly.moves == by_hand.moves
            for _ in range(4):
                world.step(rng.choice(world.legal_actions()))
    assert cards_of(0b1010) == [1, 3]


def played_to(world: HeartsWorld, left: int, rng: random.Random) -> HeartsWorld:
    while world.moves_left() > left:
        world.step(rng.choice(world.legal_actions()))
    return world


def test_hearts_endgames_solve_to_what_every_line_searched_finds() -> None:
    """Max^n (each seat scores for itself) with the table of positions: the rewards of
    every line searched, the world left as it was; a moon still to shoot included."""
    rng = random.Random("hearts endgames")
    worlds = [played_to(world_of(shuffled_deal(rng)), left, rng)
              for left in (4, 5, 7, 8, 8, 8, 9, 11, 12, 12)]
    top = [H.card(s, r) for r in (QUEEN, KING, ACE) for s in range(4)] + [H.card(HEARTS, 9)]
    rest = [c for c in range(52) if c not in top]
    moon = world_of([top, rest[:13], rest[13:26], rest[26:]])  # seat 0 takes every trick
    while moon.moves_left() > 8:
        legal = moon.legal_actions()
        moon.step((max if moon.current_player() == 0 else min)(legal, key=H.rank))
    assert moon.points[0] > 0 and sum(moon.points[1:]) == 0
    for world in [*worlds, moon]:
        key = world.solve_key()
        solver = Solver()
        found = solver.solve(world)
        assert world.solve_key() == key and world.moves_left() <= 12
        assert found is not None and tuple(found) == brute(world.clone())
        assert Solver(entries=0).solve(world) == found  # (no table: the same)
        assert solver.nodes > 0
    assert brute(moon.clone()) == tuple(H.rewards([26.0, 0.0, 0.0, 0.0]))  # shot


def test_the_exact_policy_solves_hearts_worlds_near_the_end_only() -> None:
    rng = random.Random(5)
    early = played_to(world_of(shuffled_deal(rng)), 20, rng)
    late = played_to(world_of(shuffled_deal(rng)), 8, rng)
    exact = Exact(8)
    assert exact.rollout(late.clone(), rng) == list(brute(late.clone()))
    assert exact.solver.solves == 1
    played = early.clone()
    assert exact.rollout(played, rng) is None  # rolled out in the world itself
    assert played.is_terminal() and exact.solver.solves == 1


def variants(world: HeartsWorld) -> list[HeartsWorld]:
    """``world`` (two cards of a trick down) with the same cards but, in turn, another
    seat's points taken, more points in the trick, a lower winning rank, the trick's
    other player winning it so far."""
    taken = world.clone()
    donor = max(range(4), key=lambda s: taken.points[s])
    taken.points[(donor + 1) & 3] += taken.points[donor]
    taken.points[donor] = 0
    heavier = world.clone()
    heavier.trick_points += 13
    lower = world.clone()
    lower.top = 0
    other = world.clone()
    leader, second = (world.player + 2) & 3, (world.player + 3) & 3
    other.winner = second if world.winner == leader else leader
    return [taken, heavier, lower, other]


def test_the_solvers_table_keeps_apart_what_plays_out_differently() -> None:
    """One solver (one search's table) for a position and for variants of it that hold
    the same cards but differ in what the key must tell: the points taken, and mid-trick
    the trick's points, its winning rank and its winner.  In a position where each
    variant plays out to other rewards, the shared table still gives every line's own."""
    rng = random.Random("keys")
    for _ in range(200):  # a position where every variant matters
        world = played_to(world_of(shuffled_deal(rng)), 10, rng)
        truth = brute(world.clone())
        others = variants(world)
        if all(brute(v.clone()) != truth for v in others):
            break
    else:
        raise AssertionError("no position where every variant plays out differently")
    solver = Solver()
    assert tuple(solver.solve(world) or ()) == truth
    for variant in others:
        assert tuple(solver.solve(variant) or ()) == brute(variant.clone())
