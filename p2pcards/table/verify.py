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

from dataclasses import dataclass, field
from itertools import takewhile
from typing import Any

import msgpack

from p2pcards.history import History
from p2pcards.table.codec import MAX_MESSAGE, CodecError, Envelope, no_ext, read_envelope
from p2pcards.table.events import BrokeUp, tell
from p2pcards.table.kinds import printable
from p2pcards.table.roster import Roster, decode_roster
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
"""The most messages a transcript file may hold."""
_BIN = (0xC4, 0xC5, 0xC6)
_STR = (*range(0xA0, 0xC0), 0xD9, 0xDA, 0xDB)


class TranscriptError(ValueError):
    """A file that is not a transcript at all (the message says why)."""


def load(data: bytes) -> tuple[Roster, list[bytes]]:
    """The roster and the messages of a transcript file, read one item at a time: a
    map of exactly ``format``, ``roster`` (bytes) and ``messages`` (byte strings),
    each item's type checked before it is decoded, so that nothing in the file is
    built larger than the file says (no array of empty arrays, no nesting)."""
    if len(data) > MAX_TRANSCRIPT:
        raise TranscriptError(f"{len(data)} bytes, more than the {MAX_TRANSCRIPT} a"
                              " transcript may have")
    reader = msgpack.Unpacker(raw=False, strict_map_key=True, ext_hook=no_ext,
                              max_buffer_size=len(data) + 1, max_bin_len=MAX_MESSAGE,
                              max_str_len=64, max_array_len=MAX_MESSAGES, max_map_len=3)
    reader.feed(data)

    def next_item(allowed: tuple[int, ...], what: str) -> Any:
        at = reader.tell()
        if at >= len(data) or data[at] not in allowed:
            raise TranscriptError(f"{what} is not where a {TRANSCRIPT_FORMAT} file has it")
        return reader.unpack()

    doc: dict[str, Any] = {}
    try:
        if not data or data[0] != 0x83:  # a map of three fields
            raise TranscriptError(f"not a {TRANSCRIPT_FORMAT} file")
        reader.read_map_header()
        for _ in range(3):
            key = next_item(_STR, "a field name")
            if key not in {"format", "roster", "messages"} or key in doc:
                raise TranscriptError("expected exactly the fields format, roster, messages")
            if key == "format":
                doc[key] = next_item(_STR, "the format")
            elif key == "roster":
                doc[key] = next_item(_BIN, "the roster (bytes)")
            else:
                if data[reader.tell()] not in (*range(0x90, 0xA0), 0xDC, 0xDD):
                    raise TranscriptError("the messages are not a list")
                count = reader.read_array_header()
                doc[key] = [next_item(_BIN, f"message {i} (bytes)") for i in range(count)]
        if reader.tell() != len(data):
            raise TranscriptError("bytes after the transcript")
    except TranscriptError:
        raise
    except Exception as error:  # msgpack raises several types for bad input
        raise TranscriptError(f"not msgpack ({type(error).__name__}: {error})") from None
    if doc["format"] != TRANSCRIPT_FORMAT:
        raise TranscriptError(f"not a {TRANSCRIPT_FORMAT} file")
    try:
        return decode_roster(doc["roster"]), doc["messages"]
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


def format_report(report: Report) -> str:
    roster = report.roster
    names = ", ".join(f"{s.name} (seat {i})" for i, s in enumerate(roster.seats))
    lines = [f"{roster.rules.title} at table {roster.table.hex()}: {names}",
             f"safety number {roster.safety_number()}; {report.messages} messages"]
    for deal in report.deals:
        signed = "every seat signed it" if len(deal.signed) == roster.players else \
            f"signed by seats {deal.signed}" + (" (all that were to)"
                                                 if deal.signed == deal.signers else "")
        lines.append(f"deal {deal.index + 1} (dealer seat {deal.dealer}): {deal.verdict};"
                     f" points {' '.join(str(p) for p in deal.points)}; {signed}")
        lines.extend(f"  dissent: {d}" for d in deal.dissent)
    if report.problem:
        lines.append(f"REFUSED: {report.problem}")
    seats = [s.name for s in roster.seats]
    winner, rules = report.winner, roster.rules
    result = ("shared win: " + ", ".join(rules.unit_name(u, seats) for u in winner)
              if isinstance(winner, list) else "the game is not over" if winner is None
              else f"winner: {rules.unit_name(winner, seats)}")
    lines.append(f"totals {' '.join(str(t) for t in report.totals)}; {result}")
    lines.append("verified" if report.ok else "NOT verified")
    return "\n".join(printable(line, 1000) for line in lines)  # (verdicts quote the seats)
