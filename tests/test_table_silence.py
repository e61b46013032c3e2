"""Silence and consent: a silent seat forfeits the deal, every seat may void it."""

from __future__ import annotations

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.history import History, loads, replay
from p2pcards.table.claiming import ClaimDesk
from p2pcards.table.codec import open_envelope
from p2pcards.table.decks import ACTS
from p2pcards.table.events import Forfeited
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import LOCK_DECK, PROVED_DECK
from p2pcards.table.session import Session, Step
from p2pcards.table.verify import verify
from tests.table_helpers import who


def stalled(seed: int, game: str = "bidwhist", deck: str = PROVED_DECK
            ) -> tuple[MemoryTable, Session]:
    """A table in the play of its first deal, waiting for a seat's move."""
    table = MemoryTable(game, 4, seed, [heuristic_bot] * 4, deck=deck)
    for _ in range(6):  # a few moves in
        table.step()
    table.deliver()
    step = table.sessions[0].due()
    assert step is not None and step.kind in ACTS
    return table, table.sessions[step.seat]


def history(session: Session) -> History:
    return History(session.roster.rules.name, [s.name for s in session.roster.seats], {},
                   [run.outcome.record for run in session.finished if run.outcome])


def test_a_silent_seat_forfeits_the_deal_and_play_goes_on() -> None:
    table, silent = stalled(71)
    others = [s for s in table.sessions if s is not silent]
    for session in others:
        session.claim_silent()
    table.deliver()
    # the silent seat takes the claims too: it was silent, and it follows the table
    # (a person back from a pause, or a peer restarted, plays the next deal)
    assert not table.rejected
    for session in [silent, *others]:
        run = session.finished[0]
        assert run.outcome is not None
        assert run.verdict == f"seat {silent.me} forfeits the deal: silent"
        assert sorted(run.agrees) == run.signers == sorted({0, 1, 2, 3} - {silent.me})
        # scored as played so far, the silent side nothing
        assert run.points[silent.me % 2] == 0
    assert len({s.hash for s in others}) == 1
    replay(loads(history(others[0]).dumps()))
    report = verify(others[1].export())
    assert report.deals[0].signed == report.deals[0].signers
    assert report.deals[0].dissent == []
    assert len({s.hash for s in table.sessions}) == 1
    # with no bot to take its seat, the next deal waits for it: back, it plays on
    table.play(deals=2)
    assert all(len(s.finished) == 2 for s in table.sessions)
    assert others[0].finished[1].verdict == "ok"


def test_a_claimant_refuses_the_late_message_and_a_message_first_wins() -> None:
    """A seat that claimed X silent refuses X's late message on that transcript, so a
    complete set of claims means no honest seat took it; a seat that took the message
    before claiming never claims, so the claims cannot complete."""
    table, silent = stalled(72)
    others = [s for s in table.sessions if s is not silent]
    others[0].claim_silent()
    (claim,) = others[0].take_outbox()
    view = silent.decision()
    assert view is not None
    silent.act(heuristic_bot(view.clone(), table.rngs[silent.me]))
    (move,) = silent.take_outbox()
    refused = others[0].receive(move)
    assert refused is not None and refused.rule == "silent"
    for session in others[1:]:
        assert session.receive(move) is None  # taken before any claim of theirs
        assert session.receive(claim) is None  # held: on a transcript it has left behind
        assert session.claims.made == {}  # so it never counts there
    assert len({s.hash for s in others[1:]}) == 1


def test_a_claim_must_name_the_seat_that_is_due() -> None:
    table, silent = stalled(73)
    claimant = table.sessions[(silent.me + 1) % 4]
    receiver = table.sessions[(silent.me + 2) % 4]
    claimant.claim_silent()
    (wire,) = claimant.take_outbox()
    assert receiver.receive(wire) is None  # counted, not yet complete
    with pytest.raises(ValueError, match="no other seat's message is due"):
        silent.claim_silent()  # a seat cannot claim itself silent


def test_a_seat_silent_at_its_audit_refused_it() -> None:
    table = MemoryTable("bidwhist", 4, 74, [heuristic_bot] * 4, deck=LOCK_DECK)
    keys = table.sessions[0].roster.keys

    def lose_audit(sender: int, wire: bytes) -> list[bytes]:  # seat 2's audit never comes
        return [] if sender == 2 and open_envelope(wire, keys).kind == "audit" else [wire]

    table.tamper = lose_audit
    table.play(deals=1)
    others = [s for s in table.sessions if s.me != 2]
    assert all(s.due() == Step("audit", 2) for s in others)
    for session in others:
        session.claim_silent()
    table.deliver()
    for session in others:
        run = session.finished[0]
        assert run.outcome is not None
        assert who(run.outcome.record.forfeit) == {"seat": 2, "reason": "refused audit"}
        assert run.verdict == "seat 2 forfeits the deal: refused audit"
        # the deal was played out: its result stands, less the forfeiting side's
        assert run.points[0] == 0 and run.points[1] > 0


@pytest.mark.parametrize(("game", "seed"), [("bidwhist", 75), ("pasur", 76)])
def test_every_seat_may_void_the_deal(game: str, seed: int) -> None:
    table, proposer = stalled(seed, game)  # (seeds whose first deal is not void as dealt)
    dealer = table.sessions[0].run.dealer  # type: ignore[union-attr]
    proposer.propose_void("the cat walked across the keyboard")
    table.deliver()
    order = [s for s in table.sessions if s.void_question() is not None]
    assert len(order) == 1 and order[0].me == (proposer.me + 1) % 4  # answers in turn
    table.play(deals=1)  # every seat consents (the table's policy)
    assert table.rejected == []
    for session in table.sessions:
        run = session.finished[0]
        assert run.outcome is not None and run.outcome.void
        assert session.totals == [0] * len(session.totals)
        assert run.verdict == "void: the cat walked across the keyboard"
    table.play(deals=2)
    second = table.sessions[0].finished[1]
    assert second.dealer == dealer  # the same dealer deals again
    result = replay(loads(history(table.sessions[1]).dumps()))
    assert result.hands[0].points is None
    assert verify(table.sessions[3].export()).deals[0].verdict.startswith("void: the cat")


def test_one_refusal_and_the_deal_goes_on() -> None:
    table, proposer = stalled(76)
    table.consent = False
    proposer.propose_void("no")
    table.play(deals=1)
    assert all(s.finished[0].verdict == "ok" for s in table.sessions)
    assert len({s.hash for s in table.sessions}) == 1


def test_a_vote_is_in_turn_and_stands_in_for_a_move() -> None:
    table, proposer = stalled(77)
    other = table.sessions[(proposer.me + 2) % 4]
    with pytest.raises(ValueError, match="in place of its move"):
        other.propose_void("not my turn")
    with pytest.raises(ValueError, match="no proposal"):
        other.answer_void(True)


def exchange(sessions: list[Session]) -> None:
    """Deliver every message among ``sessions`` (and none to the others) until quiet."""
    while True:
        wires = [(s.me, w) for s in sessions for w in s.take_outbox()]
        if not wires:
            return
        for sender, wire in wires:
            for session in sessions:
                if session.me != sender:
                    session.receive(wire)


def test_seats_run_by_one_peer_fall_silent_together_and_the_others_claim_them() -> None:
    """Seat 3 is a bot that seat 2's peer runs: when that peer dies, both fall silent.
    The claims of seats 0 and 1 suffice (seat 3 could never claim); a claim by seat 3
    against seat 2 (a peer claiming itself) does not count."""
    table = MemoryTable("bidwhist", 4, 73, [heuristic_bot] * 4, run_by={3: 2})
    for _ in range(6):
        table.step()
    table.deliver()
    step = table.sessions[0].due()
    assert step is not None
    silent = step.seat
    peer = {2, 3} if silent in (2, 3) else {silent}
    alive = [s for s in table.sessions if s.me not in peer]
    if silent in (2, 3):
        mate = table.sessions[({2, 3} - {silent}).pop()]
        with pytest.raises(ValueError, match="run by this seat's peer"):
            mate.claim_silent()
    for session in alive:
        session.claim_silent()
    exchange(alive)
    for session in alive:
        run = session.finished[0]
        assert run.verdict == f"seat {silent} forfeits the deal: silent"
        assert run.signers == sorted(s.me for s in alive)  # the dead peer signs nothing
    assert len({s.hash for s in alive}) == 1
    assert verify(alive[0].export()).deals[0].signed == [s.me for s in alive]


def test_under_the_old_rule_a_dead_peer_s_bot_freezes_the_table(monkeypatch) -> None:
    """The attack, against the rule as it was (every seat but the silent one must
    claim): the dead peer's bot never claims, so the claims never complete."""
    from p2pcards.table.roster import Roster  # noqa: PLC0415

    monkeypatch.setattr(Roster, "others",
                        lambda self, seat: set(range(self.players)) - {seat})
    table = MemoryTable("bidwhist", 4, 73, [heuristic_bot] * 4, run_by={3: 2})
    for _ in range(6):
        table.step()
    table.deliver()
    step = table.sessions[0].due()
    assert step is not None and step.seat in (2, 3)  # (this seed: the dead peer's turn)
    alive = [s for s in table.sessions if s.me in (0, 1)]
    for session in alive:
        session.claim_silent()
    exchange(alive)
    assert all(s.finished == [] and s.due() == step for s in alive)  # stuck for ever


@pytest.mark.parametrize("weakened", [True, False])
def test_claimants_take_a_late_message_another_seat_built_on(
        weakened: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """X's move reaches the next seat, which answers on it, before it reaches the others;
    they have claimed X silent meanwhile, and refuse the move on that transcript.  The
    claims can never complete (the next seat never claims).  Under the weakened rule the
    claimants stay behind for ever; under the table's they take the move after all once
    they see the answer built on it, and the table goes on together."""
    if weakened:
        monkeypatch.setattr(ClaimDesk, "withdraw", lambda self: None)
    table, late = stalled(73)
    nxt = table.sessions[(late.me + 1) % 4]
    claimants = [s for s in table.sessions if s not in (late, nxt)]
    view = late.decision()
    assert view is not None
    late.act(heuristic_bot(view.clone(), table.rngs[late.me]))
    (move,) = late.take_outbox()
    assert nxt.receive(move) is None  # the next seat gets it first...
    for session in claimants:
        session.claim_silent()  # ...the others claim the late seat silent
    claims = [w for s in claimants for w in s.take_outbox()]
    for session in claimants:
        for wire in claims:
            session.receive(wire)
        refused = session.receive(move)
        assert refused is not None and refused.rule == "silent"
    answer = nxt.decision()
    assert answer is not None
    nxt.act(heuristic_bot(answer.clone(), table.rngs[nxt.me]))
    for wire in claims:
        nxt.receive(wire)
    table.deliver()
    together = len({s.hash for s in table.sessions}) == 1
    assert together is not weakened
    if not weakened:
        assert not any(isinstance(e, Forfeited) for s in table.sessions for e in s.events)
        table.play(deals=1)
        assert all(len(s.finished) >= 1 for s in table.sessions)
        for wire in claims:  # a claim given up, whose number went to a later message,
            refused = late.receive(wire)  # reaching the seat it named at last
            assert refused is not None and refused.rule == "stale", refused
            assert refused.reason.startswith("a claim of silence overtaken: its number")


@pytest.mark.parametrize("weakened", [True, False])
def test_a_seat_whose_move_came_too_late_goes_back_and_forfeits_with_the_table(
        weakened: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The others claim the late seat silent and refuse its move, which crossed their
    claims; the late seat gets the complete claims on the transcript it has moved past
    with its own move only.  Under the weakened rule (held, as any claim on another
    transcript) it stays behind for ever; under the table's it takes its transcript back
    and forfeits with the table, and its move is never sent again."""
    if weakened:
        monkeypatch.setattr(ClaimDesk, "_behind", lambda self, env: False)
    table, late = stalled(74)
    others = [s for s in table.sessions if s is not late]
    for session in others:
        session.claim_silent()
    claims = [w for s in others for w in s.take_outbox()]
    view = late.decision()
    assert view is not None
    late.act(heuristic_bot(view.clone(), table.rngs[late.me]))
    (move,) = late.take_outbox()
    for session in others:
        for wire in claims:
            session.receive(wire)
        assert any(isinstance(e, Forfeited) and e.seat == late.me for e in session.events)
        session.receive(move)  # on a transcript the table has left: not taken
        assert move not in {env.wire for env in session.transcript}
    for wire in claims:
        late.receive(wire)
    table.deliver()
    together = len({s.hash for s in table.sessions}) == 1
    assert together is not weakened
    if not weakened:
        assert late.transcript.dropped == [move]  # (its peer never sends it again)
        assert any(isinstance(e, Forfeited) and e.seat == late.me for e in late.events)
        table.play(deals=2)
        assert all(len(s.finished) >= 2 for s in table.sessions)
        assert len({s.hash for s in table.sessions}) == 1


@pytest.mark.parametrize("kind", ["agree", "audit"])
def test_a_seat_whose_agreement_came_too_late_is_taken_back_into_its_deal(kind: str) -> None:
    """The last seat to sign a deal's result (or, with today's deck, to reveal its audit)
    is cut off right after: its peer has gone on (scored the deal and begun the next, or
    signed a result) when the others' claims of its silence, made before they saw its
    message, reach it.  It takes all that back and forfeits as the others have it (the
    result standing without its signature; a refused audit), and all play on together."""
    late_seat = 2
    cut: list[bytes] = []

    def tamper(sender: int, wire: bytes) -> list[bytes]:
        sent = open_envelope(wire, keys).kind
        if sender == late_seat and (cut or sent == kind) and not released:
            cut.append(wire)  # (its agreement and everything after it never arrive)
            return []
        return [wire]

    released = False
    table = MemoryTable("pasur", 3, 75, [heuristic_bot] * 3, tamper=tamper,
                        deck=LOCK_DECK if kind == "audit" else PROVED_DECK)
    keys = table.sessions[0].roster.keys
    late = table.sessions[late_seat]
    while not cut and table.step():
        pass
    assert cut
    table.deliver()
    others = [s for s in table.sessions if s is not late]
    assert all(s.due() == Step(kind, late_seat) for s in others)
    for session in others:
        session.claim_silent()
    released = True
    table.deliver()
    assert len({s.hash for s in table.sessions}) == 1
    assert late.finished[0].signers == [0, 1] and len(late.finished) == 1
    assert late.finished[0].verdict == (
        f"seat {late_seat} forfeits the deal: refused audit" if kind == "audit" else "ok")
    table.play(deals=3)
    assert all(len(s.finished) >= 3 for s in table.sessions)
    assert len({s.hash for s in table.sessions}) == 1


def test_a_claimant_takes_the_game_s_last_message_after_all() -> None:
    """The game's last agreement reaches every seat but one, which has claimed its sender
    silent meanwhile and refuses it.  No message will ever be built on it, so the rule
    that takes a late message once another seat builds on it never fires: however much
    is delivered, that seat stays in the game.  A quarter of a grace period after its
    claim, its driver asks for the late word (:meth:`Session.late_word`) and takes it:
    the game is over there too, on the same transcript."""
    signer, cut = 2, []

    def tamper(sender: int, wire: bytes) -> list[bytes]:
        if sender == signer and open_envelope(wire, keys).kind in ("agree", "pagree") \
                and table.sessions[0].machine.last_word():
            cut.append(wire)
            return []
        return [wire]

    table = MemoryTable("pasur", 3, 76, [heuristic_bot] * 3, options={"target": 20},
                        tamper=tamper)
    keys = table.sessions[0].roster.keys
    while not cut and table.step():
        pass
    table.deliver()
    claimant, other, late = table.sessions
    assert cut and claimant.due() == Step(claimant.machine.flavor.agree, signer)
    assert claimant.late_word() is None
    assert other.receive(cut[0]) is None and other.over and late.over
    claimant.claim_silent()
    for wire in claimant.take_outbox():
        other.receive(wire)  # (a claim on a transcript it has left: nothing comes of it)
        late.receive(wire)
    refused = claimant.receive(cut[0])
    assert refused is not None and refused.rule == "silent"
    table.deliver()
    assert not claimant.over  # stuck for ever without the rule
    assert claimant.late_word() == cut[0]
    claimant.take_late(cut[0])
    assert claimant.over and claimant.late_word() is None
    assert len({s.hash for s in table.sessions}) == 1
    assert verify(claimant.export()).ok
