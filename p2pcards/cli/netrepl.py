"""The prompt at a networked table: a person's seat in ``p2pcards host`` or ``join``.

The same prompt as a local table's (:class:`p2pcards.cli.prompt.Prompt`): the
same screen, commands and move reading.  It stays open for the whole game
(Trio is a guest on prompt-toolkit's asyncio loop, :mod:`p2pcards.cli.guest`):
the table's events, joins, leaves and chat print above it (``patch_stdout``),
and each move is told from this seat's own view as the session saw it.  When
the table asks this seat for a move the prompt turns into ``your move>``.
A networked table adds ``say``, ``who``, ``void`` (a proposal to void the
deal, in place of a move) and the connection in the toolbar; with a turn
timer, a move not made in time is made by the heuristic bot.  How the table's
events are shown (queued, paced, the pause between deals) is
:mod:`p2pcards.cli.netshow`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import trio
from prompt_toolkit.filters import Condition
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import Output

from p2pcards.bots import SearchBot, heuristic_bot
from p2pcards.cli import guest, screen
from p2pcards.cli.moves import Turn
from p2pcards.cli.netshow import SHOWN, ShowingPrompt
from p2pcards.cli.prompt import LEAVE, Prompt
from p2pcards.games import GAMES, HandState
from p2pcards.history import History
from p2pcards.net.again import offer
from p2pcards.net.driver import VoidProposal
from p2pcards.net.identity import device_id, show_id
from p2pcards.net.presence import COUNTDOWN, warning
from p2pcards.net.settings import Settings
from p2pcards.table.kinds import printable
from p2pcards.table.roster import Roster, describe_deck

QUEUED_CHAT = 5
"""Lines said before the table is seated at a host that takes no chat in the lobby (an
older build), sent once it is."""
CONFIRM = "Leave the table? [y/N] "
VOID_REASON = 80
"""Most characters of a reason to void the deal (the table's message holds no more)."""


class Left(Exception):
    """The person left the table (the journal keeps the game: the same command resumes)."""


class TableNode(Protocol):
    """The host or joiner this prompt sits at, as far as another game goes."""

    async def say_again(self, game: str | None, options: dict[str, int] | None
                        ) -> str | None:
        """Ask for another game, or agree to the one proposed: None, or why not."""

    async def leave(self) -> bool:
        """Leave once the game is over (no more games): whether the table was told."""


class NetPrompt(ShowingPrompt):
    commands = (*Prompt.commands, "who", "say", "void", "again", "back", "invite")
    command_help = (*Prompt.command_help[:-1],
                    ("who", "the roster, its safety number and the table's settings"),
                    ("invite", "the host's invite again, and how the table can be reached"),
                    ("say TEXT", "chat to the table (in the lobby: to who has come)"),
                    ("void REASON", "propose, at your move, to void the deal (all must agree)"),
                    ("again [GAME] [N=V]", "once the game is over: another game with the same"
                     " players (all must agree)"),
                    ("back", "after you were away: your seat again from the next deal (any"
                     " key does it too)"),
                    ("quit", "leave (asks first; Ctrl-C asks too); after a game: no more"
                     " games, for everyone"))

    welcome = "type help for the commands, help rules for the game; Tab completes moves"
    """Said once the table is seated."""

    def __init__(self, game: str, *, hint_bot: SearchBot | None = None,
                 input: Input | None = None, output: Output | None = None,
                 four_colour: bool = False):
        super().__init__(GAMES[game] if game in GAMES else GAMES["pasur"], hint_bot=hint_bot,
                         input=input, output=output, four_colour=four_colour)
        self.question: str | None = None
        self.chosen: trio.MemorySendChannel[int | bool | VoidProposal] | None = None
        self.confirming = False
        self.leaving = False
        self.terminated = ""
        """The signal that stopped it, SIGTERM or SIGHUP ("": none; the command says so,
        with its exit status)."""
        self._reading: trio.CancelScope | None = None
        self.timer = 0.0
        self.hint_allowed = False
        self.chat: Callable[[str], Awaitable[bool]] | None = None
        """How to say a line to the table (whether it was sent; if not, it said why)."""
        self.lobby_chat: Callable[[str], Awaitable[bool | None]] | None = None
        """How to say a line in the lobby, before the table is seated: whether it was sent
        (if not, it said why); None: the host takes no lobby chat (the line waits)."""
        self.queued: list[str] = []
        self.roster_text = ""
        self.connected = True
        self.save_to: str | None = None
        self.before_prompt: Callable[[NetPrompt, str], None] | None = None
        """Called as each prompt opens (tests type their answer here)."""
        self.rng = random.Random(random.SystemRandom().getrandbits(64))
        self.node: TableNode | None = None
        """The host or joiner, for another game (None: one game only)."""
        self.lobby_line: Callable[[], str | None] | None = None
        """Who has sat so far, before the table is seated (``who``)."""
        self.invite_lines: Callable[[], list[str]] | None = None
        """The host's invite and how the table can be reached (None: not the host)."""
        self.between = False
        """The game is over and the table waits for the players' word."""
        self.match: list[str] = []
        """The match score across the games played so far."""
        self.saved: bytes | None = None
        """The table whose hand history the person saved (``save``)."""
        self.watchers: list[str] = []
        """Who watches the table with no seat (``who`` lists them)."""
        self.back: Callable[[], None] | None = None
        """Set while the person is away (a stand-in plays their seat): says they are
        back."""
        self.stood_in = False
        """A stand-in holds this person's seat (the roster as it stands)."""
        self.returning = False
        """The person came back; their seat is theirs again from the next deal."""
        self.bell = True
        """Ring the terminal's bell with the warnings before a forfeit (``--no-bell``)."""
        self.due: tuple[int, float, float] | None = None
        """(the seat due, its seconds left, when that was told) from the driver's clock."""
        self.warned = float("inf")
        """The seconds left at the last warning of this turn."""
        self.started = float("inf")
        """The seconds left when this turn's clock was first told."""
        self.asked_at = 0.0
        """When this seat's move was asked for (its ``--timer`` counts from then)."""
        self._asking: object = None
        self._status = ""
        """The connection and countdown text the toolbar last showed."""
        bindings = KeyBindings()

        @bindings.add(Keys.Any, filter=Condition(lambda: self.back is not None))
        def _any_key(event: KeyPressEvent) -> None:  # (away: any key says back, and types)
            self._come_back()
            event.current_buffer.insert_text(event.data)

        @bindings.add(Keys.Any, filter=Condition(
            lambda: self._pausing is not None and self.back is None))
        def _go_on_key(event: KeyPressEvent) -> None:  # (the pause: any key ends it, and
            self.go_on()  # types)
            event.current_buffer.insert_text(event.data)
        self.session.key_bindings = merge_key_bindings(
            [b for b in (self.session.key_bindings, bindings) if b is not None])

    def watched(self, names: Sequence[str]) -> None:
        """Who watches the table now."""
        self.watchers = list(names)

    # ---------------------------------------------------------- what the table says

    def current(self) -> HandState | None:
        run = None if self.table is None else self.table.run
        return None if run is None else run.view

    def finished_history(self) -> tuple[History, str]:
        table = self.table
        if table is None:
            return History(self.game.name, list(self.real_names), {}, []), ""
        roster = table.roster
        history = History(roster.game, [s.name for s in roster.seats], dict(roster.options),
                          [run.outcome.record for run in table.finished if run.outcome])
        note = " (the finished deals: the one in progress is still secret)" \
            if table.run is not None else ""
        return history, note

    def options(self) -> dict[str, int]:
        return {} if self.table is None else dict(self.table.roster.options)

    def status(self) -> str:
        if self.chat is None:
            return "waiting for the table to be seated"
        parts = [] if self.connected else ["reconnecting..."]
        if self._pausing is not None:
            pause = max(0, math.ceil(self._pausing - trio.current_time()))
            parts.append(f"next deal in {pause} s (any key: now)")
        if self.back is not None:
            parts.append("away: a stand-in plays your seat (type back)")
        left = self.time_left()
        if left is not None and self.due is not None and left < COUNTDOWN:
            seat = self.due[0]
            who = self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"
            parts.append(f"{who}: {max(0, math.ceil(left))} s left")
        return " | ".join(parts)

    def time_left(self) -> float | None:
        """Seconds left to the seat due (this seat's: before its forfeit, or its
        ``--timer``, whichever comes first)."""
        if self.due is None:
            return None
        seat, left, told = self.due
        left -= trio.current_time() - told
        if seat == self.seat and self.turn is not None and self.timer:
            left = min(left, self.timer - (trio.current_time() - self.asked_at))
        return left

    def countdown(self, seat: int | None, left: float | None) -> None:
        """The driver's clock: the seat due and its seconds left.  The person whose move
        it is hears a line (and the bell) at 60, 30 and 10 seconds left."""
        if seat is None or left is None:
            self.due, self.warned = None, float("inf")
            if self._status != self.status():
                self._status = self.status()
                self._refresh()
            return
        anew = self.due is None or self.due[0] != seat or left > self.due[1]
        self.due = (seat, left, trio.current_time())
        own = self.time_left()
        if anew:  # (another seat, or another turn: the clock anew, warning only of what
            self.warned = self.started = left if own is None else own  # is crossed while
            # it runs, so a short grace period or timer does not ring at every turn's start)
        if seat == self.seat and self.turn is not None and own is not None:
            threshold = warning(own, self.warned, self.started)
            if threshold is not None:
                self.warned = threshold
                then = "the heuristic bot moves for you" if own < left - 0.5 else \
                    "you forfeit the deal and a stand-in takes your seat"
                self.echo([("class:error", f"your move: {max(1, math.ceil(own))} s left,"
                                           f" then {then}")])
                if self.bell:
                    self.session.output.bell()
                    self.session.output.flush()
        status = self.status()
        if status != self._status:  # (the toolbar drawn again only when it changes)
            self._status = status
            self._refresh()

    def away(self, back: Callable[[], None] | None) -> None:
        """Away (``back``: how to say they are back), or no more (None)."""
        was, self.back = self.back, back
        if back is None:
            self.returning = False
        if back is not None and was is None:
            self.echo("you were away: a stand-in plays your seat from the next deal."
                      " Press any key or type back to come back")
        self._refresh()

    def _come_back(self) -> None:
        back, self.back = self.back, None
        if back is not None:
            back()
            self.returning = True
            self.echo("welcome back: your seat is yours again from the next deal")
            self._refresh()

    # ---------------------------------------------------------- the driver's side

    async def move(self, view: HandState) -> int | VoidProposal:
        asking = self._asking = object()
        self.asked_at = trio.current_time()  # (the turn timer runs from the table's asking,
        # as the other seats' count of silence does, the showing below included)
        await self.shown()  # (the moves before this one, paced, and the pause first)
        self.seat = view.observer
        self.turn = Turn.of(view, self.names)
        self.choices = None
        self.show_position(view)
        self._hand_seen = screen.own_hand(view) if view.observer == self.seat else 0
        send, receive = trio.open_memory_channel[int | bool | VoidProposal](1)
        self.chosen = send
        self._refresh()
        try:
            with trio.move_on_after(self.timer or float("inf")):
                chosen = await receive.receive()
                return chosen if isinstance(chosen, VoidProposal) else int(chosen)
            code = heuristic_bot(view.clone(), self.rng)
            self.echo(f"time is up: {self.turn.text(code)} is played for you")
            return code
        finally:
            if self._asking is asking:  # (a turn asked again since keeps its state)
                self.turn = None
                self.choices = None
                self.chosen = None
                self._refresh()

    async def answer(self, question: str) -> bool:
        """The person's answer to a proposal to void the deal (``question``: its reason)."""
        return await self.yes_or_no(f"void the deal ({printable(question, SHOWN)})?")

    async def yes_or_no(self, question: str) -> bool:
        """Ask ``question`` at the prompt; True for yes."""
        self.show_now()
        self.question = question
        self.echo(f"{question} answer yes or no")
        send, receive = trio.open_memory_channel[int | bool | VoidProposal](1)
        self.chosen = send
        self._refresh()
        try:
            return bool(await receive.receive())
        finally:
            self.question = None
            self.chosen = None
            self._refresh()

    def seated(self, roster: Roster, seat: int, settings: Settings,
               chat: Callable[[str], Awaitable[bool]]) -> None:
        self.show_now()
        if self.table is not None and roster.table != self.table.table:  # another game
            self.table, self.rows, self.totals, self.deal, self.log = None, [], [], 0, []
            self.between = False
            self.echo("")
        self.seat = seat
        self.game = roster.rules
        self.timer = settings.timer
        self.hint_allowed = settings.hint
        self.chat = chat
        self.settings = settings
        self.totals = self.totals or [0] * self.game.unit_count(roster.players)
        self.reseated(roster)
        labels = []
        for s, entry in enumerate(roster.seats):
            who = "you" if s == seat else f"{printable(entry.bot, 16)} bot" if entry.bot \
                else "player"
            team = f", team {s % 2}" if self.game.units == "teams" else ""
            labels.append(f"{printable(entry.name, 32)} ({who}{team})")
        self.echo([("class:title", self.game.title), ("", ": " + ", ".join(labels))])
        self.echo(self.welcome)
        if self.queued and self._reading is not None:
            self._reading.cancel()  # (the prompt's loop says them: it can await the chat)

    def reseated(self, roster: Roster) -> None:
        """Seats changed hands (a stand-in bot came, or a player came back): ``who``
        shows the roster as it stands and its new safety number."""
        self.real_names = [printable(e.name, 32) for e in roster.seats]
        standing_in = 0 <= self.seat < len(roster.seats) and bool(
            roster.seats[self.seat].bot) and roster.seats[self.seat].run_by != self.seat
        self.stood_in = standing_in
        me = "your stand-in" if standing_in else "you"
        self.names = [me if i == self.seat else n for i, n in enumerate(self.real_names)]
        self.roster_text = "\n".join(
            [f"{i}: {self.real_names[i]} [{show_id(device_id(e.identity), 4)}]"
             + (f" ({printable(e.bot, 16)} bot run by seat {e.run_by})" if e.bot else "")
             + (" (you)" if i == self.seat else "") for i, e in enumerate(roster.seats)]
            + [f"safety number: {roster.safety_number()} (compare it aloud)",
               f"table: {self.settings.describe()}", describe_deck(roster.deck)])

    def connection(self, up: bool) -> None:
        """The link to the table broke (False) or is back (True: the position again)."""
        was, self.connected = self.connected, up
        if up and not was:
            self.echo("back at the table")
            view = self.turn.view if self.turn is not None else self.current()
            if view is not None:
                self.show_position(view)
        self._refresh()

    # ------------------------------------------------------------ the prompt

    def _message(self) -> str:
        if self.confirming:
            return CONFIRM
        if self.back is not None:
            return "away (type back)> "
        if self.turn is not None:
            return self.move_message()
        if self.question is not None:
            return "yes or no> "
        if self._pausing is not None:
            return "next deal (any key)> "
        if self.chat is None:
            return "lobby> "
        view = self.current()
        if view is not None and not view.is_terminal():
            mover = view.current_player()
            if 0 <= mover < len(self.names) and mover != self.seat:
                return f"waiting for {self.names[mover]}> "
        return "table> "

    async def run(self) -> None:
        """The prompt, until the person leaves (:class:`Left`) or the task is cancelled.
        Ctrl-C asks first; a second Ctrl-C, or "y", leaves.  (Ctrl-C is a key while the
        prompt reads, and a signal in the moment between two reads.)"""
        loop = asyncio.get_running_loop()
        token = trio.lowlevel.current_trio_token()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # (threads)
            loop.add_signal_handler(signal.SIGINT, token.run_sync_soon, self._interrupt)
            for stop in (signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(stop, token.run_sync_soon, self._terminate, stop.name)
        try:
            left: Left | None = None
            async with trio.open_nursery() as nursery:  # (the events shown beside the reading)
                self._showing = True
                nursery.start_soon(self._show)
                try:
                    await self._lines()
                except Left as exc:  # (raised as itself, not in the nursery's group)
                    left = exc
                nursery.cancel_scope.cancel()
            if left is not None:
                raise left
        except Left:
            if self.between and self.node is not None:  # (after a game: no more games)
                with trio.move_on_after(5):
                    await self.node.leave()
            raise
        finally:
            self._showing = False
            self.show_now()  # (nothing the table told is lost when the prompt closes)
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    loop.remove_signal_handler(stop)

    async def _lines(self) -> None:
        """Read and take lines until the person leaves (:class:`Left`)."""
        while True:
            await self._say_queued()
            with trio.CancelScope() as self._reading:
                try:
                    line = await self.read(self._message)
                except guest.Interrupted:
                    self._interrupt()
                    if self.leaving:
                        raise Left from None
                    continue
                except EOFError:
                    raise Left from None
            if self._reading.cancelled_caught:
                if self.leaving:
                    raise Left
                continue  # (asked again: the question to leave)
            await self.take(line)

    def _terminate(self, name: str = "SIGTERM") -> None:
        """SIGTERM or SIGHUP: leave the table at once (the same command resumes the
        game)."""
        self.terminated = name
        self.leaving = True
        if self._reading is not None:
            self._reading.cancel()

    def _interrupt(self) -> None:
        """Ctrl-C: ask whether to leave; asked already, leave."""
        if self.confirming:
            self.leaving = True
        self.confirming = True
        if self._reading is not None:
            self._reading.cancel()

    async def take(self, line: str) -> None:
        line = line.encode("utf-8", "replace").decode("utf-8")  # (bytes that are no text)
        word = line.strip().partition(" ")[0]
        lower = word.lower()
        if self.confirming:
            self.confirming = False
            if lower in LEAVE:
                raise Left
            self.echo("staying at the table")
            return
        self.go_on()  # (a line typed in the pause between two deals ends it)
        if self.back is not None:
            self._come_back()  # (a line typed while away: the person is back)
            if lower == "back":
                return
        if not word:
            return
        if self.question is not None and lower in ("y", "yes", "n", "no"):
            self._choose(lower.startswith("y"))
        elif await self.command(line):
            return
        elif self.turn is not None:
            action = self.take_move(line)
            if action is not None:
                self._choose(action)
        elif self.question is not None:
            self.echo(f"{self.question} answer yes or no")
        else:
            self.echo("it is not your move (help lists the commands; say TEXT chats)")

    def _choose(self, value: int | bool | VoidProposal) -> None:
        if self.chosen is not None:
            self.chosen.send_nowait(value)
            self.chosen = None

    async def run_command(self, word: str, rest: str) -> None:
        if word == "quit" and self.between and self.node is not None:
            if not await self.node.leave():
                raise Left
        elif word == "quit":
            self.confirming = True
        elif word == "again":
            await self._again(rest)
        elif word == "score":
            await super().run_command(word, rest)
            if self.match:
                self.echo("\n".join(self.match))
        elif word == "who":
            lobby = self.lobby_line() if self.lobby_line is not None else None
            self.echo(self.roster_text or lobby or "the table is not seated yet")
            if self.watchers:
                self.echo("watching (no seat): " + ", ".join(self.watchers))
        elif word == "say":
            await self._say(rest)
        elif word == "invite":
            self.echo("\n".join(self.invite_lines()) if self.invite_lines is not None else
                      "invite: the host has the invite (its invite command shows it again)")
        elif word == "back" and not self.returning:
            self.echo("back: you are at the table (it is for after you were away)")
        elif word == "back":
            pass  # (the first key of "back" said it: the welcome is on the screen)
        elif word == "void":
            if self.turn is None:
                self.echo("void: you propose it in place of a move, at your turn")
            else:
                self._choose(VoidProposal(rest[:VOID_REASON] or "voided by every seat"))
        elif word == "hand" and self.stood_in:
            self.echo("hand: a stand-in plays your seat this deal and holds its cards; you"
                      " see its plays as everyone does")
        elif word in ("hand", "table") and self.turn is not None:
            (self.show_hand if word == "hand" else self.show_table)(self.turn.view)
        else:
            await super().run_command(word, rest)

    async def _again(self, rest: str) -> None:
        """``again [GAME] [NAME=N ...]``: another game, or agree to the one proposed."""
        if self.node is None:
            self.echo("again: this table plays one game (--once)")
            return
        if not self.between:
            self.echo("again: the game is not over yet")
            return
        words = rest.split()
        game = words.pop(0).lower() if words and "=" not in words[0] else None
        options: dict[str, int] = {}
        for item in words:
            name, _, value = item.partition("=")
            if not name or not value.lstrip("-").isdigit():
                self.echo(f"again: {printable(item, 40)!r} is not an option: NAME=N, as in"
                          " target=30")
                return
            options[name] = int(value)
        problem = await self.node.say_again(game, options or None)
        if problem is not None:
            self.echo(f"again: {problem}")

    def game_over(self, match: Sequence[str], *, goes_on: bool) -> None:
        """The game is over: the match score, and (the table staying for another game)
        what may be typed now."""
        self.show_now()
        self.match = list(match)
        if match:
            self.echo("\n".join(match))
        self.between = goes_on and self.node is not None
        if self.between:
            view = self.current()
            players = len(self.real_names) or (view.players if view is not None else 0)
            self.echo(offer(self.game.name, players))
            if self.save_to is None:
                self.echo("(save FILE writes this game's hand history)")
        self._refresh()

    def save(self, path: str) -> bool:
        saved = super().save(path)
        if saved and self.table is not None and self.table.over:
            self.saved = self.table.table
        return saved

    async def _say_queued(self) -> None:
        """Say what was typed before the table was seated, once it is."""
        if self.chat is None or not self.queued:
            return
        queued, self.queued = self.queued, []
        self.echo(f"(saying the {len(queued)} line(s) typed before the table was seated)")
        for line in queued:
            await self._say(line)

    async def _say(self, text: str) -> None:
        if not text:
            self.echo("say TEXT: what to say to the table")
            return
        if self.chat is not None:
            if await self.chat(text):
                self.echo(f"you: {printable(text, SHOWN)}")
            return
        said = None if self.lobby_chat is None else await self.lobby_chat(text)
        if said is None:  # (a host that takes no lobby chat: the line waits)
            self._hold(text)
        elif said:  # (else not sent: it said why)
            self.echo(f"you (in the lobby): {printable(text, SHOWN)}")

    def _hold(self, text: str) -> None:
        """A line said before the table is seated, at a host that takes no lobby chat:
        said once the table is seated (at most :data:`QUEUED_CHAT` wait)."""
        if len(self.queued) < QUEUED_CHAT:
            self.queued.append(text)
            self.echo("(the table is not seated yet: said once it is)")
        else:
            self.echo(f"the table is not seated yet, and {QUEUED_CHAT} lines wait already:"
                      " not said")

    async def finish(self) -> None:
        """The game is over: offer to save its hand history (unless ``--save`` does, or
        the person saved it already)."""
        if self.save_to is None and self.table is not None and self.table.finished and \
                self.saved != self.table.table:
            await self.offer_save()
