"""A deal is shuffled and dealt (phases HELLO, DECK and DEAL).

Every seat announces its sealing key (``hello``); the deck's passes or shuffles
follow, as the deck says they are due (its own messages and their handlers are
the deck's: :mod:`p2pcards.table.decks`); then the deal's key releases (or
shares) go round and every seat reports its cards open (``opened``, or the
problem: an alarm; a rule whose every share is proved has no reports: a seat opens
its cards once the last share is in).  Once every seat has, the deal is made: the public view
every move is checked against, and this seat's own.
"""

from __future__ import annotations

from p2pcards.games.core import SPECTATOR
from p2pcards.table.codec import Envelope, usable_seal_key
from p2pcards.table.dealing import open_slots
from p2pcards.table.events import Alarmed
from p2pcards.table.kinds import Hello, Kind, Opened
from p2pcards.table.phases.ahead import settle
from p2pcards.table.phases.machine import Handler, PhaseMachine
from p2pcards.table.run import DealRun
from p2pcards.table.state import NOTHING, WATCHER, Needs, Phase, RefusedMessage, Rule, Step

# ================================================================== handlers


def on_hello(m: PhaseMachine, env: Envelope, message: Hello, step: Step) -> Needs:
    run = m.in_progress()
    if message.seal_key in run.seal_keys.values():
        raise RefusedMessage(Rule.HELLO, "a sealing key already used at this deal")
    if not usable_seal_key(message.seal_key):
        raise RefusedMessage(Rule.HELLO, "not a usable X25519 public key (a low-order point)")
    run.seal_keys[env.sender] = message.seal_key
    return NOTHING


def on_opened(m: PhaseMachine, env: Envelope, message: Opened, step: Step) -> Needs:
    """A seat's report that its cards opened (or the problem: an alarm)."""
    run = m.in_progress()
    if message.problem:
        run.alarms[env.sender] = message.problem
        m.events.append(Alarmed(env.sender, message.problem))
    return NOTHING


HANDLERS: dict[type, Handler] = {Hello: on_hello, Opened: on_opened}

# ================================================================== phases done


def greeted(m: PhaseMachine) -> bool:
    """Every seat said hello: the deck's passes."""
    m.enter(Phase.DECK)
    return True


def shuffled(m: PhaseMachine) -> bool:
    """The deck's rounds are done: the deal's key releases."""
    run = m.in_progress()
    if run.deck.expected() is not None:
        return False
    m.enter(Phase.DEAL, settle(m, run.ledger.deal_steps()))
    return True


def dealt(m: PhaseMachine) -> bool:
    """Every seat has opened its cards (or raised the alarm)."""
    run = m.in_progress()
    if not m.flavor.reports and not run.opened:  # (no report is due: every share was proved)
        run.opened = True
        if open_slots(run, [s for s in range(len(run.ids)) if m.me in run.ledger.knows[s]]) \
                is None:
            raise AssertionError(f"a proved deal's cards did not open: {run.problem}")
    if run.alarms:
        m.alarm()
    else:
        make_views(m, run)
    return True


def open_own(m: PhaseMachine) -> None:
    """Every key of the deal is in once this seat's report is due: open its cards."""
    run, head = m.run, m.head
    if run is not None and not run.opened and head is not None and head.kind == Kind.OPENED:
        run.opened = True
        open_slots(run, [s for s in range(len(run.ids)) if m.me in run.ledger.knows[s]])


def make_views(m: PhaseMachine, run: DealRun) -> None:
    """Every seat has opened its cards: show what the deal shows after looking at other
    cards (Pasur's replacement for a lone opening jack), then make the views."""
    observed: list[int | None] = [None] * len(run.ids)
    for slot in range(len(run.ids)):
        if slot in run.deck.opened:
            observed[slot] = run.ids[run.deck.opened[slot]]
    extra = run.ledger.shown_after_deal(observed)
    if extra:
        m.queue(extra)
        return
    shown = [card if run.ledger.shown_to_all(slot) else None
             for slot, card in enumerate(observed)]
    setup = run.ledger.setup
    run.public = setup.deal(shown, observer=SPECTATOR)
    if m.me == WATCHER:  # the watcher has no view of its own
        run.view = run.public
    else:
        run.view = setup.deal(observed, observer=m.me)
    run.ledger.reconcile(run.public)
    if m.keep_states:
        run.views.append(run.view.knowledge())
    m.enter(Phase.PLAY)
