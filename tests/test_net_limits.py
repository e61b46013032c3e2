"""Limits that a peer does not reset by coming back: returns paced per identity, only
what the host's own sessions keep relayed, and what is remembered of refusals
bounded (tests/test_net_referee.py counts refusals and chat per identity)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import trio
import trio.testing

from p2pcards.bots import heuristic_bot
from p2pcards.net.driver import Driver
from p2pcards.net.frames import Msg, Start, Welcome
from p2pcards.net.gate import REJOIN_BURST, REJOIN_HOLD, REJOIN_WINDOW
from p2pcards.net.identity import load_or_create
from p2pcards.net.peer import MAX_REFUSALS, Peer
from p2pcards.net.referee import Referee
from p2pcards.net.settings import Settings
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.codec import seal_envelope
from p2pcards.table.decks import ACTS
from p2pcards.table.session import MAX_REJECTIONS
from tests.net_helpers import Lines, make_host
from tests.test_net_referee import forged, table
from tests.test_net_relay import admitted, refused_with


@pytest.mark.parametrize("weakened", [True, False])
async def test_a_seated_identity_cannot_come_back_at_will(
        tmp_path: Path, autojump_clock: trio.testing.MockClock, weakened: bool) -> None:
    """Eve comes back again and again for two minutes (of Trio's clock): she is seated
    REJOIN_BURST times a minute; a return over the pace is held, then closed."""
    host = make_host(tmp_path, grace=10_000)
    eve = load_or_create(tmp_path / "eve")
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        if weakened:
            host.door.rejoins.burst = 10_000
        _link, answer = await admitted(host, eve)
        assert isinstance(answer, Welcome) and not answer.resume
        await host.started.wait()
        start = trio.current_time()
        seated_at: list[float] = []
        closed = 0
        while trio.current_time() - start < 2 * REJOIN_WINDOW and len(seated_at) < 200:
            try:
                _link, answer = await admitted(host, eve)
            except LinkClosed:
                closed += 1
                continue
            assert answer == Welcome(seat=1, resume=True)
            seated_at.append(trio.current_time() - start)
            await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    if weakened:
        assert len(seated_at) == 200  # as fast as she likes
        return
    assert closed >= 2 and len(seated_at) > REJOIN_BURST  # (the window let her in again)
    assert all(later - first >= REJOIN_WINDOW  # never more than REJOIN_BURST in a window
               for first, later in zip(seated_at, seated_at[REJOIN_BURST:], strict=False))
    assert any("then closed" in r for r in host.closed_reasons)
    assert REJOIN_HOLD < REJOIN_WINDOW


class Stuck:
    """A person at the host who never moves."""

    async def move(self, view: object) -> int:
        await trio.sleep_forever()
        raise AssertionError

    async def answer(self, question: str) -> bool:
        await trio.sleep_forever()
        raise AssertionError

    def seated(self, *args: object) -> None:
        pass

    def reseated(self, *args: object) -> None:
        pass

    def away(self, back: object) -> None:
        pass

    def countdown(self, seat: object, left: object) -> None:
        pass

    def report(self, *args: object) -> None:
        pass

    def connection(self, up: bool) -> None:
        pass


async def pump(link: Link, peer: Peer, until_due: Callable[[Peer], bool]) -> list[bytes]:
    """A seated peer playing honestly over a raw link until ``until_due``; what it saw."""
    seen: list[bytes] = []
    rng = random.Random(0)
    while True:
        for seat, view in peer.decisions().items():
            peer.act(seat, heuristic_bot(view.clone(), rng))
        for wire in peer.take_outgoing():
            await link.send(Msg(wire=wire))
        peer.check_pending()  # (idle: the deferred shuffle proofs, as the driver does)
        for wire in peer.take_outgoing():
            await link.send(Msg(wire=wire))
        if until_due(peer):
            return seen
        frame = await link.receive()
        if isinstance(frame, Msg):
            seen.append(frame.wire)
            peer.receive(frame.wire)


@pytest.mark.parametrize("weakened", [True, False])
async def test_a_message_the_host_refuses_as_late_is_not_relayed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weakened: bool) -> None:
    """The host's seat is due (its person thinks): eve claims ann's seat silent, as a claim
    that crossed ann's move would, which the host's session refuses as late (``turn``).
    Ann is not sent the claim (she was, when the host relayed a message before judging
    it)."""
    if weakened:  # relay whatever is screened, as the host did
        judge = Referee.judge
        monkeypatch.setattr(Referee, "judge", lambda *a: judge(*a) or True)
    host = make_host(tmp_path, players=3, grace=10_000)
    host.config.own_bot = None
    host.person = Stuck()
    host.lobby.entries[0] = replace(host.lobby.entries[0], bot="", run_by=None)
    eve_id, ann_id = load_or_create(tmp_path / "eve"), load_or_create(tmp_path / "ann")
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        eve, _ = await admitted(host, eve_id)
        ann, _ = await admitted(host, ann_id, name="ann")
        peers = []
        for link, who in ((eve, eve_id), (ann, ann_id)):
            start = await until(link, Start)
            assert isinstance(start, Start)
            seat = next(i for i, e in enumerate(start.roster.seats) if e.identity == who.public)
            peers.append(Peer(start.roster, {seat: who.key}, bytes([seat]) * 32))

        def host_due(peer: Peer) -> bool:
            due = peer.due()
            return due is not None and due.seat == 0 and due.kind in ACTS

        with trio.fail_after(30):
            async with trio.open_nursery() as both:
                both.start_soon(pump, eve, peers[0], host_due)
                both.start_soon(pump, ann, peers[1], host_due)
        session = next(iter(peers[0].sessions.values()))
        ann_seat = next(iter(peers[1].sessions))
        claim = seal_envelope(eve_id.key, table=session.table, deal=session.run.index
                              if session.run else 0, sender=session.me,
                              seq=session.transcript.seq_out,
                              prior=session.hash, kind="silent", body={"seat": ann_seat}).wire
        await eve.send(Msg(wire=claim))
        await eve.send(Msg(wire=b"junk"))  # closes her link, after the claim is judged
        with trio.fail_after(10):
            await refused_with(eve)
        seen = []  # what ann was sent since (the host has judged the claim)
        with trio.move_on_after(0.5):
            while True:
                frame = await ann.receive()
                if isinstance(frame, Msg):
                    seen.append(frame.wire)
        nursery.cancel_scope.cancel()
    assert (claim in seen) is weakened
    assert host.referee is not None
    assert len(host.referee.records[eve_id.public].refused) == 1  # counted against her


async def until(link: Link, kind: type) -> object:
    while not isinstance(frame := await link.receive(), kind):
        pass
    return frame


def test_what_a_peer_remembers_of_refusals_is_bounded() -> None:
    referee, _peers = table()
    peer = referee.peer
    said = Lines()
    driver = Driver(peer, send=lambda wires: trio.sleep(0), bots={}, settings=Settings(),
                    say=said)
    flood = MAX_REFUSALS + MAX_REJECTIONS
    for seq in range(flood):
        peer.receive(forged(1, seq=1000 + seq))  # each refused: out of order
    assert peer.refused == flood
    assert len(peer.refusals) == MAX_REFUSALS
    assert len(peer.main.rejections) == MAX_REJECTIONS
    driver._report()
    assert said.count(f"({flood - MAX_REFUSALS} more refusals, not kept, are not shown)") == 1
    assert sum("refused a message from seat 1" in line for line in said) == MAX_REFUSALS
    peer.receive(forged(1, seq=5000))
    driver._report()  # only what is new
    assert sum("refused a message from seat 1" in line for line in said) == MAX_REFUSALS + 1
