"""The host's door: links before they are authenticated (a small frame cap, a short
deadline, bounded slots in total and per address, the oldest making room) and the
slots kept for seated identities; the counting alone, then the host over memory
streams.  tests/test_net_flood.py floods a real host process on loopback."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
import trio
import trio.testing

from p2pcards.cli.netrun import leaf
from p2pcards.net import door, gate, wire
from p2pcards.net.client import HostLost
from p2pcards.net.frames import MAX_FRAME, HelloFrame, Msg, Welcome
from p2pcards.net.gate import (
    AUTH_SECONDS,
    MAX_PER_ADDRESS,
    MAX_UNAUTHENTICATED,
    PREAUTH_FRAME,
    Gate,
    address_of,
)
from p2pcards.net.host import Host
from p2pcards.net.identity import load_or_create
from p2pcards.net.invite import Invite
from p2pcards.net.watch import Watch
from p2pcards.net.wire import Link, LinkClosed
from tests.net_helpers import make_host, make_joiner, memory_dial
from tests.test_net_relay import admitted, refused_with


def test_one_address_has_a_share_of_the_door() -> None:
    door_ = Gate()
    tickets = [door_.enter("10.0.0.9") for _ in range(MAX_PER_ADDRESS + 5)]
    assert all(t is not None for t, _ in tickets[:MAX_PER_ADDRESS])
    assert all(t is None and o is None for t, o in tickets[MAX_PER_ADDRESS:])  # closed
    assert door_.refused == 5 and door_.waiting == MAX_PER_ADDRESS
    first, _ = tickets[0]
    assert first is not None
    door_.leave(first)  # authenticated, or gone: its slot is free again
    assert door_.enter("10.0.0.9")[0] is not None
    assert door_.enter("10.0.0.10")[0] is not None  # another address has its own share


def test_a_full_door_makes_room_by_closing_the_oldest() -> None:
    door_ = Gate()
    held = [door_.enter(f"10.0.{i}.1")[0] for i in range(MAX_UNAUTHENTICATED)]
    assert door_.waiting == MAX_UNAUTHENTICATED
    newest, oldest = door_.enter("192.0.2.7")
    assert newest is not None and oldest is held[0] and oldest is not None and oldest.evicted
    assert door_.waiting == MAX_UNAUTHENTICATED  # never more
    door_.leave(oldest)  # its link closes: nothing more to free
    assert door_.waiting == MAX_UNAUTHENTICATED and door_.evicted == 1


def test_a_seated_identity_has_a_slot_kept_at_its_address() -> None:
    door_ = Gate()
    door_.sat(b"joe", "198.51.100.4")
    for i in range(MAX_UNAUTHENTICATED):
        door_.enter(f"10.0.{i}.1")
    back, oldest = door_.enter("198.51.100.4")
    assert back is not None and back.reserved and oldest is None  # nobody made room
    for i in range(3 * MAX_UNAUTHENTICATED):  # a flood takes the other slots, not that one
        door_.enter(f"10.1.{i}.1")
    assert not back.evicted
    second, _ = door_.enter("198.51.100.4")  # one slot per identity seated there
    assert second is not None and not second.reserved
    door_.leave(back)
    assert door_.enter("198.51.100.4")[0].reserved  # type: ignore[union-attr]


def test_addresses_as_the_door_counts_them() -> None:
    assert address_of("2001:db8:1:2:3:4:5:6") == address_of("2001:db8:1:2::9") == \
        "2001:db8:1:2::/64"
    assert address_of("::ffff:192.0.2.1") == "192.0.2.1"
    assert address_of("127.0.0.1") == "127.0.0.1" and address_of("local") == "local"


def test_returns_are_paced() -> None:
    rejoins = gate.Rejoins(burst=3, window=60.0)
    for t in (0.0, 1.0, 2.0):
        assert rejoins.wait(b"joe", t) == 0
        rejoins.seated(b"joe", t)
    assert rejoins.wait(b"joe", 3.0) == 57.0  # the first of the three leaves the window
    assert rejoins.wait(b"ann", 3.0) == 0  # per identity
    assert rejoins.wait(b"joe", 60.0) == 0


# ------------------------------------------------------------------ the host


def link_from(host: Host, address: str) -> Link:
    ours, theirs = trio.testing.memory_stream_pair()
    host.accept(theirs, address)
    return Link(ours, "test")


async def closed_quietly(link: Link) -> bool:
    """Whether the host closed ``link`` without a frame."""
    with trio.fail_after(10):
        try:
            await link.receive()
        except LinkClosed:
            return True
    return False


async def settle() -> None:
    for _ in range(50):
        await trio.sleep(0)


class Decodes:
    """The sizes of the frame bodies decoded (the host's, and the test link's)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def __call__(self, body: bytes) -> object:
        self.sizes.append(len(body))
        return UNPACK(body)


UNPACK = wire.unpack_map
EMPTY_ARRAYS = 5000  # a frame body of this many empty msgpack arrays, in an array


@pytest.mark.parametrize("weakened", [True, False])
async def test_a_large_first_frame_is_refused_before_it_is_decoded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weakened: bool) -> None:
    decodes = Decodes()
    monkeypatch.setattr(wire, "unpack_map", decodes)
    if weakened:  # the cap of a seated link before authentication too, as it was
        monkeypatch.setattr("p2pcards.net.seating.PREAUTH_FRAME", MAX_FRAME)
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        link = link_from(host, "10.0.0.9")
        body = b"\xdd" + struct.pack(">I", EMPTY_ARRAYS) + b"\x90" * EMPTY_ARRAYS
        assert len(body) > PREAUTH_FRAME
        await link.stream.send_all(struct.pack(">I", len(body)) + body)
        reason = await refused_with(link)
        nursery.cancel_scope.cancel()
    if weakened:
        assert len(body) in decodes.sizes and "a frame must be a map" in reason
    else:
        assert len(body) not in decodes.sizes and decodes.sizes  # (the refusal, read here)
        assert reason == (f"a frame of {len(body)} bytes is over the {PREAUTH_FRAME}-byte"
                          " cap before authentication")


async def test_a_seated_link_still_sends_large_frames(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        link, answer = await admitted(host, load_or_create(tmp_path / "eve"))
        assert isinstance(answer, Welcome)
        await link.send(Msg(wire=b"w" * (4 * PREAUTH_FRAME)))  # read, then judged
        assert "does not verify" in await refused_with(link)
        nursery.cancel_scope.cancel()


async def test_an_idle_link_is_closed_at_the_auth_deadline(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        start = trio.current_time()
        idle = link_from(host, "10.0.0.9")
        slow = link_from(host, "10.0.0.8")
        await slow.send(HelloFrame())  # the hellos, then no auth
        assert isinstance(await slow.receive(), HelloFrame)
        await settle()
        assert host.door.gate.waiting == 2
        assert await closed_quietly(idle) and await closed_quietly(slow)
        assert AUTH_SECONDS <= trio.current_time() - start < AUTH_SECONDS + 1
        await settle()
        assert host.door.gate.waiting == 0
        assert list(host.closed_reasons) == [f"no auth within {AUTH_SECONDS:g} s of"
                                             " connecting"] * 2
        nursery.cancel_scope.cancel()


async def test_a_link_at_the_door_is_closed_when_the_host_stops(tmp_path: Path) -> None:
    """A host that stops closes the links still in their handshake at once: their other
    end is not left to wait out its own limit."""
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        idle = link_from(host, "10.0.0.9")
        await settle()
        assert host.door.gate.waiting == 1
        nursery.cancel_scope.cancel()
    with trio.fail_after(5):
        assert await idle.stream.receive_some() == b""  # closed by the host, not left open
    assert host.door.gate.waiting == 0


async def test_a_host_that_hangs_up_in_the_handshake_is_said_in_one_plain_line(
        tmp_path: Path) -> None:
    """A joiner and a watcher whose first link the host closes in the handshake (a host
    closing its table, say) stop with "cannot reach the host: the link broke (...)",
    the host named once, and the same command tries again later."""
    host = make_host(tmp_path)
    invite = host.invite()

    async def hangs_up(_address: str, _port: int) -> tuple[trio.abc.Stream, bytes]:
        ours, theirs = trio.testing.memory_stream_pair()
        await theirs.aclose()
        return ours, host.identity.id

    joiner = make_joiner(tmp_path, invite, "joe", dial=hangs_up)
    watcher = Watch(load_or_create(tmp_path / "wendy"), invite, "wendy", dial=hangs_up)
    for run in (joiner.run, watcher.run):
        with trio.fail_after(10), pytest.raises(Exception) as raised:
            await run()
        lost = leaf(raised.value, HostLost)  # (what the command finds and prints)
        assert lost is not None, raised.value
        assert re.fullmatch(r"cannot reach the host: the link broke \([^()]+\)", str(lost)), lost


@pytest.mark.parametrize("weakened", [True, False])
async def test_one_address_cannot_fill_the_door(tmp_path: Path, weakened: bool) -> None:
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        if weakened:  # no share per address
            host.door.gate.per_address = MAX_UNAUTHENTICATED
        flood = [link_from(host, "203.0.113.5") for _ in range(3 * MAX_UNAUTHENTICATED)]
        await settle()
        if weakened:  # every slot is the flood's
            assert host.door.gate.waiting == MAX_UNAUTHENTICATED
            nursery.cancel_scope.cancel()
            return
        assert host.door.gate.waiting == MAX_PER_ADDRESS
        assert host.door.gate.refused == len(flood) - MAX_PER_ADDRESS
        assert all([await closed_quietly(link) for link in flood[MAX_PER_ADDRESS:]])
        joiner = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        nursery.start_soon(joiner.run)
    assert host.peer is not None and host.peer.over and host.door.gate.evicted == 0


async def test_a_flood_from_many_addresses_cannot_keep_a_joiner_out(tmp_path: Path) -> None:
    """Idle links from more addresses than there are slots: every slot is taken, and a
    joiner still sits, in the slot of the oldest."""
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        for i in range(2 * MAX_UNAUTHENTICATED):
            link_from(host, f"203.0.113.{i}")
        await settle()
        assert host.door.gate.waiting == MAX_UNAUTHENTICATED
        assert host.door.gate.evicted == MAX_UNAUTHENTICATED
        joiner = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        nursery.start_soon(joiner.run)
        with trio.fail_after(10):
            await host.started.wait()
    assert host.peer is not None and host.peer.over
    assert host.door.gate.evicted > MAX_UNAUTHENTICATED  # joe took the oldest's slot


def dial_from(host: Host, address: str, cuts: list[trio.abc.Stream]):  # type: ignore[no-untyped-def]
    async def dial(_address: str, _port: int) -> tuple[trio.abc.Stream, bytes]:
        ours, theirs = trio.testing.memory_stream_pair()
        try:
            host.accept(theirs, address)
        except trio.ClosedResourceError as exc:
            raise ConnectionRefusedError(str(exc)) from exc
        cuts.append(ours)
        return ours, host.identity.id
    return dial


@pytest.mark.parametrize("weakened", [True, False])
async def test_a_seated_identity_comes_back_while_the_door_is_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weakened: bool) -> None:
    """Joe's link drops while every slot at the door is held: he comes back in the slot
    kept for him at his address, and nobody's slot is taken.  Without the kept slot
    (weakened), he comes back only by taking another link's slot, which a fast enough
    flood would take from him in turn."""
    if weakened:
        monkeypatch.setattr(Gate, "sat", lambda self, key, address: None)
    host = make_host(tmp_path, options={"target": 40})
    streams: list[trio.abc.Stream] = []
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        joiner = make_joiner(tmp_path, invite, "joe",
                             dial=dial_from(host, "198.51.100.4", streams))
        nursery.start_soon(joiner.run)
        with trio.fail_after(30):
            await host.started.wait()
            assert host.peer is not None
            while len(host.peer.log) < 20:
                await trio.sleep(0.01)
        for i in range(MAX_UNAUTHENTICATED):
            link_from(host, f"203.0.113.{i}")
        await settle()
        assert host.door.gate.waiting == MAX_UNAUTHENTICATED and host.door.gate.evicted == 0
        await streams[-1].aclose()
        with trio.fail_after(10):
            while not any("joe is back" in line for line in host.say):  # type: ignore
                await trio.sleep(0.01)
        assert host.door.gate.evicted == (1 if weakened else 0)
        nursery.cancel_scope.cancel()


async def test_a_person_may_take_longer_than_the_door_to_confirm_the_fingerprint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(door, "AUTH_SECONDS", 0.2)
    host = make_host(tmp_path)
    asked: list[str] = []

    async def slowly(question: str) -> bool:
        asked.append(question)
        await trio.sleep(0.5)  # the host has closed this link meanwhile
        return True

    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        bare = Invite(invite.host, invite.port, None, invite.token)
        joiner = make_joiner(tmp_path, bare, "joe", dial=memory_dial(host))
        joiner.confirm = slowly
        nursery.start_soon(joiner.run)
    assert len(asked) == 1 and host.peer is not None and host.peer.over
    assert any("no auth within 0.2 s" in r for r in host.closed_reasons)
