"""How the prompt at a networked table shows what the table tells: its events queued,
a bot's moves paced, the pause between two deals, and each event in words.

The table is never held: its messages are taken and sent at once, and only their
showing waits.  The driver hands the prompt each new event of its seat's session
(:meth:`ShowingPrompt.report`); a task (:meth:`ShowingPrompt._show`, started by the
prompt's :meth:`~p2pcards.cli.netrepl.NetPrompt.run`) shows them, a bot's move no
sooner than :attr:`~ShowingPrompt.pace` after the one before it and, after a deal's
score, a pause that any key ends.  A question, this seat's move or the game's end
shows what is left at once (:meth:`ShowingPrompt.show_now`).  The seat's own prompt
(:class:`p2pcards.cli.netrepl.NetPrompt`) is this class with the commands, the turn
and the chat.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import trio
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from p2pcards.bots import SearchBot
from p2pcards.cli import screen
from p2pcards.cli.prompt import Prompt
from p2pcards.cli.wording import faces, second_person, speak
from p2pcards.games import Game, HandState
from p2pcards.net.settings import Settings
from p2pcards.table.events import DealBegun, GameOver, Moved, Scored, SeatsChanged, TableEvent, tell
from p2pcards.table.kinds import printable
from p2pcards.table.session import Session

SHOWN = 400
"""Most characters of a line from the table (its texts quote other seats)."""
PACE = 0.6
"""Seconds between two bot moves as a person's prompt shows them (``--pace``; the local
table's pace): the moves are taken at once, only their showing waits."""
PAUSE = 5.0
"""Seconds the prompt stays on a deal's score before it shows the next deal (``--pause``;
any key goes on at once), at most a quarter of the grace period."""
BACKLOG = 8
"""Events waiting to be shown past which the prompt shows them without pacing (a table
of bots far ahead of the person's screen catches up)."""


class ShowingPrompt(Prompt):
    """A prompt that shows a networked table's events from its seat's own view, paced."""

    def __init__(self, game: Game, *, hint_bot: SearchBot | None = None,
                 input: Input | None = None, output: Output | None = None,
                 four_colour: bool = False) -> None:
        super().__init__(game, hint_bot=hint_bot, input=input, output=output,
                         four_colour=four_colour)
        self.table: Session | None = None
        self.real_names: Sequence[str] = ()
        self.settings = Settings()
        self.pace = 0.0
        """Seconds between two bot moves as they are shown (the command sets :data:`PACE`;
        0: each shown as it comes)."""
        self.pause = 0.0
        """Seconds the screen stays on a deal's score before the next deal is shown (the
        command sets :data:`PAUSE`; 0: none)."""
        self._waiting: deque[tuple[Session, TableEvent]] = deque()
        """Events the table told that are not shown yet (paced, or held by the pause)."""
        self._more = trio.Event()
        self._caught_up = trio.Event()
        self._showing = False
        """The task that shows the table's events runs (else they are shown at once)."""
        self._moved_at = -math.inf
        """When the last move was shown (Trio's clock)."""
        self._pausing: float | None = None
        """When the pause between two deals ends (None: no pause now)."""
        self._go_on = trio.Event()
        self._hand_seen = 0
        """The cards of this seat's hand as last shown (a deal's new cards show it)."""

    def report(self, table: Session, events: Sequence[TableEvent]) -> None:
        """The table's new events, told from this seat's own view."""
        first = self.table is None
        self.table = table
        if first and len(events) > 1:  # a resumed game: the deals before are a score table
            events = self._catch_up(table, events)
        if self._showing:
            self._waiting.extend((table, event) for event in events)
            if self._waiting:
                self._caught_up = trio.Event() if self._caught_up.is_set() else \
                    self._caught_up
                self._more.set()
        else:
            for event in events:
                self._tell(table, event)
        self._refresh()

    # ------------------------------------------------ showing the events, paced

    async def _show(self) -> None:
        """Show the table's events as they come: a bot's move no sooner than
        :attr:`pace` after the move before it, and after a deal's score (the game going
        on) a pause of :attr:`pause` that any key ends.  The table is not held: its
        messages are taken and sent at once, only their showing waits (this seat's
        own move is asked once they are shown, :meth:`shown`)."""
        while True:
            if not self._waiting:
                self._caught_up.set()
                await self._more.wait()
                self._more = trio.Event()
                continue
            table, event = self._waiting[0]
            if self._paced(table, event) and len(self._waiting) <= BACKLOG:
                await trio.sleep_until(self._moved_at + self.pace)
            if not self._waiting or self._waiting[0][1] is not event:
                continue  # (shown meanwhile: show_now)
            self._waiting.popleft()
            self._tell(table, event)
            if isinstance(event, Moved):
                self._moved_at = trio.current_time()
            self._refresh()
            if isinstance(event, Scored) and self._goes_on(table, event):
                await self._pause_between()

    def _paced(self, table: Session, event: TableEvent) -> bool:
        """Whether ``event`` is a bot's move (at another seat): shown at the pace."""
        if not self.pace or not isinstance(event, Moved) or event.seat is None or \
                event.seat == self.seat:
            return False
        seats = table.roster.seats
        return 0 <= event.seat < len(seats) and bool(seats[event.seat].bot)

    def _goes_on(self, table: Session, event: Scored) -> bool:
        """Whether another deal follows the one ``event`` scored (the game not over),
        after a deal played (a void one changed no score: no pause)."""
        run = next((r for r in table.finished if r.index == event.deal), None)
        if run is None or (run.outcome is not None and run.outcome.void):
            return False
        return not (table.over and table.finished[-1].index <= event.deal)

    async def _pause_between(self) -> None:
        """The screen stays on the deal's score for :attr:`pause` seconds (at most a
        quarter of the grace period), or until a key is pressed."""
        length = min(self.pause, self.settings.grace / 4)
        if length <= 0 or self.session.app.is_done or not self.session.app.is_running:
            return
        self._pausing = trio.current_time() + length
        self._go_on = trio.Event()
        self.echo(f"(the next deal in {math.ceil(length)} s; press any key to go on now)")
        self._refresh()
        try:
            with trio.move_on_at(self._pausing):
                await self._go_on.wait()
        finally:
            self._pausing = None
            self._refresh()

    def go_on(self) -> None:
        """End the pause between two deals (a key, or a line typed)."""
        if self._pausing is not None:
            self._pausing = None
            self._go_on.set()
            self._refresh()

    async def shown(self) -> None:
        """Wait until every event told is shown (paced, and past the pause), at most a
        quarter of the grace period; then show what is left at once."""
        if self._showing and self._waiting:
            with trio.move_on_after(max(1.0, self.settings.grace / 4)):
                await self._caught_up.wait()
        self.show_now()

    def show_now(self) -> None:
        """Show every event not shown yet, at once (a question, the game's end)."""
        self.go_on()
        while self._waiting:
            table, event = self._waiting.popleft()
            self._tell(table, event)
        self._caught_up.set()
        self._refresh()

    def _catch_up(self, table: Session, events: Sequence[TableEvent]
                  ) -> Sequence[TableEvent]:
        starts = [i for i, e in enumerate(events) if isinstance(e, DealBegun)]
        if not starts or starts[-1] == 0 or not table.finished:
            return events
        last = events[starts[-1]]
        current = last.deal if isinstance(last, DealBegun) else len(table.finished)
        before = [run for run in table.finished if run.index < current]
        self.rows = [(run.index + 1, list(run.points)) for run in before
                     if not (run.outcome and run.outcome.void)]
        self.totals = [sum(points) for points in zip(*(run.points for run in before),
                                                      strict=True)] or self.totals
        self.echo(f"resuming: {len(before)} deal(s) played before")
        self.show_scores()
        return events[starts[-1]:]

    def _tell(self, table: Session, event: TableEvent) -> None:
        if isinstance(event, Moved):
            self._tell_move(event)
        elif isinstance(event, DealBegun):
            self.log = []
            self._hand_seen = 0
            self.deal = event.deal + 1
            self.echo("")
            self.echo(self._line(event))
        elif isinstance(event, Scored):
            self._tell_result(table, event)
        elif isinstance(event, GameOver) and table.winner is not None:
            self.show_result(table.winner)
        else:  # (a change of seats: the driver calls reseated() too)
            self.echo(self._line(event))

    def _tell_move(self, event: Moved) -> None:
        seat = event.seat
        before = event.before
        if before is not None:  # (the session kept this seat's view before it)
            self._show_new_cards(before)  # (its view before a move knows its hand exactly)
            self.record_lines(self.narrate(before, -1 if seat is None else seat,
                                           event.action, "chance" if seat is None else None))
            return
        self.record_lines([f"  {self._line(event)}"])

    def _show_new_cards(self, view: HandState) -> None:
        """This seat's hand, shown when cards have come to it (dealt, drawn, passed) by
        the time of the move told next: not only at its turn."""
        if self.seat < 0 or view.observer != self.seat:
            return  # (a watcher, or a stand-in's hand)
        hand = screen.own_hand(view)
        if hand & ~self._hand_seen and not view.is_terminal():
            self.show_hand(view)
        self._hand_seen = hand

    def _tell_result(self, table: Session, event: Scored) -> None:
        run = next((r for r in table.finished if r.index == event.deal), None)
        if run is None:
            self.echo(self._line(event))
            return
        if run.outcome is not None and run.outcome.void:
            self.echo(f"  {printable(run.verdict, SHOWN)}")
        else:
            view = run.view
            summary = view.summary(self.names) if view is not None and view.is_terminal() \
                else ", ".join(map(str, run.points))
            self.echo(f"  result: {summary}")
            if run.verdict != "ok":
                self.echo(f"  verdict: {self._named(run.verdict)}")
            self.rows.append((run.index + 1, list(run.points)))
        self.totals = list(event.totals)  # (the table may be further on: paced)
        self.echo("  totals: " + ", ".join(
            f"{self.game.unit_name(u, self.names)} {t}" for u, t in enumerate(self.totals)))
        if self.rows:
            self.show_scores()

    def _line(self, event: TableEvent) -> str:
        """An event as this prompt tells it: printable, its seats by name ("you" for this
        one), its cards by their faces."""
        notation = self.game.notation
        names = self.names  # (a change of seats: this seat is "you", stand-in or not)
        if isinstance(event, SeatsChanged):
            names = ["you" if i == self.seat else n for i, n in enumerate(self.real_names)]
        told = tell(event, self.game, names, lambda text: faces(text, notation))
        return printable(second_person(told), SHOWN)

    def _named(self, text: str) -> str:
        """Text of the rules (a verdict), printable, its seats by name ("you" for this
        one)."""
        return printable(speak(text, self.names, self.game.notation), SHOWN)
