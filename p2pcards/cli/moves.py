"""Reading moves at the prompt: the legal moves of a turn, completion, and parsing.

Both prompts (a local table's and a networked table's) read moves here, so a
move is typed the same way at every table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from p2pcards.games import HandState, IllegalAction
from p2pcards.games.cards import CardError, bits
from p2pcards.games.core import ActionSyntaxError

MANY = 300
LISTED = 24

COMMANDS = ("help", "hint", "hand", "table", "score", "last", "history", "save", "undo",
            "quit")


@dataclass
class Turn:
    """What the prompt knows about the move being asked for."""

    view: HandState
    legal: list[int]
    texts: dict[str, int] = field(default_factory=dict)
    names: Sequence[str] = ()
    """The table's names by seat (a move may name a seat by its name)."""

    @classmethod
    def of(cls, view: HandState, names: Sequence[str] = ()) -> Turn:
        legal = view.legal_actions()
        seat = view.observer
        texts = {view.format_action(a, seat=seat): a for a in legal} if len(legal) <= MANY \
            else {}
        return cls(view, legal, texts, names)


class HasTurn(Protocol):
    turn: Turn | None


class MoveCompleter(Completer):
    """Tab offers only legal moves (and the commands); nothing else."""

    def __init__(self, repl: HasTurn, commands: Sequence[str] = COMMANDS):
        self.repl = repl
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent
                        ) -> Iterable[Completion]:
        typed = document.text_before_cursor.lstrip()
        lower = typed.lower()
        turn = self.repl.turn
        if " " not in typed:
            for name in self.commands:
                if name.startswith(lower):
                    yield Completion(name, start_position=-len(typed), display_meta="command")
        if turn is None:
            return
        if turn.texts:
            for text in turn.texts:
                if text.lower().startswith(lower):
                    yield Completion(text, start_position=-len(typed))
            return
        yield from self._card_by_card(turn, typed)

    @staticmethod
    def _card_by_card(turn: Turn, typed: str) -> Iterable[Completion]:
        """Long multi-card moves (the Bid Whist discard, a Control Nut! bid from a long
        hand): the verb, then the cards that may still be named."""
        view = turn.view
        verb = view.format_action(turn.legal[0], seat=view.observer).split()[0]
        words = typed.split(" ")
        if len(words) == 1:
            if verb.startswith(words[0].lower()):
                yield Completion(verb + " ", start_position=-len(typed))
            return
        notation = view.notation
        named = set()
        for word in words[1:-1]:
            try:
                named.add(notation.parse(word))
            except CardError:
                continue
        limit, eligible = view.multi_card_rule()
        if len(named) >= limit:
            return
        last = words[-1].upper()
        for card in bits(eligible):
            name = notation.name(card)
            if card not in named and name.startswith(last):
                yield Completion(name, start_position=-len(words[-1]))


def parse_move(turn: Turn, seat: int, line: str) -> int | str:
    """The legal action ``line`` names for ``seat``, else why it is not one."""
    text = " ".join(line.split())
    view = turn.view
    try:
        action = view.parse_action(text)
    except (ActionSyntaxError, CardError, ValueError) as first:
        short = view.shorthand(text)  # a card alone: playing it, where the game says so
        if short is None:
            return str(first)
        try:
            action = view.parse_action(short)
        except (ActionSyntaxError, CardError, ValueError):
            return str(first)
    try:
        view.check_actor(seat)
        view.check(action)
    except IllegalAction as exc:
        return str(exc)
    if action not in turn.legal:
        return "not a legal move now"
    return action


def legal_summary(turn: Turn) -> str:
    if not turn.texts:
        return f"legal: {len(turn.legal)} choices; type the verb and Tab for the cards"
    texts = list(turn.texts)
    shown = ", ".join(texts[:LISTED])
    more = f" ... ({len(texts)} in all; Tab lists them)" if len(texts) > LISTED else ""
    return f"legal: {shown}{more}"
