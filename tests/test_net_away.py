"""Away and back (docs/playing.md, "Away and back"), over memory channels on Trio's
autojump clock: a person who stays at a live prompt past the grace period is away
until they act; a process cut off is back as soon as its link returns; the hand-back
forks nothing, refuses nothing, and the returning person's first move is taken."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import pytest
import trio
import trio.testing

from p2pcards.bots import heuristic_bot
from p2pcards.games import HandState
from p2pcards.net.driver import RACES, Driver, Settings, _kind
from p2pcards.net.peer import Peer
from p2pcards.net.presence import Presence, warning
from p2pcards.table.events import Forfeited, Moved, SeatsChanged, TableEvent
from p2pcards.table.kinds import Kind
from p2pcards.table.roster import Roster
from p2pcards.table.session import Session
from tests.net_helpers import Relay, histories

GRACE = 20.0
PERSON = 1
LINK = 0.05
"""Seconds each send takes (the clock moves as the bots play, as on a network)."""


class Person:
    """A person at seat 1's prompt who does not move until ``present()`` says so, and
    who comes back (``back()``, as a key pressed at the prompt does) once told to."""

    def __init__(self, present: Callable[[], bool], comes_back: Callable[[], bool]):
        self.present = present
        self.comes_back = comes_back
        self.moves: list[float] = []
        self.codes: list[int] = []
        self.asked: list[float] = []
        self.aways: list[float] = []
        self.back_at: float | None = None
        self.events: list[TableEvent] = []
        self.countdowns: list[tuple[int | None, float | None]] = []
        self._back: Callable[[], None] | None = None

    async def move(self, view: HandState) -> int:
        self.asked.append(trio.current_time())
        while not self.present():
            await trio.sleep(1)
        self.moves.append(trio.current_time())
        code = heuristic_bot(view.clone(), random.Random(len(self.moves)))
        self.codes.append(code)
        return code

    async def live(self) -> None:
        """Away, the person presses a key once ``comes_back()`` says so."""
        while True:
            await trio.sleep(1)
            self.look()

    def look(self) -> None:
        if self._back is not None and self.comes_back():
            self.back_at = trio.current_time()
            back, self._back = self._back, None
            back()

    def report(self, table: Session, events: Sequence[TableEvent]) -> None:
        self.events += events
        self.look()  # (the bots play on at once: the person looks as each move shows)

    async def answer(self, question: str) -> bool:
        return False

    def seated(self, *args: object) -> None:
        pass

    def reseated(self, roster: Roster) -> None:
        pass

    def connection(self, up: bool) -> None:
        pass

    def away(self, back: Callable[[], None] | None) -> None:
        self._back = back
        if back is not None:
            self.aways.append(trio.current_time())

    def countdown(self, seat: int | None, left: float | None) -> None:
        self.countdowns.append((seat, left))


def table(tmp_path: Path, game: str, person: Person, cut: Callable[[], bool]
          ) -> tuple[Relay, list[Driver], list[str], list[tuple[float, bytes]]]:
    """Peers with drivers, seat 1's played by ``person``; while ``cut()`` holds, what
    seat 1's peer sends and what is sent to it waits (a link gone silent)."""
    players = 3 if game in ("nullern", "pasur") else 4
    relay = Relay(tmp_path, game, players, "away", {"target": 12} if game == "bidwhist"
                  else None, replace="heuristic")
    drivers: list[Driver] = []
    lines: list[str] = []
    sent: list[tuple[float, bytes]] = []  # (when, wire) seat 1's peer sent
    held: list[tuple[int, bytes]] = []

    def flush() -> None:
        for to, wire in held:
            drivers[to].post("msg", wire)
        held.clear()

    async def flush_held() -> None:  # (the link back: what waited goes, in order)
        while True:
            await trio.sleep(0.5)
            if not cut():
                flush()

    def sender(seat: int) -> Callable[[list[bytes]], Awaitable[None]]:
        async def send(wires: list[bytes]) -> None:
            await trio.sleep(LINK)
            for wire in wires:
                if seat == PERSON:
                    sent.append((trio.current_time(), wire))
                for other in range(players):
                    if other == seat:
                        continue
                    if cut() and PERSON in (seat, other):
                        held.append((other, wire))
                        continue
                    if not cut():
                        flush()
                    drivers[other].post("msg", wire)
        return send

    for seat, peer in enumerate(relay.peers):
        assert peer is not None
        drivers.append(Driver(
            peer, sender(seat), {} if seat == PERSON else {seat: heuristic_bot},
            Settings(grace=GRACE), person=person if seat == PERSON else None,
            person_seat=PERSON if seat == PERSON else None, say=lines.append, seed=seat,
            inline=True, make_bot=lambda kind, game: heuristic_bot))
    drivers[0].flush_held = flush_held  # type: ignore[attr-defined]
    return relay, drivers, lines, sent


async def play(relay: Relay, drivers: list[Driver], person: Person) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(person.live)
        for driver in drivers:
            nursery.start_soon(driver.run)
        nursery.start_soon(drivers[0].flush_held)  # type: ignore[attr-defined]
        with trio.fail_after(20000):
            while not all(p.over for p in relay.live()):
                await trio.sleep(1)
        nursery.cancel_scope.cancel()


def check_clean(relay: Relay, lines: list[str]) -> None:
    """No honest peer shows a refusal, and every peer ends on one verified transcript;
    only seat 1 forfeited."""
    peers: list[Peer] = relay.live()
    assert not [line for line in lines if "refused" in line], lines
    for peer in peers:
        assert all(r.rejection.rule in RACES for r in peer.refusals), \
            [str(r.rejection) for r in peer.refusals]
        forfeits = {e.seat for e in peer.main.events if isinstance(e, Forfeited)}
        assert forfeits <= {PERSON}
    assert len({p.main.hash for p in peers}) == 1
    assert len(histories(*peers)) == 1  # every transcript verified, and all the same game


@pytest.mark.parametrize("game", ["nullern", "bidwhist"])
async def test_a_person_at_a_live_prompt_is_away_until_they_act(
        tmp_path: Path, autojump_clock: trio.testing.MockClock, game: str) -> None:
    """Seat 1's person never moves in the first deal: it forfeits, a stand-in plays it
    from the next deal, and nothing says it is back for two deals, although its
    process hears every message.  Then the person acts: its seat is given back at the
    next boundary, and its first move is taken."""
    state: dict[str, float] = {}
    relay_box: list[Relay] = []

    def deals() -> int:
        peer = relay_box[0].peers[0]
        assert peer is not None
        return len(peer.main.finished)

    def present() -> bool:
        return "back" in state

    def comes_back() -> bool:
        if deals() >= 2:
            state["back"] = trio.current_time()
            return True
        return False

    person = Person(present, comes_back)
    relay, drivers, lines, sent = table(tmp_path, game, person, lambda: False)
    relay_box.append(relay)
    await play(relay, drivers, person)
    assert person.aways and "back" in state
    backs = [when for when, wire in sent if _kind(wire) == Kind.BACK]
    assert backs and min(backs) >= state["back"]  # (nothing said before the person acted)
    changes = [e for e in person.events if isinstance(e, SeatsChanged)]
    assert [c.bot != "" for e in changes for c in e.changes if c.seat == PERSON] \
        == [True, False]  # a stand-in, then the person again
    assert person.moves and person.moves[0] >= state["back"]
    handed_back = max(i for i, e in enumerate(person.events) if isinstance(e, SeatsChanged))
    own = [e for e in person.events[handed_back:] if isinstance(e, Moved) and e.seat == PERSON]
    taken = iter(e.action for e in own)  # (the others: the only move left, made for it)
    assert all(code in taken for code in person.codes)  # each move taken, the first too
    assert min(person.asked) < person.aways[0]
    check_clean(relay, lines)


async def test_a_person_cut_off_past_the_grace_is_back_when_the_link_returns(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    """Seat 1's link goes silent (nothing closes) past the grace period while its move
    is due: it forfeits.  The link returns; the person has typed nothing, yet its seat
    is back at the next boundary (a process cut off was never away)."""
    window: dict[str, float] = {}

    def cut() -> bool:
        now = trio.current_time()
        if "from" not in window and person.asked:
            window["from"] = now
            drivers[PERSON].linked(False)
        if "from" in window and "to" not in window and now - window["from"] > 1.5 * GRACE:
            window["to"] = now
            drivers[PERSON].linked(True)
        return "from" in window and "to" not in window

    person = Person(lambda: "to" in window, lambda: False)
    relay, drivers, lines, _ = table(tmp_path, "nullern", person, cut)
    await play(relay, drivers, person)
    assert "to" in window and not person.aways
    changes = [e for e in person.events if isinstance(e, SeatsChanged)]
    assert [c.bot != "" for e in changes for c in e.changes if c.seat == PERSON] \
        == [True, False]
    check_clean(relay, lines)


def test_presence_tells_a_person_away_from_a_process_stopped() -> None:
    presence = Presence()
    presence.asked(10.0)
    assert presence.forfeited(40.0, 20.0) and presence.away  # asked at 10, silent since
    assert not presence.interrupted(45.0, 45.0)  # (its link broke once it was away)
    assert presence.away
    presence.forfeited_at = 40.0
    assert presence.interrupted(38.0, 50.0)  # stopped from 38 to 50: heard the forfeit
    assert not presence.away  # on waking, so it was never away
    presence.asked(60.0)
    presence.interrupted(70.0, 90.0)  # stopped while asked
    assert not presence.forfeited(95.0, 20.0)
    presence.asked(100.0)
    assert not presence.forfeited(105.0, 20.0)  # asked only 5 s before: no time to move
    presence.asked(110.0)
    assert presence.forfeited(130.0, 20.0) and presence.acted() and not presence.away


def test_warnings_come_at_60_30_and_10_seconds() -> None:
    warned, said = float("inf"), []
    for left in (75, 61, 59.5, 45, 30, 29, 12, 9.9, 3, 0):
        threshold = warning(left, warned)
        if threshold is not None:
            said.append(left)
            warned = threshold
    assert said == [59.5, 30, 9.9]
    assert warning(15, float("inf")) == 30
    assert warning(12, 14, 14) is None and warning(9.5, 14, 14) == 10  # (a 15 s grace)
    assert warning(4, 7, 7) is None and warning(3.4, 7, 7) == 3.5  # (under 10 s: at half)


async def test_a_person_back_who_steps_away_again_forfeits_again(
        tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    """Back after a deal away, the person misses their first move too.  The seat is
    due, its stand-in's runner holds a benched session for it (the stand-in it gave
    back), and must claim it silent all the same: the seat forfeits again and a
    stand-in takes it again, and the game goes on to its end."""
    state: dict[str, float] = {}
    relay_box: list[Relay] = []

    def comes_back() -> bool:
        peer = relay_box[0].peers[0]
        assert peer is not None
        if peer.main.finished and "back" not in state:
            state["back"] = trio.current_time()
            return True
        return False

    person = Person(lambda: False, comes_back)
    relay, drivers, lines, _ = table(tmp_path, "pasur", person, lambda: False)
    relay_box.append(relay)
    await play(relay, drivers, person)
    assert len(person.aways) == 2
    changes = [e for e in person.events if isinstance(e, SeatsChanged)]
    assert [c.bot != "" for e in changes for c in e.changes if c.seat == PERSON] \
        == [True, False, True]
    check_clean(relay, lines)
