"""Seats that change hands: a bot takes the seat of a peer gone silent, and gives it
back when its person returns (docs/protocol.md, "Seats that change hands").

A seat whose peer forfeits a deal for silence is **gone**, with every seat that
peer ran.  At the next deal boundary the **runner**, the lowest seat held by a
person of a live peer (every seat computes it alike), sends a ``seat`` message:
for each gone seat, a bot of the table's kind under a fresh identity, run by
the runner's peer; for each stand-in whose person sent a signed ``back``, the
seat's own entry again.  The amended roster is then signed by every seat (a
``sign`` round, each stand-in's with its new identity, so every live peer signs
it), and the deal begins.  While the table has a gone seat or a stand-in the
runner sends the message at every boundary, empty when nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.protocol.curve import SecretSource
from p2pcards.table.codec import public_bytes
from p2pcards.table.events import Handover
from p2pcards.table.kinds import SeatChange, Seats
from p2pcards.table.roster import Roster, SeatEntry

MAX_BOT_KIND = 16


@dataclass
class SeatChanges:
    """Which seats are gone, stand-ins and coming back, at one seat of the table."""

    home: Roster
    """The roster as every seat first signed it: each seat's own entry."""
    replace: str = ""
    """The bot kind this seat puts in a gone seat when it is the runner ("": none; the
    driver sets it from the table's settings)."""
    gone: set[int] = field(default_factory=set)
    returning: set[int] = field(default_factory=set)
    keys: dict[int, Ed25519PrivateKey] = field(default_factory=dict)
    """Seat -> the identity this seat made for the bot it put there (its peer runs it)."""

    def stand_ins(self, roster: Roster) -> set[int]:
        """The seats a bot holds in place of their own entry."""
        return {s for s in range(roster.players)
                if roster.seats[s].identity != self.home.seats[s].identity}

    def runner(self, roster: Roster) -> int | None:
        """The lowest seat whose peer is not gone and that its peer holds as its own (a
        person's seat, or one a bot plays for the peer itself; not a bot it brought, nor
        a stand-in).  None: no peer is left, and the table cannot go on."""
        peers = [s for s in range(roster.players)
                 if s not in self.gone and roster.process_of(s) == s]
        return min(peers) if peers else None

    def due(self, roster: Roster) -> bool:
        """Whether the next deal begins with a ``seat`` message."""
        return bool(self.gone or self.stand_ins(roster))

    def went(self, roster: Roster, seat: int) -> None:
        """``seat`` forfeited for silence: it and every seat its peer runs are gone."""
        peer = roster.process_of(seat)
        self.gone |= {s for s in range(roster.players) if roster.process_of(s) == peer}

    def came_back(self, seat: int) -> None:
        """The person of ``seat`` is back: its seats are given back at the boundary."""
        peer = self.home.process_of(seat)
        self.returning |= {s for s in range(self.home.players)
                           if self.home.process_of(s) == peer}

    def make(self, roster: Roster, me: int, source: SecretSource) -> Seats:
        """This seat's ``seat`` message, as the runner (fresh identities for its bots)."""
        changes: list[SeatChange] = []
        stand_ins = self.stand_ins(roster)
        for seat in range(roster.players):
            if seat in self.returning and seat in stand_ins:
                home = self.home.seats[seat]
                changes.append((seat, home.name, home.identity, home.bot, home.run_by))
            elif seat in self.gone and self.replace:
                key = Ed25519PrivateKey.from_private_bytes(source.token_bytes(32))
                self.keys[seat] = key
                changes.append((seat, roster.seats[seat].name,
                                public_bytes(key.public_key()), self.replace, me))
        return Seats(changes=tuple(changes))

    def problem(self, roster: Roster, sender: int, message: Seats) -> str | None:
        """What is wrong with ``sender``'s ``seat`` message (None: nothing)."""
        stand_ins = self.stand_ins(roster)
        seen: set[int] = set()
        for seat, name, identity, bot, run_by in message.changes:
            if seat >= roster.players or seat in seen:
                return f"seat {seat} is not a seat of this table, or named twice"
            seen.add(seat)
            home = self.home.seats[seat]
            if (name, identity, bot, run_by) == (home.name, home.identity, home.bot,
                                                 home.run_by):
                if seat not in stand_ins:
                    return f"seat {seat} is not held by a stand-in"
                continue
            if seat not in self.gone:
                return f"seat {seat} is not gone"
            if name != roster.seats[seat].name or run_by != sender or not bot \
                    or len(bot) > MAX_BOT_KIND or not bot.isidentifier():
                return (f"seat {seat}: a stand-in keeps the seat's name, is a bot and is"
                        f" run by the runner")
            if any(identity in (s.identity, h.identity)
                   for s, h in zip(roster.seats, self.home.seats, strict=True)):
                return f"seat {seat}: the stand-in's identity is already at this table"
        return None

    def amend(self, roster: Roster, message: Seats) -> Roster:
        """The roster with ``message``'s changes (checked by :meth:`problem`)."""
        seats = list(roster.seats)
        for seat, name, identity, bot, run_by in message.changes:
            seats[seat] = SeatEntry(name, identity, bot, run_by)
            self.gone.discard(seat)
            self.returning.discard(seat)
        return replace(roster, seats=tuple(seats), keys=[])

    def handovers(self, roster: Roster, message: Seats) -> tuple[Handover, ...]:
        """What ``message`` changed (``roster``: the roster it made), for the prompts:
        who holds which seat now."""
        stand_ins = self.stand_ins(roster)
        return tuple(Handover(seat, name, bot, -1 if run_by is None else run_by)
                     if bot and seat in stand_ins
                     else Handover(seat, name)
                     for seat, name, _, bot, run_by in message.changes)

    def names(self, roster: Roster) -> list[str] | None:
        """The seats' names for a deal's hand-history entry when a stand-in played
        (None when every seat played itself)."""
        stand_ins = self.stand_ins(roster)
        if not stand_ins:
            return None
        return [f"{s.name[:26]} (bot)" if seat in stand_ins else s.name
                for seat, s in enumerate(roster.seats)]
