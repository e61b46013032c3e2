"""Bots off the event loop: a decision runs in a worker thread, the Trio loop goes on.

The REPL awaits :func:`decide` (the network node's driver runs its bots in worker
threads the same way); prompts, chat and network messages keep flowing while a
bot thinks.  A search with
root parallelism (``--workers``) does its work in other processes anyway.
"""

from __future__ import annotations

import random

import trio

from p2pcards.bots import Bot
from p2pcards.games import HandState


async def decide(bot: Bot, view: HandState, rng: random.Random) -> int:
    """The bot's action for ``view``, computed without blocking the event loop (a
    cancelled wait leaves the thread to finish on its own: the person left)."""
    return await trio.to_thread.run_sync(bot, view, rng, abandon_on_cancel=True)
