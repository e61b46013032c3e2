"""``p2pcards play GAME``: a person at a local table against bots, in a prompt-toolkit REPL.

The game runs as a Trio task (Trio is a guest on prompt-toolkit's asyncio
loop, :mod:`p2pcards.cli.guest`); it awaits the prompt through a bridge and
the bots' decisions in worker threads, so the screen never freezes and, at a
networked table, events can print above an open prompt.  Everything shown
comes from the person's own view: the full deal is the table's, not theirs.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import trio
from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from p2pcards.bots import Bot, SearchBot
from p2pcards.cli import guest, screen
from p2pcards.cli.botrun import decide
from p2pcards.cli.helptext import help_text
from p2pcards.cli.moves import COMMANDS, MoveCompleter, Turn, legal_summary
from p2pcards.cli.moves import parse_one as parse_move
from p2pcards.cli.wording import narration as _second_person
from p2pcards.cli.wording import unseen_runs as _unseen_runs
from p2pcards.games import CHANCE, HandState
from p2pcards.local import LocalGame, Snapshot


class Quit(Exception):
    """The person left the game."""


@dataclass(frozen=True, slots=True)
class Manner:
    """How the prompt plays: the pause between plays (seconds) so that a person can
    follow them, whether the only legal move is made for the person, the four-colour
    deck, the seed of the hints, and where the hand history goes at the end."""

    pace: float = 0.6
    autoplay: bool = False
    four_colour: bool = False
    seed: int = 0
    save_to: str | None = None


class Repl:
    """One person's seat at a local table; the other seats are bots."""

    def __init__(self, table: LocalGame, seat: int, bots: Sequence[Bot | None], *,
                 hint_bot: SearchBot, manner: Manner = Manner(), input: Input | None = None,
                 output: Output | None = None):
        self.table = table
        self.game = table.game
        self.seat = seat
        self.bots = bots
        self.hint_bot = hint_bot
        self.hint_rng = random.Random(f"hint:{manner.seed}")
        self.pace = manner.pace
        self.autoplay = manner.autoplay
        self.save_to = manner.save_to
        self.output = output
        self.style: Style = screen.FOUR_COLOUR if manner.four_colour else screen.STYLE
        self.session: PromptSession[str] = PromptSession(
            input=input, output=output, history=InMemoryHistory(), style=self.style,
            completer=MoveCompleter(self), complete_while_typing=False,
            bottom_toolbar=self.toolbar, color_depth=screen.color_depth())
        self.plain: PromptSession[str] = PromptSession(
            input=input, output=output, style=self.style, color_depth=screen.color_depth())
        """For yes/no and file names: no move completion, no toolbar."""
        self.transcript: list[str] = []
        """Everything printed, as plain text (tests read it)."""
        self.turn: Turn | None = None
        self.log: list[str] = []
        self.undo_stack: list[tuple[Snapshot, int]] = []
        self.rows: list[list[int]] = []
        self._last_print = 0.0
        self.waiting: trio.CancelScope | None = None
        """The wait for a bot (or the pace) that Ctrl-C interrupts."""
        self.interrupted = False
        self.before_prompt: Callable[[Repl, str], None] | None = None
        """Called as each prompt opens (tests type their answer into the input here)."""

    # ------------------------------------------------------------------ output

    def echo(self, fragments: StyleAndTextTuples | str) -> None:
        if isinstance(fragments, str):
            fragments = [("", fragments)]
        self.transcript.append("".join(fragment[1] for fragment in fragments))
        print_formatted_text(FormattedText(fragments), style=self.style, output=self.output,
                             color_depth=screen.color_depth())
        self._last_print = time.monotonic()

    def say(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.echo(line)

    def view(self) -> HandState:
        state = self.table.state
        assert state is not None
        return state.view(self.seat)

    def show_hand(self) -> None:
        view = self.view()
        if not view.visible(self.seat, self.seat):  # Nullern's blind round
            count = view.count[self.seat]
            self.echo([("class:title", "your hand: "),
                       ("class:dim", f"{count} card{'s' if count != 1 else ''} you cannot see"
                        " (blind round)")])
            return
        self.echo([("class:title", "your hand: "),
                   *screen.hand_fragments(view.notation, screen.own_hand(view))])

    def show_table(self) -> None:
        fragments = screen.table_fragments(self.view(), self.table.names)
        if fragments and fragments[-1][1] == "\n":
            fragments = fragments[:-1]
        self.echo(fragments)

    def show_scores(self) -> None:
        if not self.rows:
            self.echo("no deal has been scored yet")
            return
        self.echo(screen.score_table(self.game, self.table.names, self.rows))

    def toolbar(self) -> StyleAndTextTuples:
        table = self.table
        state = table.state
        parts = [self.game.title, f"deal {len(table.history.hands)}"]
        if state is not None:
            parts.append(screen.phase_name(state))
            mover = state.current_player()
            if mover == self.seat:
                parts.append("your turn")
            elif mover >= 0:
                parts.append(f"{table.names[mover]} to play")
        parts.append(screen.scores_text(self.game, table.names, table.totals))
        return [("class:bottom-toolbar", " " + " | ".join(parts) + " ")]

    # ------------------------------------------------------------------ input

    async def ask(self, message: str, *, moves: bool = True) -> str:
        """One line from the person; Ctrl-C at the prompt means ``quit``, Ctrl-D
        (end of input) leaves at once.  ``moves``: complete moves, show the toolbar."""
        if self.before_prompt is not None:
            self.before_prompt(self, message)
        session = self.session if moves else self.plain
        try:
            return await guest.await_asyncio(
                lambda: session.prompt_async(message, handle_sigint=False))
        except KeyboardInterrupt:
            return "quit"
        except EOFError:
            raise Quit from None

    async def confirm_quit(self) -> None:
        answer = await self.ask("Leave the game? [y/N] ", moves=False)
        if answer.strip().lower() in ("y", "yes", "quit"):
            raise Quit

    async def command(self, line: str) -> bool:
        """Run ``line`` if it is a command (True), else False (it may be a move)."""
        word, _, rest = line.strip().partition(" ")
        word = word.lower()
        if word not in COMMANDS:
            return False
        state = self.table.state
        if word == "help":
            self.echo(help_text(self.game, rest, self.table.options))
        elif word == "quit":
            await self.confirm_quit()
        elif word == "score":
            self.show_scores()
        elif word == "save":
            self.save(rest.strip())
        elif state is None:
            self.echo(f"{word}: no deal is in progress")
        elif word == "hand":
            self.show_hand()
        elif word == "table":
            self.show_table()
        elif word == "last":
            self.echo(screen.last_trick_fragments(self.view(), self.table.names))
        elif word == "history":
            self.echo("\n".join(self.log) if self.log else "nothing has happened yet")
        elif word == "hint":
            await self.hint()
        elif word == "undo":
            self.undo()
        return True

    def save(self, path: str) -> None:
        """Write the finished deals' hand history; the deal in progress stays out (its
        record holds every seat's cards)."""
        if not path:
            self.echo("save FILE: name the file to write")
            return
        history = self.table.history
        state = self.table.state
        note = ""
        if state is not None and not state.is_terminal():
            history = replace(history, hands=history.hands[:-1])
            note = " (the finished deals: the one in progress is still secret)"
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(history.dumps())
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            self.echo([("class:error", f"cannot write {path!r}: {reason}")])
            return
        self.echo(f"hand history saved to {path}{note}")

    async def hint(self) -> None:
        turn = self.turn
        if turn is None:
            self.echo("hint: it is not your turn")
            return
        self.echo("thinking...")
        action, share = await trio.to_thread.run_sync(self.hint_bot.choose, turn.view,
                                                      self.hint_rng)
        text = turn.view.format_action(action, seat=self.seat)
        how = f" ({share:.0%} of the search)" if share is not None else ""
        self.echo(f"hint: {text}{how}")

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

    def parse(self, turn: Turn, line: str) -> int | None:
        """The legal action ``line`` names, else None after saying why."""
        action = parse_move(turn, self.seat, line)
        if isinstance(action, str):
            self.refuse(turn, action)
            return None
        return action

    def refuse(self, turn: Turn, reason: str) -> None:
        if len(reason) > 160:
            reason = reason[:157] + "..."
        self.echo([("class:error", f"not accepted: {reason}")])
        self.echo(self.legal_summary(turn))

    def legal_summary(self, turn: Turn) -> str:
        return legal_summary(turn)

    async def ask_move(self) -> int | None:
        """The person's move (None: the position changed under the prompt: undo)."""
        view = self.view()
        self.turn = turn = Turn.of(view)
        while True:
            line = await self.ask("your move> ")
            if not line.strip():
                continue
            if await self.command(line):
                if self.turn is None:  # undo
                    return None
                continue
            action = self.parse(turn, line)
            if action is not None:
                self.turn = None
                return action

    # ------------------------------------------------------------------- play

    async def pause_for_pace(self) -> None:
        wait = self.pace - (time.monotonic() - self._last_print)
        if wait > 0:
            await trio.sleep(wait)

    def record_lines(self, lines: list[str]) -> None:
        lines = [_unseen_runs(_second_person(line)) for line in lines]
        self.log += [line.strip() for line in lines if line.strip()]
        self.say(lines)

    async def play_deal(self) -> None:
        table = self.table
        self.say(table.start_deal())
        self.log = []
        self.undo_stack = []
        while True:
            state = table.state
            assert state is not None
            if state.is_terminal():
                break
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
            with trio.CancelScope() as self.waiting:
                action = await decide(bot, state.view(mover), table.bot_rngs[mover])
                await self.pause_for_pace()
            self.waiting = None
            if self.interrupted:  # Ctrl-C while the bot thought: ask, then go on
                self.interrupted = False
                await self.confirm_quit()
                continue
            self.record_lines(table.act(mover, action, observer=self.seat))
        self.say(table.end_deal())
        self.undo_stack = []
        record = table.record
        if record is not None and not record.void:
            self.rows.append(table.finished[-1].points())
            self.show_scores()

    async def person_moves(self, state: HandState) -> None:
        table = self.table
        view = state.view(self.seat)
        legal = view.legal_actions()
        if self.autoplay and len(legal) == 1:
            self.record_lines(table.act(self.seat, legal[0], observer=self.seat))
            return
        self.show_table()
        self.show_hand()
        snap = table.snapshot()
        action = await self.ask_move()
        if action is None:
            return
        self.undo_stack.append((snap, len(self.log)))
        self.record_lines(table.act(self.seat, action, observer=self.seat))

    def _interrupt(self) -> None:
        """Ctrl-C with no prompt open (a bot thinking): stop waiting and ask."""
        self.interrupted = True
        if self.waiting is not None:
            self.waiting.cancel()

    async def run(self) -> int:
        """Play the game to its end; Ctrl-C outside a prompt asks before leaving."""
        loop = asyncio.get_running_loop()
        token = trio.lowlevel.current_trio_token()
        try:
            loop.add_signal_handler(signal.SIGINT, token.run_sync_soon, self._interrupt)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            return await self._run()
        try:
            return await self._run()
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    async def _run(self) -> int:
        table = self.table
        names = table.names
        self.echo([("class:title", f"{self.game.title}"),
                   ("", ": " + ", ".join(self._label(s) for s in range(table.players)))])
        self.echo("type help for the commands, help rules for the game; Tab completes moves")
        try:
            while table.winner is None:
                await self.play_deal()
                if table.winner is None:
                    await self.between_deals()
        except Quit:
            self.echo("left the game")
            return 0
        winner = table.winner
        mine = self.seat % 2 if self.game.units == "teams" else self.seat
        if isinstance(winner, list):
            won = mine in winner
            text = "shared win: " + ", ".join(self.game.unit_name(u, names) for u in winner)
        else:
            won = winner == mine
            text = f"winner: {self.game.unit_name(winner, names)}"
        self.echo([("class:title", text + (" (you!)" if won else ""))])
        await self.offer_save()
        return 0

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

    async def offer_save(self) -> None:
        if self.save_to:
            self.save(self.save_to)
            return
        try:
            line = await self.ask("save the hand history? file name, or Enter to skip> ",
                                  moves=False)
        except Quit:
            return
        if line.strip().lower() not in ("", "n", "no", "quit", "q"):
            self.save(line.strip())


def play(repl: Repl) -> int:
    """Run the REPL to the end of the game (or until the person quits)."""
    return guest.run(repl.run)
