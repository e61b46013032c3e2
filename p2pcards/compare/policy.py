"""A rollout policy for OpenSpiel's ``spades`` and ``hearts``: the card sense any player
has, played fast from the world's OpenSpiel state.

The search's own judgement is in its tree; a rollout only has to finish the deal the
way players would, so that a leaf's reward says something about the position.
Uniformly random play-outs make a poor judge in trick games: a random partner
overtakes its partner's winner, a random hearts player leads the ace into a trick
full of points, and random bids make every spades contract a lottery.  The policy
here is a handful of rules every club player knows (below); with probability
``EPSILON`` a move is uniformly random instead, so that every legal move keeps some
weight in the play-outs.

Spades (partners sit across):

* bidding: a trick for each ace and each guarded king outside spades, plus the
  spade ace, king and queen and one for each spade past the third; at least 1
  (the policy never bids nil);
* leading: an ace outside spades if it has one, else its lowest card outside
  spades, else its lowest spade;
* following suit: its lowest card when its partner is winning the trick or when it
  cannot beat the card winning it; else its lowest winning card if it plays last,
  its highest card if not;
* void in the suit led: when its partner is winning, the lowest card outside
  spades; else the lowest spade that wins the trick, or if none, the lowest card
  outside spades.

Hearts:

* passing: its highest cards, the queen of spades and high spades first;
* leading: its lowest card that is not a heart and not the queen, king or ace of
  spades, else its lowest card;
* following suit: the highest card that stays under the card winning the trick;
  if none, its highest card but the queen of spades;
* void in the suit led: the queen of spades, else its highest heart, else its
  highest card.

The rules read only the world's own state: its history once, at the start of the
rollout (the deal, for the bids; the trick under way), then the legal moves
OpenSpiel lists and the cards played since.  Nothing here imports OpenSpiel: the
state is any object with OpenSpiel's ``is_terminal``, ``current_player``,
``legal_actions``, ``apply_action`` and ``history``.
"""

from __future__ import annotations

import random
from typing import Any

from .rules import CARDS, HAND, HEARTS, PASS_CARDS, PLAYERS, RULES, SPADES, Rules, queen_of_spades

EPSILON = 0.1
"""The chance that a rollout move is uniformly random instead of the policy's."""

NIL = CARDS
"""OpenSpiel's spades bid of nil; the bid of ``n`` tricks is ``NIL + n``."""

_TABLES: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
_QUEEN = {rules.name: queen_of_spades(rules) for rules in RULES.values()}


def _tables(rules: Rules) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Each card's suit and rank, looked up rather than computed (rollouts ask often)."""
    found = _TABLES.get(rules.name)
    if found is None:
        found = _TABLES[rules.name] = (tuple(rules.suit(c) for c in range(CARDS)),
                                       tuple(rules.rank(c) for c in range(CARDS)))
    return found


def rollout(rules: Rules, state: Any, rng: random.Random, epsilon: float = EPSILON) -> int:
    """Play ``state`` to its end by the policy; returns the number of moves made."""
    history = [int(a) for a in state.history()]
    start, length = _play_start(rules, history), len(history)
    trick = current_trick(rules, history)
    hand = _dealt_hands(rules, history) if rules.bidding else None
    steps = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        player = state.current_player()
        if player < 0:  # (a chance node: uniform in both games)
            action = legal[int(rng.random() * len(legal))]
        elif len(legal) == 1:
            action = legal[0]
        elif rng.random() < epsilon:
            action = legal[int(rng.random() * len(legal))]
        elif length < start:
            action = _before_play(rules, player, legal, hand)
        else:
            trick = [] if len(trick) == PLAYERS else trick
            action = _play(rules, player, legal, trick)
        if length >= start:
            trick = [] if len(trick) == PLAYERS else trick
            trick.append((player, action))
        state.apply_action(action)
        length += 1
        steps += 1
    return steps


def _dealt_hands(rules: Rules, history: list[int]) -> list[list[int]]:
    dealt = history[rules.prefix:rules.prefix + CARDS]
    return [dealt[seat::PLAYERS] for seat in range(PLAYERS)]


def _play_start(rules: Rules, history: list[int]) -> int:
    """Index in ``history`` where the play of cards begins (or would begin): after the
    deal, the passes (in a deal that passes) and the four bids."""
    start = rules.prefix + CARDS
    if rules.passing and history and history[0] != 0:
        start += PLAYERS * PASS_CARDS
    return start + PLAYERS if rules.bidding else start


def current_trick(rules: Rules, history: list[int]) -> list[tuple[int, int]]:
    """The trick under way as ``(player, card)`` pairs (empty between tricks), from a
    full action history."""
    start = _play_start(rules, history)
    plays = history[start:]
    if not plays:
        return []
    done = len(plays) - len(plays) % PLAYERS
    if done == len(plays):
        return []
    leader = _leader(rules, history, start, done)
    return [((leader + i) % PLAYERS, card) for i, card in enumerate(plays[done:])]


def _leader(rules: Rules, history: list[int], start: int, done: int) -> int:
    """Who leads the trick starting at play ``done``: the first leader, then each
    trick's winner."""
    plays = history[start:]
    if rules.first_lead is None:
        leader = 0  # OpenSpiel's spades: seat 0 leads the first trick (after the dealer)
    else:  # the holder of the first lead (hearts' two of clubs), passes made
        first = rules.card(*rules.first_lead)
        dealt = history[rules.prefix:rules.prefix + CARDS]
        hands = [set(dealt[s::PLAYERS]) for s in range(PLAYERS)]
        if rules.passing and history[0] != 0:
            passes = history[rules.prefix + CARDS:start]
            for index, card in enumerate(passes):
                giver = index // PASS_CARDS
                hands[giver].discard(card)
                hands[(giver + history[0]) % PLAYERS].add(card)
        leader = next(s for s in range(PLAYERS) if first in hands[s])
    for first in range(0, done, PLAYERS):
        trick = [((leader + i) % PLAYERS, c) for i, c in enumerate(plays[first:first + PLAYERS])]
        leader = winner(rules, trick)[0]
    return leader


def winner(rules: Rules, trick: list[tuple[int, int]]) -> tuple[int, int]:
    """The ``(player, card)`` winning ``trick`` so far (the trump beats any other suit)."""
    suit = _tables(rules)[0]
    led = suit[trick[0][1]]
    best = trick[0]
    for player, card in trick[1:]:
        if _beats(rules, card, best[1], led):
            best = (player, card)
    return best


def _beats(rules: Rules, card: int, other: int, led: int) -> bool:
    suit, rank = _tables(rules)
    if suit[card] == suit[other]:
        return rank[card] > rank[other]
    return rules.trump is not None and suit[card] == rules.trump  # (a trump beats any other)


def _before_play(rules: Rules, player: int, legal: list[int],
                 hands: list[list[int]] | None) -> int:
    """A spades bid, or a hearts pass."""
    if rules.bidding:
        assert hands is not None
        return _spades_bid(rules, hands[player], legal)
    return max(legal, key=lambda c: _pass_rank(rules, c))


def _play(rules: Rules, player: int, legal: list[int], trick: list[tuple[int, int]]) -> int:
    """The policy's card among ``legal`` (two or more) for ``trick`` so far: in a game of
    penalty points (hearts) to keep them off, else (spades) to win tricks."""
    if rules.penalties:
        return _hearts_play(rules, legal, trick)
    return _spades_play(rules, player, legal, trick)


def _low(rules: Rules, cards: list[int]) -> int:
    return min(cards, key=_tables(rules)[1].__getitem__)


def _high(rules: Rules, cards: list[int]) -> int:
    return max(cards, key=_tables(rules)[1].__getitem__)


def _spades_bid(rules: Rules, hand: list[int], legal: list[int]) -> int:
    suit, rank = _tables(rules)
    tricks = 0
    for each in range(4):
        cards = [c for c in hand if suit[c] == each]
        ranks = {rank[c] for c in cards}
        if each == SPADES:
            tricks += len(ranks & {12, 11, 10}) + max(0, len(cards) - 3)
        else:
            tricks += (12 in ranks) + (11 in ranks and len(cards) >= 2)
    bid = NIL + min(HAND, max(1, tricks))
    return bid if bid in legal else min(legal, key=lambda b: abs(b - bid))


def _spades_play(rules: Rules, seat: int, legal: list[int],
                 trick: list[tuple[int, int]]) -> int:
    suit, rank = _tables(rules)
    outside = [c for c in legal if suit[c] != SPADES]
    if not trick:
        aces = [c for c in outside if rank[c] == 12]
        return aces[0] if aces else _low(rules, outside or legal)
    led = suit[trick[0][1]]
    best_player, best = winner(rules, trick)
    partner_wins = best_player == (seat + 2) % PLAYERS
    winning = [c for c in legal if _beats(rules, c, best, led)]
    if suit[legal[0]] == led and all(suit[c] == led for c in legal):
        if partner_wins or not winning:
            return _low(rules, legal)
        return _low(rules, winning) if len(trick) == PLAYERS - 1 else _high(rules, winning)
    if partner_wins:
        return _low(rules, outside or legal)
    trumps = [c for c in winning if suit[c] == SPADES]
    if trumps:
        return _low(rules, trumps)
    return _low(rules, outside or legal)


def _pass_rank(rules: Rules, card: int) -> tuple[int, int]:
    """Hearts: how eager a player is to pass ``card`` (bigger first)."""
    suit, rank = _tables(rules)
    high_spade = suit[card] == SPADES and rank[card] >= 10
    return (1 if high_spade else 0, rank[card])


def _hearts_play(rules: Rules, legal: list[int], trick: list[tuple[int, int]]) -> int:
    suit, rank = _tables(rules)
    by_rank = rank.__getitem__
    if not trick:
        safe = [c for c in legal if suit[c] != HEARTS
                and not (suit[c] == SPADES and rank[c] >= 10)]
        return min(safe or legal, key=by_rank)
    led = suit[trick[0][1]]
    qs = _QUEEN[rules.name]
    if suit[legal[0]] == led:  # (a hand that can follow suit may play only that suit)
        top = max(rank[c] for _, c in trick if suit[c] == led)
        under = [c for c in legal if rank[c] < top]
        if under:
            return max(under, key=by_rank)
        not_queen = [c for c in legal if c != qs]
        return max(not_queen or legal, key=by_rank)
    if qs in legal:
        return qs
    hearts = [c for c in legal if suit[c] == HEARTS]
    return max(hearts or legal, key=by_rank)
