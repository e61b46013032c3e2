"""When each move reached this peer, and how long its own seat waited between turns
(``--stats``: ``p2pcards bench net`` reads them).

A move (a message of a kind in :data:`MOVES`: an ``act``, or a ``pact`` of the
proved deck) is timed as it enters the
main seat's transcript: at the peer whose seat made it, that is when it leaves
(just before it is sent); at every other peer, when it is applied.  The times
are ``time.monotonic()``, one clock for every process of a machine on Linux, so
the bench can put the peers' records side by side: the time from a move leaving
its seat to every seat having applied it is the latest of its times less the
first.  The turn wait is what a person at the main seat would wait: from their
move leaving to their next move being asked for, in the same deal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p2pcards.table.decks import ACTS
from p2pcards.table.session import Session

__all__ = ["MOVES", "MoveClock", "move_key"]

MOVES = ACTS
"""The kinds of message that are moves: the table's own set (:data:`p2pcards.table.decks.ACTS`,
which the session checks a move's turn by), so that a move of a new kind, added there, is
timed here and marks a deal's first move in the driver's timeline with nothing else to
change."""


def move_key(sender: int, seq: int) -> str:
    """A move's name in the stats, the same at every peer: its seat and number."""
    return f"{sender}:{seq}"


@dataclass
class MoveClock:
    clock: Callable[[], float] = time.monotonic
    applied: dict[str, float] = field(default_factory=dict)
    """Move -> when it entered this peer's main transcript."""
    made: list[str] = field(default_factory=list)
    """The moves of this peer's main seat."""
    turn_waits: list[float] = field(default_factory=list)
    """Seconds from each move of the main seat to its next turn in the same deal."""
    seen: int = 0
    left: tuple[float, int] | None = None
    """When the main seat's last move left, and its deal (its wait not yet over)."""

    def see(self, main: Session) -> None:
        """Time the moves ``main``'s transcript took since the last look."""
        transcript = main.transcript
        self.seen = min(self.seen, len(transcript))  # (taken back: a cheat's point)
        now = self.clock()
        for env in transcript.envelopes[self.seen:]:
            if env.kind not in MOVES:
                continue
            key = move_key(env.sender, env.seq)
            self.applied.setdefault(key, now)
            if env.sender == main.me:
                self.made.append(key)
                self.left = (now, env.deal)
        self.seen = len(transcript)

    def asked(self, main: Session) -> None:
        """The main seat's move is asked for now: its wait, if it moved last in this deal."""
        transcript = main.transcript
        if self.left is None or not len(transcript):
            return
        at, deal = self.left
        if transcript[-1].deal == deal:
            self.turn_waits.append(self.clock() - at)
        self.left = None

    def stats(self) -> dict[str, Any]:
        """The ``--stats`` keys: ``moves`` (move -> monotonic seconds), ``made`` and
        ``turn_wait_ms``."""
        return {"moves": {k: round(t, 4) for k, t in self.applied.items()},
                "made": list(self.made),
                "turn_wait_ms": [round(w * 1000, 1) for w in self.turn_waits]}
