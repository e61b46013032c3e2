"""Real processes on loopback: a host and three joiners play whole games with bots over
TLS, and peers killed at the protocol's awkward moments come back with the same command
and finish with the same results and byte-identical hand histories.  The tables deal
with the proved deck (the host's default); one whole game and the kill during the
audit are played with today's deck (``host --deck lock``)."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2pcards.net.driver import CRASH_VARIABLE
from p2pcards.table.roster import PROVED_DECK, describe_deck

pytestmark = pytest.mark.slow  # real processes

SHORT = {"bidwhist": ["-o", "target=3"], "controlnut": ["-o", "target=200"],
         "pasur": ["-o", "target=30"], "nullern": []}

LIMITED = ("import resource, runpy, sys;"
           " resource.setrlimit(resource.RLIMIT_NOFILE, ({files}, {files}));"
           " sys.argv[0] = 'p2pcards'; runpy.run_module('p2pcards', run_name='__main__')")
"""``python -c`` this, then the arguments: ``python -m p2pcards`` allowed ``files`` open
files at most."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Table:
    def __init__(self, tmp_path: Path, game: str, players: int = 4, grace: float = 60,
                 deck: str | None = None):
        """``deck``: the host's ``--deck`` (None: the host's default)."""
        self.tmp = tmp_path
        self.game = game
        self.players = players
        self.grace = grace
        self.deck = deck
        self.port = free_port()
        self.procs: dict[str, subprocess.Popen[str]] = {}
        self.invite_file = tmp_path / "invite"

    def command(self, name: str) -> list[str]:
        common = ["--bot", "heuristic", "--name", name, "--save", str(self.tmp / f"{name}.json"),
                  "--seed", "5"]
        if name == "host":
            return [sys.executable, "-m", "p2pcards", "host", self.game, "--bind", "127.0.0.1",
                    "--port", str(self.port), "--players", str(self.players),
                    "--grace", f"{self.grace:g}",
                    *(["--deck", self.deck] if self.deck else []),
                    "--invite-file", str(self.invite_file), *SHORT[self.game], *common]
        return [sys.executable, "-m", "p2pcards", "join", self.invite_file.read_text().strip(),
                *common]

    def start(self, name: str, crash: str | None = None, extra: tuple[str, ...] = (),
              files: int | None = None) -> None:
        """Start peer ``name`` (``files``: the most files it may hold open)."""
        env = dict(os.environ, P2PCARDS_HOME=str(self.tmp / name))
        env.pop(CRASH_VARIABLE, None)
        if crash:
            env[CRASH_VARIABLE] = crash
        command = self.command(name)
        if files is not None:  # python -m p2pcards, within the limit
            assert command[1:3] == ["-m", "p2pcards"]
            command[1:3] = ["-c", LIMITED.format(files=files)]
        with (self.tmp / f"{name}.log").open("a") as log:  # (the process has its own copy)
            self.procs[name] = subprocess.Popen([*command, *extra], env=env, stdout=log,
                                                stderr=subprocess.STDOUT, text=True)
        if name == "host" and not self.invite_file.exists():
            deadline = time.monotonic() + 30
            while not self.invite_file.exists():
                assert self.procs[name].poll() is None, self.log(name)
                assert time.monotonic() < deadline, "the host printed no invite"
                time.sleep(0.05)
            mode = stat.S_IMODE(self.invite_file.stat().st_mode)
            assert mode == 0o600, f"the invite file is mode {mode:o}: others can read its token"

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text()

    def names(self) -> list[str]:
        return ["host", *[f"p{i}" for i in range(1, self.players)]]

    def wait(self, name: str, timeout: float = 240) -> int:
        try:
            return self.procs[name].wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f"{name} did not finish:\n{self.log(name)[-3000:]}") from None

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def histories(self) -> set[bytes]:
        return {(self.tmp / f"{name}.json").read_bytes() for name in self.names()}


@pytest.fixture
def table_factory(tmp_path: Path):  # type: ignore[no-untyped-def]
    made: list[Table] = []

    def make(game: str, players: int = 4, deck: str | None = None) -> Table:
        made.append(Table(tmp_path, game, players, deck=deck))
        return made[-1]

    yield make
    for table in made:
        table.stop()


@pytest.mark.parametrize(("game", "deck"), [
    ("bidwhist", None), ("controlnut", None),
    # Nullern's twenty deals (36 s of the suite) in real processes: -m long; the same
    # processes and commands play the other games here, Nullern over memory channels
    # in tests/test_net_away.py and tests/test_table.py
    pytest.param("nullern", None, marks=pytest.mark.long), ("pasur", None),
    ("bidwhist", "lock")])
def test_four_processes_play_a_whole_game(table_factory, game: str, deck: str | None) -> None:  # type: ignore[no-untyped-def]
    """Every game with the default deck (the proved one), and a game with today's: each
    joiner learns the deck from the roster it signs, and says so."""
    table = table_factory(game, deck=deck)
    for name in table.names():
        table.start(name)
    for name in table.names():
        assert table.wait(name) == 0, table.log(name)[-3000:]
    assert len(table.histories()) == 1
    line = describe_deck(deck or PROVED_DECK)
    for name in table.names():
        log = table.log(name)
        assert "verified" in log and "safety number" in log and line in log, log[-3000:]


KILLS = [
    ("p2", "pshuffle:1", None),  # after its shuffle broadcast
    ("p1", "pshares:1", None),  # during the deal's decryption shares
    ("p3", "pmove:3", None),  # mid-trick (a move that carries a step of the next deck)
    ("p2", "audit:1", "lock"),  # during today's deck's audit
    ("host", "pagree:1", None),  # the host, between deals
]


@pytest.mark.parametrize(("victim", "crash", "deck"), KILLS)
def test_a_killed_peer_comes_back_with_the_same_command(table_factory, victim: str,  # type: ignore[no-untyped-def]
                                                         crash: str, deck: str | None) -> None:
    table = table_factory("bidwhist", deck=deck)
    for name in table.names():
        table.start(name, crash if name == victim else None)
    assert table.wait(victim, 120) == 70, table.log(victim)[-3000:]  # the crash point
    table.start(victim)  # the same command again
    for name in table.names():
        assert table.wait(name) == 0, f"{name}:\n{table.log(name)[-3000:]}"
    assert len(table.histories()) == 1
    log = table.log(victim)
    assert "crash test: stopping abruptly" in log and "resuming" in log
    for name in table.names():
        assert "equivocation" not in table.log(name)
    if victim == "host":  # every joiner lost it and came back
        assert all("lost the host" in table.log(n) for n in table.names()[1:])


def test_a_joiner_that_brings_a_bot_and_dies_does_not_freeze_the_table(tmp_path: Path) -> None:
    """``join --bots 1``, then the process dies (as kill -9 would: no clean-up). Its two
    seats fall silent together; the two live peers' claims suffice, so the deal is
    forfeited at both alike instead of the table waiting for ever for the dead bot's
    claim."""
    table = Table(tmp_path, "bidwhist", grace=2)  # (the host's settings go to every peer)
    try:
        table.start("host")
        table.start("p1", "pshuffle:1", extra=("--bots", "1"))  # seats 1 and 2
        time.sleep(0.5)
        table.start("p2")  # seat 3
        assert table.wait("p1", 60) == 70, table.log("p1")[-3000:]  # died mid-deal
        deadline = time.monotonic() + 60
        while not all("forfeits the deal: silent" in table.log(n) for n in ("host", "p2")):
            assert time.monotonic() < deadline, table.log("host")[-3000:]
            assert table.procs["host"].poll() is None and table.procs["p2"].poll() is None
            time.sleep(0.2)
        for name in ("host", "p2"):
            log = table.log(name)
            assert "claimed by seat(s)" in log and "Traceback" not in log
    finally:
        table.stop()


def _wait_for(table: Table, names: tuple[str, ...], text: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not all(text in table.log(n) for n in names):
        assert time.monotonic() < deadline, table.log(names[0])[-3000:]
        assert all(table.procs[n].poll() is None for n in names), table.log(names[0])[-3000:]
        time.sleep(0.2)


def test_a_bot_takes_the_seat_of_a_joiner_gone_and_gives_it_back(tmp_path: Path) -> None:
    """kill -9 of a joiner: its seat forfeits one deal, then a stand-in bot run by the
    host plays it under a roster every live peer signs; started again with the same
    command, the joiner takes its seat back at the next deal, and all four finish with
    one hand history that records the deals the bot played."""
    # a grace of 4 s: at 2 s a loaded CI machine once made honest peers late enough
    # to be claimed silent after the forfeit (the subject here is the stand-in)
    table = Table(tmp_path, "pasur", grace=4)
    try:
        table.start("host", extra=("--replace", "heuristic"))
        table.start("p1")
        table.start("p2", "pmove:2")
        table.start("p3")
        assert table.wait("p2", 60) == 70, table.log("p2")[-3000:]
        _wait_for(table, ("host", "p1", "p3"), "a heuristic bot run by host stands in")
        assert "new safety number" in table.log("p1")
        table.start("p2")  # back
        _wait_for(table, ("host", "p1", "p3"), "is back")
        for name in table.names():
            assert table.wait(name) == 0, f"{name}:\n{table.log(name)[-3000:]}"
        (history,) = table.histories()
        assert b"(bot)" in history and b'"reason": "silent"' in history
        for name in table.names():
            assert "Traceback" not in table.log(name)
    finally:
        table.stop()
