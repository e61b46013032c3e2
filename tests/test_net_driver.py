"""The node's play loop over memory channels, on Trio's autojump clock: whole games,
the grace period and claims of silence, decisions and crashes."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing

from p2pcards.bots import heuristic_bot
from p2pcards.net.driver import LATE, Driver, Settings
from p2pcards.net.journal import Journal
from p2pcards.net.peer import Peer
from p2pcards.table.events import BrokeUp, Forfeited, GameOver
from p2pcards.table.verify import verify
from tests.net_helpers import Relay, histories


def wire_drivers(relay: Relay, settings: Settings, silent_after: dict[int, int] | None = None
                 ) -> list[Driver]:
    """A driver per peer; each one's messages go to every other driver.  A seat in
    ``silent_after`` stops sending after that many messages (a peer that hangs)."""
    drivers: list[Driver] = []
    sent = [0] * len(relay.peers)
    lines: list[str] = []

    def sender(seat: int):
        async def send(wires: list[bytes]) -> None:
            for wire in wires:
                sent[seat] += 1
                if silent_after and seat in silent_after and sent[seat] > silent_after[seat]:
                    continue
                for other in drivers:
                    if other is not drivers[seat]:
                        other.post("msg", wire)
        return send

    for seat, peer in enumerate(relay.peers):
        assert peer is not None
        drivers.append(Driver(peer, sender(seat), {seat: heuristic_bot}, settings,
                              say=lines.append, seed=seat, inline=True))
    return drivers


async def test_drivers_play_a_whole_game(tmp_path: Path,
                                         autojump_clock: trio.testing.MockClock) -> None:
    relay = Relay(tmp_path, "bidwhist", 4, "drivers", {"target": 3})
    drivers = wire_drivers(relay, Settings(grace=30))
    async with trio.open_nursery() as nursery:
        for driver in drivers:
            nursery.start_soon(driver.run)
    peers: list[Peer] = relay.live()
    assert all(p.over for p in peers)
    assert len(histories(*peers)) == 1  # every transcript verified, and all the same game
    assert not any(p.refusals for p in peers)
    assert trio.current_time() < 30  # nobody waited for a grace period


async def test_a_hung_seat_forfeits_after_the_grace_period(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    relay = Relay(tmp_path, "bidwhist", 4, "hung", {"target": 3})
    drivers = wire_drivers(relay, Settings(grace=60), silent_after={2: 12})
    async with trio.open_nursery() as nursery:
        for driver in drivers:  # seat 2's messages stop reaching anyone after its fifth
            nursery.start_soon(driver.run)
        with trio.fail_after(3600):
            while not all(relay.peers[s].over for s in (0, 1, 3)):  # type: ignore[union-attr]
                await trio.sleep(1)
        nursery.cancel_scope.cancel()
    assert trio.current_time() >= 60  # the claims waited for the grace period
    peer = relay.peers[0]
    assert peer is not None
    forfeits = [e for e in peer.main.events if isinstance(e, Forfeited)]
    assert forfeits and all(e.seat == 2 for e in forfeits)
    report = verify(peer.main.export())
    assert report.ok, report.problem
    assert all(d.signers == [0, 1, 3] for d in report.deals)
    assert [verify(relay.peers[s].main.export()).totals for s in (1, 3)] == \
        [report.totals, report.totals]  # type: ignore[union-attr]


async def test_a_table_of_two_adjourns_when_a_seat_goes_silent(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    """At a table of two one seat's word would settle a forfeit, so the peer left alone
    does not claim: after the grace period it says why the game stops, and stops with
    its journal (the same command resumes it)."""
    relay = Relay(tmp_path, "pasur", 2, "two", {"target": 30})
    drivers = wire_drivers(relay, Settings(grace=60), silent_after={1: 8})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(drivers[0].run)
        nursery.start_soon(drivers[1].run)
        with trio.fail_after(3600):
            while not drivers[0].adjourned:
                await trio.sleep(1)
        nursery.cancel_scope.cancel()
    assert trio.current_time() >= 60
    peer = relay.peers[0]
    assert peer is not None and not peer.over
    assert "a table of two cannot go on" in drivers[0].adjourned
    assert not any(isinstance(e, (Forfeited, BrokeUp, GameOver)) for e in peer.main.events)
    assert not any(s.claims.made for s in peer.sessions.values())  # nobody claimed


async def test_a_peer_restored_after_the_game_is_over_stops_at_once(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    """A peer killed after the game's end, before it settled its journal, is restored
    over: its play loop ends at once instead of waiting for messages that never come."""
    relay = Relay(tmp_path, "pasur", 2, "over", {"target": 20})
    drivers = wire_drivers(relay, Settings(grace=30))
    async with trio.open_nursery() as nursery:
        for driver in drivers:
            nursery.start_soon(driver.run)
    peer = relay.peers[0]
    assert peer is not None and peer.over and peer.journal is not None
    peer.journal.commit()
    peer.journal.abandon()  # killed: its journal not yet settled
    restored = Peer.restore(Journal.open(relay.path(0)))
    assert restored.over
    late = Driver(restored, lambda wires: trio.sleep(0), {0: heuristic_bot}, Settings(grace=30),
                  say=[].append, seed=0, inline=True)
    with trio.fail_after(5):
        await late.run()


async def test_the_game_s_last_message_late_at_one_seat_is_taken_after_all(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    """The game's last agreement reaches one peer at once and the other only after the
    grace period, when it has claimed the signer silent (and so refuses it).  Nothing
    follows the game's last message, so nothing shows it was taken elsewhere: a quarter
    of the grace period after its claim (driver.LATE), that peer takes it after all, and
    every peer ends the game with the same transcript.  Its journal says so: restored,
    the peer is over."""
    relay = Relay(tmp_path, "pasur", 3, "last", {"target": 20})
    drivers = wire_drivers(relay, Settings(grace=60))
    peers = relay.live()
    held: list[bytes] = []

    async def send(wires: list[bytes]) -> None:
        for wire in wires:
            drivers[1].post("msg", wire)
            if peers[2].over:  # (its agreement, the game's last message)
                held.append(wire)
                await trio.sleep(90)  # (past seat 0's claim of silence)
            drivers[0].post("msg", wire)
    drivers[2].send = send
    async with trio.open_nursery() as nursery:
        for driver in drivers:
            nursery.start_soon(driver.run)
        with trio.fail_after(3600):
            while not all(p.over for p in peers):
                await trio.sleep(1)
        nursery.cancel_scope.cancel()
    assert len(held) == 1 and (1 + LATE) * 60 <= trio.current_time() < 120
    assert any(r.rejection.rule == "silent" for r in peers[0].refusals)
    assert len({p.main.hash for p in peers}) == 1
    assert len(histories(*peers)) == 1
    journal = peers[0].journal
    assert journal is not None
    journal.commit()
    journal.abandon()
    assert Peer.restore(Journal.open(relay.path(0))).over
