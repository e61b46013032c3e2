"""Limits that a peer does not reset by coming back: returns paced per identity, only
what the host's own sessions keep relayed, one message of a seat kept aside per
transcript, and what is remembered of refusals bounded (tests/test_net_referee.py
counts refusals and chat per identity)."""

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
from p2pcards.net.journal import read
from p2pcards.net.peer import MAX_REFUSALS, Peer
from p2pcards.net.referee import Referee
from p2pcards.net.settings import Settings
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.codec import seal_envelope
from p2pcards.table.decks import ACTS
from p2pcards.table.session import MAX_REJECTIONS
from p2pcards.table.transcript import Transcript
from tests.net_helpers import Lines, make_host
from tests.table_helpers import envelope, move
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
    """A seated peer playing honestly over a raw link until ``until_due`` (never making the
    move it waits for); what it saw."""
    seen: list[bytes] = []
    rng = random.Random(0)
    while True:
        for seat, view in peer.decisions().items():
            if until_due(peer):
                break
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


REJOINS = 4


@pytest.mark.parametrize("weakened", [True, False])
async def test_a_cheat_that_comes_back_has_one_message_kept_aside_per_transcript(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weakened: bool) -> None:
    """Eve owes a move and sends none; on each of her links (she comes back REJOINS times)
    she sends, each on a transcript she invents, a fork of her move, a claim that the host
    is silent and a return.  The host keeps (journals, logs, relays) one of them, the
    first fork, whatever the rejoins, and counts the others against her; under the
    weakened rule (every message set aside kept, as before) it kept every claim and every
    return."""
    if weakened:
        monkeypatch.setattr(Transcript, "set_aside", lambda self, seat: True)
    host = make_host(tmp_path, players=3, grace=10_000)
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
        session = next(iter(peers[0].sessions.values()))

        def eve_due(peer: Peer) -> bool:
            due = peer.due()
            return due is not None and due.seat == session.me and due.kind in ACTS

        with trio.fail_after(30):
            async with trio.open_nursery() as both:
                both.start_soon(pump, eve, peers[0], eve_due)
                both.start_soon(pump, ann, peers[1], eve_due)
        view = session.decision()
        assert view is not None and host.peer is not None
        kind, body = move(session, view.format_action(view.legal_actions()[0]))
        progress, logged = host.peer.progress, len(host.peer.log)
        sent: list[bytes] = []
        link = eve
        for n in range(REJOINS + 1):
            if n:
                link, _ = await admitted(host, eve_id)
            for what, content in ((kind, body), ("silent", {"seat": 0}),
                                  ("back", {"seat": session.me})):
                sent.append(envelope(session, what, content, prior=bytes([n, len(sent)]) * 16))
                await link.send(Msg(wire=sent[-1]))
            await trio.testing.wait_all_tasks_blocked()
            await link.aclose()
        await trio.testing.wait_all_tasks_blocked()
        assert host.peer.progress == progress  # (one transcript all along: nothing taken)
        kept = [wire for wire in host.peer.log[logged:] if wire in sent]
        journaled = [r[1] for r in read(host.journal.path)[0] if r[0] == "in" and r[1] in sent]
        nursery.cancel_scope.cancel()
    if weakened:
        assert len(kept) == len(journaled) == 1 + 2 * (REJOINS + 1)
        return
    assert kept == journaled == [sent[0]]  # the first fork
    assert host.referee is not None
    assert len(host.referee.records[eve_id.public].refused) == len(sent) - 1  # counted
