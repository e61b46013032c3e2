"""Watchers in real processes on loopback (``join --watch``): one comes before the
first deal and one in the middle of the game, and both save the players' hand history
byte for byte; everything a watcher received is recorded and shown to hold no hidden
card (the proved deck: no decryption share a seat's own card needs; the lock deck:
nothing opened before the audit); a seated identity and a watcher over the limit are
refused (exit status 3); ``join --lan NAME --watch``; and the read-only prompt in a
real pseudo-terminal."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from p2pcards.cli.watchcmd import RECORD_VARIABLE
from p2pcards.net.frames import Msg, kind_of, unpack
from p2pcards.table.codec import read_envelope
from p2pcards.table.session import WATCHER, Session
from p2pcards.table.verify import load
from tests.test_net_lan import free_udp_port
from tests.test_net_procs import free_port

pytestmark = pytest.mark.slow  # real processes

RUN = [sys.executable, "-m", "p2pcards"]
RELAYED = {"watching", "lobby", "start", "msg", "notice", "watchers", "chat", "wchat", "again",
           "end"}
"""The frames a host sends a watcher after the hellos: nothing addressed to one seat."""


class Procs:
    """Processes of one test, each with its home and its log; all stopped at the end."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def env(self, name: str, record: bool = False) -> dict[str, str]:
        env = dict(os.environ, P2PCARDS_HOME=str(self.tmp / name))
        env.pop(RECORD_VARIABLE, None)
        if record:
            env[RECORD_VARIABLE] = str(self.tmp / f"{name}.rec")
        return env

    def start(self, name: str, args: list[str], *, home: str | None = None,
              record: bool = False) -> subprocess.Popen[str]:
        with (self.tmp / f"{name}.log").open("a") as log:  # (the process has its own copy)
            proc = subprocess.Popen([*RUN, *args], env=self.env(home or name, record),
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, text=True)
        self.procs[name] = proc
        return proc

    def run(self, args: list[str], home: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*RUN, *args], env=self.env(home), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60, check=False)

    def log(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text() if path.exists() else ""

    def wait_for(self, name: str, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.log(name):
            assert self.procs[name].poll() is None, self.log(name)[-3000:]
            assert time.monotonic() < deadline, f"{name} never said {text!r}"
            time.sleep(0.05)

    def wait(self, name: str, timeout: float = 180) -> int:
        try:
            return self.procs[name].wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{name} did not finish:\n{self.log(name)[-3000:]}") from None

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.fixture
def procs(tmp_path: Path):  # type: ignore[no-untyped-def]
    made = Procs(tmp_path)
    yield made
    made.stop()


def host_args(tmp: Path, port: int, *extra: str) -> list[str]:
    return ["host", "pasur", "--bind", "127.0.0.1", "--port", str(port), "--players", "2",
            "--bot", "heuristic", "--name", "host", "--seed", "5", "--save",
            str(tmp / "host.json"), "--transcript", str(tmp / "host.bin"),
            "--invite-file", str(tmp / "invite"), *extra]


def invite(tmp: Path, procs: Procs) -> str:
    deadline = time.monotonic() + 30
    while not (tmp / "invite").exists():
        assert procs.procs["host"].poll() is None, procs.log("host")
        assert time.monotonic() < deadline, "no invite"
        time.sleep(0.05)
    return (tmp / "invite").read_text().strip()


def received(path: Path) -> list[bytes]:
    """The table messages a watcher recorded, after checking that every frame it received
    is one the host relays to every seat."""
    data = path.read_bytes()
    frames, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at:at + 4], "big")
        frames.append(unpack(data[at + 4:at + 4 + size]))
        at += 4 + size
    assert kind_of(frames[0]) == "hello"
    assert {kind_of(frame) for frame in frames[1:]} <= RELAYED
    return [frame.wire for frame in frames if isinstance(frame, Msg)]


def nothing_hidden(wires: list[bytes], transcript: Path, *, audit: bool) -> int:
    """Check that the messages a watcher received are the table's transcript and name no
    card before everyone is shown it: a watching session fed them one by one never
    opens a slot not shown to everyone (with the lock deck, until the deal's audit);
    with the proved deck, no seat's decryption share of a slot dealt to it is ever sent.
    The number of cards opened to everyone."""
    roster, messages = load(transcript.read_bytes())
    assert set(wires) == set(messages)  # the public transcript, all of it, and only it
    session = Session(roster, WATCHER, None)
    opened, audited = 0, -1
    for wire in wires:
        env = read_envelope(wire, roster.players)
        if env.kind == "pshares":
            for share in env.body["shares"]:  # 04 | party | to | ...: FF is everyone
                assert share[2] == 0xFF or share[2] != share[1], "a seat's own share sent"
        assert session.receive(wire) is None
        run = session.run
        if env.kind == "audit":
            audited = env.deal
        if run is not None and run.index != audited:
            assert all(run.ledger.shown_to_all(slot) for slot in run.deck.opened)
            opened = max(opened, len(run.deck.opened))
    assert session.over and (audited >= 0) == audit
    return opened


def test_watchers_before_and_during_the_game(procs: Procs, tmp_path: Path) -> None:
    """The proved deck (the default): a watcher before the first deal, one mid-game;
    a seat refused, the limit kept; both watchers save the players' history."""
    procs.start("host", host_args(tmp_path, free_port(), "--watchers", "2", "-o",
                                  "target=30"))
    code = invite(tmp_path, procs)
    watch = ["join", code, "--watch"]
    procs.start("w1", [*watch, "--name", "w1", "--save", str(tmp_path / "w1.json")],
                record=True)
    procs.wait_for("host", "watches the table")
    seated = procs.run(watch, home="host")  # the host's own identity, seated at seat 0
    assert seated.returncode == 3, seated.stdout + seated.stderr
    assert "has a seat at this table: it plays, it does not watch" in seated.stderr
    assert "Traceback" not in seated.stderr
    procs.start("w9", [*watch, "--name", "w9"])
    procs.wait_for("host", "w9 (")
    over = procs.run([*watch, "--name", "w10"], home="w10")
    assert over.returncode == 3, over.stdout + over.stderr
    assert "the table has 2 watchers already" in over.stderr
    procs.procs["w9"].send_signal(signal.SIGTERM)
    assert procs.wait("w9") == 128 + signal.SIGTERM
    procs.wait_for("host", "w9 no longer watches")
    procs.start("p1", ["join", code, "--bot", "ismcts", "--think", "0.02", "--name", "p1",
                       "--seed", "5", "--save", str(tmp_path / "p1.json")])
    procs.wait_for("host", "deal 1, dealer")
    procs.wait_for("host", ": play ")
    procs.procs["p1"].send_signal(signal.SIGSTOP)  # the game waits for p1 (a long think):
    procs.start("w2", [*watch, "--name", "w2", "--save", str(tmp_path / "w2.json")],
                record=True)  # w2 comes mid-game however slow this machine is
    procs.wait_for("host", "w2 (")
    procs.procs["p1"].send_signal(signal.SIGCONT)
    for name in ("host", "p1", "w1", "w2"):
        assert procs.wait(name) == 0, procs.log(name)[-3000:]
    log = procs.log("host")
    came = log.index("w2 (")
    assert log.index(": play ") < came < log.index("the game is over")  # in the game,
    last = [line for line in log[:came].splitlines() if line.startswith("deal ")][-1]
    assert re.match(r"deal \d+, dealer", last), last  # in a deal
    saved = {(tmp_path / f"{name}.json").read_bytes() for name in ("host", "p1", "w1", "w2")}
    assert len(saved) == 1
    for name in ("w1", "w2"):
        assert "verified" in procs.log(name) and "Traceback" not in procs.log(name)
        shown = nothing_hidden(received(tmp_path / f"{name}.rec"), tmp_path / "host.bin",
                               audit=False)
        assert shown > 0  # (the cards played were opened to it, as to everyone)


def test_a_lan_watcher_at_a_lock_table_sees_the_cards_at_the_audit(
        procs: Procs, tmp_path: Path) -> None:
    """``join --lan NAME --watch``; with ``--deck lock`` the audit reveals every hand,
    and nothing is opened to the watcher before it."""
    beacon = f"127.0.0.1:{free_udp_port()}"
    procs.start("host", host_args(tmp_path, free_port(), "--deck", "lock", "--lan",
                                  "--beacon", beacon, "-o", "target=10"))
    code = invite(tmp_path, procs)
    procs.start("w1", ["join", "--lan", "host", "--listen", beacon, "--yes", "--watch",
                       "--name", "w1", "--save", str(tmp_path / "w1.json")], record=True)
    procs.wait_for("host", "watches the table")
    procs.start("p1", ["join", code, "--bot", "heuristic", "--name", "p1", "--seed", "5",
                       "--save", str(tmp_path / "p1.json")])
    for name in ("host", "p1", "w1"):
        assert procs.wait(name) == 0, procs.log(name)[-3000:]
    assert "its fingerprint is" in procs.log("w1")
    saved = (tmp_path / "w1.json").read_bytes()
    assert saved == (tmp_path / "p1.json").read_bytes() == (tmp_path / "host.json").read_bytes()
    assert b'"?"' not in saved  # the audit revealed every card
    nothing_hidden(received(tmp_path / "w1.rec"), tmp_path / "host.bin", audit=True)


def test_the_watchers_prompt_in_a_terminal(procs: Procs, tmp_path: Path) -> None:
    """A move is refused with "you are watching"; score, table, who and say work; quit
    leaves at once, with no traceback."""
    procs.start("host", host_args(tmp_path, free_port(), "--watchers-chat", "-o",
                                  "target=30"))
    code = invite(tmp_path, procs)
    script = Path(sys.executable).with_name("p2pcards")
    env = {**procs.env("w1"), "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(str(script), ["join", code, "--watch", "--name", "wanda"], env=env,
                          dimensions=(50, 200), encoding="utf-8", timeout=60)
    try:
        child.expect("watching host's table")
        procs.start("p1", ["join", code, "--bot", "ismcts", "--think", "0.5", "--name", "p1",
                           "--seed", "5"])
        child.expect("deal 1, dealer")
        child.expect(r"(host|p1): play ")  # (the cards are dealt)
        child.sendline("play 7D")
        child.expect("you are watching: the moves are the players'")
        child.sendline("score")
        child.expect(r"no deal has been scored yet|\| total")
        child.sendline("table")
        child.expect("pool: ")  # (the table as everyone sees it)
        child.sendline("hand p1")
        child.expect(r"p1: \d+ cards?, none shown to everyone \(you are watching\)")
        child.sendline("who")
        child.expect(re.escape("watching (no seat): wanda"))
        child.sendline("say hello all")
        child.expect("you: hello all")
        procs.wait_for("host", "wanda (watching): hello all")
        child.sendintr()  # Ctrl-C asks, "n" stays, Ctrl-C then "y" leaves
        child.expect(re.escape("Leave the table? [y/N]"))
        child.sendline("n")
        child.expect("staying at the table")
        child.sendline("who")
        child.expect(re.escape("watching (no seat): wanda"))
        child.sendintr()
        child.expect(re.escape("Leave the table? [y/N]"))
        child.sendline("y")
        child.expect("stopped watching; the same command watches again")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in (child.before or "")
    procs.wait_for("host", "wanda no longer watches")
