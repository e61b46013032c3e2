"""How long a person waits for the bots: scripted deals at a local table, timed.

The deals start at the game's representative deal (``Game.representative_deal``:
Nullern's 10-card round, then the 9-card one; the first deal elsewhere).  A
scripted person sits in seat 0 and plays the heuristic's move (at once, or
after a set time at the prompt); the other seats are bots, as ``p2pcards play``
seats them.  The loop is the prompt's (:mod:`p2pcards.cli.repl`): chance and
forced moves are taken by the table, each bot decides from its own view, and
pondering starts when the person's prompt opens and stops when the person
moves.  A wait runs from the person's move (or the Enter that deals on) to the
person's next prompt (a move, or the next deal), the bots' decisions and the
table's work included; the display pace between plays is not counted.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from p2pcards.bots import (
    SearchBot,
    default_think,
    default_workers,
    heuristic_bot,
    make_bot,
    share_pool,
)
from p2pcards.bots.ponder import Pondering
from p2pcards.games import CHANCE, get_game
from p2pcards.local import LocalGame

PERSON = 0


@dataclass(frozen=True)
class WaitSetup:
    """A scripted game: ``deals`` deals of ``game`` at its usual table, the person in
    seat 0, ``bots`` thinking ``think`` seconds a move on ``workers`` processes each
    (pondering while the person spends ``person`` seconds at each move prompt, when
    ``ponder``); ``think`` and ``workers`` default to ``p2pcards play``'s."""

    game: str
    deals: int = 2
    bots: str = "ismcts"
    think: float | None = None
    person: float = 0.0
    ponder: bool = False
    seed: int = 1
    workers: int | None = None


@dataclass
class WaitReport:
    """The waits (seconds) and what the bots did meanwhile."""

    waits: list[float]
    searches: int = 0
    iterations: int = 0
    reused: int = 0
    deals: int = 0


def measure(setup: WaitSetup) -> WaitReport:
    """Play ``setup`` and time every wait of the person."""
    game = get_game(setup.game)
    players = game.default_players
    table = LocalGame(game, players, {}, setup.seed)
    table.deals = game.representative_deal  # Nullern: from its 10-card round on
    workers = setup.workers or (1 if setup.ponder else default_workers(game))
    think = setup.think or default_think(workers)
    bots = [None if seat == PERSON else make_bot(setup.bots, None, think, workers)
            for seat in range(players)]
    pool = share_pool(bots)
    pondering = Pondering(table, bots) if setup.ponder else None
    person_rng = random.Random(f"person:{setup.seed}")
    report = WaitReport([])
    while report.deals < setup.deals:
        if table.winner is not None:  # a game over before its deals: the next game
            table = LocalGame(game, players, {}, setup.seed + 1000 + report.deals)
            if pondering is not None:
                pondering = Pondering(table, bots)
        since = time.perf_counter()  # the person dealt on
        table.start_deal()
        state = table.state
        assert state is not None
        while not state.is_terminal():
            mover = state.current_player()
            if mover == CHANCE:
                table.act_chance()
                continue
            forced = state.forced_action()
            if forced is not None:
                table.act(mover, forced)
                continue
            view = state.view(mover)
            if mover == PERSON:
                report.waits.append(time.perf_counter() - since)
                if pondering is not None:
                    pondering.start()
                if setup.person:
                    time.sleep(setup.person)
                action = heuristic_bot(view, person_rng)
                if pondering is not None:
                    pondering.stop()
                since = time.perf_counter()
                table.act(mover, action)
                continue
            bot = bots[mover]
            assert bot is not None
            if isinstance(bot, SearchBot):
                tree = pondering.tree_for(mover) if pondering is not None else None
                action = bot.choose(view, table.bot_rngs[mover], tree)[0]
            else:
                action = bot(view, table.bot_rngs[mover])
            table.act(mover, action)
        table.end_deal()
        if table.record is not None and table.record.void:
            continue  # voided as dealt (Pasur's jacks): the table deals again
        report.waits.append(time.perf_counter() - since)  # to the next-deal prompt
        report.deals += 1
    for bot in bots:
        if isinstance(bot, SearchBot):
            report.searches += bot.searches
            report.iterations += bot.done
            report.reused += bot.reused
    if pool is not None:
        pool.close()
    return report


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (linear between order statistics)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)
