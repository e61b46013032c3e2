"""What a game shows a person, in words and cards, without knowing any screen.

A game's state describes its table as :class:`Row` lines (``trump: H``,
``trick: ana A♠, ben K♠``); the command line draws them with colours, another
front end could draw them otherwise.  A :class:`Cards` piece is drawn as
cards, in the notation's colours; a :class:`Styled` piece names a style class
(``dim``, ``title``, or a notation's card style such as ``nut-2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2pcards.games.cards import Notation


@dataclass(frozen=True, slots=True)
class Cards:
    """Cards, drawn as cards."""

    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Styled:
    """Text in a style class of the screen's (``dim``, ``title``, a card style)."""

    style: str
    text: str


Piece = str | Cards | Styled


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: ``label: pieces`` (no label: the pieces alone)."""

    label: str
    pieces: tuple[Piece, ...]


def dim(text: str) -> Row:
    """A line of dim text with no label (``no trick has been played yet``)."""
    return Row("", (Styled("dim", text),))


def trick_row(label: str, plays: Sequence[tuple[int, Sequence[int]]], names: Sequence[str],
              won_by: str | None = None) -> Row:
    """``label: ana A♠, ben K♠`` from ``(seat, cards)`` plays in order; ``(empty)``
    when nothing is played; ``; won by NAME`` when ``won_by`` is given."""
    pieces: list[Piece] = []
    if not plays:
        pieces.append(Styled("dim", "(empty)"))
    for i, (seat, cards) in enumerate(plays):
        if i:
            pieces.append(", ")
        pieces += [f"{names[seat]} ", Cards(tuple(cards))]
    if won_by is not None:
        pieces.append(f"; won by {won_by}")
    return Row(label, tuple(pieces))


def seated(leader: int, cards: Sequence[int], players: int) -> list[tuple[int, Sequence[int]]]:
    """A trick's cards in play order as ``(seat, (card,))``, from its leader on."""
    return [((leader + i) % players, (card,)) for i, card in enumerate(cards)]


def last_trick(trick: tuple[int, Sequence[int]] | None, players: int, names: Sequence[str],
               winner: int) -> Row:
    """``last trick: ...; won by NAME`` of a game of one card a play, from ``(leader,
    cards)`` (None: no trick has been played yet)."""
    if trick is None:
        return dim("no trick has been played yet")
    leader, cards = trick
    return trick_row("last trick", seated(leader, cards, players), names, won_by=names[winner])


def _cards_shown(notation: Notation, cards: Sequence[int], strong: bool) -> list[Piece]:
    """Cards as pieces of text in their own colours (bold: the card winning the trick)."""
    out: list[Piece] = []
    for i, card in enumerate(cards):
        if i:
            out.append(" ")
        style = " ".join(filter(None, (notation.style(card), "title" if strong else "")))
        out.append(Styled(style, notation.shown(card)) if style else notation.shown(card))
    return out


def _width(pieces: Sequence[Piece]) -> int:
    return sum(len(p) if isinstance(p, str) else len(p.text) if isinstance(p, Styled)
               else 0 for p in pieces)


def trick_rows(plays: Sequence[tuple[int, Sequence[int]]], names: Sequence[str], *,
               leader: int, winning: int, observer: int, notation: Notation) -> list[Row]:
    """The trick under way drawn as the table sits: who led, each seat's card (``·``
    for a seat yet to play), the card winning so far in bold and named below.

    Four players sit around the trick as seen from ``observer``'s chair (at the
    bottom; a watcher sees seat 0 there), the next to play on its left::

        trick: ben led
                        cy Q♠
            ben K♠              dee ·
                        you ·
            winning: ben K♠

    Other numbers of players are one line in the order of play.
    """
    players = len(names)
    played = {seat: cards for seat, cards in plays}

    def cell(seat: int) -> list[Piece]:
        cards = played.get(seat)
        if cards is None:
            return [f"{names[seat]} ", Styled("dim", "·")]
        return [f"{names[seat]} ", *_cards_shown(notation, cards, seat == winning)]

    head = f"{names[leader]} led" if plays else f"{names[leader]} to lead"  # (names: "you")
    if not plays:
        return [Row("trick", (head,))]
    if players != 4:
        pieces: list[Piece] = [head, ": "]
        for i in range(players):
            if i:
                pieces.append(", ")
            pieces += cell((leader + i) % players)
        if plays and winning >= 0:
            pieces.append(f"; winning: {names[winning]}")
        return [Row("trick", tuple(pieces))]
    bottom = observer if 0 <= observer < 4 else 0
    left, top, right = ((bottom + k) % 4 for k in (1, 2, 3))
    indent = "    "
    west = cell(left)
    middle = max(_width(cell(top)), _width(cell(bottom)))
    column = " " * (len(indent) + _width(west) + 4)
    rows = [Row("trick", (head,)),
            Row("", (column, *cell(top))),
            Row("", (indent, *west, " " * (middle + 8), *cell(right))),
            Row("", (column, *cell(bottom)))]
    if plays and winning >= 0:
        rows.append(Row("", (f"{indent}winning: {names[winning]} ",
                             *_cards_shown(notation, played[winning], True))))
    return rows
