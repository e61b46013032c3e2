"""``p2pcards verify FILE``: re-check an exported transcript offline.

The file (written by :meth:`p2pcards.table.session.Session.export`) holds the
roster and every accepted message in order.  A watching session
(:data:`~p2pcards.table.session.WATCHER`: no seat, no secrets) takes them one
by one, so it checks exactly what a live peer checks: every signature, every
sequence number and transcript hash, whose turn it was, every deck step, every
key shown, every move; and at the end of each deal it reaches the verdict
itself from the revealed secrets (:mod:`p2pcards.table.judge`) and compares
it with what each seat signed.  The first message it must refuse is named with
its position and the seat it claims to come from.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import takewhile
from typing import overload

from p2pcards.games.prose import name_seats
from p2pcards.history import History
from p2pcards.table.codec import MAX_MESSAGE, CodecError, Envelope, read_envelope
from p2pcards.table.events import BrokeUp, tell
from p2pcards.table.kinds import printable
from p2pcards.table.roster import MAX_ROSTER, Roster, decode_roster
from p2pcards.table.run import DealRun
from p2pcards.table.session import TRANSCRIPT_FORMAT, Session
from p2pcards.table.state import WATCHER, Rejection, Rule


@dataclass
class DealReport:
    index: int
    dealer: int
    verdict: str
    points: list[int]
    signed: list[int]
    """Seats whose signed transcript hash and result match the verifier's."""
    dissent: list[str]
    signers: list[int]
    """The seats that were to sign (all but a seat that forfeited by silence)."""


@dataclass(frozen=True, slots=True)
class FirstRefusal:
    """The first message the watching session refused."""

    position: int
    rejection: Rejection
    deal: int | None
    """The index of the deal in progress when it came (None: before the first deal, or
    after the game was over)."""
    seat: int | None
    """The seat it came in the name of (that of a message held for a transcript no
    message leads to too), None when that cannot be told."""
    kind: str | None
    """The kind of message it says it is, None when that cannot be read."""


@dataclass
class Report:
    roster: Roster
    messages: int
    deals: list[DealReport] = field(default_factory=list)
    problem: str | None = None
    """The first message refused (position, claimed seat, rule), or an unfinished
    transcript."""
    totals: list[int] = field(default_factory=list)
    winner: int | list[int] | None = None
    history: History | None = None
    refusal: FirstRefusal | None = None
    opening: list[Envelope] = field(default_factory=list)
    """The messages taken before the first deal: the roster signed, the first dealer
    drawn."""
    runs: list[DealRun] = field(default_factory=list)
    """Every deal as the watching session took it (``deals[i]`` reports on
    ``runs[i]``), then the deal in progress when the transcript stopped, if any:
    what ``--explain`` (:mod:`p2pcards.table.explain`) tells."""

    @property
    def ok(self) -> bool:
        """Every message checks out and every seat signed every deal's result."""
        return self.problem is None and all(
            not d.dissent and d.signed == d.signers for d in self.deals)


MAX_TRANSCRIPT = 32 * 1024 * 1024
"""The largest transcript file read: the longest game of fixed length, Nullern at seven
seats (20 deals), makes about 2.3 MiB and 1,900 messages; this leaves room for games
that tie on for many deals (some 350 deals of Control Nut!)."""
MAX_MESSAGES = 50_000
"""The most messages a transcript file may hold (checked against the count its list
says, before any message is read)."""
MAX_FIELD_NAME = 64
"""The most bytes of a field name, or of the format's name."""
_SIZED = {0xC4: ("bytes", 1), 0xC5: ("bytes", 2), 0xC6: ("bytes", 4),
          0xD9: ("text", 1), 0xDA: ("text", 2), 0xDB: ("text", 4),
          0xDC: ("list", 2), 0xDD: ("list", 4)}
"""msgpack's headers that give a length after them: (what they begin, its width)."""


class TranscriptError(ValueError):
    """A file that is not a transcript at all (the message says why)."""


class Messages(Sequence[bytes]):
    """The messages of a transcript file, each cut from the file only when it is read
    (nothing of them is copied before the roster is checked, nor all at once after)."""

    def __init__(self, data: bytes, starts: array[int], ends: array[int]):
        self._data = data
        self._starts = starts
        self._ends = ends

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...

    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [self._data[start:end] for start, end
                    in zip(self._starts[index], self._ends[index], strict=True)]
        return self._data[self._starts[index]:self._ends[index]]


def _header(data: bytes, at: int, what: str) -> tuple[str, int, int]:
    """The item that begins at ``at``, from its header alone: what it is (``text``,
    ``bytes``, ``list``, ``map``, or ``other``), its length (its bytes, or its items),
    and where its content begins."""
    if at >= len(data):
        raise TranscriptError(f"the file ends before {what}")
    first = data[at]
    for low, kind in ((0xA0, "text"), (0x90, "list"), (0x80, "map")):
        if low <= first < low + (32 if kind == "text" else 16):
            return kind, first - low, at + 1
    kind, width = _SIZED.get(first, ("other", 0))
    if at + 1 + width > len(data):
        raise TranscriptError(f"the file ends inside {what}")
    return kind, int.from_bytes(data[at + 1:at + 1 + width], "big"), at + 1 + width


def _span(data: bytes, at: int, kind: str, what: str, most: int) -> tuple[int, int]:
    """Where the content of ``what``, text or bytes of at most ``most``, lies in the
    file, from its header alone."""
    found, length, start = _header(data, at, what)
    if found != kind:
        raise TranscriptError(f"{what} is not where a {TRANSCRIPT_FORMAT} file has it")
    if length > most:
        raise TranscriptError(f"{what}: {length} bytes, more than the {most} it may have")
    if start + length > len(data):
        raise TranscriptError(f"the file ends inside {what}")
    return start, start + length


def _text(data: bytes, span: tuple[int, int], what: str) -> str:
    try:
        return data[span[0]:span[1]].decode()
    except UnicodeDecodeError:
        raise TranscriptError(f"{what} is not text") from None


def load(data: bytes) -> tuple[Roster, Messages]:
    """The roster and the messages of a transcript file, read from the items' headers
    alone: a map of exactly ``format``, ``roster`` (bytes) and ``messages`` (a list of
    byte strings, at most :data:`MAX_MESSAGES` as its header says, each at most
    :data:`~p2pcards.table.codec.MAX_MESSAGE`).  The roster is decoded and checked
    before any message is read, and a message is cut from the file only when it is
    read: a file that is no transcript costs its headers, and nothing in it is built
    larger than the file says (no list of empty lists, no nesting)."""
    if len(data) > MAX_TRANSCRIPT:
        raise TranscriptError(f"{len(data)} bytes, more than the {MAX_TRANSCRIPT} a"
                              " transcript may have")
    if not data or data[0] != 0x83:  # a map of three fields
        raise TranscriptError(f"not a {TRANSCRIPT_FORMAT} file")
    at, fields = 1, {}
    starts, ends = array("I"), array("I")  # (4 bytes a message: the file is under 4 GiB)
    for _ in range(3):
        name = _span(data, at, "text", "a field name", MAX_FIELD_NAME)
        key, at = _text(data, name, "a field name"), name[1]
        if key not in {"format", "roster", "messages"} or key in fields:
            raise TranscriptError("expected exactly the fields format, roster, messages")
        if key == "format":
            fields[key] = _span(data, at, "text", "the format", MAX_FIELD_NAME)
        elif key == "roster":
            fields[key] = _span(data, at, "bytes", "the roster (bytes)", MAX_ROSTER)
        else:
            kind, count, start = _header(data, at, "the messages")
            if kind != "list":
                raise TranscriptError("the messages are not a list")
            if count > MAX_MESSAGES:
                raise TranscriptError(f"{count} messages, more than the {MAX_MESSAGES} a"
                                      " transcript may have")
            for i in range(count):  # (headers only: each message's bytes are skipped)
                begin, start = _span(data, start, "bytes", f"message {i} (bytes)",
                                     MAX_MESSAGE)
                starts.append(begin)
                ends.append(start)
            fields[key] = (at, start)
        at = fields[key][1]
    if at != len(data):
        raise TranscriptError("bytes after the transcript")
    if _text(data, fields["format"], "the format") != TRANSCRIPT_FORMAT:
        raise TranscriptError(f"not a {TRANSCRIPT_FORMAT} file")
    start, end = fields["roster"]
    try:
        return decode_roster(data[start:end]), Messages(data, starts, ends)
    except CodecError as error:
        raise TranscriptError(str(error)) from None


def verify(data: bytes) -> Report:
    """Check a transcript file; :class:`TranscriptError` if it is not one."""
    roster, messages = load(data)
    try:
        watcher = Session(roster, WATCHER, None)
    except ValueError as error:
        raise TranscriptError(str(error)) from None
    report = Report(roster, len(messages))
    for position, wire in enumerate(messages):
        rejection = watcher.receive(wire)
        if rejection is None and watcher.transcript.held:
            rejection = Rejection(None, Rule.TRANSCRIPT, "sent on a transcript that no"
                                                         " message before it leads to")
        if rejection is not None:
            report.problem = f"message {position} ({describe(rejection)})"
            report.refusal = refusal(watcher, position, wire, rejection)
            break
    else:  # (a transcript that stops at a round's end: its shuffle proofs all the same)
        watcher.check_pending()
    for run in watcher.finished:
        mine = (run.agree_hash, tuple(run.points), run.verdict)
        signed = [seat for seat, agree in sorted(run.agrees.items())
                  if (agree.transcript, agree.points, agree.verdict) == mine]
        dissent = [f"seat {seat} signed {list(agree.points)} ({agree.verdict})"
                   for seat, agree in sorted(run.agrees.items()) if seat not in signed]
        report.deals.append(DealReport(run.index, run.dealer, run.verdict, list(run.points),
                                       signed, dissent, sorted(run.signers)))
    if report.problem is None and (watcher.claims or watcher.claims.held):
        report.problem = "the transcript ends with claims that never completed"
    if report.problem is None and not watcher.over:
        step = watcher.due()
        due = f"{step.kind} from seat {step.seat}" if step else "nothing"
        report.problem = f"the transcript stops with {due} due: the game is not finished"
    broke_up = [e for e in watcher.events if isinstance(e, BrokeUp)]
    if report.problem is None and broke_up:
        report.problem = tell(broke_up[0], roster.rules)
    report.runs = [*watcher.finished, *([watcher.run] if watcher.run is not None else [])]
    first = report.runs[0].envelopes[0] if report.runs and report.runs[0].envelopes else None
    report.opening = list(takewhile(lambda env: env is not first, watcher.transcript))
    report.totals = list(watcher.totals)
    report.winner = watcher.winner
    report.history = History(roster.game, [s.name for s in roster.seats],
                             dict(roster.options),
                             [run.outcome.record for run in watcher.finished if run.outcome])
    return report


def refusal(watcher: Session, position: int, wire: bytes, rejection: Rejection) -> FirstRefusal:
    """The refusal of ``wire`` as ``--explain`` names it: with the deal in progress, the
    seat, and the kind of message (read without trusting it: it was refused)."""
    seat = rejection.sender if rejection.sender is not None else \
        next(iter(watcher.transcript.held), None)
    try:
        kind: str | None = read_envelope(wire, watcher.roster.players).kind
    except CodecError:
        kind = None
    run = watcher.run
    return FirstRefusal(position, rejection, None if run is None else run.index, seat, kind)


def describe(rejection: Rejection) -> str:
    who = "no readable sender" if rejection.sender is None else \
        f"in seat {rejection.sender}'s name"
    return f"{who}; {rejection.code}: {rejection.reason}"


def format_report(report: Report, *, named: bool = False) -> str:
    """The report's lines; ``named``: the seats of its deals by their names (``p2pcards
    verify`` and a table's report to its players), else by number.  A name that reads
    like a seat's number (``seat 0``) is never read again as one: the rules' prose is
    named first, the names put in after; the first line pairs each name with its seat."""
    roster = report.roster
    names = ", ".join(f"{s.name} (seat {i})" for i, s in enumerate(roster.seats))
    lines = [f"{roster.rules.title} at table {roster.table.hex()}: {names}",
             f"safety number {roster.safety_number()}; {report.messages} messages"]

    seats = [printable(s.name, 32) for s in roster.seats]

    def who(seat: int) -> str:
        return seats[seat] if named and 0 <= seat < len(seats) else f"seat {seat}"

    def told(text: str) -> str:  # (the rules' prose numbers the seats; named before the
        return name_seats(text, seats) if named else text  # names join the line)

    for deal in report.deals:
        signers = f"seats {deal.signed}" if not named else \
            ", ".join(who(seat) for seat in deal.signed) or "no seat"
        signed = "every seat signed it" if len(deal.signed) == roster.players else \
            f"signed by {signers}" + (" (all that were to)"
                                      if deal.signed == deal.signers else "")
        lines.append(f"deal {deal.index + 1} (dealer {who(deal.dealer)}): {told(deal.verdict)};"
                     f" points {' '.join(str(p) for p in deal.points)}; {signed}")
        lines.extend(f"  dissent: {told(d)}" for d in deal.dissent)
    if report.problem:
        lines.append(f"REFUSED: {report.problem}")
    winner, rules = report.winner, roster.rules
    result = ("shared win: " + ", ".join(rules.unit_name(u, seats) for u in winner)
              if isinstance(winner, list) else "the game is not over" if winner is None
              else f"winner: {rules.unit_name(winner, seats)}")
    lines.append(f"totals {' '.join(str(t) for t in report.totals)}; {result}")
    lines.append("verified" if report.ok else "NOT verified")
    return "\n".join(printable(line, 1000) for line in lines)  # (verdicts quote the seats)
