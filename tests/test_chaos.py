"""The chaos run (tests/chaos.py): its schedule is a pure function of its seed, its checks
catch what they are for, and a few games among real processes on loopback, each under
a fault, end as the rules say with byte-identical, replayable hand histories and
verified transcripts, every process within the memory bound."""

from __future__ import annotations

import json
import random
import socket
import time
from pathlib import Path

import pytest

from tests import chaos, hostile, people
from tests.chaos import Fault, Game, Plan, Proc, check, make_plan, play_one


def test_the_schedule_is_a_function_of_the_seed_and_never_of_the_global_random(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first = [make_plan(7, i, menu=chaos.CRASHES + chaos.HOSTILE) for i in range(40)]

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the global random was called")

    for name in ("random", "choice", "uniform", "randint", "sample", "shuffle", "seed"):
        monkeypatch.setattr(random, name, refuse)
    again = [make_plan(7, i, menu=chaos.CRASHES + chaos.HOSTILE) for i in range(40)]
    assert first == again
    assert first != [make_plan(8, i, menu=chaos.CRASHES + chaos.HOSTILE) for i in range(40)]
    drawn = {f.kind for p in first for f in p.faults} | \
        {k for p in first for k in (p.hostile_seat, p.hostile_extra) if k}
    assert drawn == set(chaos.CRASHES + chaos.HOSTILE)
    for plan in first:
        assert sum(f.kind in chaos.PERMANENT for f in plan.faults) <= 1
        assert "host" not in plan.gone()


def test_the_default_schedule_draws_only_what_passes() -> None:
    plans = [make_plan(1, i) for i in range(200)]
    ready = set(chaos.CRASHES_READY + chaos.HOSTILE_READY)
    for plan in plans:
        assert {f.kind for f in plan.faults} <= ready
        if plan.game not in chaos.PERMANENT_READY:
            assert not plan.gone()
    assert not set(chaos.HOSTILE_READY) - set(hostile.SEATED + hostile.UNSEATED)


def _finished(tmp_path: Path, histories: dict[str, str], peak_mib: float = 50) -> Game:
    """A game whose peers all exited 0 and left these hand histories (and no transcript)."""
    game = Game(Plan("bidwhist", 1, 5.0, []), tmp_path)
    for name, text in histories.items():
        proc = Proc(name, [], tmp_path / name, tmp_path / f"{name}.log", status=0,
                    peak_kib=int(peak_mib * 1024))
        game.procs[name] = proc
        (tmp_path / f"{name}.json").write_text(text)
    return game


def test_the_checks_catch_differing_histories_a_missing_one_and_memory(tmp_path: Path) -> None:
    game = _finished(tmp_path, {"host": '{"a": 1}\n', "p1": '{"a": 2}\n'})
    report = chaos.Report(0, game.plan)
    check(game, report)
    assert any("differ" in p for p in report.problems), report.problems
    assert any("replay refused" in p for p in report.problems), report.problems
    assert any("verify refused" in p for p in report.problems), report.problems

    (tmp_path / "p1.json").unlink()
    report = chaos.Report(0, game.plan)
    check(game, report)
    assert report.problems == ["p1 saved no hand history"]

    (tmp_path / "heavy").mkdir()
    heavy = _finished(tmp_path / "heavy", {"host": "{}\n"}, peak_mib=chaos.MEMORY_BOUND_MIB + 1)
    report = chaos.Report(0, heavy.plan)
    check(heavy, report)
    assert report.problems == [f"host peaked at {chaos.MEMORY_BOUND_MIB + 1} MiB"]


GRACE = 6.0
SHORT_PASUR = ("-o", "target=20")
"""A Pasur game whose fault strikes in its first deal goes to 20 points (3 or 4 deals),
not to the chaos run's 40 (6 to 8): enough deals after the fault, at half the time.
(One struck in its second deal keeps 40: at 20 the game may end before the victim is
back, and the fault is missed.)"""
GAMES = [  # (game, fault): each strikes early in the first deal, so that it is applied
    ("bidwhist", Fault("kill-restart", "p2", 1, 0.3, 0.5)),
    ("controlnut", Fault("kill-host-restart", "host", 1, 0.5, 0.5)),
    ("pasur", Fault("kill-restart", "p1", 2, 0.3, 1.0)),  # with 400 idle connections
    ("bidwhist", Fault("bots-and-die", "p1", 1, 0.3)),
    ("pasur", Fault("leave", "p2", 1, 0.3)),  # a stand-in takes the seat
    ("controlnut", Fault("stop-past-grace", "p1", 1, 0.3, 12.0)),  # back after a forfeit
]
LONG = {("pasur", "kill-restart"), ("bidwhist", "bots-and-die")}
"""Fixed games left out of the default run (``-m long`` plays them) to keep the suite
within its time: a joiner killed and restarted is the Bid Whist game's fault too, and a
peer gone for good is Pasur's ``leave`` (and tests/test_table_standins.py's)."""


@pytest.mark.slow
@pytest.mark.timeout(600)  # the harness allows a game 240 s, then stops it and reports
@pytest.mark.parametrize(("game", "fault"), [
    pytest.param(g, f, id=f"{g}-{f.kind}", marks=[pytest.mark.long] if (g, f.kind) in LONG else [])
    for g, f in GAMES])
def test_a_game_under_a_fault_ends_as_the_rules_say(tmp_path: Path, game: str,
                                                     fault: Fault) -> None:
    plan = Plan(game, 11, GRACE, [fault], bots_joiner=fault.kind == "bots-and-die",
                hostile_extra="exhaust" if game == "pasur" else None,
                options=SHORT_PASUR if game == "pasur" and fault.deal == 1 else None)
    report = play_one(plan, 0, keep=tmp_path, timeout=240)
    logs = "\n".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in tmp_path.rglob("*.log"))
    assert report.ok, f"{report.line()}\n{logs}"
    assert fault.describe() in report.applied, report.applied  # struck, not missed
    assert report.deals >= 1 and report.winner is not None
    assert all(0 < mib <= chaos.MEMORY_BOUND_MIB for mib in report.peaks_mib.values())
    if fault.kind in chaos.PERMANENT:
        # the dead peer's seat was due after it died: its side forfeited a deal, unless
        # the deal it fell silent in was void by the rules anyway (Pasur's opening jacks);
        # either way a stand-in took its seat
        assert report.directory is not None
        hands = json.loads((report.directory / "host.json").read_text())["hands"]
        stood_in = any("(bot)" in name for hand in hands for name in hand.get("players") or ())
        assert stood_in and (report.forfeits or report.voids), report.line()


@pytest.mark.slow
@pytest.mark.timeout(600)  # as above
@pytest.mark.parametrize("item", ["fork-silent", "evidence-flood"])
def test_a_hostile_seat_cannot_stop_the_game(tmp_path: Path, item: str) -> None:
    """A seated hostile peer (its process, tests/hostile.py): the others finish the game,
    the hostile seat forfeiting what the rules say (a proven equivocation, silence)."""
    plan = Plan("pasur", 11, GRACE, [], hostile_seat=item, options=SHORT_PASUR)
    report = play_one(plan, 0, keep=tmp_path, timeout=240)
    logs = "\n".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in tmp_path.rglob("*.log"))
    assert report.ok, f"{report.line()}\n{logs}"
    assert report.winner is not None
    assert ("equivocation" in {reason for _, reason in report.forfeits}), report.line()


# ------------------------------------------------------------------ people


def test_the_people_schedule_is_a_function_of_the_seed_and_covers_each_item() -> None:
    first = [chaos.people_plan(7, i) for i in range(24)]
    assert first == [chaos.people_plan(7, i) for i in range(24)]
    pairs = {(p.game, "host-restart-standin" if len(p.faults) == 2 else p.faults[0].kind)
             for p in first}
    assert len(pairs) == 24  # every item with every game
    for plan in first:
        assert plan.persons == chaos.PERSONS
        assert all(f.victim in (*chaos.PERSONS, "host") for f in plan.faults)


def test_the_proxy_forwards_goes_silent_without_closing_and_resumes() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    proxy = people.Proxy(server.getsockname()[1])
    try:
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        inner, _ = server.accept()
        inner.settimeout(5)
        client.sendall(b"one")
        assert inner.recv(10) == b"one"
        proxy.blackhole(True)
        time.sleep(0.2)
        client.sendall(b"two")
        inner.sendall(b"back")
        inner.settimeout(0.5)
        with pytest.raises(TimeoutError):
            inner.recv(10)  # nothing goes through, and nothing is closed
        client.settimeout(0.5)
        with pytest.raises(TimeoutError):
            client.recv(10)
        proxy.blackhole(False)
        inner.settimeout(5)
        client.settimeout(5)
        assert inner.recv(10) == b"two" and client.recv(10) == b"back"
        client.close()
        assert inner.recv(10) == b""  # a close goes through
        inner.close()
    finally:
        proxy.close()
        server.close()


PEOPLE_GAMES = [  # (game, faults): the person struck is p1, in the first deal
    ("pasur", [Fault("away-mid-deal", "p1", 1, 0.3, when="mid-deal", key=True)]),
    ("bidwhist", [Fault("blackhole", "p1", 1, 0.3, 1.8 * GRACE)]),
]


@pytest.mark.slow
@pytest.mark.timeout(600)  # as above
@pytest.mark.parametrize(("game", "faults"), PEOPLE_GAMES,
                         ids=[f"{g}-{f[0].kind}" for g, f in PEOPLE_GAMES])
def test_people_at_real_prompts_step_away_and_come_back(tmp_path: Path, game: str,
                                                        faults: list[Fault]) -> None:
    """Two people at prompts in pseudo-terminals (tests/people.py) play with two bots:
    one steps away past the grace period and comes back mid-deal by pressing a key (and
    types while the stand-in plays), or loses its link (a proxy forwards nothing) past
    the grace period.  Only its seat forfeits, no honest peer prints a refusal, a fork,
    a bad signature or a traceback, and the histories and transcripts agree."""
    plan = Plan(game, 11, GRACE, faults, persons=chaos.PERSONS,
                options=SHORT_PASUR if game == "pasur" else None)
    report = play_one(plan, 0, keep=tmp_path, timeout=240)
    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}"
                     for p in tmp_path.rglob("*.script"))
    assert report.ok, f"{report.line()}\n{logs}"
    assert faults[0].describe() in report.applied, report.applied
    assert report.winner is not None  # (and only p1's seat forfeited: the checks)
