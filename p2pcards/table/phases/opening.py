"""The table's opening and each deal's beginning: the roster signed, the first dealer
drawn, seats changing hands (phases SEATING, DRAW and SEATS).

Every seat signs the roster; a joint draw picks the first dealer (its
commitments and shares: docs/protocol.md, "Joint randomness"); then each deal
begins (:func:`begin_deal`), with the runner's ``seat`` message and the roster
signed again first when seats change hands (docs/protocol.md, "Seats that
change hands").
"""

from __future__ import annotations

import random

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.games.game import DealSetup
from p2pcards.protocol.errors import RemoteProtocolError
from p2pcards.protocol.randomness import Commit, Reveal
from p2pcards.protocol.steps import DeckContext
from p2pcards.table.codec import Envelope, public_bytes
from p2pcards.table.decks.lock import LockTableDeck
from p2pcards.table.decks.proved import ProvedTableDeck
from p2pcards.table.events import DealBegun, RosterSigned, SeatsChanged
from p2pcards.table.kinds import Kind, Seats, Sign
from p2pcards.table.ledger import Ledger
from p2pcards.table.phases import ahead
from p2pcards.table.phases.machine import Handler, PhaseMachine
from p2pcards.table.roster import AGREED_DECK, AHEAD_DECK, LOCK_DECK, PIPELINED_DECK, PROVED_DECK
from p2pcards.table.run import DealRun, TableDeck
from p2pcards.table.state import NOTHING, WATCHER, Needs, Phase, RefusedMessage, Rule, Step

# ================================================================== handlers


def on_sign(m: PhaseMachine, env: Envelope, message: Sign, step: Step) -> Needs:
    if message.roster != m.roster.digest():
        raise RefusedMessage(Rule.ROSTER, "signed another roster than this seat's")
    return NOTHING


def on_seat(m: PhaseMachine, env: Envelope, message: Seats, step: Step) -> Needs:
    """The runner's ``seat`` message: stand-ins for the seats gone, seats given back."""
    problem = m.seats.problem(m.roster, env.sender, message)
    if problem is not None:
        raise RefusedMessage(Rule.SEAT, problem)
    if not message.changes:
        return NOTHING
    ahead.discard(m)  # (a new seat lacks the old one's secrets of the deck prepared)
    m.roster = m.seats.amend(m.roster, message)
    m.transcript.keys = m.roster.keys
    m.events.append(SeatsChanged(m.seats.handovers(m.roster, message),
                                 m.roster.safety_number()))
    if m.identity is not None:  # this session takes the seat its identity now holds
        mine = public_bytes(m.identity.public_key())
        seat = next((s for s, e in enumerate(m.roster.seats) if e.identity == mine), WATCHER)
        m.me = m.dealing.me = m.transcript.me = seat
        if seat != WATCHER:
            m.transcript.seq_out = m.transcript.seq_in[seat]
    m.deal_start = len(m.transcript) + 1  # (a cheat's point never goes back past it)
    return Needs(tuple(Step(Kind.SIGN, s) for s in range(m.players)))


def on_draw(m: PhaseMachine, env: Envelope, message: Commit | Reveal, step: Step) -> Needs:
    """A commitment or a share of the joint draw under way."""
    if env.sender != m.me:
        try:
            m.current_draw().receive(message)
        except (ValueError, RemoteProtocolError) as error:
            raise RefusedMessage(Rule.DRAW, str(error)) from None
    return NOTHING


HANDLERS: dict[type, Handler] = {Sign: on_sign, Seats: on_seat, Commit: on_draw, Reveal: on_draw}

# ================================================================== phases done


def seated(m: PhaseMachine) -> bool:
    """Every seat signed the roster: the joint draw of the first dealer."""
    m.enter(Phase.DRAW, [*(Step(Kind.COMMIT, s) for s in range(m.players)),
                         *(Step(Kind.SHARE, s) for s in range(m.players))])
    m.events.append(RosterSigned(m.roster.safety_number()))
    return True


def drawn(m: PhaseMachine) -> bool:
    """The first dealer is drawn: the first deal begins."""
    rng = random.Random(m.draw.seed())
    m.dealer = m.game.first_dealer(m.players, rng)
    begin_deal(m)
    return True


def reseated(m: PhaseMachine) -> bool:
    """Seats changed hands and every seat signed the roster again: the deal begins (a
    seat taken: its deck is made anew)."""
    begin_deal(m, seated=True)
    return True


DECKS: dict[str, type[LockTableDeck] | type[ProvedTableDeck]] = {
    LOCK_DECK: LockTableDeck, PROVED_DECK: ProvedTableDeck, PIPELINED_DECK: ProvedTableDeck,
    AHEAD_DECK: ProvedTableDeck, AGREED_DECK: ProvedTableDeck}
"""The deck each deck name of a roster deals with (its flavor says the rest: whether
shuffles are pipelined, whether the next deal's deck is prepared during this one)."""


def begin_deal(m: PhaseMachine, *, seated: bool = False) -> None:
    """A deal begins: first, when seats change hands, the runner's ``seat`` message (and
    the roster signed again); then each seat's ``hello`` (none at a shuffle-ahead table,
    whose deck seals nothing).  Its deck is the one prepared during the deal before, if
    kept (:mod:`.ahead`: taken once the ``seat`` message, if one is due, has kept it),
    else made now."""
    index = m.deals
    ids = m.game.deck(m.players, m.options)
    context = DeckContext(m.table, index, m.players, len(ids))
    seal_private = X25519PrivateKey.from_private_bytes(m.source.token_bytes(32))
    runner = m.seats.runner(m.roster)
    detour = not seated and runner is not None and m.seats.due(m.roster)
    deck: TableDeck | None = None if detour else ahead.adopt(m, context)
    if deck is None:
        deck = DECKS[m.flavor.name](context, m.me, m.source, roster=m.roster,
                                    identity=m.identity, flavor=m.flavor)
    setup = DealSetup(m.game, m.players, m.options, m.dealer, m.scored)
    ledger = Ledger(setup, deck, ids, m.flavor)
    m.run = DealRun(index, deck, ids, seal_private, ledger)
    m.deal_start = len(m.transcript)
    if not seated:  # (the deal before began at the last boundary)
        m.previous_start, m.boundary = m.boundary, m.deal_start
    if detour:
        assert runner is not None
        m.enter(Phase.SEATS, [Step(Kind.SEAT, runner)])
        return
    ahead.prepare(m, index + 1, len(ids))
    m.enter(Phase.HELLO, (Step(Kind.HELLO, s) for s in range(m.players) if m.flavor.hellos))
    m.events.append(DealBegun(index, m.dealer))
