"""The prompt at a networked table: a person's seat in ``p2pcards host`` or ``join``.

The prompt stays open for the whole game (Trio is a guest on prompt-toolkit's
asyncio loop, :mod:`p2pcards.cli.guest`): the table's events, joins and
leaves, and chat print above it (``patch_stdout``), ``say TEXT`` chats at any
time, and when the table asks this seat for a move the prompt turns into
``your move>`` and completes only legal moves.  With a turn timer, a move not
made in time is made by the heuristic bot, and everyone sees it played.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence

import trio
from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from p2pcards.bots import Bot, heuristic_bot
from p2pcards.cli import guest, screen
from p2pcards.cli.helptext import help_text
from p2pcards.cli.moves import MoveCompleter, Turn, legal_summary
from p2pcards.cli.moves import parse_one as parse_move
from p2pcards.games import GAMES, HandState
from p2pcards.net.driver import Settings
from p2pcards.net.identity import device_id, show_id
from p2pcards.table.kinds import printable
from p2pcards.table.roster import Roster

COMMANDS = ("help", "hand", "table", "who", "say", "hint", "quit")


class Left(Exception):
    """The person left the table (the journal keeps the game: the same command resumes)."""


class NetPrompt:
    def __init__(self, game: str, *, hint_bot: Bot | None = None,
                 input: Input | None = None, output: Output | None = None):
        self.game = game
        self.hint_bot = hint_bot
        self.output = output
        self.style = screen.STYLE
        self.session: PromptSession[str] = PromptSession(
            input=input, output=output, history=InMemoryHistory(), style=self.style,
            completer=MoveCompleter(self, COMMANDS), complete_while_typing=False,
            color_depth=screen.color_depth())
        self.turn: Turn | None = None
        self.question: str | None = None
        self.chosen: trio.MemorySendChannel[int | bool] | None = None
        self.seat = -1
        self.timer = 0.0
        self.hint_allowed = False
        self.names: Sequence[str] = ()
        self.chat: Callable[[str], Awaitable[None]] | None = None
        self.roster_text = ""
        self.settings = Settings()
        self.transcript: list[str] = []
        """Everything shown, as plain text (tests read it)."""
        self.before_prompt: Callable[[NetPrompt, str], None] | None = None
        """Called as each prompt opens (tests type their answer here)."""
        self.rng = random.Random(random.SystemRandom().getrandbits(64))

    # ---------------------------------------------------------- the driver's side

    def show(self, line: str | StyleAndTextTuples) -> None:
        fragments = [("", line)] if isinstance(line, str) else line
        self.transcript.append("".join(f[1] for f in fragments))
        print_formatted_text(FormattedText(fragments), style=self.style, output=self.output,
                             color_depth=screen.color_depth())

    async def move(self, view: HandState) -> int:
        self.seat = view.observer
        self.turn = Turn.of(view)
        self._show_position(view)
        send, receive = trio.open_memory_channel[int | bool](1)
        self.chosen = send
        self._refresh()
        try:
            with trio.move_on_after(self.timer or float("inf")):
                return int(await receive.receive())
            code = heuristic_bot(view.clone(), self.rng)
            self.show(f"time is up: {view.format_action(code, seat=self.seat)} is played"
                      " for you")
            return code
        finally:
            self.turn = None
            self.chosen = None
            self._refresh()

    async def answer(self, question: str) -> bool:
        self.question = question = printable(question)
        self.show(f"{question}: answer yes or no")
        send, receive = trio.open_memory_channel[int | bool](1)
        self.chosen = send
        self._refresh()
        try:
            return bool(await receive.receive())
        finally:
            self.question = None
            self.chosen = None
            self._refresh()

    def seated(self, roster: Roster, seat: int, settings: Settings,
               chat: Callable[[str], Awaitable[None]]) -> None:
        self.seat = seat
        self.game = roster.game
        self.names = [e.name for e in roster.seats]
        self.timer = settings.timer
        self.hint_allowed = settings.hint
        self.chat = chat
        self.settings = settings
        self.reseated(roster)

    def reseated(self, roster: Roster) -> None:
        """Seats changed hands (a stand-in bot came, or a player came back): ``who``
        shows the roster as it stands and its new safety number."""
        self.roster_text = "\n".join(
            [f"{i}: {e.name} [{show_id(device_id(e.identity), 4)}]"
             + (f" ({e.bot} bot run by seat {e.run_by})" if e.bot else "")
             + (" (you)" if i == self.seat else "") for i, e in enumerate(roster.seats)]
            + [f"safety number: {roster.safety_number()} (compare it aloud)",
               f"table: {self.settings.describe()}"])

    # ------------------------------------------------------------ the prompt

    def _message(self) -> str:
        if self.turn is not None:
            return "your move> "
        if self.question is not None:
            return "void the deal? [y/n]> "
        return "> "

    def _refresh(self) -> None:
        app = self.session.app
        if app.is_running:
            app.invalidate()

    async def run(self) -> None:
        """The prompt, until the person quits (:class:`Left`) or the task is cancelled."""
        while True:
            if self.before_prompt is not None:
                self.before_prompt(self, self._message())
            try:
                line = await guest.await_asyncio(
                    lambda: self.session.prompt_async(self._message))
            except (KeyboardInterrupt, EOFError):
                raise Left from None
            await self.take(line)

    async def take(self, line: str) -> None:
        word, _, rest = line.strip().partition(" ")
        lower = word.lower()
        if not word:
            return
        if self.question is not None and lower in ("y", "yes", "n", "no"):
            self._choose(lower.startswith("y"))
        elif lower in COMMANDS:
            await self._command(lower, rest.strip())
        elif self.turn is not None:
            action = parse_move(self.turn, self.seat, line)
            if isinstance(action, str):
                self.show([("class:error", f"not accepted: {action[:157]}")])
                self.show(legal_summary(self.turn))
            else:
                self._choose(action)
        else:
            self.show("it is not your move (help lists the commands; say TEXT chats)")

    def _choose(self, value: int | bool) -> None:
        if self.chosen is not None:
            self.chosen.send_nowait(value)
            self.chosen = None

    async def _command(self, word: str, rest: str) -> None:
        if word == "help":
            self.show(help_text(GAMES[self.game], rest, {}) if rest else
                      "commands: hand, table, who (the roster and safety number), say TEXT,"
                      " hint (where the table allows it), quit; help rules for the game")
        elif word == "quit":
            raise Left
        elif word == "who":
            self.show(self.roster_text or "the table is not seated yet")
        elif word == "say":
            if not rest:
                self.show("say TEXT: what to say to the table")
            elif self.chat is not None:
                await self.chat(rest)
                self.show(f"you: {rest}")
        elif self.turn is None:
            self.show(f"{word}: it is not your move")
        elif word == "hand":
            self._show_position(self.turn.view, table=False)
        elif word == "table":
            self._show_position(self.turn.view, hand=False)
        elif word == "hint":
            if not self.hint_allowed or self.hint_bot is None:
                self.show("hint: this table does not allow hints")
                return
            view = self.turn.view
            code = await trio.to_thread.run_sync(self.hint_bot, view.clone(), self.rng)
            self.show(f"hint: {view.format_action(code, seat=self.seat)}")

    def _show_position(self, view: HandState, *, hand: bool = True, table: bool = True
                       ) -> None:
        if table:
            fragments = screen.table_fragments(view, list(self.names))
            if fragments:
                self.show(fragments[:-1] if fragments[-1][1] == "\n" else fragments)
        if hand and view.visible(self.seat, self.seat):
            self.show([("class:title", "your hand: "),
                       *screen.hand_fragments(view.notation, screen.own_hand(view))])
