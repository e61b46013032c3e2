"""The phases of a table session, one module each, and the flow that joins them.

Each phase's handlers live beside what happens when its steps are done:
:mod:`.opening` (the roster signed, the first dealer drawn, seats changing
hands), :mod:`.deal` (hellos, the deck, the deal's keys), :mod:`.play` (moves,
alarms, votes, chance), :mod:`.ending` (the audit, the agreement, the score);
:mod:`.forfeits` is how a deal ends otherwise.  :data:`TRANSITIONS` lists every
phase change the table makes, and :data:`FLOW` gives the engine
(:class:`~.machine.PhaseMachine`) the handlers and the phases' functions, as
data (docs/protocol.md, "Phases").
"""

from __future__ import annotations

from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.protocol.curve import SecretSource
from p2pcards.table.codec import public_bytes
from p2pcards.table.kinds import Agree, Hello, Kind, Message, Opened, ProvedAgree, Sign, clip
from p2pcards.table.phases import ahead, deal, ending, opening, play
from p2pcards.table.phases.forfeits import back_to, crossed, refute, resolve, silenced, unscore
from p2pcards.table.phases.machine import Flow, PhaseMachine
from p2pcards.table.phases.play import move
from p2pcards.table.roster import Roster
from p2pcards.table.state import Phase, Step
from p2pcards.table.transcript import Transcript

_ANY_DEAL = frozenset({Phase.AGREE, Phase.OVER})
"""Where a deal may go from any of its phases: its agreement (a seat forfeits), or the
game's end (the table breaks up: at a table of two)."""
TRANSITIONS: Final = {
    Phase.SEATING: frozenset({Phase.DRAW, Phase.OVER}),
    Phase.DRAW: frozenset({Phase.SEATS, Phase.HELLO, Phase.OVER}),
    Phase.SEATS: frozenset({Phase.HELLO}) | _ANY_DEAL,
    Phase.HELLO: frozenset({Phase.DECK}) | _ANY_DEAL,
    Phase.DECK: frozenset({Phase.DEAL}) | _ANY_DEAL,
    Phase.DEAL: frozenset({Phase.PLAY, Phase.AUDIT}) | _ANY_DEAL,
    Phase.PLAY: frozenset({Phase.AUDIT}) | _ANY_DEAL,
    Phase.AUDIT: frozenset({Phase.PLAY}) | _ANY_DEAL,
    Phase.AGREE: frozenset({Phase.SEATS, Phase.HELLO, Phase.AUDIT, Phase.PLAY, Phase.OVER}),
    Phase.OVER: frozenset({Phase.AGREE}),
}
"""Phase -> the phases the table may go to from it.  Beside the course of a deal: a
deal stopped for its audit (an alarm, a void) or its agreement (a deck with no audit,
a forfeit); back from the agreement or the audit to where a late seat's claims were
made (:func:`.forfeits.back_to`), and from the next deal or the game's end into the
agreement of the deal before (:func:`.forfeits.unscore`)."""

FLOW: Final = Flow(
    transitions=TRANSITIONS,
    handlers={**opening.HANDLERS, **deal.HANDLERS, **play.HANDLERS, **ending.HANDLERS},
    complete={Phase.SEATING: opening.seated, Phase.DRAW: opening.drawn,
              Phase.SEATS: opening.reseated, Phase.HELLO: deal.greeted,
              Phase.DECK: deal.shuffled, Phase.DEAL: deal.dealt, Phase.PLAY: play.played,
              Phase.AUDIT: ending.audited, Phase.AGREE: ending.agreed,
              Phase.OVER: lambda m: False},
    watch={Phase.DEAL: deal.open_own, Phase.PLAY: play.watch},
    stop=ending.stop)


def new_machine(roster: Roster, me: int, identity: Ed25519PrivateKey | None,
                source: SecretSource, transcript: Transcript, *,
                keep_states: bool) -> PhaseMachine:
    """The phase machine of a seat's session (``me``; WATCHER for one with no seat)."""
    return PhaseMachine(roster, me, identity, source, transcript, flow=FLOW,
                        keep_states=keep_states)


def make(m: PhaseMachine, step: Step) -> Message:
    """This seat's message for ``step`` (not a move: :func:`.play.move`)."""
    run = m.run
    kind = step.kind
    if kind == Kind.SIGN:
        return Sign(roster=m.roster.digest())
    if kind == Kind.COMMIT:
        return m.current_draw().commit()
    if kind == Kind.SHARE:
        return m.current_draw().reveal()
    if kind == Kind.SEAT:
        return m.seats.make(m.roster, m.me, m.source)
    assert run is not None
    if kind == Kind.HELLO:
        return Hello(seal_key=public_bytes(run.seal_private.public_key()))
    flavor, deck = m.flavor, run.deck
    if kind == flavor.remix:
        return deck.remix(list(step.slots))
    if kind in flavor.steps.values():
        return deck.step()
    if kind == flavor.keys:
        return deck.key_release(run, step)
    if kind == Kind.OPENED:
        return Opened(problem=clip(run.problem))
    if kind == Kind.AUDIT:
        return deck.audit(run)
    if kind == Kind.AGREE:
        return Agree(transcript=run.agree_hash, points=tuple(run.points), verdict=run.verdict)
    if kind == Kind.PROVED_AGREE:
        return ProvedAgree(transcript=run.agree_hash, points=tuple(run.points),
                           verdict=run.verdict, party=m.me, shares=ahead.agree_shares(m))
    raise AssertionError(kind)


__all__ = ["FLOW", "TRANSITIONS", "PhaseMachine", "back_to", "crossed", "make", "move",
           "new_machine", "refute", "resolve", "silenced", "unscore"]
