"""The rollout policy (p2pcards/compare/policy.py) on OpenSpiel's own states (needs the
``compare`` extra): it reads the trick under way as OpenSpiel does, its play-outs end
the deal with moves OpenSpiel calls legal, and it plays better than random moves."""

from __future__ import annotations

import random

import pyspiel  # noqa: F401 (errors, rather than skips, without the extra)

from p2pcards.compare import policy
from p2pcards.compare.adapters import load
from p2pcards.compare.rules import PLAYERS, RULES


def test_the_trick_under_way_names_the_player_to_act() -> None:
    """Over random play-outs, the player after the trick's last card is OpenSpiel's
    player to act: so each trick's leader (the first, then each winner) is right."""
    for name in ("spades", "hearts"):
        rules, game = RULES[name], load(name)
        rng = random.Random(3)
        checked = 0
        for _ in range(30):
            state = game.new_initial_state()
            while not state.is_terminal():
                history = [int(a) for a in state.history()]
                trick = policy.current_trick(rules, history)
                if trick and state.current_player() >= 0:
                    assert (trick[-1][0] + 1) % PLAYERS == state.current_player()
                    checked += 1
                state.apply_action(rng.choice(state.legal_actions()))
        assert checked > 1000


def test_play_outs_are_legal_and_beat_random_ones() -> None:
    """Seats 0 and 2 play the policy's moves (each a policy play-out's first move, which
    OpenSpiel must list as legal), seats 1 and 3 random ones, over 60 deals of each game
    (hearts with passing): seat 0 scores more than seat 1 in all (in spades, the
    policy's partnership more than the random one)."""
    for name in ("spades", "hearts"):
        rules, game = RULES[name], load(name)
        rng = random.Random(5)
        edge = 0.0
        for _ in range(60):
            deal = game.new_initial_state()
            while deal.is_chance_node():
                deal.apply_action(rng.choice(deal.legal_actions()))
            mixed = deal.clone()
            while not mixed.is_terminal():
                legal = mixed.legal_actions()
                if mixed.current_player() in (0, 2):
                    snapshot = mixed.clone()
                    policy.rollout(rules, snapshot, random.Random(0), epsilon=0.0)
                    first = snapshot.history()[len(mixed.history())]
                    assert first in legal
                    mixed.apply_action(first)
                else:
                    mixed.apply_action(rng.choice(legal))
            returns = mixed.returns()
            edge += returns[0] - returns[1]
        assert edge > 0, (name, edge)
