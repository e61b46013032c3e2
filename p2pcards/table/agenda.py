"""What is due next, and the phase: the one record of either.

Every message of the table is due from one seat at a time.  The agenda holds
the protocol steps queued (signing the roster, the draws, each deal's hellos,
key releases, re-mixes, audits and agreements) and the phase the game is in;
the deck and the game say what is due when the queue is empty (their passes,
the player to move).  The phase machine (:mod:`p2pcards.table.phases.machine`)
is its only writer, and checks each change of phase against the flow's
transitions: the ledger returns the steps it needs, a message's handler
returns what it needs (:class:`~p2pcards.table.state.Needs`), and the machine
queues them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator

from p2pcards.table.kinds import Kind
from p2pcards.table.state import Phase, Step


class Agenda:
    """The steps queued, in order, and the phase."""

    def __init__(self, phase: Phase, steps: Iterable[Step] = ()):
        self._phase = phase
        self._queue: deque[Step] = deque(steps)

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def head(self) -> Step | None:
        """The step due next, if one is queued."""
        return self._queue[0] if self._queue else None

    def __bool__(self) -> bool:
        return bool(self._queue)

    def __iter__(self) -> Iterator[Step]:
        return iter(self._queue)

    def enter(self, phase: Phase, steps: Iterable[Step] = ()) -> None:
        """Move to ``phase``, with ``steps`` queued after those already due."""
        self._phase = phase
        self._queue.extend(steps)

    def restart(self, phase: Phase, steps: Iterable[Step] = ()) -> None:
        """Move to ``phase`` with only ``steps`` due (what was queued is dropped)."""
        self._queue.clear()
        self.enter(phase, steps)

    def expect(self, steps: Iterable[Step]) -> None:
        """Queue ``steps`` after those already due."""
        self._queue.extend(steps)

    def done(self, seat: int, kind: Kind | str) -> None:
        """A message of ``kind`` from ``seat`` was taken: the step it was, if queued."""
        head = self.head
        if head is not None and head.seat == seat and head.kind == kind:
            self._queue.popleft()

    def drop(self, unwanted: Callable[[Step], bool]) -> None:
        """Forget the steps queued that ``unwanted`` picks."""
        self._queue = deque(step for step in self._queue if not unwanted(step))
