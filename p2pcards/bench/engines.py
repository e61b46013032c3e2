"""``p2pcards bench engines``: random-playout speed of the rules engines."""



from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from p2pcards.games import bidwhist, controlnut, nullern, pasur
from p2pcards.games.core import HandState
from p2pcards.games.game import Game

Record = dict[str, Any]
ROUNDS = 5

PLAYOUTS: list[tuple[str, Game, int, Callable[[Any, random.Random], None]]] = [
    ("bidwhist", bidwhist.GAME, 4, bidwhist.random_playout),
    ("pasur.2p", pasur.GAME, 2, pasur.random_playout),
    ("pasur.3p", pasur.GAME, 3, pasur.random_playout),
    ("pasur.4p", pasur.GAME, 4, pasur.random_playout),
    ("nullern.4p", nullern.GAME, 4, nullern.random_playout),
    ("controlnut", controlnut.GAME, 4, controlnut.random_playout),
]
DEAL_NUMBER = {"nullern": 9}
"""Which deal of a match the bench plays: Nullern's 10-card round (the deal number)."""


def _measure(game: Game, players: int, playout: Callable[[Any, random.Random], None],
             seconds: float, seed: int) -> tuple[float, float]:
    """(card plays per second through the fast path, the same through check + apply).

    Each figure is the best of five rounds of ``seconds / 5``: the round least
    disturbed by whatever else the machine runs (as ``timeit`` reports).
    """
    rng = random.Random(seed)
    options = game.resolve_options({})
    number = DEAL_NUMBER.get(game.name, 0)
    for _ in range(200):  # warm the engines' caches, as a long-running bot process has them
        playout(game.deal(game.shuffled_deck(players, options, rng), 0, players, options,
                          number=number), rng)

    def round_rate(play_out: Callable[[Any, random.Random], None], budget: float) -> float:
        plays = 0
        elapsed = 0.0
        while elapsed < budget:
            deck = game.shuffled_deck(players, options, rng)
            start = time.perf_counter()
            state = game.deal(deck, 0, players, options, number=number)
            play_out(state, rng)
            elapsed += time.perf_counter() - start
            plays += _plays(state)
        return plays / elapsed

    budget = seconds / ROUNDS
    return (max(round_rate(playout, budget) for _ in range(ROUNDS)),
            max(round_rate(_checked_playout, budget / 2) for _ in range(ROUNDS)))


def _checked_playout(state: HandState, rng: random.Random) -> None:
    """Random play through the generic interface: legal_actions, then check + apply."""
    while not state.is_terminal():
        if state.current_player() < 0:
            state.apply(state.chance_action(rng))
        elif isinstance(state, bidwhist.BidWhistState) and state.phase == bidwhist.DISCARD_PHASE:
            # one random discard rather than a choice among 18,564 listed ones
            state.apply(bidwhist.random_discard(state, rng.random))
        else:
            actions = state.legal_actions()
            state.apply(actions[int(rng.random() * len(actions))])


def _plays(state: HandState) -> int:
    if isinstance(state, bidwhist.BidWhistState):
        return 4 * state.tricks_played
    if isinstance(state, pasur.PasurState):
        return 0 if state.is_void else 52 - 4
    if isinstance(state, nullern.NullernState):
        return state.players * state.tricks_played
    if isinstance(state, controlnut.ControlNutState):
        return state.cards_played
    return state.moves


def bench_engines(seconds: float = 2.0, seed: int = 1) -> list[Record]:
    records: list[Record] = []
    for name, game, players, playout in PLAYOUTS:
        fast, checked = _measure(game, players, playout, seconds, seed)
        records.append({"name": f"engines.{name}.plays", "value": round(fast, 1),
                        "unit": "per_s"})
        records.append({"name": f"engines.{name}.checked_plays", "value": round(checked, 1),
                        "unit": "per_s"})
    return records


