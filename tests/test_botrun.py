"""A bot thinking never blocks the Trio event loop."""

from __future__ import annotations

import random

import trio

from p2pcards.bots import make_bot
from p2pcards.cli.botrun import decide
from p2pcards.games import nullern
from tests.test_ismcts import played_to_a_decision


async def test_the_loop_keeps_running_while_a_bot_searches():
    full, seat = played_to_a_decision(nullern.GAME, 4, 9, random.Random(4))
    view = full.view(seat)
    ticks = 0
    action = None

    async def ticker(done: trio.Event) -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await trio.sleep(0)

    async def think(done: trio.Event) -> None:
        nonlocal action
        action = await decide(make_bot("ismcts", iterations=1500), view, random.Random(1))
        done.set()

    done = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ticker, done)
        nursery.start_soon(think, done)
    assert action in full.legal_actions()
    assert ticks > 1  # other tasks ran while the search was under way
