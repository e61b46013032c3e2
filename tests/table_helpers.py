"""Helpers of the table tests: messages made by hand, in a seat's name."""

from __future__ import annotations

from typing import Any

from p2pcards.table import kinds
from p2pcards.table.codec import seal_envelope
from p2pcards.table.decks import ACTS
from p2pcards.table.events import tell
from p2pcards.table.kinds import Act, ProvedAct, ProvedMove
from p2pcards.table.memory import MemoryTable
from p2pcards.table.phases import ahead
from p2pcards.table.roster import AGREED_DECK, AHEAD_DECK, PROVED_DECKS
from p2pcards.table.session import Session


def envelope(session: Session, kind: str, body: dict[str, Any], **override: Any) -> bytes:
    """A message in ``session``'s name, signed by its key unless overridden."""
    fields: dict[str, Any] = {
        "table": session.table, "deal": session.run.index if session.run else 0,
        "sender": session.me, "seq": session.transcript.seq_out, "prior": session.hash,
        "kind": kind, "body": body}
    key = override.pop("key", session.identity)
    fields.update(override)
    return seal_envelope(key, **fields).wire


def act_body(action: str, **extra: Any) -> dict[str, Any]:
    return kinds.encode_body(Act(action=action, **extra))[1]


def move(session: Session, action: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    """The kind and body of a move in ``session``'s name at its table: an ``act``, or
    at a proved table a ``pact`` (``extra``: the fields of either), or where the roster
    names shuffle ahead a ``pmove`` carrying the step due from the seat (made, not
    taken, by the seat's deck prepared ahead: the one it would send)."""
    if session.roster.deck in (AHEAD_DECK, AGREED_DECK):
        deck, step = session.machine.ahead, None
        if deck is not None and ahead.due(session.machine, session.me) is not None:
            deck.prepare()
            step = deck.prepared
        return "pmove", kinds.encode_body(ProvedMove(party=session.me, action=action,
                                                     ahead=step, **extra))[1]
    if session.roster.deck in PROVED_DECKS:
        return "pact", kinds.encode_body(ProvedAct(party=session.me, action=action,
                                                   **extra))[1]
    return "act", act_body(action, **extra)


def roles(table: MemoryTable) -> tuple[Session, Session, Session]:
    """(the seat to move, a seat that is not, a seat that receives)."""
    step = table.sessions[0].due()
    assert step is not None and step.kind in ACTS
    actor = table.sessions[step.seat]
    return actor, table.sessions[(step.seat + 1) % 4], table.sessions[(step.seat + 2) % 4]


def who(forfeit: dict[str, Any] | None) -> dict[str, Any] | None:
    """A forfeit's seat and reason (a deal stopped midway also records its points)."""
    return None if forfeit is None else {"seat": forfeit["seat"], "reason": forfeit["reason"]}


def told(session: Session, *kinds: type) -> list[str]:
    """The lines of ``session``'s events of the classes ``kinds``, as a log tells them
    (seats by number)."""
    return [tell(e, session.roster.rules) for e in session.events if isinstance(e, kinds)]
