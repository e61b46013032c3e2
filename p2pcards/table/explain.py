"""``p2pcards verify FILE --explain``: a verdict a person can follow.

:func:`p2pcards.table.verify.verify` has a watching session check every message
and keeps what it took (:attr:`~p2pcards.table.verify.Report.runs`, one
:class:`~p2pcards.table.run.DealRun` a deal).  This module checks nothing
again: it tells, deal by deal and with counts, what those checks were (the
roster and its signatures, the seals, the deck's passes and re-mixes, the keys,
the moves, the audit, the verdict and who signed it), the cards each seat held
as dealt (read from the audited deck) and how the deal ended.  Every piece of
text that came from the transcript (names, move texts, reasons) goes through
:func:`~p2pcards.table.kinds.printable`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from p2pcards.games.cards import Notation, bits
from p2pcards.games.core import CHANCE
from p2pcards.history import HIDDEN
from p2pcards.table.codec import Envelope, a_or_an
from p2pcards.table.codec import counted as _n
from p2pcards.table.kinds import Act, Kind, printable
from p2pcards.table.run import DealRun
from p2pcards.table.verify import DealReport, Report

LINE = 1000
"""The most characters of one line (a line quotes the peers' texts)."""


def explain(report: Report) -> str:
    """What the check of ``report``'s transcript went through, deal by deal (the lines
    before :func:`~p2pcards.table.verify.format_report`'s)."""
    names = [printable(seat.name, 32) for seat in report.roster.seats]
    lines = _opening(report, names)
    for index, run in enumerate(report.runs):
        deal = report.deals[index] if index < len(report.deals) else None
        lines += _deal(report, run, deal)
    lines += _stop(report, names)
    return "\n".join(printable(line, LINE) for line in lines)


def _opening(report: Report, names: list[str]) -> list[str]:
    roster = report.roster
    kinds = Counter(env.kind for env in report.opening)
    options = ", ".join(f"{k} {v}" for k, v in sorted(roster.options.items()))
    seated = ", ".join(f"{name} (seat {i})" for i, name in enumerate(names))
    lines = [f"the roster: {roster.rules.title}, {roster.players} seats: {seated}"
             + (f"; options {options}" if options else ""),
             f"  safety number {roster.safety_number()}; each of the"
             f" {_n(report.messages, 'message')} is checked as it comes: its signature by"
             " its seat's key in the roster, its sequence number, the transcript hash it"
             " names, and that it was its seat's turn",
             f"  the roster signed by {_who(_senders(report.opening, Kind.SIGN), names)}"
             f" ({_n(kinds[Kind.SIGN], 'sign message')}, each naming this roster's digest)"]
    if kinds[Kind.COMMIT] or kinds[Kind.SHARE]:
        first = report.runs[0].dealer if report.runs else None
        lines.append(f"  the first dealer drawn jointly: {_n(kinds[Kind.COMMIT], 'commitment')},"
                     f" {_n(kinds[Kind.SHARE], 'share')}, each share matching its commitment"
                     + (f": {names[first]} deals first" if first is not None else ""))
    return lines


def _deal(report: Report, run: DealRun, deal: DealReport | None) -> list[str]:
    roster = report.roster
    record = run.outcome.record if run.outcome is not None else None
    names = [printable(n, 32) for n in (record.players if record and record.players
                                        else [s.name for s in roster.seats])]
    kinds = Counter(env.kind for env in run.envelopes)
    lines = [f"deal {run.index + 1}, dealer {names[run.dealer]}:"
             f" {_n(len(run.envelopes), 'message')}"]
    if kinds[Kind.SEAT]:
        lines.append(f"  seats changed hands: {kinds[Kind.SEAT]} seat message, the new roster"
                     f" signed in {kinds[Kind.SIGN]} sign messages")
    if kinds[Kind.HELLO]:
        lines.append(f"  seals: a sealing key from {_who(sorted(run.seal_keys), names)}"
                     f" ({_n(kinds[Kind.HELLO], 'hello message')}; each key a usable X25519 key,"
                     " none used twice)")
    lines += run.deck.explain_rounds(names)
    lines += run.deck.explain_keys(run, kinds)
    lines += _play(run, names, kinds)
    if run.outcome is None:
        lines.append("  the deal stops here, before its audit: its cards are not known"
                     if run.deck.flavor.audited else
                     "  the deal stops here, before its end: its hidden cards stay secret")
        return lines
    lines += run.deck.explain_audit(run, names, roster.players)
    points = ", ".join(f"{roster.rules.unit_name(u, names)} {p}"
                       for u, p in enumerate(run.points))
    lines.append(f"  verdict: {run.verdict}; points: {points}")
    if deal is not None:
        signed = _who(deal.signed, names) or "no seat"
        to = "every seat" if deal.signers == list(range(roster.players)) else \
            _who(deal.signers, names)
        agreed = kinds[Kind.AGREE] + kinds[Kind.PROVED_AGREE]
        noun = "pagree message" if kinds[Kind.PROVED_AGREE] else "agree message"
        carried = sum(env.kind == Kind.PROVED_AGREE and bool(env.body.get("shares"))
                      for env in run.envelopes)
        lines.append(f"  agreement: signed by {signed} ({_n(agreed, noun)}; to sign: {to}),"
                     " each naming this transcript's hash, these points and this verdict"
                     + (f"; {carried} of them carrying the signer's shares of the next"
                        " deal's cards, each proof checked on arrival" if carried else ""))
        lines.extend(f"  dissent: {d}" for d in deal.dissent)
    lines += _dealt(run, names)
    lines.append(f"  ended: {_ending(run, names, points)}")
    return lines


def _play(run: DealRun, names: list[str], kinds: Counter[str]) -> list[str]:
    lines = []
    if kinds[Kind.OPENED]:
        lines.append(f"  cards opened: {_n(kinds[Kind.OPENED], 'opened report')}"
                     + ("" if run.alarms else ", no seat reported a problem"))
    lines.extend(f"  alarm from {names[seat]}: {printable(problem, 200)}"
                 for seat, problem in sorted(run.alarms.items()))
    if kinds[Kind.COMMIT] or kinds[Kind.SHARE]:
        lines.append(f"  joint draws for chance: {_n(kinds[Kind.COMMIT], 'commitment')},"
                     f" {_n(kinds[Kind.SHARE], 'share')}, each share matching its commitment")
    if run.acts:
        by = Counter(seat for seat, _ in run.acts)
        who = ", ".join(f"{names[s]} {by[s]}" for s in sorted(by) if s != CHANCE)
        chance = f", chance {by[CHANCE]}" if by[CHANCE] else ""
        shown = sum(len(act.shown) for _, act in run.acts)
        keys = sum(len(keys) for _, act in run.acts if isinstance(act, Act)
                   for _, keys in act.shown)
        cards = f"; {_n(shown, 'card')} shown, each opened with every key of its slot" \
            f" ({_n(keys, 'key')}, each checked against its commitment)" if shown else ""
        if shown and not run.deck.flavor.audited:
            cards = f"; {_n(shown, 'card')} shown, each opened with every seat's share of its" \
                " slot"
        lines.append(f"  moves: {len(run.acts)} ({who}{chance}), each checked on arrival"
                     f" against what every seat sees: its turn, and its text by the rules{cards}")
    if kinds[Kind.VOID]:
        lines.append(f"  proposals to void the deal: {kinds[Kind.VOID]}, answered in"
                     f" {kinds[Kind.CONSENT]} consent messages")
    claims = [_n(kinds[k], one, many) for k, one, many in (
        (Kind.SILENT, "claim of silence", "claims of silence"),
        (Kind.CHEAT, "claim of a cheat", "claims of a cheat")) if kinds[k]]
    if claims:
        lines.append(f"  claims: {', '.join(claims)}")
    return lines


def _dealt(run: DealRun, names: list[str]) -> list[str]:
    """The cards each hidden place held as dealt, from the audited deck (none when the
    cards were never revealed: the record then deals the blank deck)."""
    record = run.outcome.record if run.outcome is not None else None
    setup = run.ledger.setup
    notation = setup.game.notation
    if record is not None and record.public:
        shown = sum(name != HIDDEN for name in record.deck)
        return [f"  dealt: the cards never shown stay secret ({shown} of {len(record.deck)}"
                " deck positions were shown to everyone from the slot they were dealt in)"]
    if record is None or record.deck == [notation.name(c) for c in run.ledger.blank_deck()]:
        return ["  dealt: the cards were never revealed"]
    state = setup.deal([notation.parse(name) for name in record.deck])
    lines = ["  dealt (from the audited deck):"]
    for place, cards in enumerate(state.may):
        if place < setup.players:
            lines.append(f"    {names[place]}: {_cards(notation, cards)}")
        elif cards:
            lines.append(f"    {state.place_name(place)}: {_cards(notation, cards)}")
    deck = sum(1 << card for card in run.ids)
    face_up = deck & ~sum(state.may)
    if face_up:
        lines.append(f"    face up: {_cards(notation, face_up)}")
    return lines


def _ending(run: DealRun, names: list[str], points: str) -> str:
    outcome = run.outcome
    assert outcome is not None
    record = outcome.record
    if outcome.void:
        why = record.reason or outcome.state.void_reason or ""
        by = "every seat's consent" if run.consented else "the rules"
        return f"void by {by} ({printable(why, 80)}); it does not count"
    if record.forfeit is not None:
        seat = record.forfeit["seat"]
        return f"{names[seat]} (seat {seat}) forfeits the deal" \
               f" ({printable(record.forfeit['reason'], 40)}); points: {points}"
    if record.penalty is not None:
        seat = record.penalty["seat"]
        return f"{names[seat]} (seat {seat}) takes the penalty for breaking the rules;" \
               f" points: {points}"
    return printable(outcome.state.summary(names), 300)


def _stop(report: Report, names: list[str]) -> list[str]:
    refusal = report.refusal
    if refusal is None:
        return [f"the transcript ends here: {report.problem}"] if report.problem else []
    rejection = refusal.rejection
    where = f"deal {refusal.deal + 1}" if refusal.deal is not None else \
        "after the last deal" if report.runs else "before the first deal"
    seat, kind = refusal.seat, refusal.kind
    what = f"{a_or_an(printable(kind, 16))} message" if kind else "a message"
    who = "with no readable sender" if seat is None else \
        f"in the name of {names[seat]} (seat {seat})"
    return [f"refused in {where}: message {refusal.position}, {what} {who}:"
            f" {printable(rejection.code, 40)}: {printable(rejection.reason, 300)}"]


def _cards(notation: Notation, mask: int) -> str:
    """Cards as a hand shows them at the prompt (by suit, high first), by their names."""
    cards = sorted(bits(mask), key=lambda c: (notation.group(c), -notation.rank(c)))
    return " ".join(notation.name(c) for c in cards) or "(none)"


def _senders(envelopes: Sequence[Envelope], kind: str) -> list[int]:
    return sorted({env.sender for env in envelopes if env.kind == kind})


def _who(seats: Sequence[int], names: list[str]) -> str:
    return ", ".join(names[s] for s in seats)
