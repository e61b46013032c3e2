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
import contextlib
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


class Interrupted(Exception):
    """Ctrl-C at a prompt (prompt-toolkit raises :class:`KeyboardInterrupt`, which an
    asyncio task must not let out: asyncio would stop its loop, and the program)."""


async def await_asyncio(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Await an asyncio coroutine from a Trio task running as asyncio's guest;
    :class:`Interrupted` if it raised :class:`KeyboardInterrupt`."""
    loop = asyncio.get_running_loop()  # the host loop: guest code runs in its thread
    token = trio.lowlevel.current_trio_token()
    ready = trio.Event()

    async def guarded() -> T:
        try:
            return await make()
        except KeyboardInterrupt:
            raise Interrupted from None

    def done(_: object) -> None:
        with contextlib.suppress(trio.RunFinishedError):  # (the Trio run ended first:
            token.run_sync_soon(ready.set)                 # nobody waits)

    task = loop.create_task(guarded())
    task.add_done_callback(done)
    try:
        await ready.wait()
    except trio.Cancelled:
        task.cancel()  # (and wait until it is gone: a prompt closes before the next opens)
        with trio.CancelScope(shield=True):
            await ready.wait()
        if not task.cancelled():
            task.exception()  # (finished as it was cancelled: its outcome is dropped)
        raise
    return task.result()
