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
from p2pcards.games import CHANCE, bidwhist, nullern, pasur
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


def pasur_starting_deck(world, true_deck: list[int], plays: list[list[int]], dealer: int,
                        players: int) -> tuple[list[int], list[int]]:
    """(a starting deck, the stock order after an opening jack) rebuilt from a world.

    Each seat's cards of deal segment r are the 4 it played in that segment, the
    segment in progress adding what the world says it holds; the stock then holds
    the segments in deal order and whatever the world leaves in it."""
    opening = 4 * players
    segments: list[list[int]] = []  # segments[r][seat] = mask
    current = min(len(p) // 4 for p in plays)  # the deal segment being played
    for r in range(current + 1):
        row = []
        for seat in range(players):
            cards = plays[seat][4 * r:4 * r + 4]
            mask = sum(1 << c for c in cards)
            if r == current:
                mask |= world.may[seat]
            row.append(mask)
        if any(row):
            segments.append(row)
    queues = [[bits(m) for m in row] for row in segments]
    dealt = []
    for row in queues:
        for i in range(4 * players):
            dealt.append(row[(dealer + 1 + i) % players].pop())
    rest = bits(world.may[players])
    pool = true_deck[opening:opening + 4]
    jacks = sum(1 for c in pool if c % 13 == pasur.JACK)
    if jacks == 1:  # the shown replacement stays; the stock order is the chance action's
        deck = dealt[:opening] + pool + [true_deck[opening + 4]]
        used = set(deck)
        filler = [c for c in range(52) if c not in used]
        stock_order = dealt[opening:] + rest
        return deck + filler, stock_order
    return dealt[:opening] + pool + dealt[opening:] + rest, []


@pytest.mark.parametrize("players", [2, 3])
def test_pasur_worlds_replay_from_the_start(players):
    rng = random.Random(f"history:pasur:{players}")
    options = pasur.GAME.resolve_options({})
    worlds = 0
    while worlds < 800:
        true_deck = pasur.GAME.shuffled_deck(players, options, rng)
        if pasur.GAME.is_void_deal(true_deck, players):
            continue
        dealer = rng.randrange(players)
        full = pasur.GAME.deal(true_deck, dealer, players, options)
        actions: list[tuple[int, int]] = []
        plays: list[list[int]] = [[] for _ in range(players)]
        while not full.is_terminal():
            seat = full.current_player()
            action = full.chance_action(rng) if seat == CHANCE else choose(full, rng)
            full.apply(action)
            actions.append((seat, action))
            if action >= 0:
                plays[seat].append(action & 63)
            if full.is_terminal():
                break
            world = full.view(rng.randrange(players)).determinize(rng)
            worlds += 1
            deck, stock_order = pasur_starting_deck(world, true_deck, plays, dealer, players)
            state = pasur.GAME.deal(deck, dealer, players, options)
            for actor, past in actions:
                if actor == CHANCE:
                    past = pasur.stock_code(stock_order)
                state.check_actor(actor)
                state.apply(past)  # raises if the world made a past action illegal
            assert state.may == world.may and state.pool == world.pool
            assert state.piles == world.piles
