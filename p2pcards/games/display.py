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
