"""One handler per message kind: check a message against the seat's state and apply it.

A handler raises :class:`~p2pcards.table.state.Refused` before it changes
anything, so that a refused message leaves the session as it was; every honest
seat takes or refuses a message alike (moves are checked against the public
view, what only one seat can see it reports on its turn).  Handlers change
neither the steps due nor the phase themselves: they ask the phase machine
(:mod:`p2pcards.table.phases`) to queue steps, to end a vote, or to stop the
deal for its audit.  :data:`HANDLERS` maps each message class to its handler.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.games.core import SPECTATOR, ActionSyntaxError, IllegalAction
from p2pcards.protocol.constants import PUBLIC
from p2pcards.protocol.deck import Deck
from p2pcards.protocol.errors import EarlyMessage, RemoteProtocolError
from p2pcards.protocol.messages import KeyRelease, Locked, Remixed, Shuffled, Unlocked
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.protocol.proved.deck import Refused as DeckRefused
from p2pcards.protocol.proved.messages import KeyShare, Remix, Shares, Shuffle
from p2pcards.protocol.randomness import Commit, Reveal
from p2pcards.table.codec import Envelope, public_bytes, usable_seal_key
from p2pcards.table.dealing import apply_both, seen_before
from p2pcards.table.judge import open_sealed
from p2pcards.table.kinds import (
    Act,
    Agree,
    Alarm,
    Audit,
    Back,
    Cheat,
    Consent,
    Hello,
    Keys,
    Kind,
    Opened,
    ProvedAct,
    ProvedShares,
    Seats,
    Sign,
    Silent,
    Void,
)
from p2pcards.table.state import EVERYONE, SHOWN, DealRun, Event, Proven, Refused, Step

if TYPE_CHECKING:
    from p2pcards.table.phases import PhaseMachine

Handler = Callable[["PhaseMachine", Envelope, Any, Step], None]


def _deal(m: PhaseMachine) -> DealRun:
    if m.run is None:
        raise AssertionError("deal message before a deal")
    return m.run


def on_sign(m: PhaseMachine, env: Envelope, message: Sign, step: Step) -> None:
    if message.roster != m.roster.digest():
        raise Refused("roster", "signed another roster than this seat's")


def on_seat(m: PhaseMachine, env: Envelope, message: Seats, step: Step) -> None:
    """The runner's ``seat`` message: stand-ins for the seats gone, seats given back."""
    problem = m.seats.problem(m.roster, env.sender, message)
    if problem is not None:
        raise Refused("seat", problem)
    m.amend(message)


def on_draw(m: PhaseMachine, env: Envelope, message: Commit | Reveal, step: Step) -> None:
    """A commitment or a share of the joint draw under way."""
    if env.sender != m.me:
        try:
            m.current_draw().receive(message)
        except (ValueError, RemoteProtocolError) as error:
            raise Refused("draw", str(error)) from None


def on_hello(m: PhaseMachine, env: Envelope, message: Hello, step: Step) -> None:
    run = _deal(m)
    if message.seal_key in run.seal_keys.values():
        raise Refused("hello", "a sealing key already used at this deal")
    if not usable_seal_key(message.seal_key):
        raise Refused("hello", "not a usable X25519 public key (a low-order point)")
    run.seal_keys[env.sender] = message.seal_key


def on_deck(m: PhaseMachine, env: Envelope, message: Unlocked | Shuffled | Locked | Remixed,
            step: Step) -> None:
    """A pass of the deck (unlock, shuffle, lock) or a re-mix."""
    run = _deal(m)
    deck = _lock(run)
    if env.sender != m.me:
        if isinstance(message, Remixed) and message.slots != step.slots:
            raise Refused("remix", "a re-mix of other slots than the cards it holds")
        try:
            deck.receive(message)
        except (RemoteProtocolError, EarlyMessage) as error:
            raise Refused(f"deck {env.kind}", str(error)) from None
    if isinstance(message, Remixed):
        run.ledger.remixed(env.sender, message)


def _lock(run: DealRun) -> Deck:
    if not isinstance(run.deck, Deck):
        raise Refused("deck", "a message of today's deck at a table of the proved deck")
    return run.deck


def _proved(run: DealRun) -> ProvedDeck:
    if not isinstance(run.deck, ProvedDeck):
        raise Refused("deck", "a message of the proved deck at a table of today's deck")
    return run.deck


def _take(m: PhaseMachine, deck: ProvedDeck, env: Envelope,
          message: KeyShare | Shuffle | Remix | Shares, *, defer: bool = False) -> None:
    """Another seat's message into the proved deck (``defer``: a shuffle taken with its
    proof left for later, docs/protocol.md "Pipelined shuffles"); a refusal is a proven
    cheat (the signed message is the proof: docs/protocol.md, "A refused step"), unless
    a shuffle taken before it without its check is refused first (the oldest cheat is
    the one every seat finds)."""
    try:
        deck.receive(message, defer=defer)
    except DeckRefused as error:
        earlier = m.refusal()
        if earlier is not None:
            raise earlier from None
        raise Proven(f"deck {error.step}", f"{error.step}: {error.reason}") from None
    except EarlyMessage as error:  # (the transcript orders them: never at the table)
        raise Refused(f"deck {env.kind}", str(error)) from None


def on_proved_deck(m: PhaseMachine, env: Envelope, message: KeyShare | Shuffle | Remix,
                   step: Step) -> None:
    """A key share, a proved shuffle or a proved re-mix: checked by the proved deck (at
    a table of the pipelined rule a shuffle's proof later, by the end of its round: the
    next shuffler need not wait for it; a re-mix's at once, since the shares of its
    slots are due next)."""
    run = _deal(m)
    deck = _proved(run)
    if env.sender != m.me:
        if isinstance(message, Remix) and message.slots != step.slots:
            raise Refused("remix", "a re-mix of other slots than the cards it holds")
        _take(m, deck, env, message,
              defer=m.flavor.pipelined and isinstance(message, Shuffle))
    if isinstance(message, Remix):
        m.queue(run.ledger.remixed(env.sender, message))


def on_proved_shares(m: PhaseMachine, env: Envelope, message: ProvedShares,
                     step: Step) -> None:
    """The proved deck's shares of a deal step: one set per recipient, exactly as the
    step grants them, each share's proof checked (a bad one is a proven cheat)."""
    run = _deal(m)
    deck = _proved(run)
    grants = [(None if r is EVERYONE else r, slots) for r, slots in step.grants]
    sent = [(s.to, s.slots) for s in message.shares]
    if sent != grants:
        raise Refused("keys", f"shares of {sent}, not of the step's grants {grants}")
    if env.sender != m.me:
        for shares in message.shares:
            _take(m, deck, env, shares)
    for recipient, slots in step.grants:
        for slot in slots:
            if recipient is EVERYONE:
                run.ledger.knows[slot] = set(range(m.players))
                if deck.can_open(slot):
                    m.show(run, slot)


def on_keys(m: PhaseMachine, env: Envelope, message: Keys, step: Step) -> None:
    """A key release: the public keys and, sealed, the keys for each recipient, exactly
    as the step grants them."""
    run = _deal(m)
    deck = _lock(run)
    sender = env.sender
    grants = dict(step.grants)
    private = {r for r in grants if r is not EVERYONE}
    if {r for r, _ in message.sealed} != private:
        raise Refused("keys", f"sealed keys for seats {sorted(r for r, _ in message.sealed)},"
                              f" not {sorted(private)}")
    if [s for s, _ in message.public] != list(grants.get(EVERYONE, ())):
        raise Refused("keys", "public keys of other slots than the step shows")
    for slot, key in message.public:
        if not deck.key_matches(sender, slot, key):
            raise Refused("key", f"the key of slot {slot} does not match its commitment")
    releases = [KeyRelease(party=sender, slot=s, key=k) for s, k in message.public]
    mine = dict(message.sealed).get(m.me)
    if mine is not None and sender != m.me:
        pairs, problem = _unseal_keys(m, run, sender, mine, grants[m.me])
        if problem:  # signed and in turn: taken, and reported for the audit
            run.problem = run.problem or f"seat {sender}: {problem}"
        else:
            releases += [KeyRelease(party=sender, slot=s, key=k, to=m.me) for s, k in pairs]
    run.key_steps.append((sender, step, message))
    if sender != m.me:
        for release in releases:
            deck.receive(release)
    for recipient, slots in grants.items():
        for slot in slots:
            if recipient is EVERYONE:
                run.ledger.knows[slot] = set(range(m.players))
                if run.deck.can_open(slot):
                    m.show(run, slot)
            elif m.me not in (sender, recipient):
                run.deck.holder[slot] = recipient


def _unseal_keys(m: PhaseMachine, run: DealRun, sender: int, sealed: bytes,
                 slots: tuple[int, ...]) -> tuple[tuple[tuple[int, int], ...], str]:
    """The keys ``sender`` sealed to this seat, or what is wrong with them."""
    pairs, problem = open_sealed(sealed, run.seal_private, m.roster.keys[sender],
                                 table=m.table, deal=run.index, sender=sender,
                                 recipient=m.me, slots=slots)
    for slot, key in pairs:
        if not _lock(run).key_matches(sender, slot, key):
            return (), f"the key of slot {slot} sent to seat {m.me} does not match" \
                       " its commitment"
    return pairs, problem


def on_opened(m: PhaseMachine, env: Envelope, message: Opened, step: Step) -> None:
    """A seat's report that its cards opened (or the problem: an alarm)."""
    run = _deal(m)
    if message.problem:
        run.alarms[env.sender] = message.problem
        m.events.append(Event("alarm", f"seat {env.sender}: {message.problem}", env.sender))


def on_alarm(m: PhaseMachine, env: Envelope, message: Alarm, step: Step) -> None:
    """In place of its move, a seat says its own cards disprove a move taken."""
    run = _deal(m)
    run.alarms[env.sender] = message.problem
    m.events.append(Event("alarm", f"seat {env.sender}: {message.problem}", env.sender))


def on_void(m: PhaseMachine, env: Envelope, message: Void, step: Step) -> None:
    """In place of its move, a seat proposes to void the deal: the others answer in turn."""
    run = _deal(m)
    sender = env.sender
    run.vote = (sender, message.reason)
    m.queue(Step(Kind.CONSENT, (sender + i) % m.players) for i in range(1, m.players))
    m.events.append(Event("vote", f"seat {sender} proposes to void the deal:"
                                  f" {message.reason}", sender))


def on_consent(m: PhaseMachine, env: Envelope, message: Consent, step: Step) -> None:
    """An answer to the proposal to void: a refusal ends the vote (the proposer moves
    after all); the last consent voids the deal (audited, so that its cards are known;
    it does not count)."""
    run = _deal(m)
    sender = env.sender
    assert run.vote is not None
    if not message.agree:
        m.vote_ended()
        m.events.append(Event("vote", f"seat {sender} does not consent: the deal goes on",
                              sender))
        run.vote = None
        return
    if any(s.kind == Kind.CONSENT and s.seat != sender for s in m.agenda):
        return
    run.consented = run.vote[1]
    run.vote = None
    m.alarm()
    m.events.append(Event("void", f"every seat consents to void the deal ({run.consented})"))


def _shown(message: Act | ProvedAct) -> tuple[tuple[int, tuple[tuple[int, int], ...]], ...]:
    """(slot, keys) of each card a move shows (no keys at a proved table: shares)."""
    if isinstance(message, ProvedAct):
        return tuple((slot, ()) for slot in message.shown)
    return message.shown


def _check_proved_shown(m: PhaseMachine, run: DealRun, env: Envelope, message: ProvedAct,
                        cards: list[int]) -> set[int]:
    """Every card the move shows comes from a slot its mover holds, and the mover's
    shares (checked: a bad one is a proven cheat) open it, with the other seats'
    shares in the transcript, to the card the move names (another card: a proven
    cheat, the signed move and the shares prove it).  Nothing is changed before a
    :class:`Refused` that is not a proven cheat; a proven cheat ends the deal."""
    deck = _proved(run)
    sender = env.sender
    if len(message.shown) != len(cards):
        raise Refused("slots", f"the move shows {len(cards)} card(s), the message"
                               f" {len(message.shown)} slot(s)")
    for slot in message.shown:
        if run.ledger.place.get(slot) != sender or not deck.in_play(slot):
            raise Refused("not-held", f"slot {slot} is not a card seat {sender} holds")
    need = {s for s in message.shown if deck.holder.get(s) != PUBLIC}
    given = set() if message.shares is None else set(message.shares.slots)
    if given != need and sender != m.me:  # (this seat's own shares are in its deck)
        raise Refused("keys", f"the mover's shares of slots {sorted(given)}, not of the"
                              f" slots not yet shown {sorted(need)}")
    if sender != m.me and message.shares is not None:
        _take(m, deck, env, message.shares)
    name = m.game.notation.name
    opened = []
    for slot in message.shown:
        if not deck.can_open(slot):
            raise Proven("keys", f"slot {slot} shown without every seat's share")
        try:
            opened.append(run.ids[deck.open(slot)])
        except DeckRefused as error:
            raise Proven(f"deck {error.step}", f"{error.step}: {error.reason}") from None
    if sorted(opened) != sorted(cards):
        raise Proven("not-held", f"showed {' '.join(name(c) for c in opened)} as"
                                 f" {' '.join(name(c) for c in cards)}")
    return set()


def on_act(m: PhaseMachine, env: Envelope, message: Act | ProvedAct, step: Step) -> None:
    """A move: checked against what everyone knows (the public view), so that every
    honest seat takes or refuses it alike; then applied to this seat's own view,
    unless its own cards prove the move false (then it raises the alarm on its turn)."""
    run = _deal(m)
    sender = env.sender
    public = run.public
    assert public is not None
    try:
        code = public.parse_action(message.action)
    except ActionSyntaxError as error:
        raise Refused("syntax", str(error)) from None
    if message.action != public.format_action(code, seat=SPECTATOR):
        raise Refused("syntax", f"{message.action!r} is not the public form of a move")
    if sender != m.me:
        try:
            public.check(code)
        except IllegalAction as error:
            raise Refused(error.code, f"{message.action}: {error.reason}") from None
    hidden = message.action.split().count("?")
    if len(message.slots) != hidden or len(set(message.slots)) != hidden:
        raise Refused("slots", f"{hidden} face-down cards need {hidden} distinct slots")
    ledger = run.ledger
    for slot in message.slots:
        if ledger.place.get(slot) != sender or slot in run.deck.retired:
            raise Refused("not-held", f"slot {slot} is not a card seat {sender} holds")
    if isinstance(message, ProvedAct):
        doubles = _check_proved_shown(m, run, env, message, public.shown_cards(code))
    else:
        doubles = _check_shown(m, run, sender, message, public.shown_cards(code))
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
    for slot, keys in _shown(message):
        ledger.place[slot] = SHOWN
        ledger.knows[slot] = set(range(m.players))
        if isinstance(message, ProvedAct):
            run.shown[slot] = run.deck.open(slot)
        elif sender != m.me:
            deck = _lock(run)
            for party, key in keys:
                if party != m.me and party not in deck.keys.get(slot, {}):
                    deck.receive(KeyRelease(party=party, slot=slot, key=key))
            if slot not in doubles:
                run.deck.open(slot)
    ledger.reconcile(public)
    m.queue(ledger.moved(before, public, message.slots))
    m.events.append(Event("act", f"seat {sender}: {message.action}", sender, seen, seen_code))


def _check_shown(m: PhaseMachine, run: DealRun, sender: int, message: Act,
                 cards: list[int]) -> set[int]:
    """Every card the move shows comes from a slot ``sender`` holds, with every key of
    the slot, and the slots open to exactly those cards; returns the slots whose card
    this seat has privately opened elsewhere (its own: proof of a cheat that only it
    can see)."""
    if len(message.shown) != len(cards):
        raise Refused("slots", f"the move shows {len(cards)} card(s), the message"
                               f" {len(message.shown)} slot(s)")
    deck = _lock(run)
    name = m.game.notation.name
    opened = []
    doubles: set[int] = set()
    for slot, pairs in message.shown:
        if run.ledger.place.get(slot) != sender or not deck.in_play(slot):
            raise Refused("not-held", f"slot {slot} is not a card seat {sender} holds")
        keys = dict(pairs)
        if len(keys) != len(pairs) or set(keys) != set(deck.lockers[slot]):
            raise Refused("keys", f"slot {slot} needs the keys of seats"
                                  f" {list(deck.lockers[slot])}")
        for party, key in keys.items():
            if not deck.key_matches(party, slot, key):
                raise Refused("key", f"seat {party}'s key of slot {slot} does not match"
                                     " its commitment")
        card = deck.peek(slot, keys)
        if card is None:
            raise Refused("not-held", f"slot {slot} opens to no card")
        for other, seen in deck.opened.items():
            if seen == card and other != slot:
                if run.ledger.shown_to_all(other):
                    raise Refused("not-held", f"slot {slot} holds a card already shown")
                doubles.add(slot)
        opened.append(run.ids[card])
    if sorted(opened) != sorted(cards):
        raise Refused("not-held", f"showed {' '.join(name(c) for c in opened) or 'nothing'}"
                                  f" as {' '.join(name(c) for c in cards)}")
    return doubles


def on_audit(m: PhaseMachine, env: Envelope, message: Audit, step: Step) -> None:
    """A seat's secrets of the deal: its deck secrets and its sealing key."""
    run = _deal(m)
    sender = env.sender
    try:
        secret = X25519PrivateKey.from_private_bytes(message.seal_secret)
    except ValueError as error:
        raise Refused("audit", f"not a sealing key: {error}") from None
    if public_bytes(secret.public_key()) != run.seal_keys.get(sender):
        raise Refused("audit", "the sealing secret does not match the deal's hello")
    if message.reveal.party != sender:
        raise Refused("audit", "secrets in another seat's name")
    run.audits[sender] = message


def on_agree(m: PhaseMachine, env: Envelope, message: Agree, step: Step) -> None:
    """A seat's signature of the deal's result; one that differs is on record."""
    run = _deal(m)
    sender = env.sender
    run.agrees[sender] = message
    mine = (run.agree_hash, tuple(run.points), run.verdict)
    theirs = (message.transcript, message.points, message.verdict)
    if theirs != mine:
        what = "transcript" if message.transcript != run.agree_hash else "result"
        m.events.append(Event("disagree", f"seat {sender} signed another {what} of deal"
                              f" {run.index}: {message.points} {message.verdict!r} (this"
                              f" seat: {run.points} {run.verdict!r})", sender))


def _never(m: PhaseMachine, env: Envelope, message: Silent, step: Step) -> None:
    raise AssertionError("a claim of silence is taken by the session, not applied")


HANDLERS: dict[type, Handler] = {
    Sign: on_sign, Commit: on_draw, Reveal: on_draw, Hello: on_hello,
    Unlocked: on_deck, Shuffled: on_deck, Locked: on_deck, Remixed: on_deck,
    Keys: on_keys, Opened: on_opened, Alarm: on_alarm, Void: on_void, Consent: on_consent,
    Act: on_act, ProvedAct: on_act, KeyShare: on_proved_deck, Shuffle: on_proved_deck,
    Remix: on_proved_deck, ProvedShares: on_proved_shares, Audit: on_audit, Agree: on_agree,
    Silent: _never, Cheat: _never,
    Back: _never, Seats: on_seat,
}
"""Each message class's handler."""
