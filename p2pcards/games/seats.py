"""Who acts and who looks: the values that stand where no seat does.

A seat is an int from 0.  Two questions about a deal have answers that are not
seats, and each has its own type and its own values:

* who acts next (:meth:`~p2pcards.games.core.HandState.current_player`, a
  :data:`Mover`): a seat, :data:`CHANCE` or :data:`TERMINAL`;
* whose knowledge a state holds, or for whom an action's text is written (a
  state's ``observer``, ``format_action``'s ``seat``, an :data:`Observer`): a
  seat, :data:`FULL` or :data:`SPECTATOR`.

The types are ``NewType``s of int: nothing at run time (the search compares
``current_player()`` with CHANCE on its hot path, as fast as any int), but mypy
refuses a comparison of an observer with a mover's value, or a mover's value
where an observer is kept.  The values are distinct from each other and from
the mental-poker deck's (``p2pcards.protocol.constants``: PUBLIC, OBSERVER, which
the table uses beside these), so that no value of one meaning is ever taken for
another's (docs/architecture.md, "Values that stand where no seat does").
CHANCE and TERMINAL are OpenSpiel's chance and terminal players, which the
search reads as any negative mover (``p2pcards.ai.protocol``).
"""

from __future__ import annotations

from typing import Final, NewType

Mover = NewType("Mover", int)
"""Who acts next: a seat, :data:`CHANCE` or :data:`TERMINAL`."""
Observer = NewType("Observer", int)
"""Whose knowledge a deal state holds: a seat, :data:`FULL` or :data:`SPECTATOR`."""

CHANCE: Final = Mover(-1)
"""``current_player()`` when chance acts next."""
TERMINAL: Final = Mover(-4)
"""``current_player()`` when the deal is over."""
FULL: Final = Observer(-5)
"""``observer`` of a full-information state (and ``format_action`` naming every card)."""
SPECTATOR: Final = Observer(-6)
"""``observer`` of someone at no seat (``format_action``: every hidden card is ``?``)."""


def observer_of(seat: int, players: int) -> Observer:
    """``seat`` as the observer of a deal of ``players``: a seat, FULL or SPECTATOR;
    ``ValueError`` for any other value (a mover's CHANCE, a table's watcher)."""
    if 0 <= seat < players or seat in (FULL, SPECTATOR):
        return Observer(seat)
    raise ValueError(f"{seat} is not an observer of a deal of {players} seats"
                     " (a seat, FULL or SPECTATOR)")
