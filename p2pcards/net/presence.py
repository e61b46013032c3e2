"""The life of a person's seat at a networked table: present, late, away, back
(docs/playing.md, "Away and back").

- **present**: the person moves in time.
- **late**: their move is due and the grace period runs out; from a minute before
  its end every seat's toolbar counts down, and the person hears a line and a bell
  at 60, 30 and 10 seconds (:data:`WARNINGS`).
- **away**: the grace period passed; every other seat claimed the seat silent, it
  forfeits the deal, and a stand-in plays it from the next deal.
- **back**: the seat is given back at the next deal boundary, under a roster every
  seat signs, once its peer says ``back``.  A person who sat at a live, connected
  prompt all along and did not move says it only when they act (any key, or the
  ``back`` command the prompt offers); a process that was stopped (a laptop lid
  closed) or cut off (Wi-Fi gone) says it as soon as it hears the table again.

:class:`Presence` tells those two cases apart; the driver asks it.  Sans-I/O: the
driver hands it the times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HEARD = 0.5
"""Of the grace period: how long the person must have been asked for their move to be
away when their seat forfeits."""
WARNINGS = (60, 30, 10)
"""Seconds left at which the person whose move is due hears a line and a bell."""
COUNTDOWN = 60.0
"""Seconds left under which every seat's toolbar shows the seat due and its time."""


@dataclass
class Presence:
    """Whether this peer's person is at the table (one per driver, so per game)."""

    asked_at: float | None = None
    """When the person was asked for the move they have not made yet (None: no move of
    theirs is awaited)."""
    interrupted_at: float = -math.inf
    """When this process was last found stopped, or its link to the table broke or came
    back."""
    forfeited_at: float | None = None
    """When the person's seat forfeited for silence with the person away."""
    told: bool = False
    """Whether the person has been told they are away (at the clock's tick after the
    forfeit: a process that was stopped learns it was, and is not away, first)."""

    @property
    def away(self) -> bool:
        """The person stayed at the prompt past the grace period and has not acted
        since: their seat's return is held until they do."""
        return self.forfeited_at is not None

    def asked(self, now: float) -> None:
        if self.asked_at is None:
            self.asked_at = now

    def answered(self) -> None:
        self.asked_at = None

    def forfeited(self, now: float, grace: float) -> bool:
        """The person's seat forfeited the deal for silence: whether the person is away
        (asked for a move at least half the grace period ago and never interrupted
        since: a live prompt nobody used; a move asked just before the forfeit was
        heard, as a link that went silent comes back, had no time to be made)."""
        if self.asked_at is not None and self.interrupted_at < self.asked_at \
                and now - self.asked_at >= HEARD * grace:
            self.forfeited_at, self.told = now, False
        self.asked_at = None
        return self.away

    def interrupted(self, since: float, now: float) -> bool:
        """This process was stopped from ``since`` to ``now`` (or its link broke or came
        back at ``now``: ``since == now``): whether that ends the person's absence (its
        forfeit was only heard on waking, so the person never stayed away)."""
        self.interrupted_at = now
        if self.forfeited_at is not None and self.forfeited_at >= since:
            self.forfeited_at = None
            return True
        return False

    def acted(self) -> bool:
        """The person typed or pressed a key: whether that ends their absence."""
        was = self.away
        self.forfeited_at = None
        return was


def warning(left: float, warned: float, start: float = math.inf) -> float | None:
    """The warning due with ``left`` seconds left, the last one given at ``warned``
    seconds left (``math.inf``: none yet), on a clock that started with ``start``
    seconds: each of :data:`WARNINGS` under ``start``, or (a clock shorter than all of
    them) one at half its time; None when none is due."""
    marks: list[float] = [w for w in WARNINGS if w < start] or [start / 2]
    due = [w for w in marks if left <= w < warned]
    return min(due) if due else None
