"""The networked table as a person meets it, in real processes on loopback (127.0.0.1)
and a real pseudo-terminal: the prompt says whose turn it is, the hand shows when
cards come, a bot's moves are paced, the screen pauses on a deal's score until a key
is pressed, bots have names, the report names the seats; errors are one line each;
and the lobby's and the watchers' words.  Every process started is stopped."""

from __future__ import annotations

import argparse
import errno
import getpass
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
import trio
from prompt_toolkit.output import DummyOutput

from p2pcards.cli.netcmd import _cannot_listen, default_name
from p2pcards.cli.netrepl import NetPrompt
from p2pcards.cli.netrun import ask_yes
from p2pcards.cli.watchrepl import WatchPrompt
from p2pcards.net.frames import FrameError
from p2pcards.net.links import why_lost
from p2pcards.net.lobby import arrived
from p2pcards.net.settings import Settings
from p2pcards.net.wire import broken
from p2pcards.table.roster import make_roster
from p2pcards.table.session import WATCHER
from p2pcards.table.verify import DealReport, Report, format_report
from tests.people import ANSI, terminal_env
from tests.test_net_lobby import lobby, public, seated
from tests.test_net_procs import free_port

RUN = [sys.executable, "-m", "p2pcards"]
LEGAL = r"legal[a-z ]*: ([^\r\n]+)\r"


def _env(tmp: Path, name: str) -> dict[str, str]:
    env = terminal_env(dict(os.environ))
    env["P2PCARDS_HOME"] = str(tmp / name)
    return env


def _spawn(tmp: Path, name: str, args: list[str]) -> pexpect.spawn:
    child = pexpect.spawn(RUN[0], [*RUN[1:], *args], env=_env(tmp, name), encoding="utf-8",
                          codec_errors="replace", timeout=60, dimensions=(50, 200))
    child.logfile_read = (tmp / f"{name}.log").open("w")
    return child


def _stop(child: pexpect.spawn) -> None:
    if child.isalive():
        child.kill(signal.SIGKILL)
    child.close(force=True)
    if child.logfile_read is not None:
        child.logfile_read.close()


def _plain(child: pexpect.spawn) -> str:
    return ANSI.sub("", child.before or "")


@pytest.mark.slow  # real processes
def test_a_person_at_a_networked_table_sees_whose_turn_their_hand_and_the_pause(
        tmp_path: Path) -> None:
    """Ana hosts Pasur against joe's bot: the prompt reads ``lobby>`` before joe sits,
    ``waiting for joe>`` while his bot plays and ``your move>`` at her turn; her hand
    shows as a deal begins and when cards come to it; after a deal's score the screen
    pauses (``next deal>``, the next deal held back from her screen) until she presses
    a key; then she leaves with Ctrl-C."""
    port = free_port()
    invite = tmp_path / "invite"
    ana = _spawn(tmp_path, "ana", [
        "host", "pasur", "--players", "2", "--bind", "127.0.0.1", "--port", str(port),
        "--name", "ana", "--invite-file", str(invite), "--once", "-o", "target=40",
        "--pause", "60", "--grace", "600", "--no-bell"])
    joe: subprocess.Popen[str] | None = None
    try:
        ana.expect("invite: ")
        ana.expect("lobby>")
        with (tmp_path / "joe.log").open("w") as log:
            joe = subprocess.Popen(
                [*RUN, "join", invite.read_text().strip(), "--name", "joe", "--bot",
                 "heuristic", "--yes", "--seed", "3"], env=_env(tmp_path, "joe"),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, text=True)
        ana.expect(r"ana \(you\), joe \(heuristic bot\)")
        ana.expect(r"deal 1, dealer")
        seen_wait = False
        moves = 0
        while True:
            which = ana.expect([r"waiting for joe>", r"your move>", r"next deal \(any key\)>"],
                               timeout=120)
            if which == 0:
                seen_wait = True
            elif which == 1:
                if ana.expect([r"next deal \(any key\)>", pexpect.TIMEOUT], timeout=1) == 0:
                    break  # (a stale redraw of the prompt, then the pause: no key pressed)
                ana.sendline("what now?")
                if ana.expect([LEGAL, "it is not your move"]) == 0:  # (a stale redraw)
                    ana.sendline(ana.match.group(1).split(", ")[0])
                    ana.expect("  you: ")
                    moves += 1
            else:
                break
        assert seen_wait and moves
        # the pause: the next deal is not shown until a key is pressed (the next is the
        # third when the rules voided the first, for the jacks in its pool: no pause)
        assert ana.expect([r"deal \d+, dealer", pexpect.TIMEOUT], timeout=3) == 1
        ana.send("s")  # any key goes on (and is typed: "score")
        ana.expect(r"deal \d+, dealer")
        ana.expect("your hand: ")
        ana.sendline("core")
        ana.expect(r"deal +you +joe")
        ana.sendcontrol("c")
        ana.expect("Leave the table")
        ana.sendline("y")
        ana.expect("left the table; the same command resumes it")
        ana.expect(pexpect.EOF)
    finally:
        _stop(ana)
        if joe is not None and joe.poll() is None:
            joe.kill()
            joe.wait()
    log = ANSI.sub("", (tmp_path / "ana.log").read_text())
    assert not re.search(r"refused a message|bad signature|fork|Traceback", log)
    # the hand shows as the stock deals four more cards, not only at ana's turn
    log = log.replace("\r", "")
    dealt = log.split("four more cards each")[1:]
    assert dealt and all("your hand: " in re.split(r"  (you|joe): ", after)[0]
                         for after in dealt)  # (before the next move is told)
    hands = re.findall(r"your hand: ([^\n]*)", log)
    assert hands and all(len(hand.split()) <= 8 for hand in hands)  # (its own, exactly)


# ------------------------------------------------------------------ names


def test_a_person_without_name_is_called_by_their_user_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(getpass, "getuser", lambda: "  ana\x1b[31m\n smith" + "x" * 40)
    name = default_name()
    assert name.startswith("ana[31m smith") and len(name) == 32 and name.isprintable()
    monkeypatch.setattr(getpass, "getuser", lambda: "\x07")
    assert default_name() == "player"

    def nobody() -> str:
        raise KeyError("no such user")
    monkeypatch.setattr(getpass, "getuser", nobody)
    assert default_name() == "player"


def test_bots_get_names_and_give_way_to_a_person() -> None:
    """The host's bots are called ben and cy (their kind beside the name); a joiner
    called ben takes his name, and the bot is called anew; a joiner's own bots too."""
    room = lobby(players=5, host_bots=2)
    assert [e.name for e in room.entries] == ["hosty", "ben", "cy"]
    assert seated(room, "Ben") == {3}
    assert [e.name for e in room.entries] == ["hosty", "dee", "cy", "Ben"]
    assert seated(room, "joe", bots=0) == {4}
    line = arrived(room.frame())
    assert line == ("the table is not seated yet: 5 of 5 seats taken (hosty, dee (heuristic"
                    " bot), cy (heuristic bot), Ben, joe); waiting for 0 more")
    with pytest.raises(FrameError, match="the name 'JOE' is taken"):
        lobby_room = lobby(players=4)
        seated(lobby_room, "joe")
        seated(lobby_room, "JOE")


def test_the_report_names_the_dealer_and_the_signers() -> None:
    roster = make_roster(bytes(16), "pasur", [public("a"), public("b"), public("c")],
                         names=["ana", "ben", "cy"])
    report = Report(roster=roster, messages=1)
    report.deals.append(DealReport(0, 2, "seat 1 forfeits the deal: silent", [0, 0, 0],
                                   [0, 2], [], [0, 2]))
    named = format_report(report, named=True)
    assert "deal 1 (dealer cy): ben forfeits the deal: silent;" in named
    assert "signed by ana, cy (all that were to)" in named
    assert "dealer seat 2" in format_report(report)  # (named=False: as numbered)


def test_a_name_that_reads_like_a_seat_never_stands_for_another_seat() -> None:
    """A player named "seat 0" at seat 1 deals and signs as itself: the rules' prose is
    named before the names go in, so no name is read again as a seat number."""
    roster = make_roster(bytes(16), "pasur", [public("a"), public("b"), public("c")],
                         names=["ana", "seat 0", "cy"])
    report = Report(roster=roster, messages=1)
    report.deals.append(DealReport(0, 1, "seat 2 forfeits the deal: silent", [0, 0, 0],
                                   [1], ["seat 0 says seat 2 went silent"], [0, 1]))
    named = format_report(report, named=True)
    assert "deal 1 (dealer seat 0): cy forfeits the deal: silent;" in named
    assert "; signed by seat 0\n" in named
    assert "  dissent: ana says cy went silent" in named
    assert "ana (seat 0), seat 0 (seat 1), cy (seat 2)" in named  # (who is who)


# ------------------------------------------------------------------ errors


def test_errors_are_said_in_words() -> None:
    assert why_lost(socket.gaierror(-2, "Name or service not known")).startswith(
        "no such host name")
    assert why_lost(ConnectionRefusedError(111, "Connection refused")).startswith(
        "nothing listens there")
    assert broken(trio.BrokenResourceError()) == "the connection was cut"
    reset = trio.BrokenResourceError("socket connection broken")
    reset.__cause__ = ConnectionResetError(104, "Connection reset by peer")
    assert broken(reset) == "connection reset by peer"
    args = argparse.Namespace(port=7000, bind=None)
    assert _cannot_listen(OSError(errno.EADDRINUSE, "Address already in use"), args) == (
        "cannot host: port 7000 on every address is in use (another table, or another"
        " program?): pick another with --port N")
    args.bind = "10.9.9.9"
    assert "is not an address of this machine" in _cannot_listen(
        OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address"), args)


def test_a_seat_needs_a_terminal_and_says_so(tmp_path: Path) -> None:
    """A join (or host) with a person's seat and no terminal stops at once, with why."""
    invite = ("p2pcards://127.0.0.1:1/QAMTHZRNS64SRSVVHFDYELIRAGNSI5R4ETS6JUAFOYOMYP3NE7PA/"
              "3K5EOGNNX3CD6IVHGJ27AWW2VI")
    done = subprocess.run([*RUN, "join", invite], env=_env(tmp_path, "j"),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("p2pcards: a seat played by a person needs a terminal")
    assert done.stderr.count("\n") == 1 and "left the table" not in done.stdout


def test_ctrl_c_at_a_question_ends_its_line(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(question: str) -> str:
        print(question, end="")
        raise KeyboardInterrupt
    monkeypatch.setattr("builtins.input", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ask_yes("type yes to join: ")
    assert capsys.readouterr().out == "type yes to join: \n"


# ------------------------------------------------------------------ the prompt's words


def test_the_prompt_says_whose_turn_it_is_and_a_watcher_says_only_the_refusal() -> None:
    prompt = NetPrompt("pasur", output=DummyOutput())
    assert prompt._message() == "lobby> "
    roster = make_roster(bytes(16), "pasur", [public("a"), public("b")], names=["ana", "ben"])

    async def chat(text: str) -> bool:
        return True

    prompt.seated(roster, 0, Settings(), chat)
    assert prompt._message() == "table> "
    prompt.lobby_line = lambda: "the table is not seated yet: 1 of 2 seats taken (ana)"
    watcher = WatchPrompt("", output=DummyOutput())

    async def refused(text: str) -> bool:
        watcher.echo("this table's watchers do not chat (its host did not allow it):"
                     " nothing was said")
        return False

    watcher.seated(roster, WATCHER, Settings(), refused)
    assert "Tab completes moves" not in "\n".join(watcher.transcript)
    assert watcher.transcript[-1].startswith("you are watching")

    async def typing() -> None:
        await watcher.take("say hello")
        await watcher.take("help")
    trio.run(typing)
    assert not any(line.startswith("you: ") for line in watcher.transcript)
    assert "Type a move" not in "\n".join(watcher.transcript)
