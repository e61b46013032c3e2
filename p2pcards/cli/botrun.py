"""Bots off the event loop: a decision runs in a worker thread, the Trio loop goes on.

The REPL awaits :func:`decide` (the network node's driver runs its bots in worker
threads the same way); prompts, chat and network messages keep flowing while a
bot thinks.  A search with root parallelism (``--workers``) does its work in
other processes anyway.

Pondering (:class:`~p2pcards.bots.ponder.Pondering`): the searching bots think
while the person thinks.  The prompt calls ``pondering.start()`` as the person's
move prompt opens, ``pondering.stop()`` once the person has moved (and when the
person leaves), and passes ``pondering`` to :func:`decide` for each bot's move:
the bot then continues the tree it pondered, counting its visits toward its
budget (docs/bots.md).
"""

from __future__ import annotations

import random

import trio

from p2pcards.bots import Bot
from p2pcards.bots.ponder import Pondering
from p2pcards.games import HandState


async def decide(bot: Bot, view: HandState, rng: random.Random,
                 pondering: Pondering | None = None) -> int:
    """The bot's action for ``view``, computed without blocking the event loop; with
    ``pondering``, continuing what the bot pondered during the person's turn.  (A
    cancelled wait leaves the thread to finish on its own: the person left.)"""
    if pondering is not None:
        return await trio.to_thread.run_sync(pondering.decide, bot, view, rng,
                                             abandon_on_cancel=True)
    return await trio.to_thread.run_sync(bot, view, rng, abandon_on_cancel=True)


__all__ = ["Pondering", "decide"]
