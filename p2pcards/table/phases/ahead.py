"""Shuffle ahead: the next deal's deck keyed and shuffled while this deal is played
(a table whose roster names ``proved-ahead``: docs/protocol.md, "Shuffle ahead").

At each deal's beginning every seat makes the deck of the deal after it (the
*prepared deck*): its own key share and secrets drawn from a stream of their own,
seeded at that point of the transcript.  Each move (``pmove``) carries its
mover's step of that deck when one is due from it: its key share while the
prepared deck lacks it, else its shuffle of round 0 in its turn.  A receiver
checks the step on arrival as the deck checks a ``pkey`` or ``pshuffle`` (a
shuffle's proof in idle time, as under the pipelined rule), so that a bad one is
a proven cheat in this deal, and a proof found false later is judged when the
next deal begins, before any card of it opens.

The rule every seat applies alike: the prepared deck becomes the next deal's
deck unless something in this deal made a seat forfeit (:func:`discard`, from
:func:`~.forfeits.silenced`), the seats change hands before the next deal, or
the game ends; the steps no move carried are then due as ``pkey`` and
``pshuffle`` messages, as at any deal.  The first deal of a game has no prepared
deck and shuffles in full.
"""

from __future__ import annotations

from p2pcards.protocol.errors import EarlyMessage
from p2pcards.protocol.proved.deck import KEY, SHUFFLE
from p2pcards.protocol.proved.deck import Refused as DeckRefused
from p2pcards.protocol.proved.messages import KeyShare, Shuffle
from p2pcards.protocol.source import KeyedSource
from p2pcards.protocol.steps import DeckContext
from p2pcards.table.decks.proved import ProvedTableDeck
from p2pcards.table.kinds import ProvedAct, ProvedMove
from p2pcards.table.phases.machine import PhaseMachine
from p2pcards.table.state import ProvenCheat, RefusedMessage, Rule

AHEAD_LABEL = b"p2pcards/ahead"
"""The label of the stream a seat draws its secrets of a prepared deck from."""

_WHAT = {KEY: "its key share", SHUFFLE: "its shuffle"}


def prepare(m: PhaseMachine, index: int, size: int) -> None:
    """Deal ``index - 1`` begins at a shuffle-ahead table: the deck of deal ``index``,
    its secrets drawn from a stream seeded now (32 bytes of the seat's source: the
    same point of the transcript at every restart)."""
    if not m.flavor.ahead:
        return
    seed = m.source.token_bytes(32)
    context = DeckContext(m.table, index, m.players, size)
    m.ahead = ProvedTableDeck(context, m.me, KeyedSource(seed, AHEAD_LABEL),
                              roster=m.roster, identity=m.identity, flavor=m.flavor)
    m.ahead.shares_ahead = True


def adopt(m: PhaseMachine, context: DeckContext) -> ProvedTableDeck | None:
    """The prepared deck, if it is the one of ``context``'s deal (kept: :func:`discard`
    did not drop it): the deal's deck, its steps carried on moves counted as such.  It
    is no longer prepared ahead (:func:`prepare` makes the next)."""
    deck = m.ahead
    if deck is None or deck.context != context:
        return None
    m.ahead = None
    deck.carried = len(deck.log)
    return deck


def discard(m: PhaseMachine) -> None:
    """Drop the prepared deck: a seat forfeits (its secrets never come; a claim may
    have taken moves back, and the steps they carried, at some seats and not at
    others), the seats change hands, or the result of the deal before is taken back.
    The next deal shuffles in full."""
    m.ahead = None


def due(m: PhaseMachine, seat: int) -> str | None:
    """The step of the prepared deck a move of ``seat`` must carry: KEY while the deck
    lacks its key share, SHUFFLE in its turn of round 0, else None (no prepared deck,
    or nothing due from it)."""
    deck = m.ahead
    if deck is None:
        return None
    if seat not in deck.publics:
        return KEY
    return SHUFFLE if deck.expected() == (SHUFFLE, seat) else None


def attach(m: PhaseMachine, move: ProvedAct) -> ProvedMove:
    """This seat's move with the step of the prepared deck due from it (made in idle
    time already, or now), taken into the prepared deck as its own."""
    deck = m.ahead
    step: KeyShare | Shuffle | None = None
    if deck is not None and due(m, m.me) is not None:
        step = deck.step()
    return ProvedMove(party=move.party, action=move.action, shown=move.shown,
                      slots=move.slots, shares=move.shares, ahead=step)


def check(m: PhaseMachine, sender: int, message: ProvedAct) -> None:
    """Before anything of a move is taken: it carries exactly the step due from its
    seat (:class:`RefusedMessage`, ``ahead``, nothing changed)."""
    if sender == m.me:
        return  # (its own step was taken as it was made)
    ahead = message.ahead if isinstance(message, ProvedMove) else None
    got = None if ahead is None else KEY if isinstance(ahead, KeyShare) else SHUFFLE
    want = due(m, sender)
    if got == want:
        return
    deal = m.deal_index() + 1
    if want is not None:
        raise RefusedMessage(Rule.AHEAD, f"a move of seat {sender} must carry {_WHAT[want]}"
                                         f" for deal {deal}")
    raise RefusedMessage(Rule.AHEAD, f"a move of seat {sender} carries a step for deal"
                                     f" {deal} that is not due from it")


def take(m: PhaseMachine, sender: int, message: ProvedAct) -> None:
    """The step a move carries, into the prepared deck: a key share with its proof
    checked now, a shuffle with its turn, ``prior`` and size checked now and its proof
    in idle time.  A refusal proves the mover cheated (:class:`ProvenCheat`: the move
    is taken and it forfeits this deal)."""
    deck = m.ahead
    ahead = message.ahead if isinstance(message, ProvedMove) else None
    if sender == m.me or deck is None or ahead is None:
        return
    try:
        deck.receive(ahead, defer=isinstance(ahead, Shuffle))
    except DeckRefused as error:
        raise ProvenCheat(Rule.DECK, f"ahead {error.step}: {error.reason}",
                          detail=error.step) from None
    except EarlyMessage as error:  # (never: :func:`check` takes only the step due)
        raise RefusedMessage(Rule.AHEAD, str(error)) from None
