"""The host's relay over memory streams (no sockets, no TLS): seating, the lobby, the
relay, a joiner coming back, and everything a hostile link can send (each closes only
its link).  tests/test_net_live.py keeps the same parts over TLS on loopback."""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio

from p2pcards.net.frames import Auth, Error, Frame, HelloFrame, Msg, Start, Welcome, pack, pack_map
from p2pcards.net.host import Host, HostConfig
from p2pcards.net.identity import Identity, load_or_create
from p2pcards.net.invite import proof
from p2pcards.net.journal import Journal
from p2pcards.net.relay import MAX_CLOSED_REASONS
from p2pcards.net.settings import Settings
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.codec import seal_envelope
from p2pcards.table.events import BrokeUp, DealBegun, GameOver
from p2pcards.table.roster import (
    AGREED_DECK,
    AHEAD_DECK,
    LOCK_DECK,
    PIPELINED_DECK,
    PROVED_DECK,
    Roster,
    SeatEntry,
)
from tests.net_helpers import (
    Lines,
    histories,
    make_host,
    make_joiner,
    maker,
    memory_dial,
    memory_stream,
)
from tests.table_helpers import told


def raw_link(host: Host) -> Link:
    return Link(memory_stream(host), "test")


async def admitted(host: Host, identity: Identity, token: bytes | None = None,
                   name: str = "eve", versions: tuple[int, int] | None = None
                   ) -> tuple[Link, Frame]:
    """A link that says hello (offering ``versions``: this build's unless told) and
    proves ``identity``: the host's answer to its ``auth``."""
    invite = host.invite()
    link = raw_link(host)
    await link.send(HelloFrame() if versions is None else HelloFrame(versions=versions))
    first = await link.receive()
    assert isinstance(first, HelloFrame) and first.nonce is not None
    token = invite.token if token is None else token
    await link.send(Auth(key=identity.public, name=name, token=token, bot="", bots=(),
                         sig=proof(identity.key, first.nonce, invite.fingerprint or b"",
                                   token)))
    return link, await link.receive()


async def refused_with(link: Link) -> str:
    with trio.fail_after(10):
        try:
            while True:
                frame = await link.receive()
                if isinstance(frame, Error):
                    return frame.reason
        except LinkClosed:
            return "closed without a reason"


async def uninvited(host: Host, tmp_path: Path) -> str:
    _link, answer = await admitted(host, load_or_create(tmp_path / "eve"), b"x" * 16)
    assert isinstance(answer, Error)
    return answer.reason


async def wrong_version(host: Host, tmp_path: Path) -> str:
    link = raw_link(host)
    await link.send_map({"t": "hello", "proto": "p2pcards", "versions": [9, 10]})
    return await refused_with(link)


async def oversize(host: Host, tmp_path: Path) -> str:
    link = raw_link(host)
    await link.stream.send_all(struct.pack(">I", 1 << 30))
    return await refused_with(link)


async def truncated(host: Host, tmp_path: Path) -> str:
    link = raw_link(host)
    await link.stream.send_all(pack(HelloFrame())[:-3])
    await link.stream.send_eof() if hasattr(link.stream, "send_eof") else None
    await link.stream.aclose()
    return "closed"


async def not_msgpack(host: Host, tmp_path: Path) -> str:
    link = raw_link(host)
    await link.stream.send_all(struct.pack(">I", 3) + b"\xc1\xc1\xc1")
    return await refused_with(link)


async def ext_type(host: Host, tmp_path: Path) -> str:
    link = raw_link(host)
    body = msgpack.packb({"t": "hello", "proto": msgpack.ExtType(5, b"zz")})  # (in a field
    # the kind does not declare, it would be skipped unread)
    await link.stream.send_all(struct.pack(">I", len(body)) + body)
    return await refused_with(link)


Attack = Callable[[Host, Path], Coroutine[Any, Any, str]]
ATTACKS: dict[str, tuple[Attack, str]] = {
    "uninvited": (uninvited, "not invited"),
    "wrong_version": (wrong_version, "protocol version mismatch"),
    "oversize": (oversize, "over the"),
    "not_msgpack": (not_msgpack, "not msgpack"),
    "ext_type": (ext_type, "extension type"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_hostile_connections_are_closed_with_a_reason(tmp_path: Path, name: str) -> None:
    attack, reason = ATTACKS[name]
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        said = await attack(host, tmp_path)
        assert reason in said
        assert any(reason in r for r in host.closed_reasons)
        await truncated(host, tmp_path)  # a frame cut short is dropped too
        joiner = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        nursery.start_soon(joiner.run)
    assert host.peer is not None and host.peer.over  # the honest game went on


@pytest.mark.parametrize("deck", [PROVED_DECK, LOCK_DECK])
async def test_a_peer_of_the_lock_deck_alone_is_refused_only_at_a_proved_table(
        tmp_path: Path, deck: str) -> None:
    """A joiner of an earlier build speaks link version 2 only: a table of the proved
    deck refuses it saying why and what to do; a table of the lock deck admits it."""
    host = make_host(tmp_path, deck=deck)
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        link = raw_link(host)
        await link.send_map({"t": "hello", "proto": "p2pcards", "versions": [2, 2]})
        answer = await link.receive()
        if deck == PROVED_DECK:
            assert isinstance(answer, Error)
            assert answer.reason == (
                "protocol version mismatch: this table deals with the proved deck, which"
                " needs version 3; the other speaks 2 to 2; upgrade p2pcards, or ask the"
                " host for a table with --deck lock")
        else:
            assert isinstance(answer, HelloFrame) and answer.nonce is not None
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(("highest", "deck"), [(4, PROVED_DECK), (5, PIPELINED_DECK),
                                               (6, AHEAD_DECK), (7, AGREED_DECK)])
async def test_the_proved_deck_pipelines_only_where_every_seat_s_peer_knows_it(
        tmp_path: Path, highest: int, deck: str) -> None:
    """``host --deck proved``: a joiner whose link speaks version 4 at most (an earlier
    build, which checks every shuffle proof on arrival) makes the roster name plain
    ``proved``, so that the two builds reach the same verdict; with every joiner at 5
    it names ``proved-pipelined``, at 6 ``proved-ahead``, at 7 ``proved-ahead-2``, and a
    peer below what the
    roster needs that comes then (to resume, or to watch) is refused saying why."""
    host = make_host(tmp_path, players=2)
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        joe = load_or_create(tmp_path / "joe")
        _link, answer = await admitted(host, joe, name="joe", versions=(2, highest))
        assert isinstance(answer, Welcome)
        with trio.fail_after(10):
            await host.started.wait()
        assert host.peer is not None and host.peer.roster.deck == deck
        said = "\n".join(host.say)  # type: ignore[arg-type]
        assert ("every shuffle proof is checked on arrival" in said) == (deck == PROVED_DECK)
        assert ("each deal is shuffled at its beginning" in said) == (deck == PIPELINED_DECK)
        assert ("shares are sent after the agreement" in said) == (deck == AHEAD_DECK)
        link = raw_link(host)
        await link.send(HelloFrame(versions=(2, 4)))
        answer = await link.receive()
        if deck == PROVED_DECK:
            assert isinstance(answer, HelloFrame) and answer.nonce is not None
        else:
            assert isinstance(answer, Error)
            words, needs = {
                PIPELINED_DECK: ("pipelined shuffles", 5),
                AHEAD_DECK: ("the next deal shuffled ahead", 6),
                AGREED_DECK: ("the next deal shuffled ahead and its shares sent on the"
                              " agreement", 7)}[deck]
            assert answer.reason == (
                f"protocol version mismatch: this table's roster names the proved deck with"
                f" {words} ({deck}), which needs version {needs}; the other speaks 2 to 4;"
                " upgrade p2pcards to take a seat at it or watch it")
        nursery.cancel_scope.cancel()


async def test_seated_peer_misbehaving_loses_only_its_link(tmp_path: Path) -> None:
    """A peer that is seated sends a message for another seat, a forged signature, another
    table's message and a replay: each closes its link (it comes back, honestly)."""
    host = make_host(tmp_path, players=3, grace=5)
    eve_id = load_or_create(tmp_path / "eve")
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        link, answer = await admitted(host, eve_id)
        assert isinstance(answer, Welcome)
        joiner = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        nursery.start_soon(joiner.run)
        with trio.fail_after(10):
            await host.started.wait()
        roster = host.peer.roster  # type: ignore[union-attr]
        eve_seat = next(i for i, e in enumerate(roster.seats) if e.identity == eve_id.public)

        def message(table: bytes = roster.table, sender: int = eve_seat, seq: int = 0) -> bytes:
            return seal_envelope(eve_id.key, table=table, deal=0, sender=sender, seq=seq,
                                 prior=b"\0" * 32, kind="sign", body={"roster": b"\0" * 32}
                                 ).wire

        signed = message()  # verifies (and names a roster no one signed)
        cases = [
            (message(sender=(eve_seat + 1) % 3), "does not verify"),  # signed by eve
            (message(table=b"\1" * 16), "another table"),
            # a bit of the signature flipped (setting a byte could leave it as it was:
            # the message would then verify and be kept as evidence of a fork)
            (signed[:-1] + bytes([signed[-1] ^ 1]), "does not verify"),
        ]
        for wire, reason in cases:
            await link.send(Msg(wire=wire))
            assert reason in await refused_with(link)
            link, answer = await admitted(host, eve_id)  # back at its seat
            assert isinstance(answer, Welcome)
        await link.send(Msg(wire=signed))  # kept as evidence of a fork: the
        await link.send(Msg(wire=signed))  # link stays; sent again, it goes
        said = await refused_with(link)
        assert "replay" in said
        await link.aclose()  # eve leaves for good: claimed silent, the table breaks up
    assert host.peer is not None and joiner.peer is not None
    for peer in (host.peer, joiner.peer):
        assert peer.over
        assert told(peer.main, BrokeUp, GameOver) == [
            f"seat {eve_seat} was silent: the table breaks up"]


async def test_fuzzed_frames_do_not_stop_the_table(tmp_path: Path) -> None:
    rng = random.Random(8)
    host = make_host(tmp_path, options={"target": 62})
    good = [pack(HelloFrame()), pack_map({"t": "auth", "key": b"k" * 32, "name": "x",
                                     "token": b"t" * 16, "bot": "", "bots": [],
                                     "sig": b"s" * 64}),
            pack(Msg(wire=b"w" * 200)), pack_map({"t": "chat", "seat": 0, "text": "hi",
                                                  "sig": b"s"})]

    def mutate(data: bytes) -> bytes:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            how = rng.randrange(4)
            if how == 0 and buf:
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
            elif how == 1 and buf:
                del buf[rng.randrange(len(buf)):]
            elif how == 2:
                at = rng.randrange(len(buf) + 1)
                buf[at:at] = rng.randbytes(rng.randint(1, 16))
            else:
                buf[:4] = struct.pack(">I", rng.choice([0, 1, 5, len(buf), 1 << 20, 1 << 31]))
        return bytes(buf)

    sent = 0
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)

        async def fuzz(rounds: int, until: Callable[[], bool] = lambda: False) -> None:
            nonlocal sent
            for _ in range(rounds):
                if until():
                    return
                try:
                    link = raw_link(host)
                except trio.ClosedResourceError:
                    if until():
                        return  # the game is over and the host has gone
                    raise
                frames = [mutate(rng.choice(good)) for _ in range(rng.randint(1, 8))]
                try:
                    for frame in frames:
                        await link.stream.send_all(frame)
                        sent += 1
                    with trio.move_on_after(0.05):
                        await link.receive()
                except (LinkClosed, trio.BrokenResourceError, Exception):
                    pass
                await link.aclose()

        await fuzz(300)  # the table waits for its player
        joiner = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        nursery.start_soon(joiner.run)
        with trio.fail_after(10):
            await host.started.wait()
        await fuzz(10_000, lambda: host.peer is None or host.peer.over)  # and while it plays
        during = sent
    assert sent > 1000 and during > 0
    assert host.peer is not None and joiner.peer is not None and joiner.peer.over
    assert len(histories(host.peer, joiner.peer)) == 1
    assert host.closed_count > 100  # (the reasons of the newest only are kept)
    assert len(host.closed_reasons) == MAX_CLOSED_REASONS


class TwoFacedHost(Host):
    """A host whose relay shows one joiner another roster: its own key in seat 2's place
    (to read and forge what seat 2 would be sent)."""

    mitm_public = b""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        honest = self.relay.broadcast

        def broadcast(frame: Frame, but: Any = None) -> None:
            if not isinstance(frame, Start):
                honest(frame, but)
                return
            real = frame.roster
            seats = list(real.seats)
            seats[2] = SeatEntry(seats[2].name, self.mitm_public)
            fake = Roster(real.table, real.game, real.options, tuple(seats))
            for seated in self.links:
                shown = fake if seated.name == "ann" else real
                seated.pump.put(replace(frame, roster=shown))
        self.relay.broadcast = broadcast  # type: ignore[method-assign]


async def test_a_relay_showing_two_rosters_is_caught_by_the_safety_number(
        tmp_path: Path) -> None:
    config = HostConfig("pasur", 3, {"target": 20}, "hosty", "heuristic", [],
                        Settings(grace=3))
    host = TwoFacedHost(load_or_create(tmp_path / "host"), config, maker,
                        Journal.open(tmp_path / "host.journal"), say=Lines(), seed=1)
    host.mitm_public = load_or_create(tmp_path / "mitm").public
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        ann = make_joiner(tmp_path, invite, "ann", dial=memory_dial(host))
        nursery.start_soon(ann.run)
        while len(host.links) < 1:
            await trio.sleep(0.01)
        bob = make_joiner(tmp_path, invite, "bob", dial=memory_dial(host))
        nursery.start_soon(bob.run)
        with trio.fail_after(60):
            while not (host.peer and host.peer.over):
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    numbers = {p.roster.safety_number() for p in (host.peer, ann.peer, bob.peer)
               if p is not None}
    assert len(numbers) == 2  # read aloud, ann's number is not bob's
    said = [line for line in ann.say if line.startswith("safety number")]  # type: ignore
    assert said and said[0] not in bob.say  # type: ignore[operator]
    assert host.peer is not None and bob.peer is not None and ann.peer is not None
    # ann refuses the host's signature on the real roster, so she signs nothing; the
    # others claim her silent and the table breaks up before a card is dealt
    assert any(r.rejection.rule == "roster" and r.rejection.sender == 0
               for r in ann.peer.refusals)
    assert told(host.peer.main, BrokeUp, GameOver) == [
        "seat 1 was silent: the table breaks up"]
    assert not any(isinstance(e, DealBegun) for e in host.peer.main.events)


async def test_a_joiner_who_leaves_the_lobby_frees_its_seats(tmp_path: Path) -> None:
    host = make_host(tmp_path, players=4, bots=0)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        link, answer = await admitted(host, load_or_create(tmp_path / "eve"))
        assert answer == Welcome(seat=1, resume=False)
        with trio.fail_after(10):
            while host.free != 2:  # seated once the welcome is out
                await trio.sleep(0.01)
        await link.aclose()
        with trio.fail_after(10):
            while host.free != 3:
                await trio.sleep(0.01)
        joiner = make_joiner(tmp_path, invite, "joe", bots=2, dial=memory_dial(host))
        nursery.start_soon(joiner.run)
    assert host.peer is not None and joiner.peer is not None and joiner.peer.over
    assert [(e.name, e.run_by) for e in host.peer.roster.seats] == [
        ("hosty", 0), ("joe", 1), ("ben", 1), ("cy", 1)]


async def test_what_a_seated_joiner_cannot_do_to_the_lobby(tmp_path: Path) -> None:
    """An unknown bot kind, a reset right after auth, two links lost at once: each is
    refused or cleaned up, and the host goes on to play its game."""
    host = make_host(tmp_path, players=4)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        dial = memory_dial(host)
        eve = load_or_create(tmp_path / "eve")
        link = raw_link(host)
        await link.send(HelloFrame())
        first = await link.receive()
        assert isinstance(first, HelloFrame) and first.nonce is not None
        await link.send(Auth(key=eve.public, name="eve", token=invite.token, bot="x\n",
                             bots=(), sig=proof(eve.key, first.nonce,
                                                invite.fingerprint or b"", invite.token)))
        assert "unknown bot" in await refused_with(link)

        async def all_free() -> None:
            with trio.fail_after(10):
                while host.free != 3 or host.links:
                    await trio.sleep(0.01)

        link, _ = await admitted(host, eve)  # then gone at once
        await link.stream.aclose()
        await all_free()
        pair = [await admitted(host, load_or_create(tmp_path / n), name=n) for n in ("m1", "m2")]
        assert [type(a) for _, a in pair] == [Welcome, Welcome]
        for lost, _ in pair:  # two links lost at the same moment
            await lost.stream.aclose()
        await all_free()
        nursery.start_soon(make_joiner(tmp_path, invite, "joe", bots=1, dial=dial).run)
        with trio.fail_after(10):
            while host.free != 1:
                await trio.sleep(0.01)
        nursery.start_soon(make_joiner(tmp_path, invite, "ann", dial=dial).run)
    assert host.peer is not None and host.peer.over
    assert [e.name for e in host.peer.roster.seats] == ["hosty", "joe", "ben", "ann"]


async def test_joiners_arriving_together_get_consistent_seats(tmp_path: Path) -> None:
    host = make_host(tmp_path, players=4)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        for name, bots in (("joe", 1), ("ann", 0)):  # both in the handshake at once
            nursery.start_soon(make_joiner(tmp_path, invite, name, bots=bots,
                                           dial=memory_dial(host)).run)
    assert host.peer is not None and host.peer.over
    seats = host.peer.roster.seats
    runners = [seat for seat, e in enumerate(seats) if e.run_by != seat]
    assert len(runners) == 1  # joe's bot, run by joe, seated just after him
    (bot,) = runners
    assert seats[bot].run_by == bot - 1 and seats[bot - 1].name == "joe"


async def test_a_joiner_whose_link_breaks_comes_back_and_finishes(tmp_path: Path) -> None:
    """The joiner's link breaks twice during the game: it dials again, the host seats it
    again (welcome with resume, the start, every message so far), it sends again what
    it sent, and the game ends as one game at both ends."""
    host = make_host(tmp_path, options={"target": 40})
    streams: list[trio.abc.Stream] = []
    dial = memory_dial(host)

    async def recorded(address: str, port: int) -> tuple[trio.abc.Stream, bytes]:
        stream, seen = await dial(address, port)
        streams.append(stream)
        return stream, seen

    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        joiner = make_joiner(tmp_path, invite, "joe", dial=recorded)
        nursery.start_soon(joiner.run)
        with trio.fail_after(30):
            await host.started.wait()
            for cut in (1, 2):
                assert host.peer is not None
                while len(host.peer.log) < 30 * cut and not host.peer.over:
                    await trio.sleep(0.01)
                if host.peer.over:
                    break
                await streams[-1].aclose()
                while len(streams) == cut:
                    await trio.sleep(0.01)
    assert len(streams) == 3
    assert host.peer is not None and joiner.peer is not None
    assert host.peer.over and joiner.peer.over
    assert len(histories(host.peer, joiner.peer)) == 1
    assert sum("joe is back at seat 1" in line for line in host.say) == 2  # type: ignore
    assert not host.closed_reasons


async def test_the_game_s_last_message_goes_out_before_the_host_verifies_the_game(
        tmp_path: Path) -> None:
    """The last seat's agreement ends the game at the host, which relays it to the other
    joiner and then verifies the whole transcript, holding its loop for seconds on a
    busy machine.  The relay goes out first: when the game's outputs begin, every
    link's queue is empty and its writer idle, so the other joiner is not left waiting
    past its grace period for the game's last message."""
    host = make_host(tmp_path, players=3, options={"target": 20})
    queued: list[list[bool]] = []

    async def over(peer: Any, driver: Any, number: int) -> None:
        queued.append([seated.pump.idle() for seated in host.links])

    host.on_over = over
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        joiners = [make_joiner(tmp_path, invite, name, dial=memory_dial(host))
                   for name in ("joe", "jim")]
        for joiner in joiners:
            nursery.start_soon(joiner.run)
        with trio.fail_after(120):
            while not queued:
                await trio.sleep(0.01)
    assert queued == [[True, True]]
    assert all(j.peer is not None and j.peer.over for j in joiners)
