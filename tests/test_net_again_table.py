"""Another game at a whole table, in one process (memory streams, no sockets): a person
at the host asks for another game, the headless joiners agree, a joiner killed between
games comes back with the same journal and agrees too, the second game is played under
a fresh table id with the same seats (a watcher, with no say, follows it too), and the
host's person leaving ends the table for everyone; every game's transcript verifies on
its own."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from p2pcards.net.driver import Settings
from p2pcards.net.host import Host, HostConfig
from p2pcards.net.identity import load_or_create
from p2pcards.net.invite import Invite
from p2pcards.net.join import Joiner
from p2pcards.net.journal import Journal
from p2pcards.net.peer import Peer
from p2pcards.net.series import Place, Series, done_path, journal_path, where
from p2pcards.net.tls import Dial
from p2pcards.net.watch import Watch
from p2pcards.table.session import Session
from p2pcards.table.verify import verify
from tests.net_helpers import Lines, maker, memory_dial
from tests.test_net_resume import Person

pytestmark = pytest.mark.slow  # two whole games (about 6 s)


def series_place(tmp_path: Path, name: str) -> tuple[Place, Journal]:
    """The record of ``name``'s games and the journal to open, as the command finds
    them (the same each time: the same command)."""
    first = tmp_path / f"{name}.journal"
    series = Series.open(first.with_suffix(".series"))
    path, number = where(first, series)
    return Place(series, number, first), Journal.open(path)


def joiner(tmp_path: Path, invite: Invite, name: str, dial: Dial) -> Joiner:
    place, journal = series_place(tmp_path, name)
    joe = Joiner(load_or_create(tmp_path / name), invite, name, "heuristic", [], maker,
                 journal, say=Lines(), seed=2, place=place)
    joe.dial = dial
    return joe


def transcript_ok(peer: Peer) -> str:
    report = verify(peer.main.export())
    assert report.ok, report.problem
    assert report.history is not None
    return report.history.dumps()


async def wait_for(check: object, seconds: float = 60) -> None:
    with trio.fail_after(seconds):
        while not check():  # type: ignore[operator]
            await trio.sleep(0.01)


async def test_again_with_a_joiner_gone_between_games(tmp_path: Path) -> None:
    config = HostConfig("pasur", 3, {"target": 1}, "hosty", None, [], Settings(grace=60))
    place, journal = series_place(tmp_path, "host")
    host = Host(load_or_create(tmp_path / "host"), config, maker, journal, say=Lines(),
                person=Person(), seed=1, place=place)
    dial = memory_dial(host)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        watched: dict[int, str] = {}

        async def over(session: Session, number: int) -> None:
            report = verify(session.export())
            assert report.ok and report.history is not None
            watched[number] = report.history.dumps()
        wendy = Watch(load_or_create(tmp_path / "wendy"), invite, "wendy", say=Lines(),
                      dial=dial, on_over=over)  # a watcher stays for the next game
        nursery.start_soon(wendy.run)
        joe = joiner(tmp_path, invite, "joe", dial)
        nursery.start_soon(joe.run)
        kim = joiner(tmp_path, invite, "kim", dial)
        with trio.CancelScope() as kim_scope:  # (kim's process, until it is killed)
            async with trio.open_nursery() as kims:
                kims.start_soon(kim.run)
                await wait_for(lambda: host.agreement is not None and kim.peer is not None
                               and kim.place.series is not None
                               and kim.place.series.between)
                kim_scope.cancel()  # killed between games (its game over and recorded)
        kim.journal.abandon()
        first = host.peer
        assert first is not None and first.over
        assert await host.say_again("pasur", {"target": 2}) is None  # (other options)
        assert await host.say_again("bidwhist", None) == \
            "Bid Whist needs 4 seats; this table has 3, and another game keeps the same" \
            " players"
        assert await host.say_again(None, None) == "you agreed already: waiting for the others"
        await wait_for(lambda: any("joe agrees (2 of 3 agree)" in line
                                   for line in host.say))  # type: ignore[attr-defined]
        assert host.peer is first  # kim has not agreed: no new game
        kim = joiner(tmp_path, invite, "kim", dial)  # the same command again
        assert kim.peer is not None and kim.peer.over  # (its first game, restored)
        nursery.start_soon(kim.run)
        await wait_for(lambda: host.peer is not first and host.peer is not None
                       and host.peer.over and host.agreement is not None)
        second = host.peer
        assert second is not None
        await host.leave()
    assert joe.peer is not None and kim.peer is not None
    assert first.roster.table != second.roster.table
    assert dict(second.roster.options) == {"target": 2}
    assert second.roster.seats == first.roster.seats
    assert first.roster.safety_number() != second.roster.safety_number()
    assert joe.peer.roster == kim.peer.roster == second.roster
    assert len({transcript_ok(p) for p in (second, joe.peer, kim.peer)}) == 1
    assert transcript_ok(first)
    assert watched == {1: transcript_ok(first), 2: transcript_ok(second)}
    assert "game 2: Pasur, the same players" in wendy.say  # type: ignore[operator]
    assert wendy.ended == "hosty left: no more games at this table"
    for name, lines in (("joe", joe.say), ("kim", kim.say)):
        assert "hosty left: no more games at this table" in lines, name
        assert "game 2: Pasur, the same players" in lines, name
    assert "kim agrees (3 of 3 agree)" in host.say  # type: ignore[operator]
    assert "resuming from" in kim.say[0]  # type: ignore[index]
    for name in ("host", "joe", "kim"):
        first_journal = tmp_path / f"{name}.journal"
        assert done_path(first_journal).exists() and \
            done_path(journal_path(first_journal, 2)).exists(), name
        record = Series.open(first_journal.with_suffix(".series"))
        assert record.number == 0  # it ended: the same command makes a new table
        raw = first_journal.with_suffix(".series").read_text()
        assert '"ended": "hosty left: no more games at this table"' in raw, name
