"""The host's invite as a person meets it, in a real pseudo-terminal: printed with the
line that says how the table can be reached, shown again by ``invite`` in the lobby and
during the game; and a joiner in a real process that reaches the host through an invite
of two addresses, the first of which accepts connections and never answers (its
attempt is overtaken 250 ms later)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.test_net_procs import free_port
from tests.test_prompt_pty import ANSI, MOVE, spawn, terminal_env

pytestmark = pytest.mark.slow  # real processes in a real pseudo-terminal

INVITE = re.compile(r"invite: (p2pcards://\S+)")


def test_the_host_shows_its_invite_again_and_a_joiner_races_its_addresses(
        tmp_path: Path) -> None:
    port = free_port()
    env = terminal_env(tmp_path / "ann")
    child, seen = spawn(["host", "pasur", "--players", "2", "--bind", "127.0.0.1", "--port",
                         str(port), "--name", "ann", "--seed", "3", "--no-bell"], env, tmp_path)
    mute = socket.socket()  # a listener that takes connections and never speaks TLS
    joiner: subprocess.Popen[str] | None = None
    try:
        mute.bind(("127.0.0.1", 0))
        mute.listen(8)
        child.expect(INVITE)
        invite = ANSI.sub("", child.match.group(1))
        assert invite.startswith(f"p2pcards://127.0.0.1:{port}/")
        child.expect(re.escape(f"reachable this machine only (listening on 127.0.0.1:{port})"))
        child.sendline("invite")  # in the lobby
        child.expect(re.escape(f"invite: {invite}"))
        child.expect("reachable this machine only")
        mute_port = mute.getsockname()[1]
        two = invite.replace(f"127.0.0.1:{port}/", f"127.0.0.1:{mute_port},127.0.0.1:{port}/")
        with (tmp_path / "bob.log").open("w") as log:
            joiner = subprocess.Popen(
                [sys.executable, "-m", "p2pcards", "join", two, "--name", "bob", "--bot",
                 "heuristic", "--yes"], env=terminal_env(tmp_path / "bob"),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, text=True)
        child.expect(MOVE, timeout=60)  # bob sat: the game is under way
        child.sendline("invite")  # during the game
        child.expect(re.escape(f"invite: {invite}"))
        child.sendcontrol("c")
        child.expect("Leave the table")
        child.sendline("yes")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        mute.close()
        child.close(force=True)
        if joiner is not None:
            joiner.kill()
            joiner.wait()
    output = seen.getvalue()
    assert "Traceback" not in output, output[-3000:]
    bob = (tmp_path / "bob.log").read_text()
    assert "Traceback" not in bob and "cannot reach" not in bob, bob[-2000:]


def test_a_port_out_of_range_is_refused_with_its_reason(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "p2pcards", "host", "pasur", "--port", "99999"],
                          capture_output=True, text=True, env=terminal_env(tmp_path),
                          timeout=60, check=False)
    assert done.returncode == 2
    assert "argument --port: '99999' is not a port: 1 to 65535" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_closed_terminal_leaves_the_table_as_sigterm_does(tmp_path: Path) -> None:
    """SIGHUP at the host's prompt (its terminal window closed): the host leaves the table
    in one line, with 128 + SIGHUP, and no traceback."""
    child, seen = spawn(["host", "pasur", "--players", "2", "--bind", "127.0.0.1", "--port",
                         str(free_port()), "--name", "ann", "--no-bell"],
                        terminal_env(tmp_path / "ann"), tmp_path)
    try:
        child.expect(INVITE)
        child.expect("reachable this machine only")
        child.kill(signal.SIGHUP)
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
    assert child.exitstatus == 128 + signal.SIGHUP, seen.getvalue()[-2000:]
    output = ANSI.sub("", seen.getvalue())
    assert "stopped by SIGHUP" in output and "Traceback" not in output
