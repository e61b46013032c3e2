"""Reading moves at the prompt: the legal moves of a turn, completion, and parsing.

Both prompts (a local table's and a networked table's) read moves here, so a
move is typed the same way at every table.  A move is read forgivingly and
matched to the legal moves, never to the letter of a hand history: the cards
of a move in any order (``give W13:1 A12:3``, ``discard 9S 2C``), seats by
name (``give A3:ben``), the game's words for its suits and kinds (``trump
hearts``, ``bid 4 nt``), a card alone for playing it, and part of a move
when only one legal move (or a few, for the prompt to ask) begins so
(``7H`` in Pasur: its only capture).  The moves are listed as they are
typed back: cards by the faces the hand shows (``play 10♥``), seats by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from p2pcards.cli.wording import speak
from p2pcards.games import HandState, IllegalAction
from p2pcards.games.cards import CardError, Notation, bits
from p2pcards.games.core import ActionSyntaxError

MANY = 300
LISTED = 24
NAMED = 6
"""At most this many legal moves are named in a refusal."""

Card = tuple[int, int]
"""A card of a move as read: ``(card, -1)``, or ``(card, seat)`` for ``CARD:SEAT``."""
Item = str | tuple[Card, ...]
"""A part of a move as read: a word (lower case, the game's own word for it), or a
run of cards, sorted (their order does not matter)."""
Key = tuple[Item, ...]


class Unread(ValueError):
    """Input naming no card, seat or word the move could hold; the message says which."""


@dataclass
class Reader:
    """How the words of a move are read at one table: its cards, words and seats."""

    notation: Notation
    words: dict[str, str]
    seats: dict[str, int]
    names: list[str]
    """How each seat is written in a move shown: its name where that reads back."""

    @classmethod
    def of(cls, view: HandState, names: Sequence[str] | None) -> Reader:
        players = view.players
        given = list(names or [])[:players]
        given += [str(s) for s in range(len(given), players)]
        lowered = [n.lower() for n in given]
        seats = {str(s): s for s in range(players)}
        shown = [str(s) for s in range(players)]
        for seat, name in enumerate(lowered):
            if _name_reads_back(name, lowered, view.notation):
                seats[name] = seat
                shown[seat] = given[seat]
        return cls(view.notation, dict(view.words), seats, shown)

    def token(self, word: str) -> str | Card:
        """A word of a move as read: the game's word, or a card (with a seat)."""
        card_text, colon, who = word.partition(":")
        if colon:
            seat = self.seats.get(who.lower())
            if seat is None:
                named = [n for n in self.names if not n.isdigit() and n != "you"]
                numbers = f"the seat numbers 0 to {len(self.names) - 1}"
                known = f"{', '.join(named)} or {numbers}" if named else numbers
                raise Unread(f"{who!r} names no seat here (seats: {known})")
            return (self.card(card_text), seat)
        try:
            return (self.notation.parse(word), -1)
        except CardError:
            pass
        lower = word.lower()
        return self.words.get(lower, lower)

    def card(self, text: str) -> int:
        try:
            return self.notation.parse(text)
        except CardError as exc:
            raise Unread(str(exc)) from None

    def key(self, text: str) -> Key:
        """The words of ``text`` as read, each run of cards as a set."""
        items: list[Item] = []
        run: list[Card] = []
        for word in text.split():
            token = self.token(word)
            if isinstance(token, str):
                if run:
                    items.append(self._run(run))
                    run = []
                items.append(token)
            else:
                run.append(token)
        if run:
            items.append(self._run(run))
        return tuple(items)

    def _run(self, run: list[Card]) -> tuple[Card, ...]:
        cards = [card for card, _ in run]
        for card in cards:
            if cards.count(card) > 1:
                raise Unread(f"{self.notation.face(card)} is named twice")
        return tuple(sorted(run))

    def canonical(self, text: str) -> str:
        """``text`` in the words of a hand history (names as seat numbers, the game's
        words for a person's), for the rules to read."""
        out = []
        for word in text.split():
            token = self.token(word)
            if isinstance(token, str):
                out.append(token if word.lower() in self.words else word)
            else:
                card, seat = token
                out.append(word if seat < 0 else f"{self.notation.name(card)}:{seat}")
        return " ".join(out)

    def shown(self, text: str) -> str:
        """An action text as listed for a person: cards by face, seats by name."""
        verb, *words = text.split()
        out = [verb]
        for word in words:
            card_text, colon, seat = word.partition(":")
            try:
                card = self.notation.parse(card_text)
            except CardError:
                out.append(word)
                continue
            face = self.notation.face(card)
            out.append(f"{face}:{self.names[int(seat)]}" if colon and seat.isdigit()
                       and int(seat) < len(self.names) else face if not colon else word)
        return " ".join(out)


def _name_reads_back(name: str, lowered: list[str], notation: Notation) -> bool:
    """Whether ``name`` can stand for its seat in a move: one word, no colon, not a
    number or a card, and no other seat's name."""
    if not name or any(c.isspace() for c in name) or ":" in name or name.isdigit() \
            or lowered.count(name) > 1:
        return False
    try:
        notation.parse(name)
    except CardError:
        return True
    return False


@dataclass
class Turn:
    """What the prompt knows about the move being asked for."""

    view: HandState
    legal: list[int]
    texts: dict[str, int] = field(default_factory=dict)
    """Each legal move as listed and typed back (``play 10♥``), when they are few."""
    names: list[str] = field(default_factory=list)
    reader: Reader | None = None
    keys: dict[Key, list[int]] = field(default_factory=dict)
    canonical: dict[str, str] = field(default_factory=dict)
    """Listed text -> the action text of a hand history (completion matches both)."""

    @classmethod
    def of(cls, view: HandState, names: Sequence[str] | None = None) -> Turn:
        """The turn of ``view``'s seat; ``names``: the table's names (the person's own
        seat may be named "you"), which stand for seats in moves (without them: seat
        numbers, and "you" for this seat in refusals)."""
        legal = view.legal_actions()
        seat = view.observer
        if names is None:
            names = ["you" if s == seat else f"seat {s}" for s in range(view.players)]
        reader = Reader.of(view, names)
        turn = cls(view, legal, names=list(names), reader=reader)
        if len(legal) <= MANY:
            for action in legal:
                text = view.format_action(action, seat=seat)
                shown = reader.shown(text)
                turn.texts[shown] = action
                turn.canonical[shown] = text
                turn.keys.setdefault(reader.key(text), []).append(action)
        return turn

    def text(self, action: int) -> str:
        """``action`` as the person reads it (a hint, a move played for them)."""
        view = self.view
        text = view.format_action(action, seat=view.observer)
        return self.reader.shown(text) if self.reader is not None else text


class HasTurn(Protocol):
    turn: Turn | None


class MoveCompleter(Completer):
    """Tab offers only legal moves (and the commands); nothing else."""

    def __init__(self, repl: HasTurn, commands: Sequence[str]):
        self.repl = repl
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent
                        ) -> Iterable[Completion]:
        typed = document.text_before_cursor.lstrip()
        lower = typed.lower()
        turn = self.repl.turn
        if " " not in typed and (typed or turn is None):  # (an empty line: the moves only)
            for name in self.commands:
                if name.startswith(lower):
                    yield Completion(name, start_position=-len(typed), display_meta="command")
        if turn is None:
            return
        if turn.texts:
            for text in turn.texts:
                if text.lower().startswith(lower) or \
                        turn.canonical.get(text, text).lower().startswith(lower):
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
            face = notation.face(card)
            if card not in named and (face.upper().startswith(last)
                                      or notation.name(card).startswith(last)):
                yield Completion(face, start_position=-len(words[-1]))


def parse_move(turn: Turn, seat: int, line: str) -> int | str | tuple[int, ...]:
    """What ``line`` typed by ``seat`` means among the legal moves of ``turn``.

    An ``int``: the one legal action it names.  A ``tuple`` of two or more legal
    actions: the text begins each of them and no more (a Pasur card alone with
    several captures, ``bid 4`` in Bid Whist); the prompt asks which.  A ``str``:
    why it is refused, and what is legal instead.

    The move is read forgivingly: its cards in any order, seats by name (the
    names given to :meth:`Turn.of`) or number, the game's words for its suits
    and kinds (:attr:`HandState.words`), any case, a card first for ``play``
    (:meth:`HandState.shorthand`).
    """
    text = " ".join(line.split())
    view = turn.view
    reader = turn.reader or Reader.of(view, turn.names)
    if not text:
        return _refusal(turn, "", "nothing typed")
    short = view.shorthand(text)
    texts = [text] if short is None or short == text else [text, short]
    try:
        keys = [reader.key(t) for t in texts]
    except Unread as exc:
        return _refusal(turn, texts[-1], str(exc))
    for key in keys:  # the whole of a legal move
        found = turn.keys.get(key)
        if found:
            return found[0] if len(found) == 1 else tuple(found)
    for key in keys:  # the beginning of one or more
        if len(key) < 2 and isinstance(key[0], str):
            continue
        begun = [a for k, actions in turn.keys.items() if k[:len(key)] == key for a in actions]
        if begun:
            return begun[0] if len(begun) == 1 else tuple(begun)
    return _by_the_rules(turn, seat, texts, reader)


def _by_the_rules(turn: Turn, seat: int, texts: list[str], reader: Reader) -> int | str:
    """Read as a hand history's action text: the action if legal (a move among too many
    to list), else the rules' reason."""
    view = turn.view
    word = texts[0]
    token = reader.token(word) if " " not in word else ""
    if not isinstance(token, str):  # a card alone that is not a move by itself
        with_it = [text for text, key in _listed_keys(turn) if any(
            isinstance(item, tuple) and any(card == token[0] for card, _ in item)
            for item in key)]
        if with_it:
            return (f"{word!r} alone is not a move here; the moves with it: "
                    + ", ".join(with_it[:NAMED]) + (" ..." if len(with_it) > NAMED else ""))
        texts = [*texts, "play " + word] if len(texts) == 1 else texts  # why not, as a play
    first: str | None = None
    for text in texts:
        canonical = reader.canonical(text)
        try:
            action = view.parse_action(canonical)
        except (ActionSyntaxError, CardError, ValueError) as exc:  # (quoting what was typed)
            first = first or str(exc).replace(repr(canonical), repr(text))
            continue
        try:
            view.check_actor(seat)
            view.check(action)
        except IllegalAction as exc:
            return _refusal(turn, text, exc.reason)
        if action in turn.legal:
            return action
        return _refusal(turn, text, "not a legal move now")
    if isinstance(token, str) and " " not in texts[-1] and texts[-1].lower() not in _verbs(turn):
        first = f"{texts[-1]!r} is no move now, nor a card of the {view.notation.deck} deck"
    return _refusal(turn, texts[-1], first or "not a move")


def _listed_keys(turn: Turn) -> list[tuple[str, Key]]:
    """Each listed move with its words as read."""
    reader = turn.reader
    if reader is None:
        return []
    return [(text, reader.key(turn.canonical[text])) for text in turn.texts]


def _verbs(turn: Turn) -> set[str]:
    """The first words of the legal moves."""
    view = turn.view
    texts = turn.canonical.values() if turn.canonical else \
        [view.format_action(turn.legal[0], seat=view.observer)] if turn.legal else []
    return {text.split(maxsplit=1)[0].lower() for text in texts}


def _refusal(turn: Turn, text: str, why: str) -> str:
    """Why, in the person's words, and the legal moves like the one typed (the same
    verb), else the legal moves."""
    view = turn.view
    reason = speak(why, turn.names, view.notation)
    verb = text.split(maxsplit=1)[0].lower() if text else ""
    listed = list(turn.texts)
    if not listed:
        limit, _ = view.multi_card_rule()
        verbs = " or ".join(sorted(_verbs(turn)))
        return f"{reason}; legal: {verbs} and {limit} of your cards (Tab offers them)"
    alike = [t for t in listed if t.split()[0].lower() == verb]
    return f"{reason}; {_listing(alike or listed, len(listed), NAMED, verb if alike else '')}"


def _listing(shown: Sequence[str], total: int, limit: int, verb: str = "") -> str:
    """``legal: a, b, c`` and, when not all are named, how many there are: the same
    words and the same count wherever a turn's moves are listed."""
    named = ", ".join(shown[:limit])
    if len(shown) < total:  # (the moves with the verb typed)
        return f"legal: {named}{' ...' if len(shown) > limit else ''} ({len(shown)} of the" \
            f" {total} legal moves begin {verb!r}; Tab lists them)"
    if total > limit:
        return f"legal: {named} ... ({total} in all; Tab lists them)"
    return f"legal: {named}"


def legal_summary(turn: Turn) -> str:
    if not turn.texts:
        return f"legal: {len(turn.legal)} choices; type the verb and Tab for the cards"
    return _listing(list(turn.texts), len(turn.texts), LISTED)
