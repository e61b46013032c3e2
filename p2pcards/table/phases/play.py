"""A deal is played (phase PLAY): moves, alarms, votes to void, and chance.

A move is checked against the public view, what everyone knows, so that every
honest seat takes or refuses it alike; the cards it shows are checked by the
deck (their slots, and what opens them); this seat's own view then takes it,
unless this seat's own cards prove it false (it raises the alarm on its turn).
In place of its move a seat may raise the alarm or propose to void the deal,
which the others answer in turn.  Between moves the table makes the chance
events the game calls for, and plays a blind card for a seat that cannot see
it; at the deal's end it goes to the audit, or (a deck with none) to the
agreement.
"""

from __future__ import annotations

from p2pcards.games import HandState
from p2pcards.games.core import CHANCE, SPECTATOR, TERMINAL, ActionSyntaxError, IllegalAction
from p2pcards.table.codec import Envelope
from p2pcards.table.dealing import apply_both, seen_before
from p2pcards.table.events import Alarmed, Moved, VoidDeclined, Voided, VoidProposed
from p2pcards.table.kinds import Act, Alarm, Consent, Kind, ProvedAct, ProvedMove, Void
from p2pcards.table.phases import ahead
from p2pcards.table.phases.ending import no_audit
from p2pcards.table.phases.machine import Handler, PhaseMachine
from p2pcards.table.state import NOTHING, SHOWN, Needs, Phase, RefusedMessage, Rule, Step

# ================================================================== handlers


def on_act(m: PhaseMachine, env: Envelope, message: Act | ProvedAct, step: Step) -> Needs:
    """A move: checked against what everyone knows (the public view), so that every
    honest seat takes or refuses it alike; then applied to this seat's own view,
    unless its own cards prove the move false (then it raises the alarm on its turn)."""
    run = m.in_progress()
    sender = env.sender
    public = run.public
    assert public is not None
    try:
        code = public.parse_action(message.action)
    except ActionSyntaxError as error:
        raise RefusedMessage(Rule.SYNTAX, str(error)) from None
    if message.action != public.format_action(code, seat=SPECTATOR):
        raise RefusedMessage(Rule.SYNTAX, f"{message.action!r} is not the public form of a"
                                          " move")
    if sender != m.me:
        try:
            public.check(code)
        except IllegalAction as error:
            raise RefusedMessage(Rule.ILLEGAL, f"{message.action}: {error.reason}",
                                 error.code) from None
    hidden = len(public.face_down(code))
    if len(message.slots) != hidden or len(set(message.slots)) != hidden:
        raise RefusedMessage(Rule.SLOTS, f"{hidden} face-down cards need {hidden} distinct"
                                         " slots")
    ledger = run.ledger
    for slot in message.slots:
        if ledger.place.get(slot) != sender or slot in run.deck.retired:
            raise RefusedMessage(Rule.NOT_HELD, f"slot {slot} is not a card seat {sender}"
                                                " holds")
    if isinstance(message, ProvedAct):
        ahead.check(m, sender, message)
    doubles = run.deck.check_shown(run, env, message, public.shown_cards(code))
    if isinstance(message, ProvedAct):
        ahead.take(m, sender, message)
    private = run.own_code if sender == m.me else code
    own = run.view
    if sender != m.me and own is not None and own is not public and not run.suspect:
        try:
            own.check(private)
        except IllegalAction as error:
            run.suspect = f"seat {sender}'s {message.action}: {error.reason}"
        if doubles:
            run.suspect = run.suspect or f"seat {sender} showed a card this seat holds"
    before = public.clone()
    run.played.append((len(m.transcript), before))
    seen = seen_before(run, m.tell)
    seen_code = code if run.suspect or run.view is None else private
    apply_both(run, code, private, m.keep_states)
    run.acts.append((sender, message))
    for slot in _shown_slots(message):
        ledger.place[slot] = SHOWN
        ledger.knows[slot] = set(range(m.players))
    run.deck.open_shown(run, sender, message, doubles)
    ledger.reconcile(public)
    m.events.append(Moved(sender, run.index, message.action, seen_code, seen))
    return Needs(tuple(ledger.moved(before, public, message.slots)))


def _shown_slots(message: Act | ProvedAct) -> list[int]:
    """The slots of the cards a move shows."""
    if isinstance(message, ProvedAct):
        return list(message.shown)
    return [slot for slot, _ in message.shown]


def on_alarm(m: PhaseMachine, env: Envelope, message: Alarm, step: Step) -> Needs:
    """In place of its move, a seat says its own cards disprove a move taken."""
    run = m.in_progress()
    run.alarms[env.sender] = message.problem
    m.events.append(Alarmed(env.sender, message.problem))
    return NOTHING


def on_void(m: PhaseMachine, env: Envelope, message: Void, step: Step) -> Needs:
    """In place of its move, a seat proposes to void the deal: the others answer in turn."""
    run = m.in_progress()
    sender = env.sender
    run.vote = (sender, message.reason)
    m.events.append(VoidProposed(sender, message.reason))
    return Needs(tuple(Step(Kind.CONSENT, (sender + i) % m.players)
                       for i in range(1, m.players)))


def on_consent(m: PhaseMachine, env: Envelope, message: Consent, step: Step) -> Needs:
    """An answer to the proposal to void: a refusal ends the vote (the proposer moves
    after all); the last consent voids the deal (audited, so that its cards are known;
    it does not count)."""
    run = m.in_progress()
    sender = env.sender
    assert run.vote is not None
    if not message.agree:
        m.events.append(VoidDeclined(sender))
        run.vote = None
        return Needs(vote_over=True)
    if any(s.kind == Kind.CONSENT and s.seat != sender for s in m.steps()):
        return NOTHING
    run.consented = run.vote[1]
    run.vote = None
    m.events.append(Voided(run.consented))
    return Needs(stop=True)


HANDLERS: dict[type, Handler] = {Act: on_act, ProvedAct: on_act, ProvedMove: on_act,
                                 Alarm: on_alarm, Void: on_void, Consent: on_consent}

# ================================================================== the play


def watch(m: PhaseMachine) -> None:
    """Each time the machine looks: an alarm stops the deal; at a deck with no audit, a
    card shown against its seat's claim proves a breach and stops it too; else this seat
    opens the cards that have come to it."""
    run = m.run
    if run is None:
        return
    if run.alarms:
        m.alarm()
    elif not m.flavor.audited and run.public is not None and run.public.proofs:
        no_audit(m, run)  # a card shown proves a breach: the deal stops
    elif run.view is not None:
        m.dealing.open_taken(run)
        m.dealing.observe(run)


def played(m: PhaseMachine) -> bool:
    """Nothing queued in the play: a chance event made (or what it needs asked for), a
    blind card shown, or the deal's end."""
    run = m.in_progress()
    assert run.public is not None
    player = run.public.current_player()
    if player == CHANCE:
        made, steps = m.dealing.chance(run)
        m.queue(steps)
        return made
    if player != TERMINAL:
        m.queue(run.ledger.reveal_blind(run.public, player))
        return False
    if not m.flavor.audited:
        no_audit(m, run)
        return True
    m.enter(Phase.AUDIT, (Step(Kind.AUDIT, s) for s in range(m.players)))
    return True


def move(m: PhaseMachine, view: HandState, code: int) -> Act | ProvedAct:
    """This seat's move ``code`` as it goes on the wire: its public text, the slots of
    its face-down cards, the slots of the cards it shows and what opens them."""
    run = m.run
    assert run is not None
    place, opened = run.ledger.place, run.deck.opened
    mine = {run.ids[opened[s]]: s for s in place if place[s] == m.me and s in opened}
    hidden = view.face_down(code)
    run.own_code = code
    made = run.deck.move(view.format_action(code, seat=SPECTATOR),
                         [mine[card] for card in view.shown_cards(code)],
                         tuple(mine[card] for card in hidden if card is not None))
    if m.flavor.ahead and isinstance(made, ProvedAct):
        return ahead.attach(m, made)  # (its step of the next deal's deck)
    return made
