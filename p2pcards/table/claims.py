"""Claims: how a seat whose message is due, and does not come, forfeits, and how a
seat proven to have signed two versions of one message does.

**Silence.** Any seat not run by the silent seat's peer may claim the seat due
silent, once, on the transcript as it stands.  The claims count only once every
such seat has made one on the same transcript (the seats one peer runs fall
silent together: a joiner that brings bots and dies takes its bots with it, and
they cannot claim); they are then taken in seat order (and forwarded, so that
every seat that has seen them takes them too).  A claim made on a transcript
this seat has not reached is held, the latest per seat.  A message of the seat
claimed, arriving first, wins: the transcript moves on and the claims lapse.
A seat that has claimed refuses the claimed seat's message on that transcript,
unless another seat is seen building on it: that seat took the message before
it claimed, so the claims can never complete, and the claimant takes the
message after all (its claim withdrawn) rather than stay behind.  The other way
round, a seat whose message came too late (the others claimed it before they
saw it) gets the complete claims on the transcript it has moved past with its
own messages only: it takes its transcript back there and forfeits with the
table.

**A cheat.** Two different messages signed by one seat with one sequence number
on one transcript are a proof anybody can check, and a seat that holds one
claims it at once (:class:`~p2pcards.table.kinds.Cheat`: the claim carries the
proof).  Such a claim is made at a fixed point of the transcript, the **cheat's
point**: where the two versions part (both name it as their ``prior``), or the
start of the deal in progress if that is later.  Every honest seat has that
point in its transcript, even seats that took different versions, so the
claims meet there; once every seat not run by the cheat's peer has made one,
each seat takes its transcript back to the point, takes the claims in seat
order, and the cheat forfeits the deal.  Of several proofs, the claim of the
earliest point (then the lowest seat) replaces the others, so every seat comes
to the same claim.  Claims of a cheat do not lapse when the transcript moves on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2pcards.table.codec import Envelope
from p2pcards.table.kinds import Cheat, Silent
from p2pcards.table.state import Rejection, Rule


@dataclass(frozen=True, slots=True)
class CheatClaim:
    """A seat's claim of a cheat, at the cheat's point (a position in the transcript)."""

    env: Envelope
    message: Cheat
    point: int

    @property
    def order(self) -> tuple[int, int]:
        return self.point, self.message.seat


class Claims:
    """The claims of silence on the transcript as it stands, the claims of a cheat,
    and those held."""

    def __init__(self) -> None:
        self.made: dict[int, tuple[Envelope, Silent]] = {}
        """Claimant -> its claim of silence on the transcript as it stands."""
        self.held: dict[int, bytes] = {}
        """Seat -> its claim of silence on a transcript this seat has not reached yet."""
        self.cheats: dict[int, CheatClaim] = {}
        """Claimant -> its claim of a cheat."""
        self.held_cheats: dict[int, bytes] = {}
        """Seat -> its claim of a cheat at a point this seat has not reached yet."""
        self.settled: set[bytes] = set()
        """The claims last taken (forwarded copies of them are ignored)."""
        self.late: dict[int, bytes] = {}
        """Seat -> its message refused here because this seat had claimed it silent."""
        self.behind: dict[int, tuple[Envelope, Silent, int]] = {}
        """Claimant -> its claim of silence against this seat's peer at a position this
        seat has since moved past with its own messages only (which the claimants never
        took: once they are complete, this seat goes back there and forfeits)."""

    def __bool__(self) -> bool:
        return bool(self.made)

    def names(self, claimant: int, seat: int) -> bool:
        """Whether ``claimant`` has claimed ``seat`` silent on this transcript."""
        made = self.made.get(claimant)
        return made is not None and made[1].seat == seat

    def cheat(self, claimant: int) -> CheatClaim | None:
        """``claimant``'s claim of a cheat, if it has made one."""
        return self.cheats.get(claimant)

    def lapse(self) -> None:
        """The transcript moved on: the claims of silence on the old one no longer
        count."""
        self.made = {}
        self.late = {}

    def add(self, env: Envelope, message: Silent) -> Rejection | None:
        """Note ``env``'s claim; a copy of one noted is ignored, a second one refused."""
        known = self.made.get(env.sender)
        if known is not None:
            return None if known[0].wire == env.wire else Rejection(
                env.sender, Rule.REPLAY, "a second, different claim on one transcript")
        self.made[env.sender] = (env, message)
        return None

    def add_cheat(self, claim: CheatClaim) -> Rejection | None:
        """Note a claim of a cheat; one of an earlier point (or a lower seat) replaces
        its claimant's claim, a copy is ignored, any other second one is refused."""
        sender = claim.env.sender
        known = self.cheats.get(sender)
        if known is not None and known.env.wire != claim.env.wire \
                and claim.order >= known.order:
            return Rejection(sender, Rule.REPLAY, "a second claim of a cheat, not of an"
                                               " earlier one")
        self.cheats[sender] = claim
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

    def cheat_complete(self, others: Callable[[int], set[int]]
                       ) -> tuple[CheatClaim, list[CheatClaim]] | None:
        """The claim of a cheat (the lowest claimant's) and every claim in seat order,
        once every seat of ``others(cheat)`` has made the same one (they are then
        taken, and every claim pending, of silence too, is dropped); else None."""
        if not self.cheats:
            return None
        claim = self.cheats[min(self.cheats)]
        if set(self.cheats) != others(claim.message.seat) or any(
                made.order != claim.order for made in self.cheats.values()):
            return None
        taken = [self.cheats[sender] for sender in sorted(self.cheats)]
        self.cheats, self.held_cheats, self.made, self.held = {}, {}, {}, {}
        self.settled = {made.env.wire for made in taken}
        return claim, taken
