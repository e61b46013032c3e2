"""Who acts and who looks: the values that stand where no seat does.

A seat is an int from 0.  Two questions about a deal have answers that are not
seats: who acts next (:meth:`~p2pcards.games.core.HandState.current_player`:
chance, or nobody once the deal is over) and whose knowledge a state holds or
an action's text is written for (``observer``: everything, or what everyone
sees).
"""

from __future__ import annotations

FULL = -1
"""``observer`` of a full-information state."""
SPECTATOR = -2
"""``format_action`` for someone at no seat: every hidden card is ``?``."""
CHANCE = -1
"""``current_player()`` when chance acts next."""
TERMINAL = -4
"""``current_player()`` when the deal is over."""
