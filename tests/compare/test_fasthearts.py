"""The native hearts model (p2pcards/compare/fasthearts.py) is OpenSpiel's hearts without
passing (needs the ``compare`` extra; see test_openspiel_adapters.py).

Over seeded deals played by random moves, by the rollout policy and towards a moon shot,
the native state and OpenSpiel's own agree at every move (player to act, legal moves,
the end, then the returns and rewards), and the native world's ``information_key`` and
``observation`` equal those of a world driving OpenSpiel's state.  Native worlds drawn
from a view hold the very cards the OpenSpiel worlds drawn with the same generator
hold, and both rollouts then play the same moves to the same returns.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pyspiel

from p2pcards.compare.adapters import CardTable, load
from p2pcards.compare.fasthearts import HeartsWorld, policy_card

from .test_openspiel_adapters import card_name, hands_printed

Chooser = Callable[[HeartsWorld, random.Random], int]


def dealt(rng: random.Random) -> pyspiel.State:
    state = load("hearts", passing=False).new_initial_state()
    while state.is_chance_node():
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def native_of(state: pyspiel.State) -> HeartsWorld:
    """A native world of a deal just dealt (card ``i`` to seat ``i % 4``)."""
    hands = [0] * 4
    for i, card in enumerate(state.history()[1:]):
        hands[i % 4] |= 1 << card
    return HeartsWorld(hands)


def at_random(world: HeartsWorld, rng: random.Random) -> int:
    return rng.choice(world.legal_actions())


def by_policy(world: HeartsWorld, rng: random.Random) -> int:
    return policy_card(world.legal_mask(), world.count % 4 == 0, world.led, world.top)


def toward_the_moon(world: HeartsWorld, rng: random.Random) -> int:
    """Seat 0 plays its highest card, the others their lowest, hearts when void."""
    legal = world.legal_actions()
    if world.current_player() == 0:
        return max(legal, key=lambda c: c // 4)
    hearts = [c for c in legal if c % 4 == 2]
    return max(hearts) if hearts and world.led != 2 else min(legal, key=lambda c: c // 4)


def play_both(state: pyspiel.State, world: HeartsWorld, choose: Chooser,
              rng: random.Random) -> None:
    """Play one deal in both models, checking every position."""
    while True:
        assert world.current_player() == state.current_player()
        assert world.is_terminal() == state.is_terminal()
        table = CardTable.world(state)
        for seat in range(4):
            assert world.information_key(seat) == table.information_key(seat)
            assert world.observation(seat) == table.observation(seat) == 0
        if state.is_terminal():
            break
        assert world.legal_actions() == list(state.legal_actions())
        action = choose(world, rng)
        assert world.public_action(action, 0) == table.public_action(action, 0)
        state.apply_action(action)
        world.step(action)
    assert world.returns() == list(state.returns())
    assert world.rewards() == table.rewards()
    assert deal_and_moves(world.history()) == deal_and_moves(list(state.history()))


def deal_and_moves(history: list[int]) -> tuple[list[set[int]], list[int]]:
    """Each seat's dealt cards (as sets: the order of a deal is no one's information)
    and the cards played, from a hearts history without passing."""
    return [set(history[1 + s:53:4]) for s in range(4)], history[53:]


def stacked_moon() -> pyspiel.State:
    """Seat 0 holds every ace, king and queen and the jack of hearts."""
    top = [rank * 4 + suit for rank in (10, 11, 12) for suit in range(4)] + [9 * 4 + 2]
    rest = [c for c in range(52) if c not in top]
    hands = [top, rest[0:13], rest[13:26], rest[26:39]]
    state = load("hearts", passing=False).new_initial_state()
    state.apply_action(0)
    for i in range(52):
        state.apply_action(hands[i % 4][i // 4])
    return state


def test_native_hearts_plays_every_deal_as_openspiel() -> None:
    for chooser, deals in ((at_random, 40), (by_policy, 20)):
        for deal in range(deals):
            rng = random.Random(f"native {chooser.__name__} {deal}")
            state = dealt(rng)
            world = native_of(state)
            play_both(state, world, chooser, rng)
    state = stacked_moon()
    play_both(state, native_of(state), toward_the_moon, random.Random(1))
    assert list(state.returns()) == [26.0, 0.0, 0.0, 0.0]  # seat 0 shot the moon
    assert [card_name("hearts", c) for c in native_of(stacked_moon()).legal_actions()] == ["C2"]


def test_native_worlds_hold_the_openspiel_worlds_cards_and_roll_out_alike() -> None:
    """From views at every fourth move of seeded deals: the same generator gives the
    native and the OpenSpiel world the same hands, and each rollout then the same moves
    (checked on the whole history) and rewards."""
    game = load("hearts", passing=False)
    compared = 0
    for deal in range(6):
        rng = random.Random(f"views {deal}")
        truth = dealt(rng)
        while not truth.is_terminal():
            seat = truth.current_player()
            for rollouts in ("random", "policy"):
                native = CardTable.view(truth, seat, rollouts)
                other = CardTable.view(truth, seat, rollouts, worlds="pyspiel")
                seed = rng.randrange(2**31)
                world = native.determinize(random.Random(seed))
                table = other.determinize(random.Random(seed))
                assert isinstance(world, HeartsWorld) and isinstance(table, CardTable)
                assert deal_and_moves(world.history()) == \
                    deal_and_moves(list(table.state.history()))
                assert hands_printed(table.state, "hearts") == \
                    hands_printed(pyspiel_of(game, world), "hearts")
                world.rollout(random.Random(seed + 1))
                table.rollout(random.Random(seed + 1))
                assert world.is_terminal() and table.is_terminal()
                assert deal_and_moves(world.history()) == \
                    deal_and_moves(list(table.state.history()))
                assert world.rewards() == table.rewards()
                compared += 1
            for _ in range(4):
                if not truth.is_terminal():
                    truth.apply_action(rng.choice(truth.legal_actions()))
    assert compared == 6 * 13 * 2


def pyspiel_of(game: pyspiel.Game, world: HeartsWorld) -> pyspiel.State:
    state = game.new_initial_state()
    for action in world.history():
        state.apply_action(action)
    return state


def test_rollouts_from_the_first_card_match_over_many_deals() -> None:
    """The first trick has the most rules (the two of clubs, no points unless a hand
    has nothing else): both rollouts from it, over many deals, play OpenSpiel's moves."""
    for deal in range(150):
        rng = random.Random(f"first {deal}")
        truth = dealt(rng)
        for rollouts in ("random", "policy"):
            seed = rng.randrange(2**31)
            world = CardTable.view(truth, truth.current_player(), rollouts).determinize(
                random.Random(seed))
            table = CardTable.view(truth, truth.current_player(), rollouts,
                                   worlds="pyspiel").determinize(random.Random(seed))
            world.rollout(random.Random(seed + 1))
            table.rollout(random.Random(seed + 1))
            assert deal_and_moves(world.history()) == \
                deal_and_moves(list(table.state.history()))
            assert world.rewards() == table.rewards()
