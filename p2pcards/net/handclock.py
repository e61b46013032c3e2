"""When each deal ended at this peer and when its seat held its next hand, and the
multiplications it had made by then (``--stats``: ``p2pcards bench net`` reads them).

A deal's end, here, is when the last message of that deal entered this peer's
main transcript: at the peer whose seat sent it, when it left (just before it is
sent); at every other peer, when it was applied.  A seat holds its hand of a deal
once the deal's keys (or shares) have all come in and it has opened its own cards
(the deal's ``run.opened``: from then on its view of the deal lacks nothing the
deck gives it).  The times are ``time.monotonic()``, one clock for every process
of a machine on Linux, as :mod:`p2pcards.net.moveclock`'s, so the bench can put
the peers side by side: the next hand of a deal boundary is ready for everyone at
the latest peer's hand time, counted from the earliest peer's end of the deal
before (its sender's).

With :data:`~p2pcards.protocol.proved.counting.COUNT_VARIABLE` set, every mark
also keeps the multiplications of points this process had made by then
(:mod:`p2pcards.protocol.proved.counting`; unset, none are counted and every
count is 0).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p2pcards.protocol.proved.counting import Multiplications, count_if_asked
from p2pcards.table.session import Session

__all__ = ["HandClock", "Mark"]

Mark = tuple[float, int]
"""(monotonic seconds, multiplications made by this process until then)."""


def _counter() -> Callable[[], int]:
    tally: Multiplications | None = count_if_asked()
    if tally is None:
        return lambda: 0
    return lambda: tally.total


@dataclass
class HandClock:
    clock: Callable[[], float] = time.monotonic
    count: Callable[[], int] = field(default_factory=_counter)
    """Multiplications made so far (0 where they are not counted)."""
    ends: dict[int, Mark] = field(default_factory=dict)
    """Deal -> when its latest message so far entered this peer's main transcript."""
    hands: dict[int, Mark] = field(default_factory=dict)
    """Deal -> when this peer's main seat first held its hand of it."""
    seen: int = 0

    def see(self, main: Session) -> None:
        """Mark what ``main`` took since the last look: the deals its new messages belong
        to, and its hand if it has just opened it."""
        transcript = main.transcript
        self.seen = min(self.seen, len(transcript))  # (taken back: a cheat's point)
        fresh = transcript.envelopes[self.seen:]
        run = main.run
        held = run is not None and run.opened and run.index not in self.hands
        if not fresh and not held:
            return
        now = self.clock(), self.count()
        for deal in {env.deal for env in fresh}:
            self.ends[deal] = now
        if held:
            assert run is not None
            self.hands[run.index] = now
        self.seen = len(transcript)

    def stats(self) -> dict[str, Any]:
        """The ``--stats`` keys: ``deal_ends`` and ``hands``, each a list of ``[deal,
        monotonic seconds, multiplications]``."""
        return {name: [[deal, round(at, 4), count] for deal, (at, count) in sorted(marks.items())]
                for name, marks in (("deal_ends", self.ends), ("hands", self.hands))}
