"""The chaos run: whole games among real processes on loopback under a seeded
schedule of faults (docs/testing.md).

``python -m tests.chaos --games N --seed S [--game G] [--jobs J] [--hostile ITEM ...]``

For each game a :class:`random.Random` of its own (seeded from the run's seed and
the game's number) draws the game, one or two faults and their timings; a host
and three joiners (``p2pcards host`` / ``join``, headless bots, a short
``--grace``) play a whole game while the faults are applied by signals; the
checks of :func:`check` then run on what the live peers left behind.  Every
process this module starts is killed when its game ends, whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import hostile, people

GAMES = ("bidwhist", "controlnut", "nullern", "pasur")
OPTIONS = {"bidwhist": ["-o", "target=12"], "controlnut": ["-o", "target=300"],
           "nullern": [], "pasur": ["-o", "target=40"]}
"""Table options that keep a game to a few deals (Nullern always plays its 20)."""
DEALS = {"bidwhist": 2, "controlnut": 3, "nullern": 12, "pasur": 4}
"""A fault is triggered during one of the first DEALS[game] deals."""

CRASHES = ("kill-restart", "kill-host-restart", "stop-past-grace", "stop-host-past-grace",
           "leave", "bots-and-die")
"""Faults applied by signals to honest peers."""
PERMANENT = frozenset({"leave", "bots-and-die"})
"""Faults after which a peer is gone for good (at most one a game, a hostile seat
counted: with two peers gone, the claims against either cannot be complete)."""
CRASHES_READY: tuple[str, ...] = CRASHES
"""Faults the default schedule draws (all of them)."""
PERMANENT_READY: tuple[str, ...] = GAMES
"""Games the default schedule lets a peer leave for good in (all: a stand-in bot takes
the seat from the next deal)."""
HOSTILE = hostile.SEATED + hostile.UNSEATED
PEOPLE = ("away-mid-deal", "away-between-deals", "away-two-deals", "away-again", "lid",
          "blackhole", "host-restart-standin")
"""Faults of people at real prompts (p1 and p2 are persons in a pseudo-terminal):
stepping away past the grace period and coming back (at the prompt's word, by
typing ``back`` or any key) while the stand-in's deal is under way, as it ends,
or two deals later; a person back who misses their first move again (away
once more); a laptop lid closed (the person's process stopped past the
grace period); a link gone silent (a proxy that forwards nothing for a while);
and a person away while the host is killed and restarted under the stand-in."""
RELAPSE = "away-again"
"""A person away who comes back mid-deal, then stays away from the first move asked
of them again."""
AWAY_KINDS = {"away-mid-deal": "mid-deal", "away-between-deals": "between-deals",
              "away-two-deals": "two-deals"}
HOSTILE_READY: tuple[str, ...] = HOSTILE
"""Hostile items the default schedule draws (all of them)."""

MEMORY_BOUND_MIB = 256
"""Most peak resident memory (VmHWM, from the kernel's rusage) any one peer process may
reach.  Measured: 55 to 130 MiB (Nullern's 20 deals the most); the bound is about twice the
highest (docs/testing.md)."""
LATE_GRACE = 60.0
"""Seconds a victim still catching up may take once the host has ended the game."""
TIMEOUT = 480.0
"""Seconds a game may take before it is called stuck."""


@dataclass
class Fault:
    kind: str
    victim: str
    deal: int
    """The fault strikes once the host has begun this deal (1-based)..."""
    delay: float
    """... and this many seconds more."""
    hold: float = 0.0
    """Seconds a stopped peer stays stopped, or a killed one stays dead before restart."""
    after: str = ""
    """The fault strikes this long after the host prints this text, not a deal's start
    (the host killed once a stand-in plays)."""
    when: str = ""
    """A person who stepped away: when they come back (:data:`people.WHEN`)."""
    key: bool = False
    """... by pressing a key (the first of a command), not by typing ``back``."""

    def describe(self) -> str:
        extra = f" hold {self.hold:.1f}s" if self.hold else ""
        at = f"after '{self.after}'" if self.after else f"@deal {self.deal}"
        back = f" back {self.when} by {'key' if self.key else 'back'}" if self.when else ""
        return f"{self.kind}({self.victim} {at}+{self.delay:.1f}s{extra}{back})"


@dataclass
class Plan:
    game: str
    seed: int
    grace: float
    faults: list[Fault]
    bots_joiner: bool = False
    """p1 brings a bot (``join --bots 1``): the table is then host, p1 (two seats), p2."""
    hostile_seat: str | None = None
    """A seated joiner (p3) is this hostile item's process."""
    hostile_extra: str | None = None
    """An unseated hostile process (pre-authentication junk, exhaustion) runs alongside."""
    options: tuple[str, ...] | None = None
    """The host's table options in place of :data:`OPTIONS` (the test suite's fixed games
    play shorter)."""
    persons: tuple[str, ...] = ()
    """Joiners that are people at a prompt in a pseudo-terminal (:mod:`tests.people`),
    not headless bots; the table then plays one game (``--once``)."""

    def joiners(self) -> list[str]:
        return ["p1", "p2"] if self.bots_joiner else ["p1", "p2", "p3"]

    def gone(self) -> set[str]:
        """Peers not expected to finish: gone for good, or hostile."""
        out = {f.victim for f in self.faults if f.kind in PERMANENT}
        return out | ({"p3"} if self.hostile_seat else set())


def make_plan(seed: int, index: int, games: Iterable[str] = GAMES,
              menu: Iterable[str] | None = None) -> Plan:
    """Game ``index`` of the run of ``seed``: a pure function of the arguments.  ``menu``:
    the faults and hostile items to draw from (default CRASHES_READY + HOSTILE_READY)."""
    rng = random.Random(f"p2pcards-chaos/{seed}/{index}")
    games = sorted(games)
    game = games[index % len(games)]
    grace = rng.choice([5.0, 6.0, 8.0])
    drawn = sorted(set(menu if menu is not None else CRASHES_READY + HOSTILE_READY))
    drawn = [k for k in drawn if game in PERMANENT_READY or k not in PERMANENT]
    kinds = rng.sample(drawn, min(len(drawn), rng.choice([1, 1, 2])))
    if sum(k in PERMANENT or k in hostile.SEATED for k in kinds) > 1:
        kinds = kinds[:1]  # (two peers gone at once: no claim can be complete)
    return _plan(rng, Plan(game, seed, grace, []), kinds)


def each_plan(seed: int, index: int, games: Iterable[str], menu: Iterable[str]) -> Plan:
    """A game with exactly one item of ``menu`` (each in turn, over each game in turn)."""
    rng = random.Random(f"p2pcards-chaos-each/{seed}/{index}")
    items, games = sorted(menu), sorted(games)
    game = games[(index // len(items)) % len(games)]
    return _plan(rng, Plan(game, seed, rng.choice([5.0, 6.0, 8.0]), []),
                 [items[index % len(items)]])


PERSONS = ("p1", "p2")
"""The joiners that are people in a game of :data:`PEOPLE`."""


def people_plan(seed: int, index: int, games: Iterable[str] = GAMES,
                menu: Iterable[str] = PEOPLE) -> Plan:
    """Game ``index`` of a run of people (``--people``): each item of ``menu`` in turn
    (over each game in turn), its victim, timing and way back drawn from a
    :class:`random.Random` of its own."""
    rng = random.Random(f"p2pcards-chaos-people/{seed}/{index}")
    items, games = sorted(menu), sorted(games)
    game = games[index % len(games)]
    kind = items[(index // len(games)) % len(items)] if len(games) > 1 else \
        items[index % len(items)]
    grace = rng.choice([5.0, 6.0, 8.0]) + (5.0 if game == "controlnut" else 0.0)
    plan = Plan(game, seed, grace, [], persons=PERSONS)  # (a Control Nut! bid is
    # composed by Tab, card by card, and the script's first pick may not be legal)
    victim = rng.choice(PERSONS)
    deal = rng.randint(1, 2 if game != "nullern" else 8)
    delay = round(rng.uniform(0.0, 2.0), 2)
    if kind == RELAPSE:
        plan.faults.append(Fault(kind, victim, deal, delay, when="mid-deal",
                                 key=rng.random() < 0.5))
    elif kind in AWAY_KINDS or kind == "host-restart-standin":
        when = AWAY_KINDS.get(kind) or rng.choice(["mid-deal", "two-deals"])
        plan.faults.append(Fault(kind if kind in AWAY_KINDS else "away-" + when, victim,
                                 deal, delay, when=when, key=rng.random() < 0.5))
        if kind == "host-restart-standin":
            plan.faults.append(Fault("kill-host-restart", "host", deal,
                                     round(rng.uniform(0.5, 3.0), 2),
                                     round(rng.uniform(0.0, 2.0), 2), after="stands in"))
    else:
        hold = plan.grace * rng.uniform(1.5, 2.5) if kind == "lid" else \
            plan.grace * rng.choice([rng.uniform(0.3, 0.8), rng.uniform(1.5, 2.5)])
        plan.faults.append(Fault(kind, victim, deal, delay, round(hold, 2)))
    return plan


def _plan(rng: random.Random, plan: Plan, kinds: list[str]) -> Plan:
    """``plan`` with the faults ``kinds``, their victims and timings drawn from ``rng``."""
    game, grace = plan.game, plan.grace
    kinds.sort(key=lambda k: k != "bots-and-die")  # its victim is fixed: p1
    if "bots-and-die" in kinds:
        plan.bots_joiner = True
    seated = [k for k in kinds if k in hostile.SEATED]
    if seated and not plan.bots_joiner:
        plan.hostile_seat = seated[0]
    plan.hostile_extra = next((k for k in kinds if k in hostile.UNSEATED), None)
    honest = [j for j in plan.joiners() if j != "p3" or plan.hostile_seat is None]
    used: set[str] = set()
    for kind in kinds:
        if kind in HOSTILE:
            continue
        if kind in ("kill-host-restart", "stop-host-past-grace"):
            victim = "host"
        elif kind == "bots-and-die":
            victim = "p1"
        else:
            victim = rng.choice([j for j in honest if j not in used] or honest)
        used.add(victim)
        hold = 0.0
        if kind.startswith("stop"):
            hold = grace * rng.uniform(1.5, 2.5)
        elif kind.startswith("kill"):
            hold = rng.uniform(0.0, 2.0)
        plan.faults.append(Fault(kind, victim, rng.randint(1, DEALS[game]),
                                 round(rng.uniform(0.0, 2.0), 2), round(hold, 2)))
    return plan


# ================================================================== processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Proc:
    """One peer: its command, and every process that ran it (one more per restart)."""

    name: str
    argv: list[str]
    home: Path
    log: Path
    popen: subprocess.Popen[bytes] | None = None
    status: int | None = None
    ended_at: float | None = None
    """When it was reaped (monotonic seconds)."""
    peak_kib: int = 0
    runs: int = 0

    def start(self) -> None:
        env = dict(os.environ, P2PCARDS_HOME=str(self.home), PYTHONUNBUFFERED="1")
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(self.argv, env=env, stdout=out,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.status = None
        self.runs += 1

    @property
    def running(self) -> bool:
        return self.popen is not None and self.status is None

    def reap(self, block: bool = False) -> bool:
        """Collect the process if it ended (its status and peak memory); True if it has."""
        if not self.running:
            return True
        assert self.popen is not None
        pid, status, usage = os.wait4(self.popen.pid, 0 if block else os.WNOHANG)
        if pid == 0:
            return False
        self.status = os.waitstatus_to_exitcode(status)
        self.ended_at = time.monotonic()
        self.popen.returncode = self.status  # (reaped here, not by Popen)
        self.peak_kib = max(self.peak_kib, usage.ru_maxrss)  # KiB on Linux
        return True

    def signal(self, number: int) -> None:
        if self.running:
            assert self.popen is not None
            os.kill(self.popen.pid, number)

    def kill(self) -> None:
        if self.running:
            self.signal(signal.SIGKILL)
            self.reap(block=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


class PersonProc(Proc):
    """A joiner that is a person: its process in a pseudo-terminal of its own (its own
    session and process group, which signals stop as a whole), and the scripted
    :class:`people.Person` at its prompt."""

    def __init__(self, *args: Any, rng: random.Random, script: people.Script):
        super().__init__(*args)
        self.rng, self.script = rng, script
        self.person: people.Person | None = None
        self.persons: list[people.Person] = []

    def start(self) -> None:
        env = people.terminal_env(dict(os.environ, P2PCARDS_HOME=str(self.home),
                                       PYTHONUNBUFFERED="1"))
        master, slave = people.open_terminal()
        try:
            self.popen = subprocess.Popen(self.argv, env=env, stdin=slave, stdout=slave,
                                          stderr=slave, start_new_session=True)
        finally:
            os.close(slave)
        self.status = None
        self.runs += 1
        self.person = people.Person(self.name, master, self.log.open("a", encoding="utf-8"),
                                    self.rng, self.script)
        self.persons.append(self.person)
        self.person.start()

    def signal(self, number: int) -> None:
        if self.running:
            assert self.popen is not None
            os.killpg(self.popen.pid, number)

    def kill(self) -> None:
        super().kill()
        if self.person is not None:
            self.person.stop()
            self.person.log.close()
            with (self.log.parent / f"{self.name}.script").open("a") as out:
                out.write("\n".join(self.person.trace) + "\n")
            self.person = None

    def text(self) -> str:
        return people.text_of(self.log) if self.log.exists() else ""


def run_p2pcards(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "p2pcards", *args], capture_output=True,
                          text=True, timeout=120, check=False)


# ================================================================== one game


@dataclass
class Report:
    index: int
    plan: Plan
    wall: float = 0.0
    deals: int = 0
    forfeits: list[tuple[int, str]] = field(default_factory=list)
    """(seat, reason) of each deal forfeited, from the hand history."""
    voids: int = 0
    winner: Any = None
    peaks_mib: dict[str, float] = field(default_factory=dict)
    applied: list[str] = field(default_factory=list)
    """Faults as applied (a fault whose victim had already finished is "missed")."""
    problems: list[str] = field(default_factory=list)
    directory: Path | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        faults = ", ".join(self.applied) or "none"
        peaks = " ".join(f"{n}={m:.0f}" for n, m in sorted(self.peaks_mib.items()))
        head = (f"#{self.index} {self.plan.game} seed {self.plan.seed} grace"
                f" {self.plan.grace:g}s: {faults}; {self.deals} deals, forfeits"
                f" {self.forfeits or 'none'}, voids {self.voids}; peak MiB {peaks};"
                f" {self.wall:.1f}s")
        return head + ("" if self.ok else " FAILED: " + "; ".join(self.problems))


class Game:
    """One table's processes, the faults applied to them, and their clean-up."""

    def __init__(self, plan: Plan, directory: Path, timeout: float = TIMEOUT):
        self.plan, self.dir, self.timeout = plan, directory, timeout
        self.port = free_port()
        self.invite = directory / "invite"
        self.procs: dict[str, Proc] = {}
        self.report: Report | None = None
        self.proxy: people.Proxy | None = None
        """Between the host and the victim of a ``blackhole``."""
        self.late: set[str] = set()
        """Victims back only after the host had ended the game: nobody is left to send
        them its end (they keep their journals), so they are not checked."""

    def command(self, name: str) -> list[str]:
        plan, d = self.plan, self.dir
        person = name in plan.persons
        common = ([] if person else ["--bot", "heuristic"]) + [
            "--bots-kind", "heuristic", "--name", name,
            "--save", str(d / f"{name}.json"), "--transcript", str(d / f"{name}.tx"),
            "--seed", str(plan.seed % 1000 + 1)]
        once = ["--once"] if plan.persons else []
        if person:  # (the first person hears the bell with the warnings)
            common += once + (["--no-bell"] if name != plan.persons[0] else [])
            common += ["--pace", "0", "--pause", "0"]  # (the screen's pacing is not this
            # run's subject: tests/test_net_polish.py)
        if name == "host":
            return [sys.executable, "-m", "p2pcards", "host", plan.game, "--bind", "127.0.0.1",
                    "--port", str(self.port), "--players", "4", "--grace", f"{plan.grace:g}",
                    "--invite-file", str(self.invite),
                    *(OPTIONS[plan.game] if plan.options is None else plan.options), *common,
                    *once]
        invite = self.invite.read_text().strip()
        if any(f.kind == "blackhole" and f.victim == name for f in plan.faults):
            if self.proxy is None:
                self.proxy = people.Proxy(self.port)
            invite = invite.replace(f":{self.port}/", f":{self.proxy.port}/", 1)
        if name == "p3" and plan.hostile_seat:
            return [sys.executable, "-m", "tests.hostile", plan.hostile_seat, invite, *common]
        if name == "x":
            assert plan.hostile_extra is not None
            return [sys.executable, "-m", "tests.hostile", plan.hostile_extra, invite]
        bots = ["--bots", "1"] if name == "p1" and plan.bots_joiner else []
        return [sys.executable, "-m", "p2pcards", "join", invite, *bots, *common]

    def add(self, name: str) -> Proc:
        where = (name, self.command(name), self.dir / name, self.dir / f"{name}.log")
        if name in self.plan.persons:
            fault = next((f for f in self.plan.faults if f.victim == name and f.when), None)
            script = people.Script(fault.when, fault.key, relapse=fault.kind == RELAPSE) \
                if fault else people.Script()
            rng = random.Random(f"p2pcards-chaos-person/{self.plan.seed}/{self.plan.game}/"
                                f"{self.dir.name}/{name}")
            proc: Proc = PersonProc(*where, rng=rng, script=script)
        else:
            proc = Proc(*where)
        self.procs[name] = proc
        proc.start()
        return proc

    def play(self) -> Report:
        report = self.report = Report(0, self.plan, directory=self.dir)
        started = time.monotonic()
        try:
            host = self.add("host")
            deadline = started + 60
            while not self.invite.exists():
                if host.reap() or time.monotonic() > deadline:
                    report.problems.append(f"the host did not start: {host.text()[-500:]}")
                    return report
                time.sleep(0.05)
            for name in self.plan.joiners():
                self.add(name)
            if self.plan.hostile_extra:
                self.add("x")
            report.applied += [f"{item}(hostile)" for item in
                               (self.plan.hostile_seat, self.plan.hostile_extra) if item]
            self._run(report, started)
        finally:
            for proc in self.procs.values():
                proc.kill()
            if self.proxy is not None:
                self.proxy.close()
            report.wall = time.monotonic() - started
            report.peaks_mib = {n: p.peak_kib / 1024 for n, p in self.procs.items()}
        check(self, report)
        return report

    def _run(self, report: Report, started: float) -> None:
        pending = list(self.plan.faults)
        timers: list[tuple[float, str, Fault]] = []  # (when, action, fault)
        seen: dict[str, float] = {}
        honest = [n for n in self.procs if n not in self.plan.gone() and n != "x"]
        failed_at: float | None = None
        while True:
            now = time.monotonic()
            for proc in self.procs.values():
                proc.reap()
            host_log = self.procs["host"].text()
            for fault in pending[:]:
                mark = fault.after or f"deal {fault.deal}, dealer"
                if mark not in seen and mark in host_log:
                    seen[mark] = now
                if mark in seen and now >= seen[mark] + fault.delay:
                    pending.remove(fault)
                    timers += self._strike(fault, now, report)
            for when, action, fault in timers[:]:
                if now >= when:
                    timers.remove((when, action, fault))
                    victim = self.procs[fault.victim]
                    if fault.victim != "host" and self.procs["host"].status is not None:
                        victim.kill()  # the game ended while it was away
                        self.late.add(fault.victim)
                        honest[:] = [n for n in honest if n != fault.victim]
                        report.applied[report.applied.index(fault.describe())] += " missed"
                    elif action == "restart" and (self.dir / f"{fault.victim}.json").exists():
                        # it had finished (its history saved, its journal settled): the
                        # same command would host or join a new table, so it stays down
                        report.applied[report.applied.index(fault.describe())] += " missed"
                    elif action == "restart":
                        victim.start()
                    elif action == "unblock":
                        assert self.proxy is not None
                        self.proxy.blackhole(False)
                    else:
                        victim.signal(signal.SIGCONT)
            self._excuse_late(honest, report, now)
            ended = [self.procs[n].status for n in honest]
            if not timers and all(s is not None for s in ended):
                if not pending:
                    return
                report.applied += [f"{f.describe()} missed" for f in pending]
                return
            if any(s not in (None, 0) for s in ended) and not timers and failed_at is None:
                failed_at = now  # a peer failed: the others get a little longer
            if (failed_at is not None and now > failed_at + 30) or now > started + self.timeout:
                stuck = [n for n in honest if self.procs[n].status is None]
                report.problems.append(f"not finished after {now - started:.0f}s: {stuck}")
                return
            time.sleep(0.1)

    def _excuse_late(self, honest: list[str], report: Report, now: float) -> None:
        """A victim still catching up (it reads its backlog as fast as the table plays)
        LATE_GRACE seconds after the host ended the game has nobody left to send it the
        end: it keeps its journal, and is not checked."""
        host = self.procs["host"]
        if host.status != 0 or host.ended_at is None or now < host.ended_at + LATE_GRACE:
            return
        struck = {f.victim for f in self.plan.faults} - {"host"}
        for name in [n for n in honest if n in struck and self.procs[n].status is None]:
            self.procs[name].kill()
            self.late.add(name)
            honest.remove(name)
            report.applied.append(f"{name} still catching up when the game ended")

    def _strike(self, fault: Fault, now: float, report: Report) -> list[tuple[float, str, Fault]]:
        victim = self.procs[fault.victim]
        if not victim.running:
            report.applied.append(f"{fault.describe()} missed")
            return []
        report.applied.append(fault.describe())
        if fault.when:  # a person steps away from the prompt
            assert isinstance(victim, PersonProc) and victim.person is not None
            victim.person.leave()
            return []
        if fault.kind == "blackhole":
            assert self.proxy is not None
            self.proxy.blackhole(True)
            return [(now + fault.hold, "unblock", fault)]
        if fault.kind.startswith("stop") or fault.kind == "lid":
            victim.signal(signal.SIGSTOP)
            return [(now + fault.hold, "cont", fault)]
        victim.kill()
        if fault.kind.startswith("kill"):
            return [(now + fault.hold, "restart", fault)]
        return []


# ================================================================== the checks


def check(game: Game, report: Report) -> None:
    """The properties of docs/testing.md, on what the live honest peers left behind."""
    plan, d = game.plan, game.dir
    live = [n for n in game.procs if n not in plan.gone() | game.late and n != "x"]
    for name, proc in game.procs.items():
        if proc.peak_kib > MEMORY_BOUND_MIB * 1024:
            report.problems.append(f"{name} peaked at {proc.peak_kib / 1024:.0f} MiB")
    if report.problems:
        return
    for name in live:
        if game.procs[name].status != 0:
            report.problems.append(f"{name} exited {game.procs[name].status}:"
                                   f" {game.procs[name].text()[-400:]}")
        if "Traceback" in game.procs[name].text():
            report.problems.append(f"{name} printed a traceback")
    saved = {n: d / f"{n}.json" for n in live}
    missing = [n for n, p in saved.items() if not p.exists()]
    if missing or report.problems:
        report.problems += [f"{n} saved no hand history" for n in missing]
        return
    if len({p.read_bytes() for p in saved.values()}) != 1:
        report.problems.append(f"the hand histories differ: {sorted(saved)}")
    replayed = run_p2pcards("replay", str(saved[live[0]]), "--json")
    if replayed.returncode != 0:
        report.problems.append(f"replay refused the history: {replayed.stdout[-400:]}")
    else:
        report.winner = json.loads(replayed.stdout).get("winner")
        if report.winner is None:
            report.problems.append("the game is not over")
    verified_bytes: set[bytes] = set()  # (a transcript the same bytes as one verified: once)
    for name in live:
        path = d / f"{name}.tx"
        data = path.read_bytes() if path.is_file() else None
        if data is not None and data in verified_bytes:
            continue
        if data is not None:
            verified_bytes.add(data)
        verified = run_p2pcards("verify", str(path))
        if verified.returncode != 0:
            report.problems.append(f"verify refused {name}'s transcript:"
                                   f" {verified.stdout[-400:]}")
    if replayed.returncode != 0:
        return
    history = json.loads(saved[live[0]].read_text())
    hands = history["hands"]
    report.deals = len(hands)
    report.voids = sum(bool(h.get("void")) for h in hands)
    report.forfeits = [(h["forfeit"]["seat"], h["forfeit"]["reason"]) for h in hands
                       if h.get("forfeit")]
    blamable = faulted_seats(game, history["players"])
    for seat, reason in report.forfeits:
        if blamable is not None and seat not in blamable:
            report.problems.append(f"seat {seat} forfeited ({reason}) but no fault struck it")
    if plan.persons:
        check_people(game, report, history, live)


ALARMS = ("refused", "fork", "bad signature", "Traceback")
"""Words no honest peer of a game of people may print (its log, or its terminal)..."""
CALM = ("cheating refused at once",)
"""... but in these (the proved deck's description)."""


def check_people(game: Game, report: Report, history: dict[str, Any], live: list[str]
                 ) -> None:
    """A game of :data:`PEOPLE`: no honest peer printed an alarm, only a person a fault
    struck forfeited, a person who stepped away was told so and came back when they
    acted, and one stopped or cut off was never held away."""
    for name in live:
        text = game.procs[name].text()
        for word in ALARMS:
            lines = [line.strip() for line in text.splitlines()
                     if word in line and not any(calm in line for calm in CALM)]
            if lines:
                report.problems.append(f"{name} printed {word!r}: {lines[0][:300]}")
    for name in game.plan.persons:
        proc = game.procs[name]
        if isinstance(proc, PersonProc):
            report.problems += [p for person in proc.persons for p in person.problems]
    players = history["players"]
    hands = history["hands"]
    for fault in game.plan.faults:
        proc = game.procs[fault.victim]
        if not isinstance(proc, PersonProc) or fault.victim not in live or \
                not proc.persons:
            continue
        person, raw = proc.persons[-1], proc.log.read_text(errors="replace")
        text = proc.text()
        seat = players.index(fault.victim)
        forfeited = any((h.get("forfeit") or {}).get("seat") == seat for h in hands)
        stood_in = [i for i, h in enumerate(hands) if "(bot)" in (h.get("players") or
                                                                  [""] * 4)[seat]]
        if fault.when:
            if person.stepped_away is None:
                continue
            if not person.saw_away:  # (the game's last deal forfeited: it ended before
                # the clock's next tick told the person; a relapse: told the first time)
                ended = [i for i, h in enumerate(hands)
                         if (h.get("forfeit") or {}).get("seat") == seat][:1] == \
                    [len(hands) - 1]
                if forfeited and people.AWAY not in text and not ended:
                    report.problems.append(f"{fault.victim} forfeited but was never told"
                                           " it was away")
                continue
            told = text.find(people.AWAY)
            if "s left, then you forfeit the deal" not in text[:told]:
                report.problems.append(f"{fault.victim} was not warned before its forfeit")
            if fault.victim == game.plan.persons[0] and "\a" not in raw:
                report.problems.append(f"{fault.victim} never heard the bell")
            if not forfeited:
                report.problems.append(f"{fault.victim} was told it was away, but its"
                                       " seat forfeited nothing")
            if person.acted is None:
                report.applied.append(f"{fault.victim} still away when the game ended")
                continue
            if people.WELCOME not in text:
                report.problems.append(f"{fault.victim} acted but was not welcomed back")
        elif people.AWAY in text:
            report.problems.append(f"{fault.victim} ({fault.kind}) was held away: its"
                                   " prompt asked it to come back")
        # a seat a stand-in took is given back within two deals of its person's return
        # (the welcome; for a process stopped or cut off, the stand-in's coming)
        mark = text.rfind(people.WELCOME if fault.when else "is away: a heuristic bot")
        still = stood_in and "(bot)" in (hands[-1].get("players") or [""] * 4)[seat]
        if still and mark >= 0 and len(re.findall(people.DEAL, text[mark:])) >= 3:
            report.problems.append(f"{fault.victim}'s seat was still the stand-in's in the"
                                   f" last deal ({len(hands)} deals, stand-in from deal"
                                   f" {stood_in[0] + 1})")
        if stood_in and not still and f"you ({fault.victim}) are back" not in text:
            report.problems.append(f"{fault.victim}'s seat came back but its prompt never"
                                   " said so")


def faulted_seats(game: Game, players: list[str]) -> set[int] | None:
    """The seats a fault may have made forfeit (None: any, when the host was struck,
    since every joiner then loses its link and comes back)."""
    struck = {f.victim for f in game.plan.faults} | game.plan.gone()
    if game.plan.persons:  # (people: only the person a fault struck may forfeit)
        struck -= {"host"}
    if "host" in struck:
        return None
    seats = {i for i, name in enumerate(players) if name in struck}
    if game.plan.bots_joiner and "p1" in struck:  # p1's bot sits beside it
        seats |= {i for i, name in enumerate(players) if name not in ("host", "p2")}
    return seats


# ================================================================== the run


def play_one(plan: Plan, index: int, keep: Path | None = None,
             timeout: float = TIMEOUT) -> Report:
    """Play ``plan`` in a directory of its own (under ``keep``, kept; else removed)."""
    if keep is not None:
        directory = keep / f"game{index:03d}-{plan.game}"
        directory.mkdir(parents=True, exist_ok=True)
        report = Game(plan, directory, timeout).play()
    else:
        with tempfile.TemporaryDirectory(prefix="p2pcards-chaos-") as tmp:
            report = Game(plan, Path(tmp), timeout).play()
            report.directory = None
    report.index = index
    return report


def run(games: int, seed: int, only: list[str] | None = None, *, jobs: int = 1,
        menu: Iterable[str] | None = None, keep: Path | None = None,
        timeout: float = TIMEOUT, say: Any = print) -> list[Report]:
    plans = [make_plan(seed, i, only or GAMES, menu) for i in range(games)]
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = [pool.submit(play_one, plan, i, keep, timeout)
                   for i, plan in enumerate(plans)]
        reports = []
        for future in futures:
            reports.append(future.result())
            say(reports[-1].line())
    return reports


def summary(reports: list[Report]) -> str:
    lines = [f"{sum(r.ok for r in reports)} of {len(reports)} games passed"]
    for game in GAMES:
        mine = [r for r in reports if r.plan.game == game]
        if mine:
            lines.append(f"  {game}: {len(mine)} games, {sum(r.deals for r in mine)} deals,"
                         f" {sum(len(r.forfeits) for r in mine)} forfeits,"
                         f" {sum(r.ok for r in mine)} passed,"
                         f" wall {min(r.wall for r in mine):.0f}-{max(r.wall for r in mine):.0f}s")
    counts: dict[str, int] = {}
    for r in reports:
        for applied in r.applied:
            kind = applied.split("(")[0] + (" missed" if applied.endswith("missed") else "")
            counts[kind] = counts.get(kind, 0) + 1
    lines.append("  faults: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    peaks = [(m, n, r.index) for r in reports for n, m in r.peaks_mib.items()]
    if peaks:
        top = max(peaks)
        honest = [m for m, n, _ in peaks if n != "x"]
        lines.append(f"  peak memory: {top[0]:.0f} MiB ({top[1]} of game #{top[2]}); peers"
                     f" {min(honest):.0f}-{max(honest):.0f} MiB; bound {MEMORY_BOUND_MIB} MiB")
    lines.append(f"  wall: {sum(r.wall for r in reports):.0f}s in all; this process"
                 f" {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", action="append", choices=GAMES,
                        help="only this game (repeatable; default all four in turn)")
    parser.add_argument("--jobs", type=int, default=1, help="games at once")
    parser.add_argument("--people", action="store_true",
                        help="games of people at real prompts: each item of --fault among"
                        " PEOPLE (default all of them) in turn, over each game in turn")
    parser.add_argument("--fault", action="append", choices=CRASHES + HOSTILE + PEOPLE,
                        default=None,
                        help="draw from these faults and hostile items (repeatable; default:"
                        " CRASHES_READY and HOSTILE_READY)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT,
                        help=f"seconds before a game is called stuck (default {TIMEOUT:g})")
    parser.add_argument("--each", action="store_true",
                        help="every game gets exactly one item of --fault, each in turn")
    parser.add_argument("--keep", type=Path, help="keep each game's logs and files here")
    args = parser.parse_args(argv)
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: not empty (a game there would resume the"
                     " journals an earlier run left)")
    menu = tuple(args.fault) if args.fault is not None else None
    if args.people and menu is not None and set(menu) - set(PEOPLE):
        parser.error("--people: --fault names only items of PEOPLE")
    if not args.people and menu is not None and set(menu) & set(PEOPLE):
        parser.error("the items of PEOPLE need --people")
    if args.people or args.each:
        make = people_plan if args.people else each_plan
        default = PEOPLE if args.people else CRASHES + HOSTILE
        plans = [make(args.seed, i, args.game or GAMES, menu or default)
                 for i in range(args.games)]
        reports = []
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for report in pool.map(lambda ip: play_one(ip[1], ip[0], args.keep, args.timeout),
                                   enumerate(plans)):
                print(report.line(), flush=True)
                reports.append(report)
    else:
        reports = run(args.games, args.seed, args.game, jobs=args.jobs, menu=menu,
                      keep=args.keep, timeout=args.timeout,
                      say=lambda line: print(line, flush=True))
    print(summary(reports), flush=True)
    return 0 if all(r.ok for r in reports) else 1



if __name__ == "__main__":
    sys.exit(main())
