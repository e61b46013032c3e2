"""A loopback TCP proxy with a round-trip time: real processes (a host and its joiners
over TLS) put as far apart as the internet would, unchanged (``p2pcards bench net
--rtt``).

:func:`serve_delayed` listens on a port of this machine and forwards each
connection to ``target``, the upstream side wrapped in a
:class:`~p2pcards.net.latency.DelayedStream`: every byte waits half the round-trip
time each way, so a joiner dialling the proxy in place of the host sees the host
``delay.rtt`` away.  The bytes are forwarded as they are (TLS passes through
untouched); when either side closes, what the other had sent before is delivered,
then both are closed.  :func:`delayed_port` runs it on a thread of its own, for a
caller outside Trio.
"""

from __future__ import annotations

import contextlib
import functools
import queue
import threading
from collections.abc import Iterator

import trio

from p2pcards.net.latency import DEFAULT_LIMIT, Delay, DelayedStream

__all__ = ["delayed_port", "serve_delayed"]

CHUNK = 65536


async def serve_delayed(target: tuple[str, int], delay: Delay, *, bind: str = "127.0.0.1",
                        port: int = 0, limit: int = DEFAULT_LIMIT,
                        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """Forward every connection to ``bind:port`` (0: a free port, the one started with)
    to ``target`` through ``delay``, until cancelled (each open connection closed)."""
    listeners = await trio.open_tcp_listeners(port, host=bind)
    async with trio.open_nursery() as nursery:
        task_status.started(int(listeners[0].socket.getsockname()[1]))
        await trio.serve_listeners(functools.partial(_forward, target, delay, limit),
                                   listeners, handler_nursery=nursery)


async def _forward(target: tuple[str, int], delay: Delay, limit: int,
                   client: trio.SocketStream) -> None:
    async with client:
        try:
            upstream = await trio.open_tcp_stream(*target)
        except OSError:
            return  # (the client sees its connection closed, as a refusal)
        async with trio.open_nursery() as carriers:
            far = DelayedStream(upstream, delay, carriers, limit=limit)
            try:
                async with trio.open_nursery() as pipes:
                    pipes.start_soon(_pipe, client, far, pipes.cancel_scope)
                    pipes.start_soon(_pipe, far, client, pipes.cancel_scope)
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(5 + delay.rtt):
                    await far.aclose()  # (what the client sent goes first)
                carriers.cancel_scope.cancel()


async def _pipe(source: trio.abc.Stream, sink: trio.abc.Stream, done: trio.CancelScope
                ) -> None:
    """``source`` to ``sink`` until ``source`` ends or either breaks; then both ways stop."""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        while data := await source.receive_some(CHUNK):
            await sink.send_all(data)
    done.cancel()


@contextlib.contextmanager
def delayed_port(target: tuple[str, int], delay: Delay, *, bind: str = "127.0.0.1"
                 ) -> Iterator[int]:
    """:func:`serve_delayed` on a thread of its own for the ``with`` block: its port.  On
    leaving, the proxy stops and every connection through it is closed."""
    handed: queue.Queue[tuple[int, trio.lowlevel.TrioToken, trio.CancelScope] | BaseException]
    handed = queue.Queue()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(functools.partial(serve_delayed, target, delay,
                                                         bind=bind))
            handed.put((port, trio.lowlevel.current_trio_token(), nursery.cancel_scope))

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # (said to the caller, which waits for the port)
            handed.put(exc)

    thread = threading.Thread(target=run, name="p2pcards-delay-proxy", daemon=True)
    thread.start()
    item = handed.get(timeout=30)
    if isinstance(item, BaseException):
        thread.join()
        raise RuntimeError(f"the delaying proxy did not start: {item}") from item
    port, token, scope = item
    try:
        yield port
    finally:
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(scope.cancel)
        thread.join(30)
