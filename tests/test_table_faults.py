"""Faults without sockets: bad messages refused with the sender and the rule named and
nothing changed (at a table of the proved deck, the default); cheats caught and
attributed by today's deck's audit (docs/protocol.md, "Faults")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest.mock import patch

import msgpack
import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.games.cards import bits
from p2pcards.history import History, loads, replay
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.protocol.steps import lift_deck, rekey_deck
from p2pcards.table.codec import MAX_MESSAGE, pack, seal
from p2pcards.table.events import Alarmed, Disagreed, Forfeited
from p2pcards.table.kinds import Keys, Message, Opened
from p2pcards.table.memory import MemoryTable, seat_identity
from p2pcards.table.roster import LOCK_DECK
from p2pcards.table.run import DealRun
from p2pcards.table.session import Session, Step
from p2pcards.table.state import EVERYONE
from tests.table_helpers import act_body, envelope, move, roles, told


@pytest.fixture
def bidding() -> MemoryTable:
    """Four seats at the first bid of the first deal."""
    table = MemoryTable("bidwhist", 4, 11, [heuristic_bot] * 4)
    table.deliver()
    return table


def non_canonical(actor: Session) -> bytes:
    """A well-signed payload whose version is packed as a 16-bit integer."""
    canonical = pack([1, actor.table, 0, actor.me, actor.transcript.seq_out, actor.hash,
                      *move(actor, "pass")])
    payload = b"\x98\xcd\x00\x01" + canonical[2:]
    assert msgpack.unpackb(payload) == msgpack.unpackb(canonical)
    signature = actor.identity.sign(b"p2pcards/envelope/v1\x00" + payload)
    return pack([payload, signature])


BAD: dict[str, tuple[Callable[[Session, Session], bytes], str, str]] = {
    "garbage": (lambda a, o: b"\xc1\x00garbage", "nobody", "malformed"),
    "oversized": (lambda a, o: b"\x00" * (MAX_MESSAGE + 1), "nobody", "malformed"),
    "not canonical": (lambda a, o: non_canonical(a), "nobody", "malformed"),
    "unknown kind": (lambda a, o: envelope(a, "cheer", {}), "actor", "malformed"),
    "a forged line in an alarm": (lambda a, o: envelope(a, "alarm", {
        "problem": "my cards\n[host] ana left the table"}), "actor", "malformed"),
    "an escape in a void": (lambda a, o: envelope(a, "void", {"reason": "\x1b]0;pwned\x07"}),
                            "actor", "malformed"),
    "unknown field": (lambda a, o: envelope(a, move(a, "pass")[0],
                                            {**move(a, "pass")[1], "x": 1}),
                      "actor", "malformed"),
    "missing field": (lambda a, o: envelope(a, move(a, "pass")[0], {"action": "pass"}),
                      "actor", "malformed"),
    "mistyped field": (lambda a, o: envelope(a, move(a, "pass")[0],
                                             {**move(a, "pass")[1], "slots": 3}),
                       "actor", "malformed"),
    "forged signature": (lambda a, o: envelope(a, *move(a, "pass"), key=o.identity),
                         "actor", "signature"),
    "out of turn": (lambda a, o: envelope(o, *move(o, "pass")), "other", "turn"),
    "illegal move": (lambda a, o: envelope(a, *move(a, "play AS", shown=(0,))),
                     "actor", "phase"),
    "unparsable move": (lambda a, o: envelope(a, *move(a, "bid nine")), "actor", "syntax"),
    "replayed": (lambda a, o: a.transcript[0].wire, "actor", "replay"),
    "sequence gap": (lambda a, o: envelope(a, *move(a, "pass"), seq=a.transcript.seq_out + 1),
                     "actor", "order"),
    "other table": (lambda a, o: envelope(a, *move(a, "pass"), table=b"\x07" * 16),
                    "actor", "table"),
    "other deal": (lambda a, o: envelope(a, *move(a, "pass"), deal=3), "actor", "deal"),
    "forked transcript": (lambda a, o: envelope(a, *move(a, "pass"), prior=b"\x01" * 32),
                          "actor", "transcript"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_message_is_refused_naming_sender_and_rule(bidding: MemoryTable,
                                                         case: str) -> None:
    actor, other, receiver = roles(bidding)
    make, who, rule = BAD[case]
    if case == "replayed":  # a message the receiver has already taken
        wire = actor.transcript[-1].wire if actor.transcript[-1].sender == actor.me else \
            next(e.wire for e in reversed(actor.transcript) if e.sender == actor.me)
    else:
        wire = make(actor, other)
    before = (receiver.hash, len(receiver.transcript), list(receiver.transcript.seq_in),
              receiver.due())
    rejection = receiver.receive(wire)
    assert rejection is not None
    expected = {"actor": actor.me, "other": other.me, "nobody": None}[who]
    assert (rejection.sender, rejection.code) == (expected, rule), str(rejection)
    assert rejection.reason
    assert (receiver.hash, len(receiver.transcript), list(receiver.transcript.seq_in),
            receiver.due()) == before
    # the table plays on: the real move is taken everywhere
    view = actor.decision()
    assert view is not None
    actor.act(heuristic_bot(view.clone(), bidding.rngs[actor.me]))
    bidding.deliver()
    assert receiver.hash == actor.hash
    assert len(receiver.rejections) == 1


def test_a_duplicate_is_refused_once_taken(bidding: MemoryTable) -> None:
    actor, _, receiver = roles(bidding)
    view = actor.decision()
    assert view is not None
    actor.act(heuristic_bot(view.clone(), bidding.rngs[actor.me]))
    (wire,) = actor.take_outbox()
    assert receiver.receive(wire) is None
    state = (receiver.hash, len(receiver.transcript))
    rejection = receiver.receive(wire)
    assert rejection is not None and (rejection.sender, rejection.rule) == (actor.me, "replay")
    assert (receiver.hash, len(receiver.transcript)) == state


def test_a_message_ahead_of_the_transcript_waits_for_its_turn(bidding: MemoryTable) -> None:
    """Seat B answered seat A's move before A's move reached C: C holds B's message."""
    first, second, late = roles(bidding)
    view = first.decision()
    assert view is not None
    first.act(heuristic_bot(view.clone(), bidding.rngs[first.me]))
    (move_a,) = first.take_outbox()
    for session in bidding.sessions:
        if session not in (first, late):
            assert session.receive(move_a) is None
    view = second.decision()
    assert view is not None
    second.act(heuristic_bot(view.clone(), bidding.rngs[second.me]))
    (move_b,) = second.take_outbox()
    assert late.receive(move_b) is None and late.transcript.held == {second.me: move_b}
    assert late.receive(move_a) is None
    assert late.transcript.held == {} and late.hash == second.hash


# ------------------------------------------------------------------ cheats


def play_with(table: MemoryTable, cheat: Callable[[MemoryTable], bool]) -> None:
    """Play one deal; ``cheat`` may make a move itself (True) instead of the bots."""
    while True:
        table.deliver()
        if cheat(table):
            continue
        if all(s.finished for s in table.sessions) or not table.step():
            break
    table.deliver()


def outcome_everywhere(table: MemoryTable) -> list[DealRun]:
    runs = [s.finished[0] for s in table.sessions]
    verdicts = {(r.verdict, tuple(r.points)) for r in runs}
    assert len(verdicts) == 1, verdicts
    for session in table.sessions:
        assert not [e for e in session.events if isinstance(e, Disagreed)]
        record = session.finished[0].outcome
        assert record is not None
        history = History("bidwhist", list("abcd"), {}, [record.record])
        replay(loads(history.dumps()))
    return runs


def test_a_renege_is_proven_by_the_audit_and_penalised() -> None:
    table = MemoryTable("bidwhist", 4, 12, [heuristic_bot] * 4, deck=LOCK_DECK)
    done = []

    def renege(t: MemoryTable) -> bool:
        for session in t.sessions:
            view = session.decision()
            if done or view is None or view.phase != 3:  # type: ignore[attr-defined]
                continue
            hand = bits(view.may[session.me])
            off = [c for c in hand if c not in view.legal_actions()]
            if not off:
                continue
            # its own engine would refuse the card, and then drop the suit it claims
            # to lack from its own hand: the cheater keeps its hand as it is
            with patch.object(type(view), "check", lambda self, code: None), \
                    patch.object(type(view), "_claim_void", lambda self, *a: None):
                session.act(off[0])
            done.append((session.me, len(session.run.acts) - 1))  # type: ignore[union-attr]
            return True
        return False

    play_with(table, renege)
    assert done
    cheater, index = done[0]
    runs = outcome_everywhere(table)
    assert runs[0].outcome is not None
    assert runs[0].outcome.record.penalty == {"seat": cheater, "index": index,
                                              "reason": "renege"}
    assert f"seat {cheater}" in runs[0].verdict
    team = cheater % 2
    assert runs[0].points[team] == 0 and runs[0].points[1 - team] > 0


def test_a_card_not_held_is_refused_at_once() -> None:
    """(Today's deck: the move carries its keys, and the card they open is not the one
    the move names.)"""
    table = MemoryTable("bidwhist", 4, 13, [heuristic_bot] * 4, deck=LOCK_DECK)
    while True:  # up to the opening lead
        table.deliver()
        view = next((s.decision() for s in table.sessions if s.decision() is not None), None)
        if view is not None and view.phase == 3:  # type: ignore[attr-defined]
            break
        table.step()
    leader = next(s for s in table.sessions if s.decision() is not None)
    run = leader.run
    assert run is not None
    mine = sorted(s for s, p in run.ledger.place.items() if p == leader.me
                  and s not in run.deck.retired)
    shown, claimed = mine[0], run.ids[run.deck.opened[mine[1]]]
    name = leader.roster.rules.notation.name(claimed)
    keys = tuple(sorted(run.deck.keys[shown].items()))
    wire = envelope(leader, "act", act_body(f"play {name}", shown=((shown, keys),)))
    for session in table.sessions:
        if session is leader:
            continue
        state = (session.hash, len(session.transcript))
        rejection = session.receive(wire)
        assert rejection is not None
        assert (rejection.sender, rejection.rule) == (leader.me, "not-held")
        assert name in rejection.reason
        assert (session.hash, len(session.transcript)) == state


def test_a_card_not_held_is_a_proven_cheat_at_once_at_a_proved_table() -> None:
    """The leader shows one of its slots as a card it holds in another: every other seat
    opens the slot with the move's own shares and the transcript's, finds the card it
    is, and the move itself proves the cheat: the leader forfeits the deal at once."""
    table = MemoryTable("bidwhist", 4, 13, [heuristic_bot] * 4)
    while True:  # up to the opening lead
        table.deliver()
        view = next((s.decision() for s in table.sessions if s.decision() is not None), None)
        if view is not None and view.phase == 3:  # type: ignore[attr-defined]
            break
        table.step()
    leader = next(s for s in table.sessions if s.decision() is not None)
    run = leader.run
    assert run is not None and isinstance(run.deck, ProvedDeck)
    mine = sorted(s for s, p in run.ledger.place.items() if p == leader.me
                  and s not in run.deck.retired)
    shown, claimed = mine[0], run.ids[run.deck.opened[mine[1]]]
    name = leader.roster.rules.notation.name(claimed)
    real = leader.roster.rules.notation.name(run.ids[run.deck.opened[shown]])
    kind, body = move(leader, f"play {name}", shown=(shown,),
                      shares=run.deck.release([shown]))
    wire = envelope(leader, kind, body)
    for session in table.sessions:
        if session is not leader:
            assert session.receive(wire) is None  # taken: it is the proof
            assert wire in {env.wire for env in session.transcript}
            assert told(session, Forfeited) == [
                f"seat {leader.me} forfeits the deal: refused step (its {kind} refused:"
                f" showed {real} as {name})"]


def test_a_wrong_sealed_key_stops_the_deal_and_the_audit_names_its_sender() -> None:
    def bad_keys(session: Session, step: Step, make: Callable[[], Message]) -> Message:
        keys = make()
        if step.kind != "keys" or all(r == EVERYONE for r, _ in step.grants):
            return keys
        assert isinstance(keys, Keys) and session.run is not None
        run = session.run
        recipient, slots = next((r, s) for r, s in step.grants if r != EVERYONE)
        wrong = seal(session.identity, run.seal_keys[recipient], table=session.table,
                     deal=run.index, sender=session.me, recipient=recipient,
                     content=[[s, (12345 + s).to_bytes(32, "big")] for s in slots])
        return Keys(sealed=tuple((r, wrong if r == recipient else c) for r, c in keys.sealed),
                    public=keys.public)

    table = MemoryTable("bidwhist", 4, 14, [heuristic_bot] * 4, forges={2: bad_keys},
                        deck=LOCK_DECK)
    play_with(table, lambda t: False)
    runs = outcome_everywhere(table)
    assert runs[0].outcome is not None
    assert runs[0].outcome.record.forfeit == {"seat": 2, "reason": "refused audit"}
    assert runs[0].acts == []  # stopped before any move
    assert runs[0].verdict.startswith("seat 2 broke the key")
    assert any(isinstance(e, Alarmed) for e in table.sessions[0].events)


def test_a_tampered_shuffle_is_caught_by_the_audit() -> None:
    def tampered(session: Session, step: Step, make: Callable[[], Message]) -> Message:
        if step.kind != "shuffle":
            return make()
        assert session.run is not None

        def forge(message: Any) -> Any:
            deck = list(message.deck)
            deck[0] = rekey_deck(lift_deck([deck[0]]), [1], [2])[0]  # not a card any more
            return type(message)(party=message.party, round=message.round,
                                 prior=message.prior, deck=tuple(deck))
        return session.run.deck.step(forge)

    table = MemoryTable("bidwhist", 4, 15, [heuristic_bot] * 4, forges={1: tampered},
                        deck=LOCK_DECK)
    play_with(table, lambda t: False)
    runs = outcome_everywhere(table)
    assert runs[0].outcome is not None
    assert runs[0].outcome.record.forfeit == {"seat": 1, "reason": "refused audit"}
    assert runs[0].verdict.startswith("seat 1 broke the shuffle")


def test_a_false_alarm_costs_the_seat_that_raised_it() -> None:
    def false_alarm(session: Session, step: Step, make: Callable[[], Message]) -> Message:
        if step.kind == "opened":
            return Opened(problem="my cards do not open (a lie)")
        return make()

    table = MemoryTable("bidwhist", 4, 16, [heuristic_bot] * 4, forges={3: false_alarm},
                        deck=LOCK_DECK)
    play_with(table, lambda t: False)
    runs = outcome_everywhere(table)
    assert runs[0].outcome is not None
    assert runs[0].outcome.record.forfeit == {"seat": 3, "reason": "refused audit"}
    assert "false alarm" in runs[0].verdict


def test_identities_are_bound_to_seats() -> None:
    table = MemoryTable("bidwhist", 4, 17, [heuristic_bot] * 4)
    with pytest.raises(ValueError, match="not seat 1's"):
        Session(table.sessions[0].roster, 1, seat_identity(17, 2))
