"""``p2pcards play GAME``: a person at a local table against bots, in a prompt-toolkit REPL.

The game runs as a Trio task (Trio is a guest on prompt-toolkit's asyncio
loop, :mod:`p2pcards.cli.guest`); it awaits the prompt through a bridge and
the bots' decisions in worker threads, so the screen never freezes and, at a
networked table, events can print above an open prompt.  Everything shown
comes from the person's own view: the full deal is the table's, not theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import trio
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from p2pcards.bots import Bot, SearchBot
from p2pcards.cli import guest
from p2pcards.cli.botrun import Pondering, decide
from p2pcards.cli.localsave import Keeper
from p2pcards.cli.moves import Turn
from p2pcards.cli.prompt import LEAVE, Prompt, Quit
from p2pcards.games import CHANCE, HandState
from p2pcards.history import History
from p2pcards.local import LocalGame, Snapshot

__all__ = ["Manner", "Quit", "Repl", "play"]


@dataclass(frozen=True, slots=True)
class Manner:
    """How the prompt plays: the pause between plays (seconds) so that a person can
    follow them, whether the only legal move is made for the person, the four-colour
    deck, the seed of the hints, where the hand history goes at the end, and whether
    the bots ponder."""

    pace: float = 0.6
    autoplay: bool = False
    four_colour: bool = False
    seed: int = 0
    save_to: str | None = None
    ponder: bool = False
    """Let the searching bots think while the person does (``play --ponder``)."""


class Repl(Prompt):
    """One person's seat at a local table; the other seats are bots."""

    commands = (*Prompt.commands, "undo")
    command_help = (*Prompt.command_help[:-1],
                    ("undo", "take back your last move and the bots' replies"),
                    Prompt.command_help[-1])

    def __init__(self, table: LocalGame, seat: int, bots: Sequence[Bot | None], *,
                 hint_bot: SearchBot, manner: Manner = Manner(), input: Input | None = None,
                 output: Output | None = None):
        super().__init__(table.game, hint_bot=hint_bot, four_colour=manner.four_colour,
                         input=input, output=output, hint_seed=manner.seed)
        self.table = table
        self.seat = seat
        self.names = table.names
        self.totals = table.totals
        self.bots = bots
        self.pace = manner.pace
        self.autoplay = manner.autoplay
        self.save_to = manner.save_to
        self.undo_stack: list[tuple[Snapshot, int]] = []
        self.pondering = Pondering(table, bots) if manner.ponder else None
        """The searching bots thinking while the person does (docs/bots.md)."""
        self.alarm: trio.MemorySendChannel[int | None] | None = None
        """Where Ctrl-C goes while a bot thinks (:meth:`bot_moves`)."""
        self.whole: trio.CancelScope | None = None
        """The game, which SIGTERM cancels."""
        self.confirming: trio.CancelScope | None = None
        """The question whether to leave, while it is asked."""
        self.interrupted = False
        """Ctrl-C came with no prompt open and no bot thinking: ask at the next step."""
        self.before_prompt: Callable[[Repl, str], None] | None = None
        """Called as each prompt opens (tests type their answer into the input here)."""
        self.keeper: Keeper | None = None
        """Where the game is kept as it goes, for the same command to resume it."""
        self.resume_hint = ""
        """The command that resumes this game (said when the person leaves)."""
        # (a game resumed: a void deal has a number but no row)
        self.rows = [(k, state.points()) for k, state in zip(table.numbers, table.finished,
                                                             strict=True)]

    def current(self) -> HandState | None:
        state = self.table.state
        return None if state is None else state.view(self.seat)

    def view(self) -> HandState:
        view = self.current()
        assert view is not None
        return view

    def options(self) -> dict[str, int]:
        return dict(self.table.options)

    def finished_history(self) -> tuple[History, str]:
        history = self.table.history
        state = self.table.state
        if state is not None and not state.is_terminal():
            return (replace(history, hands=history.hands[:-1]),
                    " (the finished deals: the one in progress is still secret)")
        return history, ""

    # ------------------------------------------------------------------ input

    async def ask(self, message: str, *, moves: bool = True) -> str:
        """One line from the person; Ctrl-C asks whether to leave (and, answered no,
        asks ``message`` again), Ctrl-D (end of input) leaves at once."""
        while True:
            if self.interrupted:  # (a Ctrl-C signal while no prompt was open: hint)
                self.interrupted = False
                await self.confirm_quit()
            try:
                return await self.read(message, moves=moves)
            except guest.Interrupted:
                await self.confirm_quit()
            except EOFError:
                raise Quit from None

    async def confirm_quit(self) -> None:
        """Ask before leaving: "y" (or Ctrl-C again, or the end of input) leaves."""
        answer = "y"
        with trio.CancelScope() as self.confirming:  # (a Ctrl-C signal cancels it: leave)
            try:
                answer = await self.read(CONFIRM, moves=False)
            except (guest.Interrupted, EOFError):
                raise Quit from None
            finally:
                self.confirming = None
        if answer.strip().lower() in LEAVE:
            raise Quit

    async def run_command(self, word: str, rest: str) -> None:
        if word == "quit":
            await self.confirm_quit()
        elif word == "undo":
            self.undo()
        else:
            await super().run_command(word, rest)

    def undo(self) -> None:
        state = self.table.state
        if state is None or state.is_terminal():
            self.echo("undo: the deal is over; moves are taken back only during a deal")
            return
        if not self.undo_stack:
            self.echo("undo: nothing of yours to take back in this deal")
            return
        snap, logged = self.undo_stack.pop()
        self.table.restore(snap)
        del self.log[logged:]
        self.echo("took back your last move")
        self.turn = None

    async def ask_move(self) -> int | None:
        """The person's move (None: the position changed under the prompt: undo)."""
        self.turn = Turn.of(self.view(), self.names)
        self.choices = None
        while True:
            line = await self.ask(self.move_message())
            if not line.strip():
                continue
            if await self.command(line):
                if self.turn is None:  # undo
                    return None
                continue
            action = self.take_move(line)
            if action is not None:
                self.turn = None
                return action

    # ------------------------------------------------------------------- play

    async def pause_for_pace(self) -> None:
        wait = self.pace - (time.monotonic() - self._last_print)
        if wait > 0:
            await trio.sleep(wait)

    def keep(self) -> None:
        """Keep the game as it stands (every step: a slip loses nothing)."""
        if self.keeper is not None:
            trouble = self.keeper.keep(self.table)
            if trouble is not None:
                self.error(trouble)

    async def play_deal(self) -> None:
        table = self.table
        if table.state is None or table.state.is_terminal():
            self.say(table.start_deal())
        else:  # (a game resumed in the middle of a deal)
            self.echo(f"deal {len(table.history.hands)} resumes where it stopped")
        self.deal = len(table.history.hands)
        self.log = []
        self.undo_stack = []
        while True:
            state = table.state
            assert state is not None
            self.keep()
            if state.is_terminal():
                break
            if self.interrupted:
                self.interrupted = False
                await self.confirm_quit()
            mover = state.current_player()
            if mover == CHANCE:
                self.record_lines(table.act_chance(observer=self.seat))
                continue
            forced = state.forced_action()
            if forced is not None:
                self.record_lines(table.act(mover, forced, observer=self.seat))
                continue
            if mover == self.seat:
                await self.person_moves(state)
                continue
            bot = self.bots[mover]
            assert bot is not None
            action = await self.bot_moves(bot, state.view(mover), table.bot_rngs[mover])
            self.record_lines(table.act(mover, action, observer=self.seat))
        self.say(table.end_deal())
        self.keep()
        self.undo_stack = []
        record = table.record
        if record is not None and not record.void:
            self.rows.append((table.numbers[-1], table.finished[-1].points()))
            self.show_scores()

    async def person_moves(self, state: HandState) -> None:
        table = self.table
        view = state.view(self.seat)
        legal = view.legal_actions()
        if self.autoplay and len(legal) == 1:
            self.record_lines(table.act(self.seat, legal[0], observer=self.seat))
            return
        self.show_position(view)
        snap = table.snapshot()
        if self.pondering is not None:
            self.pondering.start()
        try:
            action = await self.ask_move()
        finally:
            if self.pondering is not None:
                self.pondering.stop()
        if action is None:
            return
        self.undo_stack.append((snap, len(self.log)))
        self.record_lines(table.act(self.seat, action, observer=self.seat))

    async def bot_moves(self, bot: Bot, view: HandState, rng: random.Random) -> int:
        """The bot's move, shown no sooner than the pace allows.  Ctrl-C meanwhile
        asks whether to leave while the bot goes on thinking; "y" leaves at once."""
        send, receive = trio.open_memory_channel[int | None](2)
        self.alarm = send
        try:
            async with trio.open_nursery() as nursery:

                async def think() -> None:
                    action = await decide(bot, view, rng, self.pondering)
                    await self.pause_for_pace()
                    await send.send(action)

                nursery.start_soon(think)
                while True:
                    if self.interrupted:  # (Ctrl-C just before: ask now)
                        self.interrupted = False
                        await self.confirm_quit()
                    action = await receive.receive()
                    if action is not None:
                        return action
                    self.interrupted = True
        except BaseExceptionGroup as group:  # (Trio's nursery wraps the person's leaving)
            if group.split(Quit)[1] is None:
                raise Quit from None
            raise
        finally:
            self.alarm = None

    def _interrupt(self) -> None:
        """Ctrl-C with no prompt open (a bot thinking, the pace): ask."""
        if self.confirming is not None:  # Ctrl-C twice before the question showed
            self.confirming.cancel()
        elif self.alarm is not None:
            with contextlib.suppress(trio.WouldBlock):
                self.alarm.send_nowait(None)
        else:
            self.interrupted = True

    async def run(self) -> int:
        """Play the game to its end; Ctrl-C outside a prompt asks before leaving."""
        loop = asyncio.get_running_loop()
        token = trio.lowlevel.current_trio_token()
        try:
            loop.add_signal_handler(signal.SIGINT, token.run_sync_soon, self._interrupt)
            loop.add_signal_handler(signal.SIGTERM, token.run_sync_soon, self._terminate)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            return await self._run()
        try:
            with trio.CancelScope() as self.whole:
                return await self._run()
            self.left()  # (SIGTERM)
            self.echo("stopped by SIGTERM")
            return 128 + signal.SIGTERM
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)

    def _terminate(self) -> None:
        """SIGTERM: leave at once, as "y" would (the finished deals to ``--save``)."""
        if self.whole is not None:
            self.whole.cancel()

    async def _run(self) -> int:
        table = self.table
        self.echo([("class:title", f"{self.game.title}"),
                   ("", ": " + ", ".join(self._label(s) for s in range(table.players)))])
        self.echo("type help for the commands, help rules for the game; Tab completes moves")
        try:
            while table.winner is None:
                await self.play_deal()
                if table.winner is None:
                    await self.between_deals()
        except Quit:
            self.left()
            return 0
        if self.keeper is not None:
            self.keeper.finished()
        self.show_result(table.winner)
        if self.save_to:
            self.save(self.save_to)
        else:
            await self.offer_save()
        return 0

    def left(self) -> None:
        """The person left before the end: the finished deals go to ``--save``."""
        if self.save_to and self.rows:
            self.save(self.save_to)
        elif self.save_to:
            self.echo(f"no deal was finished: nothing was written to {self.save_to}")
        if self.keeper is not None and self.keeper.broken is None and self.resume_hint:
            self.echo(f"left the game; {self.resume_hint} resumes it")
        else:
            self.echo("left the game")

    def _label(self, seat: int) -> str:
        name = self.table.names[seat]
        who = "you" if seat == self.seat else "bot"
        team = f", team {seat % 2}" if self.game.units == "teams" else ""
        return f"{name} ({who}{team})"

    async def between_deals(self) -> None:
        while True:
            line = await self.ask("Enter for the next deal> ")
            if not line.strip():
                return
            if not await self.command(line):
                self.echo("between deals: Enter deals on; the commands work too (help)")


CONFIRM = "Leave the game? [y/N] "


def play(repl: Repl) -> int:
    """Run the REPL to the end of the game (or until the person quits)."""
    return guest.run(repl.run)
