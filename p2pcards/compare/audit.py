"""How OpenSpiel's hearts resampler's worlds compare with the truth, against ours.

    python -m p2pcards.compare.audit --deals N --seed S [--worlds K]

Over random play-outs of OpenSpiel's hearts (with passing), at every decision
the seat to act's worlds are drawn K times with OpenSpiel's
``resample_from_infostate`` (what its ISMCTS bots use; spades has none) and with
our exact determinization, and counted: worlds whose hands are not the sizes the
truth's are (broken: a later move can find no legal action), worlds in which a
seat holds a card its plays have shown it cannot hold (a suit it failed to follow,
or what hearts' first-trick and unbroken-hearts rules reveal), and, while cards
are being passed, worlds in which the cards passed to the searcher, which it has
not seen yet, are the true ones (a leak).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from typing import Any

SUITS = "CDHS"
RANKS = "23456789TJQKA"


def hands_of(state: Any) -> list[set[int]]:
    """Each seat's hand, as OpenSpiel's hearts state reports it."""
    data = json.loads(state.to_json())
    return [{RANKS.index(c[0]) * 4 + SUITS.index(c[1]) for c in hand} for hand in data["hands"]]


def audit(deals: int, seed: int, worlds: int) -> dict[str, dict[str, int]]:
    import pyspiel  # noqa: PLC0415

    from .adapters import CardTable, history_of, load  # noqa: PLC0415
    from .rules import HEARTS_RULES  # noqa: PLC0415
    from .seen import seen_by  # noqa: PLC0415

    game = load("hearts")

    counts = {name: {"positions": 0, "pass worlds": 0, "broken": 0, "leak positions": 0,
                     "leaked": 0, "play worlds": 0, "constrained": 0, "violated": 0,
                     "broken in play": 0}
              for name in ("shipped", "ours")}
    for deal in range(deals):
        rng = random.Random(f"audit {seed} {deal}")
        truth = game.new_initial_state()
        while not truth.is_terminal():
            if truth.is_chance_node():
                outcomes = truth.legal_actions()
                truth.apply_action(outcomes[rng.randrange(len(outcomes))])
                continue
            seat = truth.current_player()
            history = truth.history()
            seen = seen_by(HEARTS_RULES, history_of(truth), seat)
            passing = seen.pass_dir != 0 and seen.received is None
            sender = (seat - seen.pass_dir) % 4
            sent = slice(53 + 3 * sender, 56 + 3 * sender)
            sender_done = passing and len(history) >= sent.stop
            voids = seen.voids()
            constrained = any(voids[p] for p in range(4) if p != seat)
            sizes = [len(h) for h in hands_of(truth)]
            view = CardTable.view(truth, seat)
            for name in ("shipped", "ours"):
                tally = counts[name]
                tally["positions"] += 1
                leaks = 0
                for _ in range(worlds):
                    if name == "shipped":
                        sampler = pyspiel.UniformProbabilitySampler(
                            rng.randrange(2**31), 0.0, 1.0)
                        world = truth.resample_from_infostate(seat, sampler)
                    else:
                        world = view.openspiel_world(rng)
                    hands = hands_of(world)
                    broken = [len(h) for h in hands] != sizes
                    if passing:
                        tally["pass worlds"] += 1
                        tally["broken"] += broken
                    else:
                        tally["play worlds"] += 1
                        tally["broken in play"] += broken
                        if constrained:
                            tally["constrained"] += 1
                            tally["violated"] += any(hands[p] & voids[p]
                                                     for p in range(4) if p != seat)
                    if sender_done and world.history()[sent] == history[sent]:
                        leaks += 1
                if sender_done:
                    tally["leak positions"] += 1
                    tally["leaked"] += leaks == worlds
            truth.apply_action(rng.choice(truth.legal_actions()))
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m p2pcards.compare.audit",
                                     description="OpenSpiel's hearts resampler against ours.")
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=4)
    args = parser.parse_args(argv)
    if args.deals <= 0 or args.worlds <= 0:
        parser.error("--deals and --worlds must be positive")
    try:
        import pyspiel  # noqa: F401, PLC0415
    except ImportError:
        print("open_spiel is not installed: pip install -e \".[compare]\"", file=sys.stderr)
        return 2
    for name, t in audit(args.deals, args.seed, args.worlds).items():
        print(f"hearts, {name} sampler, {t['positions']} positions x {args.worlds} worlds: "
              f"while passing, {t['broken']} of {t['pass worlds']} worlds with hands of the "
              f"wrong sizes, {t['leaked']} of {t['leak positions']} positions (the sender "
              f"had passed) with the true passed cards in every world; in play, "
              f"{t['broken in play']} of {t['play worlds']} worlds broken, "
              f"{t['violated']} of {t['constrained']} worlds drawn after a seat showed it "
              f"cannot hold some cards giving it one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
