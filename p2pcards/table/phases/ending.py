"""A deal ends (phases AUDIT and AGREE): its secrets revealed, its verdict, its result
signed by every seat, its score, and the next deal or the game's end.

A deck that is audited has every seat reveal its secrets after the deal
(``audit``); the verdict then follows from them alone.  A deck with no audit
(the proved deck) checked every step on arrival: the verdict is the deal as
everyone saw it (:meth:`~p2pcards.table.run.TableDeck.conclude`).  Every seat
signs the result (``agree``); one that signs another is on record.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.table.codec import Envelope, public_bytes
from p2pcards.table.events import Disagreed, GameOver, Scored
from p2pcards.table.kinds import Agree, Audit, Kind, ProvedAgree
from p2pcards.table.phases.ahead import check_agree, discard
from p2pcards.table.phases.forfeits import resolve
from p2pcards.table.phases.machine import Handler, PhaseMachine
from p2pcards.table.phases.opening import begin_deal
from p2pcards.table.run import DealRun
from p2pcards.table.state import NOTHING, Needs, Phase, RefusedMessage, Rule, Step

# ================================================================== handlers


def on_audit(m: PhaseMachine, env: Envelope, message: Audit, step: Step) -> Needs:
    """A seat's secrets of the deal: its deck secrets and its sealing key."""
    run = m.in_progress()
    sender = env.sender
    try:
        secret = X25519PrivateKey.from_private_bytes(message.seal_secret)
    except ValueError as error:
        raise RefusedMessage(Rule.AUDIT, f"not a sealing key: {error}") from None
    if public_bytes(secret.public_key()) != run.seal_keys.get(sender):
        raise RefusedMessage(Rule.AUDIT, "the sealing secret does not match the deal's hello")
    if message.reveal.party != sender:
        raise RefusedMessage(Rule.AUDIT, "secrets in another seat's name")
    run.audits[sender] = message
    return NOTHING


def on_agree(m: PhaseMachine, env: Envelope, message: Agree, step: Step) -> Needs:
    """A seat's signature of the deal's result; one that differs is on record.  A
    ``pagree`` carries the shares of the next deal due from its seat, if any
    (:func:`~.ahead.check_agree`: refused before anything changes)."""
    run = m.in_progress()
    sender = env.sender
    check_agree(m, sender, message)
    run.agrees[sender] = message
    mine = (run.agree_hash, tuple(run.points), run.verdict)
    theirs = (message.transcript, message.points, message.verdict)
    if theirs != mine:
        m.events.append(Disagreed(sender, run.index, message.transcript != run.agree_hash,
                                  message.points, message.verdict,
                                  (tuple(run.points), run.verdict)))
    return NOTHING


HANDLERS: dict[type, Handler] = {Audit: on_audit, Agree: on_agree, ProvedAgree: on_agree}

# ================================================================== phases done


def stop(m: PhaseMachine) -> None:
    """The deal stops for its audit (a seat could not open its cards, a card shown to all
    did not open, or every seat consented to void the deal).  A deal of a deck with no
    audit goes to its agreement at once."""
    if m.flavor.audited:
        m.restart(Phase.AUDIT, (Step(Kind.AUDIT, s) for s in range(m.players)))
    elif m.run is not None:
        no_audit(m, m.run)


def no_audit(m: PhaseMachine, run: DealRun) -> None:
    """A deal of the proved deck is over (or stopped): every step was checked (on
    arrival, a shuffle's proof by the end of its round), so nothing is revealed; the
    verdict is the deal as everyone saw it."""
    if resolve(m, force=True):
        return  # (never: a round's proofs are checked at its end; a safety net)
    conclude(m, run)
    run.signers = list(range(m.players))
    m.restart(Phase.AGREE, (Step(m.flavor.agree, s) for s in run.signers))


def audited(m: PhaseMachine) -> bool:
    """Every seat's secrets are in: the verdict, then every seat signs it."""
    run = m.in_progress()
    conclude(m, run)
    run.signers = list(range(m.players))
    m.enter(Phase.AGREE, (Step(m.flavor.agree, s) for s in range(m.players)))
    return True


def agreed(m: PhaseMachine) -> bool:
    """Every seat due to has signed the result: the deal is scored."""
    score(m, m.in_progress())
    return m.phase != Phase.OVER


def conclude(m: PhaseMachine, run: DealRun) -> None:
    """Every secret is in: the deal's outcome and verdict (the deck's)."""
    run.outcome, run.verdict = run.deck.conclude(run, m.keep_states)
    run.points = run.outcome.points
    run.agree_hash = m.transcript.hash


def score(m: PhaseMachine, run: DealRun) -> None:
    """The deal counts (unless void): the totals, and the game's end or the next deal."""
    void = run.outcome is not None and run.outcome.void
    for unit, points in enumerate(run.points):
        m.totals[unit] += points
    run.played = []  # (only a deal in progress can be taken back)
    if run.outcome is not None:
        run.outcome.record.players = m.seats.names(m.roster)
    m.finished.append(run)
    m.deals += 1
    m.scored += 0 if void else 1
    m.events.append(Scored(run.index, tuple(run.points), run.verdict, tuple(m.totals)))
    m.winner = m.game.winner(m.totals, m.scored, m.options)
    if m.winner is not None:
        m.restart(Phase.OVER)
        m.run = None
        discard(m)  # (no card of it will ever open)
        winner = m.winner
        m.events.append(GameOver(tuple(winner) if isinstance(winner, list) else winner,
                                 tuple(e.name for e in m.roster.seats)))
        return
    m.dealer = m.game.next_dealer(m.dealer, m.players, void)
    begin_deal(m)
