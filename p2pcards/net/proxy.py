"""A loopback TCP proxy with a round-trip time: real processes (a host and its joiners
over TLS) put as far apart as the internet would, unchanged (``p2pcards bench net
--rtt``).

:func:`serve_delayed` listens on a port of this machine and forwards each
connection to ``target``, the upstream side wrapped in a
:class:`~p2pcards.net.latency.DelayedStream`: every byte waits half the round-trip
time each way, so a joiner dialling the proxy in place of the host sees the host
``delay.rtt`` away.  The bytes are forwarded as they are (TLS passes through
untouched); when either side closes, what the other had sent before is delivered,
then both are closed.  ``python -m p2pcards.net.proxy HOST:PORT --rtt MS`` runs it
in a process of its own (:func:`main`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import random
import sys
from collections.abc import Sequence

import trio

from p2pcards.net.latency import DEFAULT_LIMIT, Delay, DelayedStream

__all__ = ["main", "serve_delayed"]

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


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m p2pcards.net.proxy HOST:PORT --rtt MS``: the proxy in a process of
    its own, on 127.0.0.1; it prints ``127.0.0.1:PORT`` once it listens, and runs until
    stopped."""
    parser = argparse.ArgumentParser(prog="python -m p2pcards.net.proxy",
                                     description="Forward a port of 127.0.0.1 to HOST:PORT,"
                                     " each byte delayed half the round trip each way.")
    parser.add_argument("target", help="HOST:PORT to forward to")
    parser.add_argument("--rtt", type=float, required=True, metavar="MS",
                        help="the round trip added, in milliseconds")
    parser.add_argument("--jitter", type=float, default=0.0, metavar="MS",
                        help="at most this many milliseconds more one way, drawn per chunk"
                        " (never reordering; default 0)")
    parser.add_argument("--seed", type=int, default=0, help="the jitter's seed (default 0)")
    parser.add_argument("--port", type=int, default=0,
                        help="the port to listen on (default: a free one)")
    args = parser.parse_args(argv)
    host, _, port = args.target.rpartition(":")
    try:
        delay = Delay(args.rtt / 1000, args.jitter / 1000,
                      random.Random(args.seed) if args.jitter else None)
        target = (host.strip("[]"), int(port))
    except ValueError as exc:
        parser.error(str(exc))

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            near = await nursery.start(functools.partial(serve_delayed, target, delay,
                                                         port=args.port))
            print(f"127.0.0.1:{near}", flush=True)

    try:
        trio.run(serve)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"p2pcards proxy: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
