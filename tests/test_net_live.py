"""Host and joiners in one process over real TLS on loopback: seating, the relay,
chat, and everything a hostile connection can send (each closes only its link)."""

from __future__ import annotations

import random
import struct
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio

from p2pcards.bots import Bot, make_bot
from p2pcards.net import tls
from p2pcards.net.driver import Settings
from p2pcards.net.frames import Auth, Error, Frame, Hello, Msg, Start, Welcome, pack, pack_map
from p2pcards.net.host import Host, HostConfig
from p2pcards.net.identity import Friends, Identity, encode_id, load_or_create, show_id
from p2pcards.net.invite import Invite, proof
from p2pcards.net.join import Joiner
from p2pcards.net.journal import Journal
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.codec import seal_envelope
from p2pcards.table.verify import verify


def maker(kind: str) -> Bot:
    return make_bot(kind, iterations=50)


class Lines(list[str]):
    def __call__(self, line: str) -> None:
        self.append(line)


def make_host(tmp_path: Path, game: str = "pasur", players: int = 2, bots: int = 0,
              options: dict[str, int] | None = None, grace: float = 60) -> Host:
    config = HostConfig(game, players, options or {"target": 20}, "hosty", "heuristic",
                        ["heuristic"] * bots, Settings(grace=grace))
    return Host(load_or_create(tmp_path / "host"), config, maker,
                Journal.open(tmp_path / "host.journal"), Lines(), seed=1)


def make_joiner(tmp_path: Path, invite: Invite, name: str, bots: int = 0) -> Joiner:
    return Joiner(load_or_create(tmp_path / name), invite, name, "heuristic",
                  ["heuristic"] * bots, maker, Journal.open(tmp_path / f"{name}.journal"),
                  say=Lines(), seed=2)


def histories(*peers: Any) -> set[str]:
    out = set()
    for peer in peers:
        report = verify(peer.main.export())
        assert report.ok, report.problem
        assert report.history is not None
        out.add(report.history.dumps())
    return out


async def test_a_game_over_tls_with_bots_on_two_peers(tmp_path: Path) -> None:
    host = make_host(tmp_path, players=4, bots=1)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        joiner = make_joiner(tmp_path, invite, "joe", bots=1)
        nursery.start_soon(joiner.run)
    assert host.peer is not None and joiner.peer is not None
    assert host.peer.over and joiner.peer.over
    assert len(histories(host.peer, joiner.peer)) == 1
    roster = host.peer.roster
    assert [(e.name, e.bot, e.run_by) for e in roster.seats] == [
        ("hosty", "heuristic", 0), ("heuristic-1", "heuristic", 0), ("joe", "heuristic", 2),
        ("heuristic-3", "heuristic", 2)]
    said = "\n".join(joiner.say)  # type: ignore[arg-type]
    assert f"safety number: {roster.safety_number()}" in said
    assert "heuristic bot run by seat 2" in said
    assert not host.closed_reasons


async def raw_link(invite: Invite) -> Link:
    return Link(await tls.connect(invite.host, invite.port), "test")


async def admitted(invite: Invite, identity: Identity, token: bytes | None = None
                   ) -> tuple[Link, Frame]:
    link = await raw_link(invite)
    await link.send(Hello())
    first = await link.receive()
    assert isinstance(first, Hello) and first.nonce is not None
    token = invite.token if token is None else token
    await link.send(Auth(key=identity.public, name="eve", token=token, bot="", bots=(),
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


async def uninvited(invite: Invite, tmp_path: Path) -> str:
    _link, answer = await admitted(invite, load_or_create(tmp_path / "eve"), b"x" * 16)
    assert isinstance(answer, Error)
    return answer.reason


async def wrong_version(invite: Invite, tmp_path: Path) -> str:
    link = await raw_link(invite)
    await link.send_map({"t": "hello", "proto": "p2pcards", "versions": [7, 9]})
    return await refused_with(link)


async def oversize(invite: Invite, tmp_path: Path) -> str:
    link = await raw_link(invite)
    await link.stream.send_all(struct.pack(">I", 1 << 30))
    return await refused_with(link)


async def truncated(invite: Invite, tmp_path: Path) -> str:
    link = await raw_link(invite)
    await link.stream.send_all(pack(Hello())[:-3])
    await link.stream.send_eof() if hasattr(link.stream, "send_eof") else None
    await link.stream.aclose()
    return "closed"


async def not_msgpack(invite: Invite, tmp_path: Path) -> str:
    link = await raw_link(invite)
    await link.stream.send_all(struct.pack(">I", 3) + b"\xc1\xc1\xc1")
    return await refused_with(link)


async def ext_type(invite: Invite, tmp_path: Path) -> str:
    link = await raw_link(invite)
    body = msgpack.packb({"t": "hello", "x": msgpack.ExtType(5, b"zz")})
    await link.stream.send_all(struct.pack(">I", len(body)) + body)
    return await refused_with(link)


ATTACKS = {
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
        invite = await nursery.start(host.serve)
        said = await attack(invite, tmp_path)
        assert reason in said
        assert any(reason in r for r in host.closed_reasons)
        await truncated(invite, tmp_path)  # a frame cut short is dropped too
        joiner = make_joiner(tmp_path, invite, "joe")
        nursery.start_soon(joiner.run)
    assert host.peer is not None and host.peer.over  # the honest game went on


async def test_seated_peer_misbehaving_loses_only_its_link(tmp_path: Path) -> None:
    """A peer that is seated sends a message for another seat, a forged signature, another
    table's message and a replay: each closes its link (it comes back, honestly)."""
    host = make_host(tmp_path, players=3, grace=5)
    eve_id = load_or_create(tmp_path / "eve")
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        link, answer = await admitted(invite, eve_id)
        assert isinstance(answer, Welcome)
        joiner = make_joiner(tmp_path, invite, "joe")
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
            link, answer = await admitted(invite, eve_id)  # back at its seat
            assert isinstance(answer, Welcome)
        await link.send(Msg(wire=signed))  # kept as evidence of a fork: the
        await link.send(Msg(wire=signed))  # link stays; sent again, it goes
        said = await refused_with(link)
        assert "replay" in said
        await link.aclose()  # eve leaves for good: claimed silent, the table breaks up
    assert host.peer is not None and joiner.peer is not None
    for peer in (host.peer, joiner.peer):
        assert peer.over
        assert [e.text for e in peer.main.events if e.kind == "over"] == [
            f"seat {eve_seat} was silent: the table breaks up"]


async def test_fuzzed_frames_do_not_stop_the_table(tmp_path: Path) -> None:
    rng = random.Random(8)
    host = make_host(tmp_path, options={"target": 62})
    good = [pack(Hello()), pack_map({"t": "auth", "key": b"k" * 32, "name": "x",
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
        invite = await nursery.start(host.serve)

        async def fuzz(rounds: int, until: Callable[[], bool] = lambda: False) -> None:
            nonlocal sent
            for _ in range(rounds):
                if until():
                    return
                try:
                    link = await raw_link(invite)
                except (OSError, trio.BrokenResourceError):
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
        joiner = make_joiner(tmp_path, invite, "joe")
        nursery.start_soon(joiner.run)
        with trio.fail_after(10):
            await host.started.wait()
        await fuzz(10_000, lambda: host.peer is None or host.peer.over)  # and while it plays
        during = sent
    assert sent > 1000 and during > 0
    assert host.peer is not None and joiner.peer is not None and joiner.peer.over
    assert len(histories(host.peer, joiner.peer)) == 1
    assert len(host.closed_reasons) > 100


async def test_pinned_fingerprint_mismatch_refuses_to_join(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        other = load_or_create(tmp_path / "mallory").id
        joiner = make_joiner(tmp_path, Invite(invite.host, invite.port, other, invite.token),
                             "joe")
        with pytest.raises(BaseException) as caught:
            await joiner.run()
        assert "someone may be in between" in str(caught.value.exceptions[0]
                                                  if isinstance(caught.value, BaseExceptionGroup)
                                                  else caught.value)
        nursery.cancel_scope.cancel()



class TwoFacedHost(Host):
    """A relay that shows one joiner another roster: its own key in seat 2's place (to
    read and forge what seat 2 would be sent)."""

    mitm_public = b""

    def _broadcast(self, frame: Frame, but: Any = None) -> None:
        if not isinstance(frame, Start):
            super()._broadcast(frame, but)
            return
        from p2pcards.table.roster import Roster, SeatEntry  # noqa: PLC0415

        real = frame.roster
        seats = list(real.seats)
        seats[2] = SeatEntry(seats[2].name, self.mitm_public)
        fake = Roster(real.table, real.game, real.options, tuple(seats))
        for seated in self.links:
            shown = fake if seated.name == "ann" else real
            seated.out.send_nowait(replace(frame, roster=shown))


async def test_a_relay_showing_two_rosters_is_caught_by_the_safety_number(
        tmp_path: Path) -> None:
    config = HostConfig("pasur", 3, {"target": 20}, "hosty", "heuristic", [],
                        Settings(grace=3))
    host = TwoFacedHost(load_or_create(tmp_path / "host"), config, maker,
                        Journal.open(tmp_path / "host.journal"), Lines(), seed=1)
    host.mitm_public = load_or_create(tmp_path / "mitm").public
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        ann = make_joiner(tmp_path, invite, "ann")
        nursery.start_soon(ann.run)
        while len(host.links) < 1:
            await trio.sleep(0.01)
        bob = make_joiner(tmp_path, invite, "bob")
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
    assert [e.text for e in host.peer.main.events if e.kind == "over"] == [
        "seat 1 was silent: the table breaks up"]
    assert not any(e.kind == "deal" for e in host.peer.main.events)


async def test_trust_on_first_use_shows_the_fingerprint(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    asked: list[str] = []

    async def no(question: str) -> bool:
        asked.append(question)
        return False

    async def yes(question: str) -> bool:
        asked.append(question)
        return True

    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        bare = Invite(invite.host, invite.port, None, invite.token)
        doubter = make_joiner(tmp_path, bare, "doubter")
        doubter.confirm = no
        with pytest.raises(BaseExceptionGroup, match="Exceptions from Trio nursery"):
            await doubter.run()
        joiner = make_joiner(tmp_path, bare, "joe")
        joiner.confirm = yes
        joiner.friends = Friends.load(tmp_path / "joe")
        nursery.start_soon(joiner.run)
    assert [show_id(host.identity.id) in q for q in asked] == [True, True]
    assert joiner.peer is not None and joiner.peer.over
    assert joiner.friends.pinned["hosty"] == encode_id(host.identity.id)


async def test_a_joiner_who_leaves_the_lobby_frees_its_seats(tmp_path: Path) -> None:
    host = make_host(tmp_path, players=4, bots=0)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        link, answer = await admitted(invite, load_or_create(tmp_path / "eve"))
        assert answer == Welcome(seat=1, resume=False)
        with trio.fail_after(10):
            while host.free != 2:  # seated once the welcome is out
                await trio.sleep(0.01)
        await link.aclose()
        with trio.fail_after(10):
            while host.free != 3:
                await trio.sleep(0.01)
        joiner = make_joiner(tmp_path, invite, "joe", bots=2)
        nursery.start_soon(joiner.run)
    assert host.peer is not None and joiner.peer is not None and joiner.peer.over
    assert [(e.name, e.run_by) for e in host.peer.roster.seats] == [
        ("hosty", 0), ("joe", 1), ("heuristic-2", 1), ("heuristic-3", 1)]


async def test_what_a_seated_joiner_cannot_do_to_the_lobby(tmp_path: Path) -> None:
    """An unknown bot kind, a reset right after auth, two links lost at once: each is
    refused or cleaned up, and the host goes on to play its game."""
    host = make_host(tmp_path, players=4)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        eve = load_or_create(tmp_path / "eve")
        link = await raw_link(invite)
        await link.send(Hello())
        first = await link.receive()
        assert isinstance(first, Hello) and first.nonce is not None
        await link.send(Auth(key=eve.public, name="eve", token=invite.token, bot="x\n",
                             bots=(), sig=proof(eve.key, first.nonce,
                                                invite.fingerprint or b"", invite.token)))
        assert "unknown bot" in await refused_with(link)

        async def all_free() -> None:
            with trio.fail_after(10):
                while host.free != 3 or host.links:
                    await trio.sleep(0.01)

        link, _ = await admitted(invite, eve)  # then gone at once
        await link.stream.aclose()
        await all_free()
        pair = [await admitted(invite, load_or_create(tmp_path / n)) for n in ("m1", "m2")]
        assert [type(a) for _, a in pair] == [Welcome, Welcome]
        for lost, _ in pair:  # two links lost at the same moment
            await lost.stream.aclose()
        await all_free()
        nursery.start_soon(make_joiner(tmp_path, invite, "joe", bots=1).run)
        with trio.fail_after(10):
            while host.free != 1:
                await trio.sleep(0.01)
        nursery.start_soon(make_joiner(tmp_path, invite, "ann").run)
    assert host.peer is not None and host.peer.over
    assert [e.name for e in host.peer.roster.seats] == ["hosty", "joe", "heuristic-2", "ann"]


async def test_joiners_arriving_together_get_consistent_seats(tmp_path: Path) -> None:
    host = make_host(tmp_path, players=4)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        for name, bots in (("joe", 1), ("ann", 0)):  # both in the handshake at once
            nursery.start_soon(make_joiner(tmp_path, invite, name, bots=bots).run)
    assert host.peer is not None and host.peer.over
    seats = host.peer.roster.seats
    runners = [seat for seat, e in enumerate(seats) if e.run_by != seat]
    assert len(runners) == 1  # joe's bot, run by joe, seated just after him
    (bot,) = runners
    assert seats[bot].run_by == bot - 1 and seats[bot - 1].name == "joe"
