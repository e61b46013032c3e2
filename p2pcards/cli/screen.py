"""What the REPL shows: cards in suit colours, the hand by suit, the table, the toolbar.

Everything here reads one seat's *view* (never the full state), so the
screen can show nothing the seat does not know.  Output is prompt-toolkit
formatted text: a list of ``(style, text)`` pairs; the styles are classes of
:data:`STYLE` (or of :data:`FOUR_COLOUR`), and ``NO_COLOR`` in the
environment turns colour off (see :func:`color_depth`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style

from p2pcards.games import HandState
from p2pcards.games.cards import Notation, bits
from p2pcards.games.display import Row, Styled
from p2pcards.games.game import Game

_COMMON = {
    "joker": "ansimagenta bold",
    "control": "reverse bold",
    "star": "bold",
    "title": "bold",
    "dim": "ansibrightblack",
    "you": "bold underline",
    "new": "underline",
    "error": "ansired bold",
    "bottom-toolbar": "noreverse bg:ansiblue fg:ansiwhite",
}
STYLE = Style.from_dict({
    **_COMMON,
    "suit-0": "", "suit-1": "ansired", "suit-2": "ansired", "suit-3": "",
    "colour-0": "ansired", "colour-1": "ansiyellow", "colour-2": "ansigreen",
    "colour-3": "ansiblue",
    "nut-0": "ansiyellow", "nut-1": "ansired", "nut-2": "ansigreen", "nut-3": "ansicyan",
})
FOUR_COLOUR = Style.from_dict({
    **{k: v for k, v in STYLE.style_rules},
    "suit-2": "ansiblue", "suit-3": "ansigreen",
})
"""The four-colour deck: spades black, hearts red, diamonds blue, clubs green."""


def color_depth() -> ColorDepth | None:
    """Monochrome when ``NO_COLOR`` is set (https://no-color.org), else the terminal's."""
    return ColorDepth.DEPTH_1_BIT if os.environ.get("NO_COLOR") else None


# ---------------------------------------------------------------------- cards

def card_text(notation: Notation, card: int) -> str:
    """A card as shown: ``A♠``, ``10♥`` and jokers ``BJ`` ``LJ``; ``R12``; ``A7*``, ``TRUMP``."""
    return notation.shown(card)


def card_style(notation: Notation, card: int) -> str:
    return style_classes(notation.style(card))


def style_classes(names: str) -> str:
    """Space-separated style class names as prompt-toolkit's style string."""
    return " ".join(f"class:{name}" for name in names.split())


def card_fragment(notation: Notation, card: int) -> tuple[str, str]:
    return (card_style(notation, card), card_text(notation, card))


def cards_fragments(notation: Notation, cards: Sequence[int]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for i, card in enumerate(cards):
        if i:
            out.append(("", " "))
        out.append(card_fragment(notation, card))
    return out


def hand_fragments(notation: Notation, hand: int, first: Sequence[int] = (),
                   new: int = 0) -> StyleAndTextTuples:
    """The hand grouped by suit, high cards first: the groups ``first`` (the trumps)
    lead, the rest follow in the deck's order (jokers and controls last).  The cards
    of ``new`` (just received: the kitty, a hand-out) are underlined and named after
    the hand, so that every terminal shows them."""
    groups: dict[int, list[int]] = {}
    for card in bits(hand):
        groups.setdefault(notation.group(card), []).append(card)
    order = [g for g in first if g in groups] + sorted(g for g in groups if g not in first)
    out: StyleAndTextTuples = []
    arrived = []
    for key in order:
        if out:
            out.append(("", "   "))
        for i, card in enumerate(sorted(groups[key], key=lambda c: -notation.rank(c))):
            if i:
                out.append(("", " "))
            style = card_style(notation, card)
            if new >> card & 1:
                arrived.append(card)
                style += " class:new"
            out.append((style, card_text(notation, card)))
    if arrived:
        out += [("class:dim", "   (new: "), *cards_fragments(notation, arrived), ("class:dim", ")")]
    return out or [("class:dim", "(no cards)")]


# ---------------------------------------------------------------------- table

def own_hand(view: HandState) -> int:
    """The cards in the observer's hand (its view knows them exactly)."""
    return view.may[view.observer]


def row_fragments(notation: Notation, row: Row) -> StyleAndTextTuples:
    """One line of a game's table (:class:`p2pcards.games.display.Row`), with its newline."""
    out: StyleAndTextTuples = [("class:title", f"{row.label}: ")] if row.label else []
    for piece in row.pieces:
        if isinstance(piece, str):
            out.append(("", piece))
        elif isinstance(piece, Styled):
            out.append((style_classes(piece.style), piece.text))
        else:
            out += cards_fragments(notation, piece.cards)
    out.append(("", "\n"))
    return out


def table_fragments(view: HandState, names: Sequence[str]) -> StyleAndTextTuples:
    """The state of play as the view's seat knows it: status line, then the game's rows."""
    out: StyleAndTextTuples = [("class:title", "table: "), ("", view.summary(names)), ("", "\n")]
    for row in view.table_rows(names):
        out += row_fragments(view.notation, row)
    return out


def last_trick_fragments(view: HandState, names: Sequence[str]) -> StyleAndTextTuples:
    """The previous trick and who won it (``last``)."""
    return row_fragments(view.notation, view.last_trick_row(names))


def phase_name(view: HandState) -> str:
    return "done" if view.is_terminal() else view.phase_name()


def scores_text(game: Game, names: Sequence[str], totals: Sequence[int]) -> str:
    return ", ".join(f"{game.unit_name(u, names)} {t}" for u, t in enumerate(totals))


def score_table(game: Game, names: Sequence[str],
                rows: Sequence[tuple[int, Sequence[int]]]) -> str:
    """Points per deal and the running totals, one row per scored deal: ``rows`` are
    (the deal's number as "deal N, dealer ..." told it, its points).  A void deal (the
    rules' or, at a networked table, every seat's consent) scores no row, so the numbers
    may skip some."""
    units = [game.unit_name(u, names) for u in range(game.unit_count(len(names)))]
    width = max(8, *(len(u) for u in units))
    lines = ["deal  " + "".join(f"{u:>{width + 2}}" for u in units)]
    running = [0] * len(units)
    for k, row in rows:
        running = [a + b for a, b in zip(running, row, strict=True)]
        cells = "".join(f"{f'{p:+d} ={t}':>{width + 2}}" for p, t in zip(row, running,
                                                                           strict=True))
        lines.append(f"{k:>4}  {cells}")
    return "\n".join(lines)
