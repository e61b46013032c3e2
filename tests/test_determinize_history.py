"""Determinized worlds replayed from the start: every past action stays legal.

For the trick games without hidden transfers (Bid Whist, Nullern) a world drawn
from a seat's view at any point of a deal is turned back into a starting deal
(each hand is what the world holds plus what the seat has played; in Bid
Whist the world's discard stands for the kitty), and the deal's actions are
replayed on it with every check on, the bidder's face-down discard taken from
the world.  The replay must accept every action and end in the world itself.
"""

from __future__ import annotations

import random

import pytest

from p2pcards.cards import bits
from p2pcards.games import CHANCE, bidwhist, nullern
from tests.sim import choose


def starting_deck(game, world, played: list[int], dealer: int, players: int,
                  number: int, kitty: int) -> list[int]:
    """Deal-mapped deck whose hands are the world's plus what each seat played."""
    hands = [world.may[s] | played[s] for s in range(players)]
    if game is bidwhist.GAME:
        if world.bidder >= 0:  # the kitty went to the bidder: its deal is the rest
            hands[world.bidder] &= ~kitty
        queues = [bits(h) for h in hands]
        rest = bits(kitty)
        return [queues[(dealer + 1 + i) % 4].pop() if i < 48 else rest.pop()
                for i in range(48 + world.kitty_size)]
    cards = world.cards
    queues = [bits(h) for h in hands]
    undealt = bits(world.may[players])
    deck = []
    for i in range(nullern.DECK_SIZE):
        if i < cards * players:
            deck.append(queues[(dealer + 1 + i) % players].pop())
        elif i == cards * players:
            deck.append(world.trump_card)
        else:
            deck.append(undealt.pop())
    return deck


@pytest.mark.parametrize(("game", "players", "number"),
                         [(bidwhist.GAME, 4, 0), (nullern.GAME, 4, 9), (nullern.GAME, 6, 12)],
                         ids=["bidwhist", "nullern-4p-10", "nullern-6p-8"])
def test_every_past_action_stays_legal_in_every_world(game, players, number):
    rng = random.Random(f"history:{game.name}:{players}:{number}")
    options = game.resolve_options({})
    worlds = 0
    for _ in range(40):
        dealer = rng.randrange(players)
        full = game.deal(game.shuffled_deck(players, options, rng), dealer, players, options,
                         number=number)
        actions: list[tuple[int, int]] = []
        played = [0] * players
        while not full.is_terminal():
            seat = full.current_player()
            action = full.chance_action(rng) if seat == CHANCE else choose(full, rng)
            full.apply(action)
            actions.append((seat, action))
            if action < (64 if game is bidwhist.GAME else nullern.BID):  # a card played
                played[seat] |= 1 << action
            for observer in rng.sample(range(players), 2):
                world = full.view(observer).determinize(rng)
                worlds += 1
                replay_world(game, world, actions, played, dealer, players, number, options)
    assert worlds > 1500


def replay_world(game, world, actions, played, dealer, players, number, options) -> None:
    kitty = 0
    if game is bidwhist.GAME:
        if world.phase == bidwhist.BID:
            kitty = world.may[bidwhist.KITTY]
        elif world.phase in (bidwhist.DECLARE, bidwhist.DISCARD_PHASE):
            kitty = _some_kitty(world)
        else:
            kitty = world.may[bidwhist.DISCARD_PILE]
    deck = starting_deck(game, world, played, dealer, players, number, kitty)
    state = game.deal(deck, dealer, players, options, number=number)
    for seat, action in actions:
        if game is bidwhist.GAME and action >= bidwhist.DISCARD:
            action = bidwhist.discard_code(world.may[bidwhist.DISCARD_PILE])
        state.check_actor(seat)
        state.apply(action)  # raises if the world made a past action illegal
    assert state.may == world.may and state.count == world.count


def _some_kitty(world) -> int:
    """Before the discard: any six of the bidder's cards not yet played stand for the kitty."""
    return sum(1 << c for c in bits(world.may[world.bidder])[:world.kitty_size])
