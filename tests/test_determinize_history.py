"""Determinized worlds replayed from the start: every past action stays legal.

For the trick games without hidden transfers (Bid Whist, Nullern) a world drawn
from a seat's view at any point of a deal is turned back into a starting deal
(each hand is what the world holds plus what the seat has played; in Bid
Whist the world's discard stands for the kitty), and the deal's actions are
replayed on it with every check on, the bidder's face-down discard taken from
the world.  The replay must accept every action and end in the world itself.
"""

from __future__ import annotations

import itertools
import random

import pytest

from p2pcards.games import CHANCE, bidwhist, nullern, pasur
from p2pcards.games import controlnut as cn
from p2pcards.games.cards import bits
from p2pcards.games.core import IllegalAction
from p2pcards.games.game import DealSetup
from tests.sim import choose


def starting_deck(game, world, played: list[int], dealer: int, players: int, *,
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
                replay_world(game, world, actions, played,
                             DealSetup(game, players, options, dealer, number))
    assert worlds > 1500


def replay_world(game, world, actions, played, setup: DealSetup) -> None:
    dealer, players, number, options = setup.dealer, setup.players, setup.number, setup.options
    kitty = 0
    if game is bidwhist.GAME:
        if world.phase == bidwhist.BID:
            kitty = world.may[bidwhist.KITTY]
        elif world.phase in (bidwhist.DECLARE, bidwhist.DISCARD_PHASE):
            kitty = _some_kitty(world)
        else:
            kitty = world.may[bidwhist.DISCARD_PILE]
    deck = starting_deck(game, world, played, dealer, players, number=number, kitty=kitty)
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


def controlnut_start(world, actions, unseen: dict[int, int]) -> list[int] | None:
    """The deal-mapped deck a Control Nut! world implies, or ``None``.

    Walking back from the world's hands: a played nut card returns to its
    player, a handed-out bid card to the auction winner, a bid card still on the
    table to its bidder (a losing bid went back to the hand already), a stolen
    card to its victim.  ``unseen`` gives, for the steals the searcher did not see (by index
    in ``actions``), which card the world says was taken.
    """
    hands = [world.may[s] & cn.NUT_MASK for s in range(4)]
    for i in range(len(actions) - 1, -1, -1):
        actor, action, taker = actions[i]
        tag = action >> cn.TAG_SHIFT
        if actor == CHANCE and tag == cn.STEAL:
            payload = action & cn.PAYLOAD
            victim, card = payload >> 8, unseen.get(i, (payload & 0xFF) - 1)
            if not hands[taker] >> card & 1:
                return None
            hands[taker] ^= 1 << card
            hands[victim] |= 1 << card
        elif actor >= 0 and tag == cn.GIVE:
            for card, seat in cn.give_pairs(action):
                hands[seat] &= ~(1 << card)
                hands[actor] |= 1 << card
        elif actor >= 0 and tag == cn.BID:  # cards still on the table go back
            hands[actor] |= action & cn.PAYLOAD & ~(hands[0] | hands[1] | hands[2] | hands[3])
        elif actor >= 0 and action < cn.ORDER_PLACE:
            hands[actor] |= cn._cards_of(action) & cn.NUT_MASK
    if [h.bit_count() for h in hands] != [13] * 4:
        return None
    dealer = world.dealer
    queues = [bits(h) for h in hands]
    return [queues[(dealer + 1 + i) % 4].pop() for i in range(52)]


def controlnut_replay(world, actions, unseen: dict[int, int]) -> bool:
    """Replay the round on the deck the world implies, every check on."""
    deck = controlnut_start(world, actions, unseen)
    if deck is None:
        return False
    state = cn.GAME.deal(deck, world.dealer, 4, {})
    try:
        for i, (actor, action, _) in enumerate(actions):
            if i in unseen:
                action = cn.steal_code(action >> 8 & 0xF, unseen[i])
            state.check_actor("chance" if actor == CHANCE else actor)
            state.apply(action)
    except IllegalAction:
        return False
    return state.may == world.may and state.count == world.count


def test_controlnut_worlds_replay_from_the_start():
    """Auctions (bid cards shown, handed out, returned) and HAND steals: a world drawn
    from any seat's view must explain the whole round.  A steal the searcher did not
    see may have taken any card the world's taker could have had; some choice must
    make every past action legal.

    Worlds without such a steal must all replay.  After one, the view's transfer
    record (only one card crossed; places.py) keeps the world consistent; when a
    taker shows cards that several steals could have brought, the record credits
    them greedily, and a rare world (about 1 in 1,800 over six seeds) is left that
    no choice of stolen cards explains: under 1% is required here (docs/bots.md).
    """
    rng = random.Random("history:controlnut")
    worlds = unseen_worlds = unexplained = 0
    while worlds < 1500:
        full = cn.GAME.deal(cn.GAME.shuffled_deck(4, {}, rng), rng.randrange(4), 4, {})
        actions: list[tuple[int, int, int]] = []  # (actor, action, the HAND taker)
        while not full.is_terminal():
            seat = full.current_player()
            action = choose(full, rng)
            actions.append((seat, action, full.turn))
            full.apply(action)
            if full.is_terminal() or rng.random() < 0.7:
                continue
            observer = rng.randrange(4)
            world = full.view(observer).determinize(rng)
            worlds += 1
            steals = [i for i, (actor, a, taker) in enumerate(actions)
                      if actor == CHANCE and a >> cn.TAG_SHIFT == cn.STEAL
                      and observer not in (taker, a >> 8 & 0xF)]
            candidates = [bits(world.may[actions[i][2]] & cn.NUT_MASK
                               | _played_after(actions, i)) for i in steals]
            explained = any(controlnut_replay(world, actions,
                                              dict(zip(steals, choice, strict=True)))
                            for choice in itertools.product(*candidates))
            if steals:
                unseen_worlds += 1
                unexplained += not explained
            else:
                assert explained, (observer, actions)
    assert unseen_worlds > 200
    assert unexplained <= unseen_worlds / 100, (unexplained, unseen_worlds)


def _played_after(actions, index: int) -> int:
    """The nut cards the HAND taker of steal ``index`` played after it."""
    taker = actions[index][2]
    return sum(cn._cards_of(a) & cn.NUT_MASK for actor, a, _ in actions[index + 1:]
               if actor == taker and a < cn.ORDER_PLACE)
