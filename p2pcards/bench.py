"""``p2pcards bench``: speed measurements, printed as a table or as JSON records.

Records are ``{"name": "engines.bidwhist.plays", "value": 512000.0, "unit": "per_s"}``
(DESIGN.md section 7): names dotted and stable, units ``ms``, ``per_s`` or ``x``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from ai.ismcts import search
from ai.parallel import RootParallel
from p2pcards.deckbench import bench_deck
from p2pcards.games import bidwhist, controlnut, nullern, pasur
from p2pcards.games.core import HandState
from p2pcards.games.game import Game
from p2pcards.tablebench import bench_table

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


def ai_positions(seed: int = 1) -> dict[str, HandState]:
    """The fixed positions of ``bench ai``, each a view of the player to move."""
    rng = random.Random(seed)
    out: dict[str, HandState] = {}
    bw_options = bidwhist.GAME.resolve_options({})
    hand = bidwhist.GAME.deal(bidwhist.GAME.shuffled_deck(4, bw_options, rng), 3, 4, bw_options)
    for seat, text in [(0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass"),
                       (0, "trump S")]:
        hand.apply_text(text, seat)
    hand.apply(bidwhist.random_discard(hand, rng.random))
    out["bidwhist.first_lead"] = hand.view(0)
    nl_options = nullern.GAME.resolve_options({})
    round_ = nullern.GAME.deal(nullern.GAME.shuffled_deck(4, nl_options, rng), 3, 4, nl_options,
                               number=9)
    for seat in range(4):
        round_.apply_text("bid 2", seat)
    out["nullern.first_play_10"] = round_.view(round_.current_player())
    for name, game, players, moves in [("pasur.mid_round", pasur.GAME, 3, 14),
                                       ("controlnut.first_trick", controlnut.GAME, 4, -1)]:
        options = game.resolve_options({})
        deck = game.shuffled_deck(players, options, rng)
        while game.is_void_deal(deck, players):
            deck = game.shuffled_deck(players, options, rng)
        state = game.deal(deck, 0, players, options)
        while moves != 0 and not (moves < 0 and getattr(state, "phase", -1) == controlnut.PLAY):
            actions = state.legal_actions()
            seat = state.current_player()
            state.apply(state.chance_action(rng) if seat < 0 else actions[rng.randrange(
                len(actions))])
            moves -= 1
        out[name] = state.view(state.current_player())
    return out


def bench_ai(seconds: float = 2.0, seed: int = 1) -> list[Record]:
    """ISMCTS iterations per second on one core at fixed positions.

    Each round is one search of the bots' default think time (1 second, or
    ``seconds`` when shorter); a figure is the best of ``seconds`` rounds, the
    one least disturbed by whatever else the machine runs.
    """
    records: list[Record] = []
    positions = ai_positions(seed)
    think = min(1.0, seconds)
    rounds = max(1, round(seconds / think))
    for name, view in positions.items():
        rates = []
        for round_seed in range(rounds):
            result = search(view, random.Random(round_seed), seconds=think)
            rates.append(result.iterations / result.seconds)
        records.append({"name": f"ai.ismcts.{name}", "value": round(max(rates), 1),
                        "unit": "per_s"})
    # root parallelism: the same position, two worker processes, the same wall time
    view = positions["bidwhist.first_lead"]
    with RootParallel(2) as pool:
        pool.search(view, seed=0, iterations=50)  # start the workers first
        merged = [pool.search(view, seed=1 + 2 * r, seconds=think) for r in range(rounds)]
    single = records[0]["value"]  # the best of as many rounds, as for one process
    best = max(m.iterations / m.seconds for m in merged)
    records.append({"name": "ai.ismcts.bidwhist.first_lead.2proc_speedup",
                    "value": round(best / single, 2), "unit": "x"})
    return records


def bench_net(seconds: float = 2.0) -> list[Record]:
    from p2pcards.netbench import bench_net as run  # noqa: PLC0415 - spawns processes

    return run(seconds)


SUITES: dict[str, Callable[[float], list[Record]]] = {
    "engines": bench_engines, "ai": bench_ai, "deck": bench_deck, "table": bench_table,
    "net": bench_net}


def format_table(records: list[Record]) -> str:
    width = max(len(r["name"]) for r in records)
    lines = [f"{'measurement':<{width}}  {'value':>12}  unit"]
    for r in records:
        lines.append(f"{r['name']:<{width}}  {r['value']:>12,.1f}  {r['unit']}")
    return "\n".join(lines)
