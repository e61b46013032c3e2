"""The watcher's prompt (``p2pcards join --watch``): a player's prompt, read-only.

The same screen and commands as a seat's (:class:`~p2pcards.cli.netrepl.NetPrompt`),
told from the view of a seat that holds no cards: every move as everyone saw
it, the trick winners, the scores.  ``hand SEAT`` (a number or a name) shows
what everyone knows of a seat's hand: in a deal, the cards shown to everyone
that lie there (none, mostly); after a deal, its hand as dealt where the deck
revealed it (the lock deck's audit), or that it stays secret (the proved
deck).  A move gets "you are watching"; ``say`` works where the host lets
watchers chat; ``quit`` leaves at once (the table does not wait for a watcher).
"""

from __future__ import annotations

from p2pcards.cli.netrepl import Left, NetPrompt
from p2pcards.cli.screen import hand_fragments
from p2pcards.games import HandState
from p2pcards.history import HIDDEN
from p2pcards.table.kinds import printable

WATCHING = "you are watching: the moves are the players' (help lists what you may type)"


class WatchPrompt(NetPrompt):
    commands = ("help", "hand", "table", "score", "last", "history", "save", "who", "say",
                "quit")
    command_help = (
        ("help [topic]", "this text; topics: rules, moves, commands"),
        ("hand SEAT", "what everyone knows of a seat's hand (a number or a name): in a deal,"
         " only cards shown to everyone; after it, the hand as dealt if the deck revealed it"),
        ("table", "the table: bids, contract, the trick"),
        ("score", "the score so far, deal by deal"),
        ("last", "the previous trick and who won it"),
        ("history", "this deal as everyone saw it (? for the cards no one was shown)"),
        ("save FILE", "write the hand history of the finished deals"),
        ("who", "the roster, its safety number, the table's settings and who watches"),
        ("say TEXT", "chat to the table, where its host lets watchers chat"),
        ("quit", "stop watching (the table goes on)"),
    )

    welcome = ("you are watching: the moves are the players'; type help for what you may"
               " type, help rules for the game")

    def help(self, topic: str) -> str:
        if topic.strip().lower() in ("", "commands"):
            width = max(len(name) for name, _ in self.command_help) + 2
            return "\n".join(["You are watching (the moves are the players'); type one of"
                              " these commands:",
                              *(f"  {name:<{width}}{text}" for name, text in self.command_help),
                              "Tab completes the commands; Up/Down recall what you typed."])
        return super().help(topic)

    def status(self) -> str:
        state = super().status()
        return f"watching{' | ' + state if state else ''}"

    async def take(self, line: str) -> None:
        if self.confirming:  # (the answer to Ctrl-C's question to leave)
            await super().take(line)
            return
        line = line.encode("utf-8", "replace").decode("utf-8")
        if not line.strip() or await self.command(line):
            return
        self.echo(WATCHING)

    async def run_command(self, word: str, rest: str) -> None:
        if word == "quit":
            raise Left
        if word == "hand":
            self.show_seat(rest)
        elif word == "who":
            self.echo(self.roster_text or "the table is not seated yet")
            self.echo("watching (no seat): " + (", ".join(self.watchers) or "no one"))
        else:
            await super().run_command(word, rest)

    def show_result(self, winner: int | list[int]) -> None:
        names = self.names
        if isinstance(winner, list):
            text = "shared win: " + ", ".join(self.game.unit_name(u, names) for u in winner)
        else:
            text = f"winner: {self.game.unit_name(winner, names)}"
        self.echo([("class:title", text)])

    # ------------------------------------------------------------ hand SEAT

    def _seat_named(self, text: str) -> int | None:
        text = text.strip()
        if text.isdigit() and int(text) < len(self.real_names):
            return int(text)
        lowered = [n.casefold() for n in self.real_names]
        return lowered.index(text.casefold()) if text.casefold() in lowered else None

    def show_seat(self, text: str) -> None:
        if not text.strip():
            self.echo("hand SEAT: whose hand (a seat number or a name); you hold none")
            return
        seat = self._seat_named(text)
        if seat is None:
            self.echo(f"hand: no seat {printable(text, 32)!r} at this table (who lists them)")
            return
        name = self.real_names[seat]
        view = self.current()
        if view is not None and not view.is_terminal():
            self._in_deal(view, seat, name)
        else:
            self._as_dealt(seat, name)

    def _in_deal(self, view: HandState, seat: int, name: str) -> None:
        others = 0
        for place, cards in enumerate(view.may):
            if place != seat:
                others |= cards
        known = view.may[seat] & ~others
        count = view.count[seat]
        if not known:
            self.echo(f"{name}: {count} card{'s' if count != 1 else ''}, none shown to"
                      " everyone (you are watching)")
            return
        self.echo([("class:title", f"{name}: {count} cards; shown to everyone there: "),
                   *hand_fragments(view.notation, known)])

    def _as_dealt(self, seat: int, name: str) -> None:
        table = self.table
        run = table.finished[-1] if table is not None and table.finished else None
        record = run.outcome.record if run is not None and run.outcome is not None else None
        if run is None or record is None:
            self.echo("hand: no deal is in progress, and none has ended")
            return
        setup = run.ledger.setup
        notation = setup.game.notation
        if record.public or any(card == HIDDEN for card in record.deck) or \
                record.deck == [notation.name(c) for c in run.ledger.blank_deck()]:
            self.echo(f"{name}'s cards in deal {run.index + 1} stay secret: the deck showed"
                      " only the cards played (the proved deck reveals nothing more)")
            return
        state = setup.deal([notation.parse(card) for card in record.deck])
        self.echo([("class:title", f"{name} held, as dealt in deal {run.index + 1}: "),
                   *hand_fragments(notation, state.may[seat])])
