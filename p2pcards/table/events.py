"""What a table session tells its user interface: one frozen dataclass per event.

A session appends an event for each thing a person at its seat may want to
know (the roster signed, a deal begun, a move, an alarm, a vote, a forfeit, a
deal scored, the game over, seats changing hands).  Events carry numbers,
seats and enums, never a line of text to parse: the words a person reads are
written where they are shown, from the event (the prompt in
:mod:`p2pcards.cli`; a headless peer's log and ``p2pcards verify`` with
:func:`tell`).  The only text an event carries is text the protocol itself
carries: a move in its public form, a verdict every seat signs, a reason or an
alarm another seat wrote (made safe with :func:`~p2pcards.table.kinds.printable`
where it is shown).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from p2pcards.games import HandState
from p2pcards.games.game import Game
from p2pcards.games.prose import name_seats
from p2pcards.table.codec import a_or_an
from p2pcards.table.kinds import MAX_TEXT, printable


class ForfeitReason(StrEnum):
    """Why a seat forfeits a deal (the value is the word a hand history records)."""

    SILENT = "silent"
    """Its message did not come within the grace period."""
    EQUIVOCATION = "equivocation"
    """It signed two versions of one message."""
    REFUSED_STEP = "refused step"
    """The proved deck refused a message it signed in turn (or it raised a false alarm)."""
    REFUSED_AUDIT = "refused audit"
    """Its secrets did not bear out what it signed, or it did not reveal them."""


@dataclass(frozen=True, slots=True)
class RosterSigned:
    """Every seat signed the roster."""

    safety_number: str


@dataclass(frozen=True, slots=True)
class DealBegun:
    """A deal begins (``deal``: its index, 0 for the first)."""

    deal: int
    dealer: int


@dataclass(frozen=True, slots=True)
class Moved:
    """A move, or a chance event (``seat`` None).  ``action`` is the move as this seat's
    own view knows it (its own cards named, the others' hidden) and ``before`` that view
    just before it, when the session keeps them for a prompt (``Session.tell``), so that
    a prompt tells the move as the seat saw it; ``text`` is its public form, as every
    seat's transcript holds it."""

    seat: int | None
    deal: int
    text: str
    action: int
    before: HandState | None = None


@dataclass(frozen=True, slots=True)
class Alarmed:
    """A seat says its cards did not open, or that they disprove a move taken."""

    seat: int
    problem: str


@dataclass(frozen=True, slots=True)
class VoidProposed:
    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class VoidDeclined:
    """A seat does not consent to void the deal: it goes on."""

    seat: int


@dataclass(frozen=True, slots=True)
class Voided:
    """Every seat consents to void the deal."""

    reason: str


@dataclass(frozen=True, slots=True)
class Equivocated:
    """A seat signed two different messages with one sequence number (the proof is
    kept: its seat forfeits once every other seat has claimed it)."""

    seat: int
    seq: int


@dataclass(frozen=True, slots=True)
class Disagreed:
    """A seat signed another result of a deal than this seat's."""

    seat: int
    deal: int
    transcript: bool
    """Whether it signed another transcript hash (else the same one, another result)."""
    points: tuple[int, ...]
    verdict: str
    mine: tuple[tuple[int, ...], str]
    """This seat's points and verdict."""


@dataclass(frozen=True, slots=True)
class Forfeited:
    """A seat forfeits the deal; ``verdict`` is the deal's verdict, as every seat signs
    it."""

    seat: int
    reason: ForfeitReason
    verdict: str


@dataclass(frozen=True, slots=True)
class Scored:
    """A deal is over and agreed: its points, its verdict and the totals."""

    deal: int
    points: tuple[int, ...]
    verdict: str
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameOver:
    """The game is over: the winning unit (a seat, or a team), or several who share it;
    the seats' names as the roster gives them."""

    winner: int | tuple[int, ...]
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BrokeUp:
    """The table breaks up (a seat forfeits before the first deal, or at a table of
    two, where one seat's word would be all it takes)."""

    seat: int
    reason: ForfeitReason
    detail: str = ""
    """A refused step's refusal, as the verdict quotes it."""
    seq: int = -1
    """The number of the message signed in two versions (an equivocation)."""


@dataclass(frozen=True, slots=True)
class Handover:
    """One seat changing hands: a bot stands in for it (``bot``, run by ``run_by``), or
    its own player is back (``bot`` empty)."""

    seat: int
    name: str
    bot: str = ""
    run_by: int = -1


@dataclass(frozen=True, slots=True)
class SeatsChanged:
    """Seats changed hands at a deal's boundary; the roster's new safety number."""

    changes: tuple[Handover, ...]
    safety_number: str


TableEvent = (RosterSigned | DealBegun | Moved | Alarmed | VoidProposed | VoidDeclined | Voided
              | Equivocated | Disagreed | Forfeited | Scored | GameOver | BrokeUp
              | SeatsChanged)
"""Every event a session tells."""


def tell(event: TableEvent, game: Game, names: Sequence[str] | None = None,
         cards: Callable[[str], str] = str) -> str:
    """``event`` as one line of a log or a report: seats by ``names`` (None: ``seat N``,
    as the protocol numbers them), and the text of the protocol it quotes (moves,
    verdicts, reasons) through ``cards`` (a screen shows cards by their faces) with its
    seats named too.  The line may quote other peers' text: show it through
    :func:`~p2pcards.table.kinds.printable`."""
    def who(seat: int) -> str:
        return names[seat] if names is not None and 0 <= seat < len(names) else f"seat {seat}"

    def quote(text: str) -> str:
        text = cards(text)
        return text if names is None else name_seats(text, names)

    match event:
        case RosterSigned(number):
            return f"every seat signed the roster (safety number {number})"
        case DealBegun(deal, dealer):
            return f"deal {deal + 1}, dealer {who(dealer)}"
        case Moved(seat, _, text):
            return f"{'chance' if seat is None else who(seat)}: {quote(text)}"
        case Alarmed(seat, problem):
            return f"{who(seat)}: {quote(problem)}"
        case VoidProposed(seat, reason):
            return f"{who(seat)} proposes to void the deal: {quote(reason)}"
        case VoidDeclined(seat):
            return f"{who(seat)} does not consent: the deal goes on"
        case Voided(reason):
            return f"every seat consents to void the deal ({quote(reason)})"
        case Equivocated(seat, seq):
            return f"{who(seat)} signed two different messages with sequence number {seq}"
        case Disagreed(seat, deal, transcript, points, verdict, (my_points, my_verdict)):
            what = "transcript" if transcript else "result"
            return (f"{who(seat)} signed another {what} of deal {deal + 1}: {points}"
                    f" {quote(repr(verdict))} (this seat: {list(my_points)}"
                    f" {quote(repr(my_verdict))})")
        case Forfeited(_, _, verdict):
            return quote(verdict)
        case Scored(deal, points, verdict, totals):
            return (f"deal {deal + 1}: {_numbers(points)} ({quote(verdict)});"
                    f" totals {_numbers(totals)}")
        case GameOver(winner, seats):
            return f"the game is over: {winning(game, winner, seats)}"
        case BrokeUp(seat, reason, detail, seq):
            what = quote(detail) if reason == ForfeitReason.REFUSED_STEP else \
                f"signed two versions of its message {seq}" \
                if reason == ForfeitReason.EQUIVOCATION else "was silent"
            return f"{who(seat)} {what}: the table breaks up"
        case SeatsChanged(changes, number):
            parts = []
            for change in changes:  # (the line as the protocol numbers seats, cut to
                held = printable(change.name, 32)  # MAX_TEXT; then its seats named)
                parts.append(f"seat {change.seat} ({held}) is away:"
                             f" {a_or_an(printable(change.bot, 16))} bot run by"
                             f" seat {change.run_by} stands in" if change.bot
                             else f"seat {change.seat} ({held}) is back")
            line = printable("; ".join(parts) + f"; new safety number {number}", MAX_TEXT)
            return line if names is None else name_seats(cards(line), names)
    raise AssertionError(event)


def winning(game: Game, winner: int | Sequence[int] | None, names: Sequence[str]) -> str:
    """``winner NAME`` or ``shared win: NAME, NAME`` (units by the seats' ``names``: a
    seat, or a team of them)."""
    def unit(u: int) -> str:
        return game.unit_name(u, [printable(name, 32) for name in names])

    if isinstance(winner, Sequence):
        return "shared win: " + ", ".join(unit(u) for u in winner)
    return f"winner {unit(winner) if winner is not None else '-'}"


def _numbers(values: Sequence[int]) -> str:
    """Points as a line shows them: ``4 0``."""
    return " ".join(map(str, values))
