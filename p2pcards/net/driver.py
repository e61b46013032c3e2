"""The play loop of one peer at a networked table (host or joiner alike).

One Trio task owns the :class:`~p2pcards.net.peer.Peer`: table messages from
the network, decisions (bots think in worker threads, a person at the REPL)
and the clock all arrive on one channel, so the sessions are touched by one
task only.  Whatever the peer must send goes to ``send`` (the host relays it
to every link; a joiner sends it to the host).

The clock: when the seat due is not this peer's and the table has not moved
for the grace period, every seat here claims it silent (the claims count once
every other seat has made one: docs/protocol.md "Silence, cheats and consent").
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import trio

from p2pcards.bots import Bot, MakeBot
from p2pcards.games import HandState
from p2pcards.net.handclock import HandClock
from p2pcards.net.moveclock import MOVES, MoveClock
from p2pcards.net.peer import Peer, SeatRefusal
from p2pcards.net.presence import Presence
from p2pcards.net.settings import Settings
from p2pcards.table.events import Forfeited, ForfeitReason, SeatsChanged, TableEvent, tell
from p2pcards.table.kinds import printable
from p2pcards.table.roster import Roster
from p2pcards.table.run import ProofJob
from p2pcards.table.session import Session
from p2pcards.table.state import Phase, Rule

__all__ = ["CRASH_VARIABLE", "Driver", "Person", "Settings",  # (Settings: net/settings.py)
           "VoidProposal"]


@dataclass(frozen=True, slots=True)
class VoidProposal:
    """A person's choice in place of a move: propose to void the deal."""

    reason: str


class Person(Protocol):
    """A person at this peer's own seat (the REPL)."""

    async def move(self, view: HandState) -> int | VoidProposal:
        """This seat's move (or a proposal to void the deal instead)."""

    def report(self, table: Session, events: Sequence[TableEvent]) -> None:
        """The table's new events (the person's seat's session tells them)."""

    async def answer(self, question: str) -> bool: ...

    def seated(self, roster: Roster, seat: int, settings: Settings,
               chat: Callable[[str], Awaitable[bool]]) -> None:
        """The table is seated: its roster, this person's seat, its settings, and how
        to chat to it."""

    def reseated(self, roster: Roster) -> None:
        """Seats changed hands: the roster as it stands."""

    def connection(self, up: bool) -> None:
        """The link to the table broke (False) or is back (True)."""

    def away(self, back: Callable[[], None] | None) -> None:
        """The person stayed at the prompt past the grace period: a stand-in plays
        their seat until they act, which they say by calling ``back`` (None: they are
        not away, or no more)."""

    def countdown(self, seat: int | None, left: float | None) -> None:
        """The seat whose move (or step) is due and its seconds left before the table
        claims it silent (None: none due)."""


@dataclass
class Driver:
    peer: Peer
    send: Callable[[list[bytes]], Awaitable[None]]
    bots: dict[int, Bot]
    settings: Settings
    person: Person | None = None
    say: Callable[[str], None] = print
    seed: int | None = None
    refusals_shown: int = 0
    """How many of the peer's refusals (:attr:`Peer.refused`) have been shown."""
    events_shown: int = 0
    thinking: set[int] = field(default_factory=set)
    claimed: tuple[bytes, bool] | None = None
    moved_at: float = 0.0
    last_progress: bytes = b""
    crash_count: int = 0
    make_bot: MakeBot | None = None
    """Makes the bot of a stand-in this peer comes to run (docs/protocol.md, "Seats that
    change hands")."""
    heard: bool = False
    """Whether the table has moved since this process started."""
    adjourned: str = ""
    """Why the game stopped with its table unfinished (a table of two whose other seat
    is gone: no claim of silence, which one seat's word would settle, but a pause)."""
    inline: bool = False
    """Bots decide on the loop itself, not in a worker thread (tests with Trio's
    autojump clock, which must not jump while a thread computes)."""
    person_seat: int | None = None
    """The seat the person plays (this run's choice: a seat that began with a bot is the
    person's when its peer comes back without ``--bot``)."""
    presence: Presence = field(default_factory=Presence)
    """Whether the person is at the table (away: their seat's return waits for them)."""
    asking: dict[int, tuple[Any, trio.CancelScope]] = field(default_factory=dict)
    """Seat -> the turn the person is asked to move in, and the scope of the asking
    (cancelled once the turn has passed: a forfeit, a void)."""
    timeline: list[tuple[float, int, str]] = field(default_factory=list)
    """(monotonic time, deal, "deal" or "dealt"): when each deal's first hello became
    due, and when its first move did (its cards shuffled, locked and dealt; with the
    proved deck, shuffled with every proof checked and dealt)."""
    moves: MoveClock = field(default_factory=MoveClock)
    """When each move reached this peer, and the main seat's waits between its turns."""
    hands: HandClock = field(default_factory=HandClock)
    """When each deal ended here and when the main seat held its next hand (with the
    multiplications made by then, where they are counted)."""
    checking: dict[int, object] = field(default_factory=dict)
    """The idle work under way in the worker thread (id -> what it is about: the message
    whose proof it checks, or the deck whose step or shares it makes)."""
    doubted: dict[int, object] = field(default_factory=dict)
    """The work the thread found not to hold (a proof) or could not do (id -> what it is
    about): done again on the loop, which names a failure, never handed over again."""

    def __post_init__(self) -> None:
        self.inbox_send, self.inbox = trio.open_memory_channel[tuple[Any, ...]](math.inf)
        self.system = random.SystemRandom()
        self.crash = _crash_point()

    def post(self, *item: Any) -> None:
        """Hand the loop a table message (``"msg", wire``) from another task."""
        self.inbox_send.send_nowait(item)

    async def run(self) -> None:
        self.moved_at = trio.current_time()
        self.last_progress = self.peer.progress
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            nursery.start_soon(self._clock)
            await self._flush()
            self._report()
            self._decide()
            await self._idle()
            if not self.peer.over:  # (restored from a journal after the game's end: done)
                async for item in self.inbox:
                    await self._handle(item)
                    await self._flush()
                    self._report()
                    if self.peer.over or self.adjourned:
                        break
                    self._decide()
                    await self._idle()
            nursery.cancel_scope.cancel()

    async def _idle(self) -> None:
        """With what the peer made sent, and while nothing else waits on the channel,
        check the deferred shuffle proofs one at a time (docs/protocol.md, "Pipelined
        shuffles"); what the seats send once they are checked (their shares, at a
        round's end) goes out at once.  A proof's check (tens of milliseconds), and this
        seat's own step of a deck prepared ahead and its shares, are done on the
        idle-work thread (:func:`in_the_background`), the loop free meanwhile for the
        messages that come (a move is applied at once); a result comes back as
        ``checked`` and is recorded here, so that the work's turn in ``check_pending``
        costs nothing."""
        while not self.peer.over and self.inbox.statistics().current_buffer_used == 0:
            if not self.inline:
                self._check_off_loop()
                if self.checking:
                    return  # (the loop waits for a message or a check's result)
            left = self.peer.check_pending(1)
            self.hands.see(self.peer.main)
            if self.peer.outgoing:
                await self._flush()
                self._report()
                self._decide()
            if not left:
                return
            await trio.lowlevel.checkpoint()  # (the links hand in what came meanwhile)

    def _check_off_loop(self) -> None:
        """Hand every seat's next idle work (a deferred proof, its own step or shares of
        a deck prepared ahead) to the idle-work thread, what is not already under way."""
        assert self.nursery is not None
        jobs = self.peer.proof_jobs()
        offered = {id(job.key) for job in jobs}  # (what is no longer offered is forgotten)
        self.doubted = {k: v for k, v in self.doubted.items() if k in offered}
        for job in jobs:
            key = id(job.key)
            if self.checking.get(key) is not job.key and self.doubted.get(key) is not job.key:
                self.checking[key] = job.key
                self.nursery.start_soon(self._check_proof, job)

    async def _check_proof(self, job: ProofJob) -> None:
        try:
            holds = await trio.to_thread.run_sync(in_the_background, job.check,
                                                  abandon_on_cancel=True)
        except Exception:  # (a bad proof's bytes: checked again on the loop, and named)
            holds = False
        self.post("checked", job, holds)

    async def _handle(self, item: tuple[Any, ...]) -> None:
        kind = item[0]
        if kind == "msg":
            self.peer.receive(item[1])
        elif kind == "checked":
            _, job, holds = item
            self.checking.pop(id(job.key), None)
            if holds:
                job.vouch()
            else:
                self.doubted[id(job.key)] = job.key
        elif kind == "poke":
            pass  # the host took a message itself: flush, report and decide
        elif kind == "act":
            _, seat, code, turn = item
            self.thinking.discard(seat)
            if turn is not None and turn == self.peer.turn(seat):
                if isinstance(code, VoidProposal):
                    self.peer.propose_void(seat, code.reason)
                else:
                    self.peer.act(seat, code)
        elif kind == "answer":
            _, seat, agree, progress = item
            self.thinking.discard(seat)
            if progress == self.peer.progress and seat in self.peer.questions():
                self.peer.answer(seat, agree)
        elif kind == "adjourn" and item[1] == self.peer.progress and not self.adjourned:
            due = self.peer.due()
            self.adjourned = (f"seat {due.seat if due else '?'} has been silent for"
                              f" {self.settings.grace:g} s, and a table of two cannot go on"
                              " without it: the game stops here, and the same commands"
                              " resume it when both players are back")
            self.say(self.adjourned)
        elif kind == "back":
            if self.presence.acted():  # (the person acted: their seat's return is said)
                self.peer.hold_returns(False)
        elif kind == "away" and self.presence.away and not self.presence.told:
            self.presence.told = True
            if self.person is not None:
                self.person.away(lambda: self.post("back"))
        elif kind == "interrupted":
            told = self.presence.told
            if self.presence.interrupted(item[1], item[2]):  # (stopped or cut off: never
                self.peer.hold_returns(False)  # away, back as soon as it hears the table)
                if self.person is not None and told:
                    self.person.away(None)
        elif kind == "late" and item[1] == self.peer.progress:
            self.peer.take_late_words()  # (the claims stay incomplete: another seat took
            # the message this peer refused; nothing built on it may come)
        elif kind == "claim" and item[1] == self.peer.progress and self.claimed != item[1:]:
            self.claimed = (item[1], item[2])
            due = self.peer.due()
            seats = self.peer.claim_silent(forked=item[2])
            if seats:
                waited = self.settings.grace * (2 if item[2] else 1)
                self.say(f"seat {due.seat if due else '?'} silent for {waited:g} s: claimed"
                         f" by seat(s) {', '.join(map(str, seats))}")

    async def _flush(self) -> None:
        self.moves.see(self.peer.main)
        self.hands.see(self.peer.main)
        out = self.peer.take_outgoing()
        if out:
            await self.send(out)
            if self.crash is not None:
                self._crash_test(out)
        if self.peer.progress != self.last_progress:
            self.heard = True
            self.last_progress = self.peer.progress
            self.moved_at = trio.current_time()
            self._mark()

    def _mark(self) -> None:
        due, main = self.peer.due(), self.peer.main
        if due is None or main.run is None:
            return
        mark = "dealt" if due.kind in MOVES else \
            "deal" if main.phase in (Phase.HELLO, Phase.DECK, Phase.DEAL) else None
        index = main.run.index
        if mark and not any(d == index and m == mark for _, d, m in self.timeline):
            self.timeline.append((time.monotonic(), index, mark))

    def _report(self) -> None:
        events = self.peer.main.events
        names = [e.name for e in self.peer.roster.seats]
        rules = self.peer.roster.rules
        if self.person is not None and events[self.events_shown:]:
            self.person.report(self.peer.main, events[self.events_shown:])
        for event in events[self.events_shown:]:
            self._seat_life(event)
            if self.person is None:  # (seats by name: "ana: play AS", "dealer ana"; events
                self.say(printable(tell(event, rules, names), SHOWN_LINE))  # quote other
            elif isinstance(event, SeatsChanged):  # seats' text)
                self.person.reseated(self.peer.current)
        self.events_shown = len(events)
        new = self.peer.refused - self.refusals_shown
        kept = list(self.peer.refusals)
        if new > len(kept):
            self.say(f"({new - len(kept)} more refusals, not kept, are not shown)")
        for refusal in kept[len(kept) - min(new, len(kept)):]:
            if refusal.rejection.rule not in RACES:
                self.say(printable(_refusal_text(refusal), SHOWN_LINE))
        self.refusals_shown = self.peer.refused

    def _seat_life(self, event: TableEvent) -> None:
        """The person's seat forfeited for silence (away, if they sat at a live prompt
        all along), or given back (docs/playing.md, "Away and back")."""
        seat = self.person_seat
        if self.person is None or seat is None:
            return
        if isinstance(event, Forfeited) and event.seat == seat \
                and event.reason == ForfeitReason.SILENT:
            if self.presence.forfeited(trio.current_time(), self.settings.grace):
                self.peer.hold_returns(True)  # (the person is told at the clock's next tick,
                # once it has seen whether this process was stopped: then it was not away)
        elif isinstance(event, SeatsChanged) and any(
                change.seat == seat and not change.bot for change in event.changes):
            self.presence.acted()
            self.person.away(None)

    def linked(self, up: bool) -> None:
        """The link to the table broke or came back: the person, if their seat forfeits
        meanwhile, is back as soon as the table is heard again."""
        now = trio.current_time()
        self.post("interrupted", now, now)

    def _decide(self) -> None:
        for seat, (turn, scope) in list(self.asking.items()):
            if self.peer.turn(seat) != turn:  # (the turn passed without the person: the
                scope.cancel()  # prompt stops asking; its words would be for no move)
                del self.asking[seat]
                self.thinking.discard(seat)
                self.presence.answered()  # (a forfeit was told first: _report runs before)
        for seat, view in self.peer.decisions().items():
            if seat not in self.thinking:
                self.thinking.add(seat)
                if seat == self.peer.main.me:
                    self.moves.asked(self.peer.main)
                self.nursery.start_soon(self._think, seat, view.clone(), self.peer.turn(seat))
        progress = self.peer.progress
        for seat, question in self.peer.questions().items():
            if seat not in self.thinking:
                self.thinking.add(seat)
                self.nursery.start_soon(self._ask, seat, question, progress)

    def _bot(self, seat: int) -> Bot | None:
        """The bot that plays ``seat`` here: one of this peer's own, or one made for a
        stand-in this peer runs (the roster as it stands names its kind)."""
        if seat == self.person_seat and self.person is not None:
            return None
        bot = self.bots.get(seat)
        entry = self.peer.current.seats[seat]
        if bot is None and entry.bot and self.make_bot is not None:
            bot = self.bots[seat] = self.make_bot(entry.bot, self.peer.current.rules)
        return bot

    async def _think(self, seat: int, view: HandState, turn: Any) -> None:
        bot = self._bot(seat)
        if bot is None:
            assert self.person is not None, f"seat {seat} has neither a bot nor a person"
            with trio.CancelScope() as scope:
                self.asking[seat] = (turn, scope)
                self.presence.asked(trio.current_time())
                code = await self.person.move(view)
            if scope.cancelled_caught:
                return
            self.asking.pop(seat, None)
            self.presence.answered()
        else:
            rng = self._rng(seat)
            code = bot(view, rng) if self.inline else \
                await trio.to_thread.run_sync(bot, view, rng)
        self.post("act", seat, code, turn)

    def _crash_test(self, sent: list[bytes]) -> None:
        assert self.crash is not None
        kind, count = self.crash
        self.crash_count += sum(_kind(wire) == kind for wire in sent)
        if self.crash_count >= count:
            self.say(f"crash test: stopping abruptly after {kind} {count}")
            os._exit(70)

    def _rng(self, seat: int) -> random.Random:
        """A bot's randomness: with a seed (tests), a function of the seed, the seat and
        how far the game is, so that a peer restarted from its journal decides as it
        would have; without one, the system's."""
        if self.seed is None:
            return random.Random(self.system.getrandbits(64))
        return random.Random(f"{self.seed}:{seat}:{len(self.peer.main.transcript)}")

    async def _ask(self, seat: int, question: str, progress: bytes) -> None:
        if self._bot(seat) is not None or self.person is None:
            agree = False  # a bot keeps playing: only people void deals
        else:
            agree = await self.person.answer(question)
        self.post("answer", seat, agree, progress)

    async def _clock(self) -> None:
        """Claims of silence: at the grace period, and (for a seat heard only on another
        transcript) at twice the grace period."""
        tick = min(1.0, self.settings.grace / 10)
        last = trio.current_time()
        while True:
            await trio.sleep(tick)
            now = trio.current_time()
            before, last = last, now
            paused = now - before > PAUSED * tick
            if paused:  # this process was paused (a laptop asleep, a stopped process):
                self.moved_at = now  # what it did not hear meanwhile is not silence yet
                self.post("interrupted", before, now)
                continue
            if self.presence.away and not self.presence.told:
                self.post("away")
            due = self.peer.due()
            if self.person is not None:
                self.person.countdown(
                    None if due is None else due.seat, None if due is None else
                    self.settings.grace - (trio.current_time() - self.moved_at))
            if due is None or self.peer.holds(due.seat):
                continue
            waited = trio.current_time() - self.moved_at
            if self.peer.current.players == 2 and self.peer.main.run is not None:
                # (one seat's word would be all it takes; resumed, it waits for the other
                if waited >= self.settings.grace and self.heard:  # player, not stop at once)
                    self.post("adjourn", self.peer.progress)
                continue
            for forked, after in ((False, 1), (True, 2)):
                if waited >= after * self.settings.grace and \
                        self.claimed != (self.peer.progress, forked):
                    self.post("claim", self.peer.progress, forked)
            if waited >= (1 + LATE) * self.settings.grace \
                    and self.claimed is not None and self.claimed[0] == self.peer.progress:
                self.post("late", self.peer.progress)


RACES = frozenset({Rule.SILENT, Rule.STALE})
"""Refusals of a race between a seat's late message and the claims that it is silent,
which the rules of silence settle alike at every seat (docs/protocol.md, "Silence,
cheats and consent"): kept, but never shown as if a seat had misbehaved."""
LATE = 0.25
"""Past the grace period and this fraction of it again, with this peer's claims still
incomplete, it takes after all the late message of the seat it claimed (Session.late_word):
every other seat's claim would have come by then."""
PAUSED = 5
"""A clock tick this many times late means the process was paused (not the table
silent): the grace period starts again."""
SHOWN_LINE = 400
"""Most characters of a line the driver shows (an event, a refusal)."""
CRASH_VARIABLE = "P2PCARDS_CRASH_AFTER"
"""Fault injection for the durability tests: ``KIND:N`` ends this process abruptly
(no clean-up, as a kill would) right after it has sent its N-th message of KIND."""


def _lowest_priority() -> None:
    """The idle-work thread yields the processor to every loop: the least priority a
    thread may take for itself (on Linux its own nice value; elsewhere as it is)."""
    with contextlib.suppress(AttributeError, OSError):  # (not Linux, or not allowed)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


_IDLE_WORK = ThreadPoolExecutor(1, "p2pcards-idle", initializer=_lowest_priority)
"""This process's one idle-work thread (started when first used), at the lowest
priority: a thread of its own, so that Trio's worker threads, which also run the bots'
searches, keep theirs."""


def in_the_background(work: Callable[[], bool]) -> bool:
    """``work`` on the idle-work thread, waited for here (in a Trio worker thread)."""
    return _IDLE_WORK.submit(work).result()


def _crash_point() -> tuple[str, int] | None:
    value = os.environ.get(CRASH_VARIABLE)
    if not value:
        return None
    kind, _, count = value.partition(":")
    return kind, int(count or 1)

def _kind(wire: bytes) -> str:
    from p2pcards.table.codec import unpack  # noqa: PLC0415

    payload = unpack(unpack(wire, "envelope")[0], "payload")
    return str(payload[6])


def _refusal_text(refusal: SeatRefusal) -> str:
    r = refusal.rejection
    who = "an unknown sender" if r.sender is None else f"seat {r.sender}"
    return f"seat {refusal.seat} refused a message from {who}: {r.code}: {r.reason}"
