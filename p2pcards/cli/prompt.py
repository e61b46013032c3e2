"""One prompt for every table: the screen, the commands and move reading that a local
table (:mod:`p2pcards.cli.repl`) and a networked one (:mod:`p2pcards.cli.netrepl`)
share.

A table's prompt says what it knows (the person's own view as it stands, the
names, the scores) and how it plays; everything a person sees or types is
handled here the same way at both: the hand and the table before each move,
the moves told from the person's own view, the trick winners, the toolbar,
the score table between deals, the result at the end, the commands, Tab
completion, forgiving move reading (a choice asked when a text may mean
several moves), and Ctrl-C, which asks before leaving.  Whatever bytes are typed or
pasted, the prompt stands: a sequence that looks like a terminal's mouse report (as
pasted colour codes do) is ignored rather than read as one, and a line comes back as
printable text on one line (:func:`typed`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

import trio
from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from p2pcards.bots import SearchBot
from p2pcards.cli import guest, screen
from p2pcards.cli.helptext import help_text
from p2pcards.cli.moves import MoveCompleter, Turn, legal_summary, parse_move
from p2pcards.cli.wording import narration
from p2pcards.games import Game, HandState
from p2pcards.games.core import SPECTATOR
from p2pcards.games.prose import name_receivers
from p2pcards.history import History

LEAVE = ("y", "yes", "quit", "q")
REFUSAL = 240
"""Most characters of a refusal's reason shown."""


class Quit(Exception):
    """The person left the game."""


def typed(line: str) -> str:
    """A line as the person typed or pasted it, made one line of printable text: a
    newline or a tab becomes a space, and what cannot be shown (an escape, a control
    character, bytes that were not UTF-8) is dropped."""
    return "".join(c if c.isprintable() else " " if c.isspace() else "" for c in line)


def _ignore_mouse(event: KeyPressEvent) -> None:
    """No prompt here asks for the mouse, so no terminal sends a mouse report: what
    reads as one was typed or pasted (``ESC [ 31 m`` of a colour code), and
    prompt-toolkit's own reading of a malformed one raises, ending the prompt."""


def key_bindings() -> KeyBindings:
    """The bindings every prompt adds to prompt-toolkit's (and that take precedence)."""
    bindings = KeyBindings()
    bindings.add(Keys.Vt100MouseEvent)(_ignore_mouse)
    return bindings


class Prompt:
    """What both tables' prompts share.  A table subclass provides :meth:`current`
    (the person's view as it stands), :meth:`finished_history`, the scores
    (:attr:`rows`, :attr:`totals`, :attr:`deal`) and its own commands."""

    commands: tuple[str, ...] = ("help", "hint", "hand", "table", "score", "last", "history",
                                 "save", "quit")
    command_help: tuple[tuple[str, str], ...] = (
        ("help [topic]", "this text; topics: rules (rules full: section by section), moves,"
                         " commands"),
        ("hint", "what the bot would do in your place (where the table allows it)"),
        ("hand", "your cards"),
        ("table", "the table: bids, contract, the trick"),
        ("score", "the score so far, deal by deal"),
        ("last", "the previous trick and who won it"),
        ("history", "this deal as you saw it (? for cards you did not see)"),
        ("save FILE", "write the hand history of the finished deals"),
        ("quit", "leave (asks first; Ctrl-C asks too)"),
    )

    def __init__(self, game: Game, *, hint_bot: SearchBot | None = None, four_colour: bool = False,
                 input: Input | None = None, output: Output | None = None,
                 hint_seed: int | None = None) -> None:
        self.game = game
        self.names: list[str] = []
        self.seat = -1
        self.hint_bot = hint_bot
        self.hint_allowed = True
        self.hint_rng = random.Random(f"hint:{hint_seed}") if hint_seed is not None else \
            random.Random(random.SystemRandom().getrandbits(64))
        self.output = output
        self.style: Style = screen.FOUR_COLOUR if four_colour else screen.STYLE
        self.session: PromptSession[str] = PromptSession(
            input=input, output=output, history=InMemoryHistory(), style=self.style,
            completer=MoveCompleter(self, self.commands), complete_while_typing=False,
            bottom_toolbar=self.toolbar, color_depth=screen.color_depth(),
            key_bindings=key_bindings())
        self.plain: PromptSession[str] = PromptSession(
            input=input, output=output, style=self.style, color_depth=screen.color_depth(),
            key_bindings=key_bindings())
        """For yes/no and file names: no move completion, no toolbar."""
        self.transcript: list[str] = []
        """Everything shown, as plain text (tests read it)."""
        self.turn: Turn | None = None
        self.choices: tuple[int, ...] | None = None
        """The moves a text may have meant, numbered for the person to pick one."""
        self.log: list[str] = []
        """This deal as the person saw it (``history``)."""
        self.rows: list[tuple[int, list[int]]] = []
        """Each scored deal's number and points (``score``; a void deal scores none)."""
        self.totals: list[int] = []
        self.deal = 0
        self._last_print = 0.0
        self._held = (-1, 0, 0)
        """The hand as it stood (deal, before the cards received, when last shown)."""

    # ------------------------------------------------------------ what a table says

    def current(self) -> HandState | None:
        """The person's own view as it stands (None: no deal in progress)."""
        raise NotImplementedError

    def finished_history(self) -> tuple[History, str]:
        """The hand history of the finished deals, and a note on what it leaves out."""
        raise NotImplementedError

    def status(self) -> str:
        """Extra toolbar text (a networked table's connection)."""
        return ""

    # ------------------------------------------------------------------ output

    def echo(self, fragments: StyleAndTextTuples | str) -> None:
        if isinstance(fragments, str):
            fragments = [("", fragments)]
        self.transcript.append("".join(fragment[1] for fragment in fragments))
        print_formatted_text(FormattedText(fragments), style=self.style, output=self.output,
                             color_depth=screen.color_depth())
        self._last_print = time.monotonic()

    show = echo

    def say(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.echo(line)

    def error(self, text: str) -> None:
        self.echo([("class:error", text)])

    def record_lines(self, lines: Sequence[str]) -> None:
        """Moves and what they caused, told to the person and kept for ``history``."""
        told = [narration(line, self.game.notation) for line in lines]
        self.log += [line.strip() for line in told if line.strip()]
        self.say(told)

    def narrate(self, before: HandState, seat: int, code: int, name: str | None = None
                ) -> list[str]:
        """A move as the person saw it: who did what (cards it does not see as ``?``),
        then what it caused (a trick won, a bid taken)."""
        after = before.clone()
        after.apply(code)
        who = name if name is not None else self.names[seat]
        text = name_receivers(before.format_action(code, seat=self.observer), self.names)
        return [f"  {who}: {text}",
                *(f"    {line}" for line in after.narrate(before, code, self.names))]

    @property
    def observer(self) -> int:
        """Whose eyes the person sees the moves with: its seat's, or at no seat (a
        watcher's prompt) a spectator's (the games' SPECTATOR, never the table's
        WATCHER)."""
        return self.seat if self.seat >= 0 else SPECTATOR

    def show_hand(self, view: HandState | None = None) -> None:
        view = view or self.current()
        if view is None:
            self.echo("hand: no deal is in progress")
            return
        if view.observer != self.seat:  # (a stand-in holds the seat: its cards are its own)
            self.echo("hand: a stand-in plays your seat this deal and holds its cards; you"
                      " see its plays as everyone does")
            return
        if not view.visible(self.seat, self.seat):  # Nullern's blind round
            count = view.count[self.seat]
            self.echo([("class:title", "your hand: "),
                       ("class:dim", f"{count} card{'s' if count != 1 else ''} you cannot see"
                        " (blind round)")])
            return
        hand = screen.own_hand(view)
        self.echo([("class:title", "your hand: "),
                   *screen.hand_fragments(view.notation, hand, view.trump_groups(),
                                          self._arrived(hand))])

    def _arrived(self, hand: int) -> int:
        """The cards of ``hand`` received since the person last gave up cards (the
        kitty, a hand-out), which the hand marks; none when the whole hand is new
        (a new deal, Pasur's next four cards)."""
        deal, base, last = self._held
        if deal != self.deal or not hand & last:
            base = hand
        elif last & ~hand:  # cards played or given since the hand was last shown
            base = hand & last
        self._held = (self.deal, base, hand)
        return hand & ~base

    def show_table(self, view: HandState | None = None) -> None:
        view = view or self.current()
        if view is None:
            self.echo("table: no deal is in progress")
            return
        fragments = screen.table_fragments(view, self.names)
        if fragments and fragments[-1][1] == "\n":
            fragments = fragments[:-1]
        self.echo(fragments)

    def show_position(self, view: HandState | None = None) -> None:
        self.show_table(view)
        self.show_hand(view)

    def show_scores(self) -> None:
        if not self.rows:
            self.echo("no deal has been scored yet")
            return
        self.echo(screen.score_table(self.game, self.names, self.rows))

    def show_result(self, winner: int | list[int]) -> None:
        names = self.names
        mine = self.seat % 2 if self.game.units == "teams" else self.seat
        if isinstance(winner, list):
            won = mine in winner
            text = "shared win: " + ", ".join(self.game.unit_name(u, names) for u in winner)
        else:
            won = winner == mine
            text = f"winner: {self.game.unit_name(winner, names)}"
        self.echo([("class:title", text + (" (you!)" if won else ""))])

    def toolbar(self) -> StyleAndTextTuples:
        if not self.names:  # (a joiner before the table is seated: no game known yet)
            return [("class:bottom-toolbar", f" {self.status() or 'waiting'} ")]
        parts = [self.game.title, f"deal {self.deal}" if self.deal else "seating"]
        view = self.current()
        if view is not None:
            parts.append(screen.phase_name(view))
            mover = -1 if view.is_terminal() else view.current_player()
            if mover == self.seat:
                parts.append("your turn")
            elif 0 <= mover < len(self.names):
                parts.append(f"{self.names[mover]} to play")
        if self.totals and self.names:
            parts.append(screen.scores_text(self.game, self.names, self.totals))
        status = self.status()
        if status:
            parts.append(status)
        return [("class:bottom-toolbar", " " + " | ".join(parts) + " ")]

    def _refresh(self) -> None:
        app = self.session.app
        if app.is_running:
            app.invalidate()

    # ------------------------------------------------------------------- input

    async def read(self, message: object, *, moves: bool = True) -> str:
        """One line from the person (``message``: text or a callable giving it), as
        printable text (:func:`typed`); :class:`guest.Interrupted` on Ctrl-C,
        :class:`EOFError` at the end of input."""
        hook = getattr(self, "before_prompt", None)
        if hook is not None:
            hook(self, message() if callable(message) else message)
        session = self.session if moves else self.plain
        return typed(await guest.await_asyncio(
            lambda: session.prompt_async(message, handle_sigint=False)))  # type: ignore[arg-type]

    def take_move(self, line: str) -> int | None:
        """The legal action ``line`` names at the person's turn (or picks among the
        numbered choices), else None after saying why or asking which."""
        turn = self.turn
        assert turn is not None
        text = line.strip()
        if self.choices is not None:
            choices, self.choices = self.choices, None
            if text.isdigit() and 1 <= int(text) <= len(choices):
                return choices[int(text) - 1]
        result = parse_move(turn, self.seat, text)
        if isinstance(result, int):
            return result
        if isinstance(result, tuple):
            self.choices = result
            self.echo("which one? " + ", ".join(
                f"{k}: {turn.text(a)}" for k, a in enumerate(result, 1))
                + f" (type 1 to {len(result)}, or the whole move)")
            return None
        self.refuse(turn, result)
        return None

    def refuse(self, turn: Turn, refusal: str) -> None:
        """Why the entry is refused, then what is legal, each on its line."""
        reason, said, legal = refusal.partition("; legal")
        if len(reason) > REFUSAL:
            reason = reason[:REFUSAL - 3] + "..."
        self.error(f"not accepted: {reason}")
        self.echo("legal" + legal if said else legal_summary(turn))

    def move_message(self) -> str:
        return "which one?> " if self.choices is not None else "your move> "

    async def command(self, line: str) -> bool:
        """Run ``line`` if it is a command (True), else False (it may be a move)."""
        word, _, rest = line.strip().partition(" ")
        word = word.lower()
        if word not in self.commands:
            return False
        await self.run_command(word, rest.strip())
        return True

    async def run_command(self, word: str, rest: str) -> None:
        if word == "help":
            self.echo(self.help(rest))
        elif word == "score":
            self.show_scores()
        elif word == "save":
            self.save(rest)
        elif word == "hand":
            self.show_hand()
        elif word == "table":
            self.show_table()
        elif word == "last":
            view = self.current()
            self.echo(screen.last_trick_fragments(view, self.names) if view is not None
                      else "last: no deal is in progress")
        elif word == "history":
            self.echo("\n".join(self.log) if self.log else "nothing has happened yet")
        elif word == "hint":
            await self.hint()

    def help(self, topic: str) -> str:
        if topic.strip().lower() in ("", "commands"):
            width = max(len(name) for name, _ in self.command_help) + 2
            return "\n".join(["Type a move, or one of these commands:",
                              *(f"  {name:<{width}}{text}" for name, text in self.command_help),
                              "Tab completes the legal moves only; Up/Down recall what you"
                              " typed."])
        if not self.names:
            return "the table is not seated yet: help rules and help moves follow its game"
        return help_text(self.game, topic, self.options())

    def options(self) -> dict[str, int]:
        return {}

    async def hint(self) -> None:
        turn = self.turn
        if turn is None:
            self.echo("hint: it is not your move")
            return
        if not self.hint_allowed or self.hint_bot is None:
            self.echo("hint: this table does not allow hints")
            return
        self.echo("thinking...")
        action, share = await trio.to_thread.run_sync(self.hint_bot.choose, turn.view.clone(),
                                                      self.hint_rng)
        if self.turn is not turn:
            return  # (the move was made meanwhile: the hint is stale)
        how = f" (the search spent {share:.0%} of its time on it)" \
            if share is not None and share >= 0.01 else ""  # (a share of visits, not a certainty)
        self.echo(f"hint: {turn.text(action)}{how}")

    # ------------------------------------------------------------------- files

    def save(self, path: str) -> bool:
        """Write the finished deals' hand history (the deal in progress stays out: its
        record holds every seat's cards); False, said, if it cannot be written."""
        path = path.strip()
        if not path:
            self.echo("save FILE: name the file to write")
            return False
        history, note = self.finished_history()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(history.dumps())
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.error(f"cannot write {path!r}: {reason}")
            return False
        self.echo(f"hand history saved to {path}{note}")
        return True

    async def offer_save(self) -> None:
        """At the end: ask for a file name until the history is written or skipped."""
        while True:
            try:
                line = await self.read("save the hand history? file name, or Enter to skip> ",
                                       moves=False)
            except (guest.Interrupted, EOFError):
                return
            if line.strip().lower() in ("", "n", "no", "quit", "q") or self.save(line):
                return
            self.echo("try another file name, or Enter to skip")
