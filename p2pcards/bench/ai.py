"""``p2pcards bench ai``: the search's iterations per second at fixed positions."""



from __future__ import annotations

import random
from typing import Any

from p2pcards.ai.ismcts import search
from p2pcards.ai.parallel import RootParallel
from p2pcards.games import bidwhist, controlnut, nullern, pasur
from p2pcards.games.core import HandState

Record = dict[str, Any]
ROUNDS = 5

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


