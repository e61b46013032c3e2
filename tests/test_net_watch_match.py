"""A watcher's match score: a watcher that comes in during the second game is told the
match so far by the host (in one process, memory streams, no sockets), so that its
summary counts the games the players count (it once said "match after 1 game" where
the players saw 2) and its second game has its number; one there for both games shows
the players' very lines.  What the host tells (``start.match``) is bounded, skipped by
an older peer, and refused by name when it does not read or does not fit the roster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio

from p2pcards.net import frames
from p2pcards.net.client import JoinError
from p2pcards.net.driver import Settings
from p2pcards.net.frames import (
    HEADER,
    SPECS,
    FrameError,
    FrameKind,
    MatchSoFar,
    Start,
    Told,
    pack,
    to_map,
    unpack,
)
from p2pcards.net.host import Host, HostConfig
from p2pcards.net.identity import load_or_create
from p2pcards.net.invite import Invite
from p2pcards.net.series import TOLD_BYTES, GameResult, match_lines, match_so_far
from p2pcards.net.watch import Watch
from p2pcards.table.roster import make_roster
from p2pcards.table.session import Session
from tests.net_helpers import Lines, maker, memory_dial
from tests.test_net_again_table import joiner, series_place, wait_for
from tests.test_net_resume import Person

pytestmark = pytest.mark.slow  # two whole games


async def test_a_watcher_who_comes_during_the_second_game_counts_both(
        tmp_path: Path) -> None:
    config = HostConfig("pasur", 2, {"target": 1}, "hosty", None, [], Settings(grace=60))
    place, journal = series_place(tmp_path, "host")
    host = Host(load_or_create(tmp_path / "host"), config, maker, journal, say=Lines(),
                person=Person(), seed=1, place=place)
    dial = memory_dial(host)
    watched: list[tuple[int, list[str]]] = []
    stayed: list[tuple[int, list[str]]] = []
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)

        async def both(session: Session, number: int) -> None:
            stayed.append((number, walt.match()))
        walt = Watch(load_or_create(tmp_path / "walt"), invite, "walt", say=Lines(),
                     dial=dial, on_over=both)  # there for both games
        nursery.start_soon(walt.run)
        await wait_for(lambda: bool(host.watchers.links))
        joe = joiner(tmp_path, invite, "joe", dial)  # headless: it agrees on its own
        nursery.start_soon(joe.run)
        await wait_for(lambda: host.agreement is not None)
        first = host.peer
        assert await host.say_again(None, None) is None
        await wait_for(lambda: host.peer is not first and host.peer is not None)

        async def over(session: Session, number: int) -> None:
            watched.append((number, wendy.match()))
        wendy = Watch(load_or_create(tmp_path / "wendy"), invite, "wendy", say=Lines(),
                      dial=dial, on_over=over)  # comes in during game 2 (or just after)
        nursery.start_soon(wendy.run)
        await wait_for(lambda: host.agreement is not None and host.peer is not first
                       and bool(watched) and len(stayed) == 2)
        await host.leave()
    assert place.series is not None
    players = match_lines(place.series.finished())
    assert players[0] == "match after 2 games:"
    assert [number for number, _ in watched] == [2]
    game_1 = players[1] + " (as the host told it)"  # (wendy did not watch it)
    assert watched[0][1] == [players[0], game_1, *players[2:]]
    assert wendy.number == 2 and wendy.told == {1}
    assert "game 2: Pasur, the same players" in wendy.say  # type: ignore[operator]
    assert stayed == [(1, match_lines(place.series.finished()[:1])), (2, players)]
    assert walt.told == set()


# ------------------------------------------------------------------ what is told

def result(game: str = "pasur", totals: tuple[int, ...] = (21, 3),
           winner: int | tuple[int, ...] | None = 0) -> GameResult:
    return GameResult(game, ("ann", "bob"), totals, winner)


ROSTER = make_roster(b"T" * 16, "pasur", [b"a" * 32, b"b" * 32], names=["ann", "bob"])


def test_the_start_tells_the_latest_games_in_half_its_cap() -> None:
    plain = Start(roster=ROSTER, settings=Settings(grace=60))
    start = match_so_far(plain, [result(), result(winner=(0, 1)), None], 3)
    assert start.match == MatchSoFar(game=3, results=(
        Told(game="pasur", totals=(21, 3), winner=0),
        Told(game="pasur", totals=(21, 3), winner=(0, 1))))
    assert unpack(pack(start)[HEADER.size:]) == start
    assert match_so_far(plain, [result(), None, result()], 4).match == MatchSoFar(
        game=4, results=(Told(game="pasur", totals=(21, 3), winner=0),))  # (no gap)
    assert match_so_far(plain, [], 1).match == MatchSoFar(game=1, results=())
    # the longest series at the largest roster: the latest games that fit, the number
    name = "\U0001F600" * 32
    big = make_roster(b"t" * 16, "nullern", [bytes([s + 1]) * 32 for s in range(7)],
                      names=[name] * 7, bots=[""] + ["b" * 16] * 6, deck="proved-pipelined")
    seven = [GameResult("nullern", (name,) * 7, (-(2**62),) * 7, (0, 1, 2, 3, 4, 5, 6))] * 98
    for roster, many in ((ROSTER, [result(totals=(2**62, 2**62), winner=(0, 1))] * 98),
                         (big, seven)):
        told = match_so_far(Start(roster=roster, settings=Settings(grace=60)), many, 99)
        size = len(pack(told))
        assert size <= TOLD_BYTES and 1.8 * (size - HEADER.size) < SPECS[FrameKind.START].most
        assert told.match is not None and told.match.game == 99
        assert 0 < len(told.match.results) < 98


def test_an_older_peer_skips_what_the_host_tells() -> None:
    """A build before ``match`` reads the same ``start`` (its fields are skipped)."""
    start = match_so_far(Start(roster=ROSTER, settings=Settings(grace=60)), [result()], 2)
    old = SPECS[FrameKind.START]
    older = frames.FrameSpec(old.kind, old.cls, old.most, old.fields[:2])
    SPECS[FrameKind.START] = older
    try:
        assert unpack(pack(start)[HEADER.size:]) == Start(roster=ROSTER,
                                                          settings=Settings(grace=60))
    finally:
        SPECS[FrameKind.START] = old
    assert "match" not in to_map(Start(roster=ROSTER, settings=Settings(grace=60)))


def start_with(match: Any) -> bytes:
    raw = {**to_map(Start(roster=ROSTER, settings=Settings(grace=60))), "match": match}
    return msgpack.packb(raw, use_bin_type=True)


@pytest.mark.parametrize(("match", "reason"), [
    ([2], r"start.match must be \[game, results\]"),
    ({"game": 2}, r"start.match must be \[game, results\]"),
    ([0, []], "start.match.game must be an integer from 1"),
    ([True, []], "start.match.game must be an integer from 1"),
    ([2, [["pasur", [1, 2], 0], ["pasur", [1, 2], 0]]],
     "start.match.results must tell at most the 1 games before game 2"),
    ([200, [["pasur", [1, 2], 0]] * 100], "start.match.results must be an array of at most"
                                          " 99 items"),
    ([2, [["pasur", [1, 2]]]], r"start.match.results\[0\] must be \[game, totals, winner\]"),
    ([2, [["pasur", [], 0]]], r"start.match.results\[0\].totals must hold a total per unit"),
    ([2, [["pasur", [1, "2"], 0]]], r"start.match.results\[0\].totals\[1\] must be an"),
    ([2, [["pasur", [1, 2], -1]]], r"start.match.results\[0\].winner must be an integer"),
    ([2, [["pasur", [1, 2], []]]], r"start.match.results\[0\].winner must name at least"),
    ([2, [["x" * 40, [1, 2], 0]]], r"start.match.results\[0\].game must be text of at most"),
])
def test_a_match_that_does_not_read_is_refused_naming_it(match: Any, reason: str) -> None:
    with pytest.raises(FrameError, match=reason) as caught:
        unpack(start_with(match))
    assert caught.value.kind == "start"


@pytest.mark.parametrize(("told", "reason"), [
    (Told(game="nosuch", totals=(1, 2), winner=0), "names a game this build does not know"),
    (Told(game="bidwhist", totals=(1, 2), winner=0), "Bid Whist is not played by this"
                                                     " table's 2 seats"),
    (Told(game="pasur", totals=(1, 2, 3), winner=0), "Pasur here scores 2 totals, not 3"),
    (Told(game="pasur", totals=(1, 2), winner=2), "its winner is not one of the 2 units"),
    (Told(game="pasur", totals=(1, 2), winner=(1, 1)), "its winner is not one of the 2"),
])
async def test_a_match_that_does_not_fit_the_roster_is_refused_naming_it(
        tmp_path: Path, told: Told, reason: str) -> None:
    wendy = Watch(load_or_create(tmp_path / "wendy"), frames_invite(), "wendy",
                  say=Lines())
    start = Start(roster=ROSTER, settings=Settings(grace=60),
                  match=MatchSoFar(game=2, results=(told,)))
    with pytest.raises(FrameError, match=r"start.match.results\[0\] \(game 1\): " + reason):
        await wendy.take(start)
    assert wendy.session is None and wendy.results == {}


def frames_invite() -> Invite:
    return Invite("127.0.0.1", 1, b"f" * 32, b"t" * 16)  # (never dialled here)


async def test_what_is_told_fills_only_the_games_not_watched(tmp_path: Path) -> None:
    """A watcher back in the same game keeps what it watched; a game number told
    anew is taken, and the games not known are said so."""
    wendy = Watch(load_or_create(tmp_path / "wendy"), frames_invite(), "wendy",
                  say=Lines())
    told = (Told(game="pasur", totals=(5, 21), winner=1),) * 2
    await wendy.take(Start(roster=ROSTER, settings=Settings(grace=60),
                           match=MatchSoFar(game=4, results=told)))
    assert wendy.number == 4 and wendy.told == {2, 3}
    assert "game 4: Pasur, the same players" in wendy.say  # type: ignore[operator]
    wendy.results[4] = result()  # (as if it watched game 4 to its end)
    assert wendy.match() == [
        "match after 4 games:",
        "  game 1: not known here (watched by no one here, and not told by the host)",
        "  game 2, Pasur: won by bob; final ann 5, bob 21 (as the host told it)",
        "  game 3, Pasur: won by bob; final ann 5, bob 21 (as the host told it)",
        "  game 4, Pasur: won by ann; final ann 21, bob 3",
        "  games won, of the 3 known here: ann 1, bob 2"]
    # the same game's start again (the link came back): game 1 told now, 3 not retold
    again = (Told(game="pasur", totals=(0, 21), winner=1),) * 3
    await wendy.take(Start(roster=ROSTER, settings=Settings(grace=60),
                           match=MatchSoFar(game=4, results=again)))
    assert wendy.number == 4 and wendy.told == {1, 2, 3}
    assert wendy.results[2].totals == (5, 21) and wendy.results[1].totals == (0, 21)
    with pytest.raises(JoinError, match="another roster"):
        other = make_roster(b"T" * 16, "pasur", [b"a" * 32, b"c" * 32], names=["ann", "cy"])
        await wendy.take(Start(roster=other, settings=Settings(grace=60)))
