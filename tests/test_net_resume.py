"""Coming back to a game in another way: a seat that began at a person's prompt
resumed by a bot (``--bot``) and the reverse, and a LAN table found again by a player
seated at it (its beacon goes on, full, while a player is away)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import trio

from p2pcards.bots import heuristic_bot
from p2pcards.games import HandState
from p2pcards.net import lan
from p2pcards.net.driver import Settings
from p2pcards.net.host import Host, HostConfig
from p2pcards.net.identity import device_id, load_or_create
from p2pcards.net.invite import Invite
from p2pcards.net.join import Joiner
from p2pcards.net.journal import Journal
from p2pcards.net.tls import Dial
from p2pcards.table.roster import LOCK_DECK, Roster, describe_deck
from tests.net_helpers import Lines, histories, make_host, maker, memory_dial
from tests.test_net_lan import free_udp_port
from tests.test_net_procs import free_port


class Person:
    """A person at the seat: plays the heuristic bot's move, and counts them."""

    def __init__(self) -> None:
        self.moves = 0
        self.rng = random.Random(4)

    async def move(self, view: HandState) -> int:
        self.moves += 1
        return heuristic_bot(view.clone(), self.rng)

    async def answer(self, question: str) -> bool:
        return False

    def seated(self, roster: Roster, seat: int, settings: Settings, chat: object) -> None:
        pass

    def reseated(self, roster: Roster) -> None:
        pass

    def away(self, back: object) -> None:
        pass

    def countdown(self, seat: object, left: object) -> None:
        pass

    def report(self, table: object, events: object) -> None:
        pass

    def connection(self, up: bool) -> None:
        pass


def joiner(tmp_path: Path, invite: Invite, dial: Dial, *, bot: str | None,
           person: Person | None) -> Joiner:
    """Joe, from his identity and journal (the same each time: the same command)."""
    joe = Joiner(load_or_create(tmp_path / "joe"), invite, "joe", bot, [], maker,
                 Journal.open(tmp_path / "joe.journal"), say=Lines(), person=person, seed=2,
                 once=True)  # (one game: a person would otherwise be asked for another)
    joe.dial = dial
    return joe


async def play_then_leave(joe: Joiner, moves: int) -> None:
    """Joe plays until his seat has sent ``moves`` messages, then stops, as a process
    stopped by a signal does (what it journaled is kept)."""
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(joe.run)
            while joe.peer is None or len(joe.peer.mine) < moves:
                await trio.sleep(0.01)
            scope.cancel()
    joe.journal.close()


async def switch(tmp_path: Path, first: str | None) -> tuple[Host, Joiner, Person]:
    """Joe begins with bot ``first`` (None: at the prompt), leaves, and comes back the
    other way; the game is played to its end."""
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        dial = memory_dial(host)
        person = Person()
        await play_then_leave(joiner(tmp_path, invite, dial, bot=first,
                                     person=None if first else person), 30)
        assert not (host.peer and host.peer.over)
        back = joiner(tmp_path, invite, dial, bot=None if first else "heuristic",
                      person=person if first else None)
        with trio.fail_after(60):
            await back.run()
        nursery.cancel_scope.cancel()
    return host, back, person


async def test_a_seat_begun_at_the_prompt_is_resumed_by_a_bot(tmp_path: Path) -> None:
    host, back, person = await switch(tmp_path, None)
    assert back.peer is not None and back.peer.over and host.peer is not None
    assert host.peer.roster.seats[1].bot == ""  # the roster keeps what the seat began as
    assert person.moves > 0  # made before leaving; the bot made the rest
    assert len(histories(host.peer, back.peer)) == 1


async def test_a_seat_begun_with_a_bot_is_resumed_at_the_prompt(tmp_path: Path) -> None:
    host, back, person = await switch(tmp_path, "heuristic")
    assert back.peer is not None and back.peer.over and host.peer is not None
    assert host.peer.roster.seats[1].bot == "heuristic"
    assert person.moves > 0  # the person played the seat once back
    assert len(histories(host.peer, back.peer)) == 1


async def test_a_resumed_table_deals_with_the_deck_it_began_with(tmp_path: Path) -> None:
    """A table hosted with today's deck (``--deck lock``), stopped mid-game, and hosted
    again by a command that leaves ``--deck`` at its default: the journal's roster
    names the deck, so the table resumes with today's deck and says so; the joiner
    learned the deck from the roster it signed, and the game ends with today's deck's
    messages only."""
    host = make_host(tmp_path, deck=LOCK_DECK)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        first = joiner(tmp_path, invite, memory_dial(host), bot="heuristic", person=None)
        await play_then_leave(first, 30)
        nursery.cancel_scope.cancel()
    host.journal.close()  # the host process stops
    assert describe_deck(LOCK_DECK) in host.say and describe_deck(LOCK_DECK) in first.say
    again = make_host(tmp_path)  # the same command, without --deck
    assert again.peer is not None and again.peer.roster.deck == LOCK_DECK
    assert ("this table deals with the lock deck, as it began (a new table, --new, would"
            " deal with the proved deck)") in again.say
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(again.run)
        back = joiner(tmp_path, invite, memory_dial(again), bot="heuristic", person=None)
        with trio.fail_after(60):
            await back.run()
        nursery.cancel_scope.cancel()
    assert back.peer is not None and back.peer.over and again.peer.over
    kinds = {env.kind for env in again.peer.main.transcript}
    assert {"shuffle", "keys", "audit"} <= kinds
    assert not kinds & {"pkey", "pshuffle", "pshares", "pact"}
    assert len(histories(again.peer, back.peer)) == 1


async def test_a_full_table_beacons_while_a_player_is_away(tmp_path: Path) -> None:
    target = ("127.0.0.1", free_udp_port())
    config = HostConfig("pasur", 2, {"target": 300}, "hosty", "heuristic", [],
                        Settings(grace=60), beacon=target)
    host = Host(load_or_create(tmp_path / "host"), config, maker,
                Journal.open(tmp_path / "host.journal"), say=Lines(), seed=1)
    listener = lan.Listener(target, interval=0.2)

    async def heard(free: int) -> lan.Heard:
        with trio.fail_after(10):
            while True:
                table = next((t for t in listener.tables() if t.free == free), None)
                if table is not None:
                    return table
                await listener.changed.wait()

    async with trio.open_nursery() as nursery:
        await nursery.start(listener.run)
        invite = await nursery.start(host.serve)
        open_table = await heard(1)
        await play_then_leave(joiner(tmp_path, invite, memory_dial(host), bot="heuristic",
                                     person=None), 10)
        full = await heard(0)  # joe is away: announced, full, with the same token
        assert full.token == open_table.token and full.fingerprint == host.identity.id
        assert host.away() == [1]
        nursery.cancel_scope.cancel()


@pytest.mark.slow  # real processes
def test_join_lan_resumes_without_asking_again(tmp_path: Path) -> None:
    """``join --lan hosty`` (confirmed with --yes), stopped by Ctrl-C, then the same
    command without --yes and with no input: it finds the table from its beacon (full,
    as ``p2pcards lan`` shows it) and resumes without asking, since its journal holds
    the fingerprint confirmed before; a newcomer is told the table is full."""
    udp = free_udp_port()
    beacon = f"127.0.0.1:{udp}"

    def env(name: str) -> dict[str, str]:
        return {**os.environ, "P2PCARDS_HOME": str(tmp_path / name)}

    join = [sys.executable, "-m", "p2pcards", "join", "--lan", "hosty", "--listen", beacon,
            "--bot", "heuristic", "--seed", "2", "--save", str(tmp_path / "j.json")]
    host = subprocess.Popen(
        [sys.executable, "-m", "p2pcards", "host", "nullern", "--players", "2", "--bind",
         "127.0.0.1", "--port", str(free_port()), "--lan", "--beacon", beacon, "--bot",
         "heuristic", "--name", "hosty", "--seed", "1", "--save", str(tmp_path / "h.json")],
        env=env("h"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    joined = subprocess.Popen([*join, "--yes"], env=env("j"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert joined.stdout is not None
        for line in joined.stdout:
            if line.startswith("deal 2,"):
                break
        joined.send_signal(signal.SIGINT)
        assert joined.wait(60) == 130
        listed = subprocess.run([sys.executable, "-m", "p2pcards", "lan", "--listen", beacon,
                                 "--seconds", "3"], env=env("l"), capture_output=True,
                                text=True, timeout=60, check=False)
        assert "hosty" in listed.stdout and " full " in listed.stdout, listed.stdout
        newcomer = subprocess.run([*join[:-4], "--yes"], env=env("n"), capture_output=True,
                                  text=True, timeout=60, check=False)
        assert newcomer.returncode == 3
        assert newcomer.stderr == "p2pcards: hosty's table is full: its game is under way" \
            " (only its players may come back)\n"
        again = subprocess.run(join, env=env("j"), stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=180, check=False)
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr
        assert "is the one this game was joined at; resuming" in again.stdout
        assert "type yes" not in again.stdout
        assert host.wait(60) == 0
    finally:
        for proc in (host, joined):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for pipe in (joined.stdout, joined.stderr):
            assert pipe is not None
            pipe.close()
    assert (tmp_path / "h.json").read_bytes() == (tmp_path / "j.json").read_bytes()


def test_a_beacon_naming_another_host_is_refused_to_a_seated_player(tmp_path: Path) -> None:
    from p2pcards.cli.netcmd import _trust_heard  # noqa: PLC0415

    pinned, other = device_id(b"h" * 32), device_id(b"x" * 32)
    first = Journal.open(tmp_path / "joe.journal")
    first.append("table", {"settings": {"host": pinned}})
    first.close()
    journal = Journal.open(tmp_path / "joe.journal")
    impostor = lan.Heard("pasur", "hosty", "127.0.0.1", 4000, other, b"t" * 16, 0)
    refused = _trust_heard(impostor, journal, yes=True)  # (--yes does not override it)
    assert refused is not None and "someone may be pretending" in refused
    assert _trust_heard(replace(impostor, fingerprint=pinned), journal, yes=False) is None
    journal.close()

