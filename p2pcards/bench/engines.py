"""``p2pcards bench engines``: random-playout speed of the rules engines.

Every registered game is dealt at its typical deal (``Game.representative_deal``)
and played out at random, through the fast path (``HandState.rollout``) and
through the checked interface (``legal_actions``, ``check``, ``apply``), at each
of its player counts in ``Game.bench_players``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from p2pcards.bench.record import Record
from p2pcards.games import GAMES, Game, HandState

ROUNDS = 5


def playouts() -> list[tuple[str, Game, int]]:
    """(record name, game, players) of each measurement: ``bidwhist``, ``pasur.3p`` (a
    game played by several player counts names the count)."""
    out = []
    for game in GAMES.values():
        for players in game.bench_players or (game.default_players,):
            name = game.name if len(game.player_counts) == 1 else f"{game.name}.{players}p"
            out.append((name, game, players))
    return out


def _fast(state: HandState, rng: random.Random) -> None:
    state.rollout(rng)


def _checked(state: HandState, rng: random.Random) -> None:
    """Random play through the generic interface: legal actions, then check + apply."""
    while not state.is_terminal():
        if state.current_player() < 0:
            state.apply(state.chance_action(rng))
        else:
            state.apply(state.random_action(rng))


def _measure(game: Game, players: int, seconds: float, seed: int) -> tuple[float, float]:
    """(card plays per second through the fast path, the same through check + apply).

    Each figure is the best of five rounds of ``seconds / 5``: the round least
    disturbed by whatever else the machine runs (as ``timeit`` reports).
    """
    rng = random.Random(seed)
    options = game.resolve_options({})
    number = game.representative_deal
    for _ in range(200):  # warm the engines' caches, as a long-running bot process has them
        game.deal(game.shuffled_deck(players, options, rng), 0, players, options,
                  number=number).rollout(rng)

    def round_rate(play_out: Callable[[HandState, random.Random], None], budget: float
                   ) -> float:
        plays = 0
        elapsed = 0.0
        while elapsed < budget:
            deck = game.shuffled_deck(players, options, rng)
            start = time.perf_counter()
            state = game.deal(deck, 0, players, options, number=number)
            play_out(state, rng)
            elapsed += time.perf_counter() - start
            plays += state.card_plays()
        return plays / elapsed

    budget = seconds / ROUNDS
    return (max(round_rate(_fast, budget) for _ in range(ROUNDS)),
            max(round_rate(_checked, budget / 2) for _ in range(ROUNDS)))


def bench_engines(seconds: float = 2.0, seed: int = 1) -> list[Record]:
    records: list[Record] = []
    for name, game, players in playouts():
        fast, checked = _measure(game, players, seconds, seed)
        records.append(Record(f"engines.{name}.plays", round(fast, 1), "per_s"))
        records.append(Record(f"engines.{name}.checked_plays", round(checked, 1), "per_s"))
    return records
