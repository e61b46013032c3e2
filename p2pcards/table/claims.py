"""Claims of silence: how a seat whose message is due, and does not come, forfeits.

Any seat not run by the silent seat's peer may claim the seat due silent, once,
on the transcript as it stands.  The claims count only once every such seat has
made one on the same transcript (the seats one peer runs fall silent together:
a joiner that brings bots and dies takes its bots with it, and they cannot
claim); they are then taken in seat order (and forwarded, so that every seat
that has seen them takes them too).  A claim made on a transcript
this seat has not reached is held, the latest per seat.  A message of the seat
claimed, arriving first, wins: the transcript moves on and the claims lapse.
"""

from __future__ import annotations

from collections.abc import Callable

from p2pcards.table.codec import Envelope
from p2pcards.table.kinds import Silent
from p2pcards.table.state import Rejection


class Claims:
    """The claims of silence on the transcript as it stands, and those held."""

    def __init__(self) -> None:
        self.made: dict[int, tuple[Envelope, Silent]] = {}
        """Claimant -> its claim on the transcript as it stands."""
        self.held: dict[int, bytes] = {}
        """Seat -> its claim on a transcript this seat has not reached yet."""
        self.settled: set[bytes] = set()
        """The claims last taken (forwarded copies of them are ignored)."""

    def __bool__(self) -> bool:
        return bool(self.made)

    def names(self, claimant: int, seat: int) -> bool:
        """Whether ``claimant`` has claimed ``seat`` silent on this transcript."""
        made = self.made.get(claimant)
        return made is not None and made[1].seat == seat

    def lapse(self) -> None:
        """The transcript moved on: the claims on the old one no longer count."""
        self.made = {}

    def add(self, env: Envelope, message: Silent) -> Rejection | None:
        """Note ``env``'s claim; a copy of one noted is ignored, a second one refused."""
        known = self.made.get(env.sender)
        if known is not None:
            return None if known[0].wire == env.wire else Rejection(
                env.sender, "replay", "a second, different claim on one transcript")
        self.made[env.sender] = (env, message)
        return None

    def complete(self, others: Callable[[int], set[int]]) -> tuple[int, list[Envelope]] | None:
        """The silent seat and the claims in seat order, once every seat of
        ``others(silent)`` has made one (they are then taken: no longer pending);
        else None."""
        if not self.made:
            return None
        silent = next(iter(self.made.values()))[1].seat
        if set(self.made) != others(silent):
            return None
        taken = [self.made[sender][0] for sender in sorted(self.made)]
        self.made = {}
        self.settled = {env.wire for env in taken}
        return silent, taken
