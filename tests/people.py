"""People for the chaos run (docs/testing.md, "People"): a scripted person at a real
prompt in a pseudo-terminal, and a loopback TCP proxy whose link can go silent
without closing.

:class:`Person` reads its terminal and answers as a person would: at ``your move>``
it types ``what now?``, reads the legal moves the refusal lists and types the first
(a move of several cards, too many to list, is typed the verb first and each card
with Tab, as the refusal says).  Told to step away (:meth:`Person.leave`), it stops
answering; once its prompt says it was away it comes back when its script says (the
stand-in's deal under way, between two deals, or two deals later), by typing
``back`` or by pressing any key (the first key of a command), and then types
commands while the stand-in finishes the deal.  It never types ``back`` unless it
was stepped away: a person whose process was stopped or whose link went silent is
expected back on their own.

:class:`Proxy` forwards the bytes of a joiner's links to the host (127.0.0.1
only); :meth:`Proxy.blackhole` stops forwarding both ways (nothing read, nothing
closed, new links left waiting) until it is lifted.
"""

from __future__ import annotations

import errno
import fcntl
import os
import random
import re
import select
import socket
import struct
import termios
import threading
import time
from dataclasses import dataclass, field
from typing import IO

import pexpect
from pexpect import fdpexpect

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
MOVE = "your move>"
# The prompt's last space is drawn as a cursor move: patterns stop at ">".
AWAY = "you were away: a stand-in plays your seat"
WELCOME = "welcome back: your seat is yours again"
DEAL = r"deal \d+, dealer"
TOTALS = "totals: "
LEGAL = r"legal[a-z ]*: ([^\r\n]+)\r"
"""(To the line's end: a match on a partial read would cut the list short.)"""
NOT_YOURS = "it is not your move"
NOT_ACCEPTED = "not accepted"
MOVED = "  you: "
"""This seat's move told (indented; the prompt may be drawn just before it)."""
WHEN = ("mid-deal", "between-deals", "two-deals")
"""When a person who stepped away comes back, once their prompt says they were away:
while the stand-in's first deal is under way, as it ends, or two deals later."""
CHATTER = ("score", "who", "table", "history", "hand", "say sorry, back now", "play")
"""What a person who came back types while the stand-in finishes the deal."""
TERMINAL = (50, 200)


def terminal_env(env: dict[str, str]) -> dict[str, str]:
    return {**env, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"}


def open_terminal() -> tuple[int, int]:
    """A pseudo-terminal of :data:`TERMINAL` rows and columns: (master, slave)."""
    master, slave = os.openpty()
    rows, cols = TERMINAL
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    return master, slave


@dataclass
class Script:
    """What one person does beyond playing their moves."""

    when: str = ""
    """Stepped away: when they come back (one of :data:`WHEN`); empty: never steps away."""
    key: bool = False
    """Come back by pressing a key (typing a command) rather than typing ``back``."""
    chatter: tuple[str, ...] = CHATTER
    relapse: bool = False
    """Back, the person steps away again at the first move asked of them (and comes back
    the same way once told they were away again)."""


@dataclass
class Person:
    """A scripted person reading and typing at the terminal ``master`` (a thread)."""

    name: str
    master: int
    log: IO[str]
    rng: random.Random
    script: Script = field(default_factory=Script)
    moves: int = 0
    stepped_away: float | None = None
    """When :meth:`leave` was called."""
    saw_away: bool = False
    acted: float | None = None
    """When the person came back (a key, or ``back``)."""
    welcomed: bool = False
    relapsed: bool = False
    problems: list[str] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    """What the script saw and did, with the time (kept beside the game's logs)."""
    _leave: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"person-{self.name}",
                                        daemon=True)
        self._thread.start()

    def leave(self) -> None:
        """Step away from the prompt: no more answers until the script says back."""
        self.stepped_away = time.monotonic()
        self._note("steps away")
        self._leave.set()

    def _note(self, what: str) -> None:
        self.trace.append(f"{time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d}"
                          f" {what}")

    def stop(self) -> None:
        """End the thread (its process is gone or going)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        os.close(self.master)

    # ------------------------------------------------------------ the terminal

    def _run(self) -> None:
        child = fdpexpect.fdspawn(self.master, encoding="utf-8", codec_errors="replace",
                                  timeout=1, maxread=4096)
        child.logfile_read = self.log
        self.child = child
        try:
            self._loop(child)
        except (pexpect.EOF, OSError):
            self._note("end of the terminal")
        except Exception as exc:  # a mistake of the script's, reported
            self._note(f"failed: {exc!r}")
            self.problems.append(f"{self.name}'s script failed: {exc!r}")
        finally:
            self.log.flush()

    def _send(self, text: str) -> None:
        try:
            os.write(self.master, text.encode())
        except OSError as exc:
            if exc.errno not in (errno.EIO, errno.EBADF):
                raise

    def _loop(self, child: fdpexpect.fdspawn) -> None:
        deals_since_away = 0
        totals_since = 0
        back_at: float | None = None
        while not self._stop.is_set():
            which = child.expect([MOVE, AWAY, DEAL, TOTALS, WELCOME, pexpect.EOF,
                                  pexpect.TIMEOUT], timeout=0.5)
            if which == 5:
                self._note("end of the terminal")
                return
            if which < 5:
                self._note(f"saw {child.match.group(0)!r}")
            away = self._leave.is_set() and self.acted is None
            if which == 1 and away and not self.saw_away:
                self.saw_away, deals_since_away, totals_since = True, 0, 0
                if self.script.when == "mid-deal":
                    back_at = None
            elif which == 2 and self.saw_away:
                deals_since_away += 1
                if self.script.when == "mid-deal" and deals_since_away == 1:
                    back_at = time.monotonic() + self.rng.uniform(0.5, 2.0)
                if self.script.when == "two-deals" and deals_since_away == 2:
                    back_at = time.monotonic() + self.rng.uniform(0.5, 2.0)
            elif which == 3 and self.saw_away and deals_since_away >= 1:
                totals_since += 1
                if self.script.when == "between-deals" and back_at is None:
                    back_at = time.monotonic()
            elif which == 4:
                self.welcomed = True
            if away and self.saw_away and back_at is not None and \
                    time.monotonic() >= back_at:
                self._come_back(child)
                continue
            if which == 0 and not away and self.script.relapse and not self.relapsed \
                    and self.acted is not None:
                self.relapsed, self.acted, self.saw_away, back_at = True, None, False, None
                self._note("steps away again")
                continue
            if which == 0 and not away:
                self._move(child)

    def _come_back(self, child: fdpexpect.fdspawn) -> None:
        """Type ``back`` or a command (its first key says back), then type while the
        stand-in plays on."""
        self.acted = time.monotonic()
        chatter = list(self.script.chatter)
        self.rng.shuffle(chatter)
        first = chatter.pop() if self.script.key else "back"
        self._note(f"comes back: types {first!r}")
        self._send(first + "\r")
        for line in chatter[:self.rng.randint(2, 4)]:
            time.sleep(self.rng.uniform(0.1, 0.6))
            self._note(f"types {line!r}")
            self._send(line + "\r")

    def _move(self, child: fdpexpect.fdspawn) -> None:
        """At ``your move>``: the first legal move the prompt lists."""
        time.sleep(self.rng.uniform(0.1, 0.8))  # (a person reads the table first)
        if self._leave.is_set() and self.acted is None:
            return
        self._note("types 'what now?'")
        self._send("what now?\r")
        which = child.expect([LEGAL, NOT_YOURS, pexpect.EOF, pexpect.TIMEOUT], timeout=10)
        if which != 0:
            self._note(f"no legal list ({which})")
            return
        legal = ANSI.sub("", child.match.group(1))
        for attempt in range(3):  # (a move picked by Tab may not be legal: another pick)
            if "Tab" in legal and "," not in legal:
                self._note(f"legal {legal!r}: by Tab")
                self._send_by_tab(legal.split()[0], attempt)
            else:
                move = legal.split(", ")[0].split(" ...")[0]
                self._note(f"types {move!r}")
                self._send(move + "\r")
            which = child.expect([MOVED, NOT_ACCEPTED, NOT_YOURS, pexpect.EOF,
                                  pexpect.TIMEOUT], timeout=10)
            self._note(["moved", "not accepted", "not its move", "end", "no answer"][which])
            if which == 0:
                self.moves += 1
            if which != 1 or "Tab" not in legal:
                return

    def _send_by_tab(self, verb: str, attempt: int = 0) -> None:
        """A move naming several cards: the verb, then each card by Tab (the first
        offered on a first attempt, then one of the first few), until Tab offers none."""
        self._send(verb + " ")
        for _ in range(6):
            for key in ["\t"] * (2 if attempt == 0 else self.rng.randint(1, 4)) + [" "]:
                time.sleep(0.06)
                self._send(key)
        time.sleep(0.06)
        self._send("\r")


def text_of(path: str | os.PathLike[str]) -> str:
    """A terminal's transcript as text (escapes removed)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return ANSI.sub("", f.read())


# ================================================================== the proxy


class Proxy:
    """A TCP proxy on 127.0.0.1 to ``127.0.0.1:upstream`` (a thread)."""

    def __init__(self, upstream: int):
        self.upstream = upstream
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = int(self.server.getsockname()[1])
        self.blocked = threading.Event()
        self._stop = threading.Event()
        self.pairs: dict[socket.socket, socket.socket] = {}
        self.links = 0
        self._thread = threading.Thread(target=self._run, name="proxy", daemon=True)
        self._thread.start()

    def blackhole(self, on: bool) -> None:
        """Stop forwarding both ways (nothing read, nothing closed), or go on."""
        if on:
            self.blocked.set()
        else:
            self.blocked.clear()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for sock in list(self.pairs):
            sock.close()
        self.pairs.clear()
        self.server.close()

    def _drop(self, sock: socket.socket) -> None:
        other = self.pairs.pop(sock, None)
        sock.close()
        if other is not None:
            self.pairs.pop(other, None)
            other.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.blocked.is_set():
                time.sleep(0.05)
                continue
            ready, _, _ = select.select([self.server, *self.pairs], [], [], 0.05)
            for sock in ready:
                if self.blocked.is_set():
                    break
                if sock is self.server:
                    inner, _ = self.server.accept()
                    outer = socket.socket()
                    try:
                        outer.connect(("127.0.0.1", self.upstream))
                    except OSError:
                        inner.close()
                        outer.close()
                        continue
                    self.pairs[inner], self.pairs[outer] = outer, inner
                    self.links += 1
                    continue
                if sock not in self.pairs:
                    continue
                try:
                    data = sock.recv(65536)
                    if data:
                        self.pairs[sock].sendall(data)
                except OSError:
                    data = b""
                if not data:
                    self._drop(sock)
