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

Where the rule also sends shares on the agreement (``proved-ahead-2``: docs/protocol.md,
"Shares on the agreement"), each signer of a deal's result but the first carries on its
``pagree`` the shares its first deal step of the prepared deck would send
(:func:`agree_shares`), once that deck is complete and every proof of it holds: the
next deal then waits only for the first signer's ``pshares`` (:func:`settle`).
"""

from __future__ import annotations

from p2pcards.games.game import DealSetup
from p2pcards.protocol.errors import EarlyMessage
from p2pcards.protocol.proved.deck import KEY, SHUFFLE
from p2pcards.protocol.proved.deck import Refused as DeckRefused
from p2pcards.protocol.proved.messages import KeyShare, Shuffle
from p2pcards.protocol.source import KeyedSource
from p2pcards.protocol.steps import DeckContext
from p2pcards.table.decks.proved import ProvedTableDeck, sent_grants, step_grants
from p2pcards.table.kinds import Agree, Kind, ProvedAct, ProvedAgree, ProvedMove, ProvedShares
from p2pcards.table.ledger import Ledger
from p2pcards.table.phases.machine import PhaseMachine
from p2pcards.table.state import ProvenCheat, RefusedMessage, Rule, Step

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
        m.early = {}
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
    m.early = {}


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


# ================================================================== shares on the agreement


def ready(m: PhaseMachine) -> bool:
    """Whether the agreement under way carries the next deal's shares: the table's rule
    sends them there, the prepared deck is complete (every key share and every shuffle
    of round 0 taken) and every proof of it holds (checked now, if idle time has not),
    and the game goes on after this deal.  The same answer at every seat, from the
    transcript alone."""
    deck = m.ahead
    if m.flavor.agree != Kind.PROVED_AGREE or deck is None or deck.expected() is not None:
        return False
    if not deck.failed:
        try:
            deck.check_pending()
        except DeckRefused:
            deck.failed = True  # (judged when the deal it was made for begins)
    return not deck.failed and not m.ends_game()


def first_step(m: PhaseMachine, seat: int) -> Step | None:
    """``seat``'s first deal step of the prepared deck (its shares of the cards dealt),
    as the next deal will ask for it: that deal's dealer and scored deals follow from
    the result being agreed.  None when it grants nothing."""
    run, deck = m.in_progress(), m.ahead
    assert deck is not None
    void = run.outcome is not None and run.outcome.void
    setup = DealSetup(m.game, m.players, m.options, m.game.next_dealer(m.dealer, m.players, void),
                      m.scored + (0 if void else 1))
    ledger = Ledger(setup, deck, m.game.deck(m.players, m.options), m.flavor)
    step = next(s for s in ledger.deal_steps() if s.kind == m.flavor.keys and s.seat == seat)
    return step if step.grants else None


def shares_due(m: PhaseMachine, seat: int) -> Step | None:
    """The deal step whose shares ``seat``'s ``pagree`` must carry: every signer's but the
    first's, when the agreement carries them (:func:`ready`); else None."""
    run = m.in_progress()
    if not run.signers or seat == run.signers[0] or seat not in run.signers or not ready(m):
        return None
    return first_step(m, seat)


def agree_shares(m: PhaseMachine) -> ProvedShares | None:
    """This seat's shares to carry on its ``pagree`` (made in idle time already, or now;
    taken into the prepared deck as its own)."""
    step = shares_due(m, m.me)
    if step is None:
        return None
    deck = m.ahead
    assert deck is not None
    return deck.shares_for(step)


def check_agree(m: PhaseMachine, sender: int, message: Agree) -> None:
    """Before anything of a ``pagree`` is taken: it carries exactly the shares due from its
    seat, each proof holding (:class:`RefusedMessage`, ``ahead``, nothing changed: the
    result is signed by the others, and the next deal shuffles in full).  Then its shares
    go into the prepared deck, for the next deal's first step."""
    if not isinstance(message, ProvedAgree):
        return
    deal = m.deal_index() + 1
    step = shares_due(m, sender)
    got = message.shares
    if step is None and got is None:
        return
    if step is None:
        raise RefusedMessage(Rule.AHEAD, f"the agreement of seat {sender} carries shares for"
                                         f" deal {deal} that are not due from it")
    if got is None:
        raise RefusedMessage(Rule.AHEAD, f"the agreement of seat {sender} must carry its shares"
                                         f" for deal {deal}")
    grants, sent = step_grants(step), sent_grants(got)
    if sent != grants:
        raise RefusedMessage(Rule.AHEAD, f"shares of {sent}, not of deal {deal}'s grants"
                                         f" {grants}")
    deck = m.ahead
    assert deck is not None
    try:
        deck.take_early(got)
    except DeckRefused as error:
        raise RefusedMessage(Rule.AHEAD, f"ahead {error.step}: {error.reason}") from None
    m.early[sender] = got


def settle(m: PhaseMachine, steps: list[Step]) -> list[Step]:
    """The deal's key releases still due: those whose shares came on the agreement of
    the deal before are done (only a deck prepared ahead has any)."""
    early, m.early = m.early, {}
    if not early:
        return steps
    left = []
    for step in steps:
        message = early.get(step.seat) if step.kind == m.flavor.keys else None
        if message is None:
            left.append(step)
            continue
        assert sent_grants(message) == step_grants(step), "deal steps moved"
    return left
