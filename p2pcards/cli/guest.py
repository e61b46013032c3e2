"""Trio in guest mode on prompt-toolkit's asyncio loop (docs/architecture.md).

prompt-toolkit runs on asyncio; the table logic (and, at a networked table,
the node) runs on Trio.  :func:`run` starts an asyncio loop, runs the Trio
function as a guest on it (``trio.lowlevel.start_guest_run`` with the loop's
``call_soon_threadsafe``), and returns its result.  :func:`await_asyncio`
lets a Trio task await an asyncio coroutine (``prompt_async``): the coroutine
runs as an asyncio task, its result comes back through the Trio token, and
cancelling the Trio side (a turn timer) cancels the asyncio task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import trio

T = TypeVar("T")


def run(async_fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run ``async_fn(*args)`` under Trio, hosted by a fresh asyncio loop."""

    async def host() -> T:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def finished(outcome: Any) -> None:
            if not done.done():
                done.set_result(outcome)

        trio.lowlevel.start_guest_run(
            async_fn, *args,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=finished,
            host_uses_signal_set_wakeup_fd=True,
        )
        outcome = await done
        return outcome.unwrap()  # type: ignore[no-any-return]

    return asyncio.run(host())


async def await_asyncio(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Await an asyncio coroutine from a Trio task running as asyncio's guest."""
    loop = asyncio.get_running_loop()  # the host loop: guest code runs in its thread
    token = trio.lowlevel.current_trio_token()
    ready = trio.Event()
    task = loop.create_task(make())
    task.add_done_callback(lambda _: token.run_sync_soon(ready.set))
    try:
        await ready.wait()
    except trio.Cancelled:
        task.cancel()
        raise
    return task.result()
