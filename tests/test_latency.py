"""The delayed stream (p2pcards/net/latency.py) on Trio's mock clock: each chunk out at
its time, in order, jitter or not; bounded; closed either way.  And the delaying proxy
(p2pcards/net/proxy.py) on loopback, in real time (its process: tests/test_bench_net.py)."""

from __future__ import annotations

import functools
import random
import struct

import pytest
import trio
import trio.testing

from p2pcards.net.latency import Delay, DelayedStream
from p2pcards.net.proxy import serve_delayed

RTT = 0.150


async def test_a_chunk_sent_at_t_arrives_at_t_plus_half_the_round_trip(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        link = DelayedStream(near, Delay(RTT), nursery)
        start = trio.current_time()
        await link.send_all(b"ping")
        assert trio.current_time() == start  # (taken at once: it waits in the link)
        assert await far.receive_some() == b"ping"
        assert trio.current_time() == start + RTT / 2
        await far.send_all(b"pong")  # the answer, the other way
        assert await link.receive_some() == b"pong"
        assert trio.current_time() == start + RTT / 2 + RTT / 2
        await link.aclose()


async def test_chunks_sent_in_turn_are_each_delayed_not_queued_behind_each_other(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        link = DelayedStream(near, Delay(RTT), nursery)
        start = trio.current_time()
        for i in range(3):
            await link.send_all(b"%d" % i)
            await trio.sleep(0.010)
        arrivals = []
        for _ in range(3):
            arrivals.append((await far.receive_some(), round(trio.current_time() - start, 9)))
        assert arrivals == [(b"0", 0.075), (b"1", 0.085), (b"2", 0.095)]
        await link.aclose()


async def test_jitter_delays_chunks_unevenly_and_never_reorders_them(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.memory_stream_pair()
    jitter = 0.040
    sent: dict[int, float] = {}
    arrived: dict[int, float] = {}
    async with trio.open_nursery() as nursery:
        link = DelayedStream(near, Delay(RTT, jitter, random.Random(5)), nursery)

        async def send() -> None:
            for i in range(300):
                sent[i] = trio.current_time()
                await link.send_all(struct.pack(">I", i))
                await trio.sleep(0.001)
            await link.aclose()

        nursery.start_soon(send)
        data = b""
        while chunk := await far.receive_some():
            data += chunk
            while len(data) // 4 > len(arrived):
                (i,) = struct.unpack_from(">I", data, 4 * len(arrived))
                arrived[i] = trio.current_time()
    assert list(arrived) == list(range(300))  # every chunk, in the order sent
    delays = [arrived[i] - sent[i] for i in range(300)]
    assert all(RTT / 2 - 1e-9 <= d <= RTT / 2 + jitter + 1e-9 for d in delays)
    assert len({round(d, 6) for d in delays}) > 100  # (jittered, not one delay)
    times = [arrived[i] for i in range(300)]
    assert times == sorted(times)


async def test_the_sender_waits_once_the_link_holds_its_limit(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        link = DelayedStream(near, Delay(RTT), nursery, limit=1000)
        start = trio.current_time()
        returned = []
        most = 0
        for _ in range(25):
            await link.send_all(b"x" * 100)
            returned.append(round(trio.current_time() - start, 9))
            most = max(most, link.held)
        # ten chunks fill the link; each later one waits for one to leave
        assert returned == [0.0] * 10 + [0.075] * 10 + [0.15] * 5
        assert most == 1000
        received = 0
        while received < 2500:
            received += len(await far.receive_some())
        await link.aclose()


async def test_a_link_that_is_not_read_stops_reading_its_inner_stream(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.lockstep_stream_pair()  # (a send waits for its reader)
    chunks = 0
    async with trio.open_nursery() as nursery:
        link = DelayedStream(near, Delay(RTT), nursery, limit=500)

        async def flood() -> None:
            nonlocal chunks
            for _ in range(40):
                await far.send_all(b"y" * 100)
                chunks += 1

        nursery.start_soon(flood)
        await trio.sleep(10)  # nobody reads the link: it fills, then reads no more
        assert link.incoming.held <= 500 + 100
        assert chunks <= 6
        got = b""
        while len(got) < 4000:  # read, the flood goes on to its end
            got += await link.receive_some()
        assert got == b"y" * 4000 and chunks == 40
        nursery.cancel_scope.cancel()


async def test_closing_delivers_what_was_sent_then_the_end(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.memory_stream_pair()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            link = DelayedStream(near, Delay(RTT), nursery)
            start = trio.current_time()
            await link.send_all(b"last words")
            await link.aclose()  # returns once delivered (its tasks end with it)
            assert trio.current_time() == start + RTT / 2
            assert await far.receive_some() == b"last words"
            assert await far.receive_some() == b""  # then the end
            with pytest.raises(trio.ClosedResourceError):
                await link.send_all(b"more")
            with pytest.raises(trio.ClosedResourceError):
                await link.receive_some()
            await link.aclose()  # (twice is no fault)


async def test_the_other_end_closing_arrives_after_its_data(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.memory_stream_pair()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            link = DelayedStream(near, Delay(RTT), nursery)
            start = trio.current_time()
            await far.send_all(b"bye")
            await far.aclose()
            assert await link.receive_some() == b"bye"
            assert await link.receive_some() == b""
            assert trio.current_time() == start + RTT / 2
            await link.aclose()


async def test_closing_wakes_a_reader_and_a_cancelled_close_is_at_once(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.memory_stream_pair()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            link = DelayedStream(near, Delay(RTT), nursery)
            woken = []

            async def read() -> None:
                with pytest.raises(trio.ClosedResourceError):
                    await link.receive_some()
                woken.append(trio.current_time())

            nursery.start_soon(read)
            await trio.testing.wait_all_tasks_blocked()
            await link.send_all(b"lost")
            start = trio.current_time()
            with trio.CancelScope() as scope:
                scope.cancel()
                await link.aclose()  # cancelled: closed at once, what waited dropped
            assert woken == [start]
            assert await far.receive_some() == b""
            assert trio.current_time() == start


async def test_a_broken_inner_stream_is_said_at_the_next_send(
        autojump_clock: trio.testing.MockClock) -> None:
    near, far = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        link = DelayedStream(near, Delay(RTT), nursery)
        await near.aclose()  # (the inner stream gone under the link)
        await link.send_all(b"into nothing")
        await trio.sleep(RTT)
        with pytest.raises(trio.BrokenResourceError):
            await link.send_all(b"again")
        assert await link.receive_some() == b""
        await link.aclose()
    del far


def test_a_delay_is_finite_and_a_jitter_brings_its_own_randomness() -> None:
    with pytest.raises(ValueError, match=r"random\.Random"):
        Delay(0.1, 0.01)
    with pytest.raises(ValueError, match="finite"):
        Delay(-1)
    assert Delay(0.3).one_way == 0.15


# ------------------------------------------------------------------ the proxy


async def _echo(stream: trio.SocketStream) -> None:
    async with stream:
        while data := await stream.receive_some():
            await stream.send_all(data)


async def _round_trip(port: int) -> float:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(b"x")  # (the connection made, and a first exchange)
        assert await stream.receive_some() == b"x"
        start = trio.current_time()
        await stream.send_all(b"ping")
        got = b""
        while len(got) < 4:
            got += await stream.receive_some()
        assert got == b"ping"
        return trio.current_time() - start


async def test_the_proxy_puts_its_round_trip_between_a_client_and_a_server() -> None:
    rtt = 0.2
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(functools.partial(trio.serve_tcp, _echo, 0,
                                                              host="127.0.0.1"))
            port = listeners[0].socket.getsockname()[1]
            near = await nursery.start(serve_delayed, ("127.0.0.1", port), Delay(rtt))
            direct, proxied = await _round_trip(port), await _round_trip(near)
            assert proxied >= rtt and proxied > direct
            nursery.cancel_scope.cancel()
    with pytest.raises(OSError):  # the proxy stopped with its nursery
        await trio.open_tcp_stream("127.0.0.1", near)
