"""How a deal ends other than by play: a seat forfeits it (silence, a proven cheat, a
refused audit), and the transcript taken back for claims that came late.

A silent seat forfeits once every other seat has claimed it; a seat that signed
two versions of a message once every other has claimed the proof; a seat whose
signed message the proved deck refuses at once (docs/protocol.md, "Silence and
consent", "Proof of equivocation", "A refused step").  The claims themselves
are :mod:`p2pcards.table.claiming`'s; this module is what the table then does.
"""

from __future__ import annotations

from p2pcards.table.events import BrokeUp, Forfeited, ForfeitReason
from p2pcards.table.kinds import Kind, clip
from p2pcards.table.phases.ahead import discard
from p2pcards.table.phases.machine import PhaseMachine
from p2pcards.table.proved import forfeited
from p2pcards.table.replay import forfeit
from p2pcards.table.state import Phase, ProvenCheat, Step


def silenced(m: PhaseMachine, seat: int, cheated: int | None = None, proven: str = "") -> None:
    """``seat`` forfeits the deal: the game's penalty against it, the deal scored as
    played so far for the others (p2pcards/rules/common.md); its secrets never came, so
    the record keeps no cards, and the seats its peer runs do not sign the result.
    Before the first deal, or at a table of two (where one seat's word would be
    all it takes), the table breaks up instead; at the agreement the result stands
    without its peer's signatures; a deal already void stays void.  ``cheated``:
    the sequence number of a message it was proven to have signed in two versions
    (the forfeit's reason is then "equivocation", at the agreement too).
    ``proven``: why the proved deck refused a message it signed, in turn (the
    reason is then "refused step": docs/protocol.md, "A refused step").  The next
    deal's deck prepared ahead, if any, is discarded (docs/protocol.md, "Shuffle
    ahead")."""
    discard(m)
    run = m.run
    silent = cheated is None and not proven
    if run is None or m.players == 2:
        m.restart(Phase.OVER)
        m.run = None
        reason = ForfeitReason.SILENT if silent else ForfeitReason.REFUSED_STEP if proven \
            else ForfeitReason.EQUIVOCATION
        m.events.append(BrokeUp(seat, reason, proven, -1 if cheated is None else cheated))
        return
    alive = m.roster.others(seat)  # (its peer's other seats fall silent with it)
    if silent:
        m.seats.went(m.roster, seat)  # (a bot takes them at the next deal)
    if m.phase == Phase.AGREE and silent:
        m.drop(lambda step: step.seat not in alive)
        run.signers = [s for s in run.signers if s in alive]
        return
    reason = ForfeitReason.EQUIVOCATION if cheated is not None else \
        ForfeitReason.REFUSED_STEP if proven else \
        ForfeitReason.REFUSED_AUDIT if m.phase == Phase.AUDIT else ForfeitReason.SILENT
    public = run.public
    rules_void = public.void_reason if public is not None else None
    if public is not None and not m.flavor.audited:  # (the moves are public)
        run.outcome = forfeited(run, seat, reason.value)
    else:
        run.outcome = forfeit(run.ledger.setup, run.ledger.blank_deck(), [], {},
                              seat=seat, reason=reason.value)
    if run.consented or rules_void is not None:
        run.outcome.record.forfeit = None
        run.outcome.record.void = True
        run.outcome.record.reason = run.consented or rules_void or ""
        run.verdict = clip(f"void: {run.outcome.record.reason}")
    else:
        if public is not None and m.flavor.audited:
            played = public.clone()  # the deal as played so far, the penalty applied
            played.penalize(seat, reason.value)
            run.outcome.state = played
            run.outcome.record.forfeit = {"seat": seat, "reason": reason.value,
                                          "points": list(run.outcome.points)}
        what = proven or f"signed two versions of its message {cheated}"
        run.verdict = clip(f"seat {seat} forfeits the deal: {reason.value}" if silent
                           else f"seat {seat} forfeits the deal: {reason.value} ({what})")
    run.points = run.outcome.points
    run.agree_hash = m.transcript.hash
    run.signers = sorted(alive)
    m.restart(Phase.AGREE, (Step(m.flavor.agree, s) for s in run.signers))
    m.events.append(Forfeited(seat, reason, run.verdict))


def resolve(m: PhaseMachine, *, force: bool = False) -> bool:
    """At the end of a round (or ``force``: the deal ends otherwise, by claims of
    silence), every deferred proof is checked before anything else: the first that
    does not hold makes its shuffler forfeit, as if it had been refused on arrival, at
    the same point for every seat (the round's last shuffle is where every seat has
    them all).  True if so."""
    run = m.run
    if run is None or not m.waiting() or (run.deck.expected() is not None and not force):
        return False
    proven = run.deck.refusal(run)
    if proven is None:
        return False
    refute(m, proven)
    return True


def refute(m: PhaseMachine, proven: ProvenCheat) -> None:
    """The verdict of a proven cheat (``proven.seat``'s message of ``proven.kind``): it
    forfeits the deal (docs/protocol.md, "A refused step")."""
    assert proven.seat is not None
    if m.run is not None:
        m.run.judged = True
    silenced(m, proven.seat, proven=f"its {proven.kind} refused: {proven.reason}")


def back_to(m: PhaseMachine, kind: str) -> None:
    """The transcript went back to where this seat's ``kind`` message was due (its peer's
    messages since are dropped): the phase that message was in, so that the claims
    against it are taken as there (at the audit: a refused audit; at the agreement: the
    result stands, the seats still to sign signing it)."""
    run = m.run
    if kind == Kind.AUDIT:
        m.restart(Phase.AUDIT)
    elif kind == m.flavor.agree and run is not None:
        signed = {env.sender for env in m.transcript.envelopes[m.deal_start:]
                  if env.kind == kind}
        m.restart(Phase.AGREE, (Step(m.flavor.agree, s) for s in run.signers if s not in signed))
    elif m.phase in (Phase.AUDIT, Phase.AGREE):
        m.restart(Phase.PLAY)


def crossed(m: PhaseMachine, position: int) -> bool:
    """Whether ``position`` is in the deal scored last rather than in the one in
    progress (or the game is over)."""
    return m.phase == Phase.OVER or position < m.deal_start


def unscore(m: PhaseMachine) -> None:
    """Take back the scoring of the deal scored last: the transcript went back into its
    agreement (a claim of silence against this seat's peer, complete at the others
    before they saw its signature).  It is scored again once agreed."""
    discard(m)  # (the deal it prepared began at this seat, not at every seat)
    run = m.finished.pop()
    void = run.outcome is not None and run.outcome.void
    for unit, points in enumerate(run.points):
        m.totals[unit] -= points
    m.deals -= 1
    m.scored -= 0 if void else 1
    m.winner = None
    m.dealer = run.dealer
    m.run = run
    if m.phase != Phase.OVER:
        m.deal_start = m.previous_start
    m.restart(Phase.AGREE)
