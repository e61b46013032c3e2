"""The end of a deal of the proved deck: its verdict and its hand-history entry, from
what was shown alone.

Nothing is revealed after a deal of the proved deck, so its record is a public
entry (docs/hand-history.md, "Public entries"): the deck positions shown to
everyone from the slot they were dealt in, ``?`` elsewhere, and every move in its
public form.  The verdict is the replay of that entry by
:func:`p2pcards.history.play_public`, the function ``p2pcards replay`` calls:
every card shown was proven to come from its mover's slot, so a card shown that
its seat had claimed not to hold proves a breach (a renege), which ends the deal
with the game's penalty, as the audit would give it (docs/protocol.md, "The
proved deck at the table").
"""

from __future__ import annotations

from p2pcards.games.core import CHANCE
from p2pcards.history import HIDDEN, Actor, HandRecord, PublicPlay, play_public, score_public
from p2pcards.table.events import ForfeitReason
from p2pcards.table.kinds import clip
from p2pcards.table.replay import Outcome
from p2pcards.table.run import DealRun


def public_record(run: DealRun) -> tuple[HandRecord, PublicPlay]:
    """The deal as everyone saw it so far, and its public replay.  A slot of the deck's
    first round is a deck position (slot ``i`` is position ``i``); a position is named
    when its slot was opened to everyone (:attr:`DealRun.shown`), and a card shown
    only from a later slot (after a re-mix or a reshuffle) leaves its position ``?``."""
    setup = run.ledger.setup
    name = setup.game.notation.name
    known = _known(run)
    actions: list[tuple[Actor, str]] = [("chance" if seat == CHANCE else seat, act.action)
                                        for seat, act in run.acts]
    record = HandRecord(setup.dealer, [HIDDEN if c is None else name(c) for c in known],
                        actions, public=True)
    return record, play_public(setup, known, actions, run.index)


def concluded(run: DealRun) -> tuple[Outcome, str]:
    """The verdict of a deal of the proved deck that reached its play: a breach proven
    by a card shown (the penalty), void (every seat's consent, or the rules), a false
    alarm (every card was proven: its seat forfeits), or the deal as played."""
    record, play = public_record(run)
    assert run.public is not None
    void = run.consented or run.public.void_reason
    proven = play.proven
    if proven is not None:
        record.penalty = proven.penalty()
        verdict = f"seat {proven.seat} broke the rules at move {proven.index}:" \
                  f" {proven.reason} (proven by move {proven.at})"
    elif void:
        record.void, record.reason = True, void
        verdict = f"void: {void}"
    elif run.alarms:
        seat = min(run.alarms)
        record.forfeit = {"seat": seat, "reason": ForfeitReason.REFUSED_STEP.value}
        verdict = f"seat {seat} raised a false alarm ({clip(run.alarms[seat], 80)})"
    else:
        verdict = "ok"
    return Outcome(score_public(record, play, run.index), record), clip(verdict)


def forfeited(run: DealRun, seat: int, reason: str) -> Outcome:
    """``seat`` forfeits a deal of the proved deck in its play: the deal as played so far
    with the game's penalty (a deal already void stays void).  A breach proven earlier
    (the deal was at its agreement when the seat signed two versions of a message) gives
    way to the forfeit: the record stops before the move that proved it."""
    record, play = public_record(run)
    assert run.public is not None
    if play.proven is not None:
        record.actions = record.actions[:play.proven.at]
        play = play_public(run.ledger.setup, _known(run), record.actions, run.index)
    void = run.consented or run.public.void_reason
    if void:
        record.void, record.reason = True, void
    else:
        record.forfeit = {"seat": seat, "reason": reason}
    return Outcome(score_public(record, play, run.index), record)


def _known(run: DealRun) -> list[int | None]:
    """Each deck position's card where its slot was opened to everyone, else None."""
    return [run.ids[run.shown[slot]] if slot in run.shown else None
            for slot in range(len(run.ids))]
