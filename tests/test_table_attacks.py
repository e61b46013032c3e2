"""Attacks on honest sessions: none crashes, none forks, each cheat is named.

These came from a review of the table session; each test is the attack that
once worked, and what must happen instead.  A table deals with the proved deck
unless told; the attacks on today's deck (its audit, its sealing keys, its alarms,
its re-mixes) are played at a table of it (``deck=LOCK_DECK``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.protocol.curve import hash_to_point, mul, random_scalar
from p2pcards.protocol.deck import Deck, random_permutation
from p2pcards.protocol.messages import Remixed
from p2pcards.table import kinds
from p2pcards.table.claiming import ClaimDesk
from p2pcards.table.codec import MAX_MESSAGE, open_envelope, pack, seal_envelope
from p2pcards.table.events import Alarmed, Forfeited
from p2pcards.table.kinds import Act, Hello, Message, Opened
from p2pcards.table.memory import MemoryTable, seat_identity
from p2pcards.table.roster import LOCK_DECK
from p2pcards.table.session import Session, Step
from p2pcards.table.verify import verify
from tests.table_helpers import envelope, move, roles


def test_a_malformed_audit_is_refused_not_fatal() -> None:
    table = MemoryTable("bidwhist", 4, 51, [heuristic_bot] * 4, deck=LOCK_DECK)
    table.deliver()
    cheat = table.sessions[1]
    body = {"reveal": {"unlock_keys": [(1).to_bytes(32, "big")], "shuffle_keys": [],
                       "permutations": [], "lock_keys": [], "remix_orders": [],
                       "remix_keys": []}, "seal_secret": b"\x01" * 32}
    wire = seal_envelope(cheat.identity, table=cheat.table, deal=0, sender=1,
                         seq=cheat.transcript.seq_out, prior=cheat.hash, kind="audit",
                         body=body).wire
    for session in table.sessions:
        if session is not cheat:
            rejection = session.receive(wire)
            assert rejection is not None
            assert (rejection.sender, rejection.rule) == (1, "malformed")


def test_an_unlock_key_in_round_zero_is_named_by_the_audit() -> None:
    def rigged(session: Session, step: Step, make: Callable[[], Message]) -> Message:
        if step.kind == "hello":  # the deal's first message: before any deck step
            assert session.run is not None
            session.run.deck._secrets[0].unlock = 2  # locks with k/(2s), says so at the audit
        return make()

    table = MemoryTable("bidwhist", 4, 52, [heuristic_bot] * 4, forges={2: rigged},
                        deck=LOCK_DECK)
    table.play(deals=1)
    verdicts = {s.finished[0].verdict for s in table.sessions}
    assert len(verdicts) == 1
    (verdict,) = verdicts
    assert verdict.startswith("seat 2 broke the audit") and "round 0" in verdict
    assert verify(table.sessions[0].export()).deals[0].verdict == verdict


def test_a_low_order_sealing_key_is_refused() -> None:
    """Seat 3 announces the all-zero X25519 point: sealing to it would fail."""
    def zero_key(sender: int, wire: bytes) -> list[bytes]:
        env = open_envelope(wire, table.sessions[0].roster.keys)
        if sender != 3 or env.kind != "hello":
            return [wire]
        return [seal_envelope(seat_identity(58, 3), table=env.table, deal=env.deal, sender=3,
                              seq=env.seq, prior=env.prior, kind="hello",
                              body=kinds.encode_body(Hello(seal_key=bytes(32)))[1]).wire]

    table = MemoryTable("bidwhist", 4, 58, [heuristic_bot] * 4, tamper=zero_key,
                        deck=LOCK_DECK)
    table.deliver()
    refused = {(d.at, d.rejection.sender, d.rejection.rule) for d in table.rejected}
    assert refused == {(0, 3, "hello"), (1, 3, "hello"), (2, 3, "hello")}
    assert all("low-order" in d.rejection.reason for d in table.rejected)


def test_a_long_false_alarm_still_ends_the_deal() -> None:
    def shout(session: Session, step: Step, make: Callable[[], Message]) -> Message:
        if step.kind == "opened":
            return Opened(problem="x" * kinds.MAX_TEXT)
        return make()

    table = MemoryTable("bidwhist", 4, 54, [heuristic_bot] * 4, forges={3: shout},
                        deck=LOCK_DECK)
    table.play(deals=1)
    assert table.rejected == []
    for session in table.sessions:
        run = session.finished[0]
        assert len(run.verdict) <= kinds.MAX_TEXT and "seat 3 raised a false alarm" in run.verdict
        assert sorted(run.agrees) == [0, 1, 2, 3]


def forging_remix(target_of: dict[str, Any]) -> Callable[[Deck, tuple[int, ...]], Remixed]:
    """A re-mix that puts, in its first new slot, a card the re-mixer does not hold."""

    def remix(self: Deck, slots: tuple[int, ...]) -> Remixed:
        chosen = tuple(slots)
        order = random_permutation(len(chosen), self._source)
        keys = [random_scalar(self._source) for _ in chosen]
        first = len(self.points)
        real = [self.opened[chosen[i]] for i in order]
        held = set(real)
        forged = list(real)
        forged[0] = max(c for c in range(len(self.cards)) if c not in held)
        message = Remixed(
            party=self.me, slots=chosen,
            deck=tuple(self._times(k, self.cards[c]) for k, c in zip(keys, forged, strict=True)),
            commitments=tuple(self.context.commitment(self.me, first + m, k)
                              for m, k in enumerate(keys)))
        self._remixes.append(([chosen[i] for i in order], keys))
        self._accept_remix(message)
        for m, (key, card) in enumerate(zip(keys, real, strict=True)):
            self.keys[first + m] = {self.me: key}
            self.opened[first + m] = card  # its own books stay as if honest
            self.holder[first + m] = self.me
        target_of.update(slot=first, card=forged[0])
        return message

    return remix


def test_a_card_forged_into_a_re_mix_is_caught_without_a_fork() -> None:
    """The Bid Whist bidder re-mixes a card it does not hold into its hand and plays it.
    Only the card's holder can tell; it takes the move like everyone (no fork) and
    raises the alarm on its turn; the audit names the forger."""
    for seed in range(60, 80):
        if _forged_re_mix_caught(seed):
            return
    raise AssertionError("no seed gave the bidder a forged card it could play")


def _forged_re_mix_caught(seed: int) -> bool:
    """Play seed's game with every seat ready to forge; False if no forgery came."""
    forged: dict[str, Any] = {}
    sent: dict[str, int] = {}

    def cheat(session: Session, step: Step, make: Callable[[], Message]) -> Message:
        run = session.run
        if run is None or sent:
            return make()
        if step.kind == "remix":
            return forging_remix(forged)(run.deck, step.slots)
        view = run.public
        slot = forged.get("slot")
        if step.kind != "act" or slot is None or run.ledger.place.get(slot) != session.me \
                or view is None or view.phase != 3:
            return make()
        card = run.ids[forged["card"]]
        if not view.is_legal(card):
            return make()  # it must look legal to the others
        sent.update(cheat=session.me, deal=run.index, holder=next(
            s.me for s in table.sessions if s is not session and s.run is not None
            and card in [s.run.ids[c] for sl, c in s.run.deck.opened.items()
                         if s.run.ledger.place.get(sl) == s.me]))
        return Act(action=f"play {session.roster.rules.notation.name(card)}",
                   shown=((slot, tuple(run.deck.keys[slot].items())),))

    table = MemoryTable("bidwhist", 4, seed, [heuristic_bot] * 4,
                        forges=dict.fromkeys(range(4), cheat), deck=LOCK_DECK)
    deals = 0
    while not sent and not table.sessions[0].over:
        deals += 1
        table.play(deals=deals)
    if not sent:
        return False
    table.play(deals=sent["deal"] + 1)
    ends = [next(r for r in s.finished if r.index == sent["deal"]) for s in table.sessions]
    assert len({r.agree_hash for r in ends}) == 1 and table.rejected == []
    assert any(isinstance(e, Alarmed) and e.seat == sent["holder"]
               for e in table.sessions[0].events)
    verdict = ends[0].verdict
    assert verdict.startswith(f"seat {sent['cheat']} broke the remix"), verdict
    return True


def test_a_seat_holds_at_most_one_message_ahead() -> None:
    table = MemoryTable("bidwhist", 4, 55, [heuristic_bot] * 4)
    table.deliver()
    step = table.sessions[0].due()
    assert step is not None
    early = table.sessions[(step.seat + 1) % 4]
    receiver = table.sessions[(step.seat + 2) % 4]
    kind, body = move(early, "pass")
    wires = [seal_envelope(early.identity, table=early.table, deal=0, sender=early.me,
                           seq=early.transcript.seq_out, prior=bytes([n]) * 32, kind=kind,
                           body=body).wire
             for n in range(2)]
    assert receiver.receive(wires[0]) is None  # held: its sender may have seen more
    rejection = receiver.receive(wires[1])
    assert rejection is not None and rejection.rule == "transcript"
    assert len(receiver.transcript.held) == 1


def test_map_keys_out_of_order_are_not_canonical() -> None:
    table = MemoryTable("bidwhist", 4, 56, [heuristic_bot] * 4)
    table.deliver()
    actor, receiver, _ = roles(table)
    kind, body = move(actor, "pass")
    sorted_body = pack(body)
    pairs = [pack(key) + pack(value) for key, value in sorted(body.items())]
    assert sorted_body == sorted_body[:1] + b"".join(pairs)  # (a fixmap: one byte, then pairs)
    reversed_body = sorted_body[:1] + b"".join(reversed(pairs))
    assert reversed_body != sorted_body and len(reversed_body) == len(sorted_body)
    payload = pack([1, actor.table, 0, actor.me, actor.transcript.seq_out, actor.hash, kind, {}])
    payload = payload[:-1] + reversed_body
    wire = pack([payload, actor.identity.sign(b"p2pcards/envelope/v1\x00" + payload)])
    rejection = receiver.receive(wire)
    assert rejection is not None and rejection.rule == "malformed"
    assert "canonical" in rejection.reason


def test_verify_reads_a_transcript_larger_than_one_message() -> None:
    table = MemoryTable("nullern", 4, 57, [heuristic_bot] * 4)
    table.play(deals=3)  # (a proved deal of 80 cards at four seats: about 100 KiB)
    data = table.sessions[0].export()
    assert len(data) > MAX_MESSAGE
    report = verify(data)
    assert report.problem is not None and "not finished" in report.problem
    assert len(report.deals) == 3 and all(d.signed == [0, 1, 2, 3] for d in report.deals)


def test_a_hand_victim_that_re_mixes_no_cards_is_named_and_the_thief_is_not_stuck() -> None:
    """A Control Nut! HAND victim re-mixes its hand into points that are no cards: the
    thief, unable to open what it took, raises the alarm in its report, and the audit
    names the victim."""
    cheat = 1  # with seed 1, seat 1 is robbed in the first deal
    table = MemoryTable("controlnut", 4, 1, [heuristic_bot] * 4, deck=LOCK_DECK)
    honest_remix = Deck.remix

    def junk(self: Deck, slots: list[int] | tuple[int, ...]) -> Remixed:
        message = honest_remix(self, slots)
        bad = tuple(mul(k + 2, hash_to_point(b"not a card")) for k in range(len(message.deck)))
        self.points[-len(bad):] = list(bad)  # its own books match what it sends
        return replace(message, deck=bad)

    rigged: set[int] = set()
    while table.step() and not table.sessions[0].over:
        deck = table.sessions[cheat].run.deck if table.sessions[cheat].run else None
        if deck is not None and id(deck) not in rigged:
            rigged.add(id(deck))
            deck.remix = junk.__get__(deck)  # type: ignore[method-assign]
        robbed = [r for r in table.sessions[0].finished
                  if any(e.kind == "remix" and e.sender == cheat for e in r.envelopes)]
        if robbed:
            break
    table.deliver()
    assert robbed, "no deal in which the cheat was robbed"
    honest = [s for s in table.sessions if s.me != cheat]
    runs = [next(r for r in s.finished if r.index == robbed[0].index) for s in honest]
    assert {r.verdict for r in runs} == {runs[0].verdict}
    assert runs[0].verdict.startswith(f"seat {cheat} broke the remix")
    assert any(isinstance(e, Alarmed) and "opens to no card" in e.problem for e in honest[0].events)


def _split(table: MemoryTable) -> tuple[Session, Session, list[Session], bytes, bytes]:
    """The seat to move signs two different moves with one sequence number: the next
    seat takes one and answers on it, the others take the other.  (cheat, next seat,
    the others, the two versions)."""
    table.deliver()
    cheat, nxt, _ = roles(table)
    others = [s for s in table.sessions if s not in (cheat, nxt)]
    view = cheat.decision()
    assert view is not None
    legal = view.legal_actions()
    first, second = (envelope(cheat, *move(cheat, view.format_action(code)))
                     for code in legal[:2])
    assert nxt.receive(first) is None  # the next seat gets one version...
    for session in others:
        assert session.receive(second) is None  # ...the others the other
    reply = nxt.decision()
    assert reply is not None
    nxt.act(heuristic_bot(reply.clone(), table.rngs[nxt.me]))
    return cheat, nxt, others, first, second


def test_two_signed_versions_of_one_message_are_proof() -> None:
    """A seat that signs two different moves with one sequence number is caught by any
    seat that sees both; a seat after it in turn, refused for building on the other
    version, is not claimed silent, and no silence is claimed while the proof is."""
    table = MemoryTable("bidwhist", 4, 59, [heuristic_bot] * 4)
    cheat, nxt, others, first, _ = _split(table)
    (answer,) = nxt.take_outbox()
    for session in others:
        rejection = session.receive(answer)
        assert rejection is not None and rejection.rule == "transcript"
        with pytest.raises(ValueError, match="not silent"):
            session.claim_silent()
        proof = session.receive(first)
        assert proof is not None and proof.rule == "equivocation" and proof.evidence
        first_version, second_version = session.transcript.equivocations[cheat.me]
        assert first_version != second_version
        assert session.decision() is None  # it claims the cheat at once, and waits
        assert [open_envelope(w, session.roster.keys).kind
                for w in session.take_outbox()] == ["cheat"]
        with pytest.raises(ValueError, match="proof of equivocation"):
            session.claim_silent(forked=True)
        again = session.receive(first)  # the same proof again is no news
        assert again is not None and not again.evidence


def test_a_proven_equivocation_ends_the_deal_against_the_cheat_at_every_seat() -> None:
    """The seats split by the two versions (one took each) meet again at the point
    where the versions part: the cheat forfeits the deal there at every seat alike,
    the next deal is played, and the transcript verifies."""
    table = MemoryTable("bidwhist", 4, 59, [heuristic_bot] * 4)
    cheat, nxt, others, first, second = _split(table)
    (answer,) = nxt.outbox
    table.deliver()
    nxt.receive(second)  # the relay brings every version to every seat
    for session in others:
        session.receive(first)
    table.deliver()  # and every claim
    hashes = {s.hash for s in table.sessions}
    assert len(hashes) == 1, "the seats did not meet again"
    for session in table.sessions:
        run = session.finished[-1] if session.finished else session.run
        assert run is not None and run.outcome is not None
        assert run.verdict.startswith(f"seat {cheat.me} forfeits the deal: equivocation")
    taken = {env.wire for env in nxt.transcript}
    assert first not in taken and answer not in taken, \
        "the cheat's version and the answer on it were not taken back"
    table.play()  # the game goes on to its end
    assert all(s.over for s in table.sessions)
    assert len({s.hash for s in table.sessions}) == 1
    report = verify(table.sessions[0].export())
    assert report.ok, report


def test_a_proof_of_an_earlier_deal_ends_the_deal_in_progress() -> None:
    """A seat that signs a second version of a message of a deal already played (its
    first ``sign``) is punished in the deal in progress, once: the same proof sent again
    later is no news, and the deal after is played as usual."""
    table = MemoryTable("pasur", 3, 17, [heuristic_bot] * 3)
    table.play(deals=1)
    cheat = table.sessions[1]
    sign = next(env for env in cheat.transcript if env.sender == cheat.me)
    second = envelope(cheat, "sign", {"roster": b"\x01" * 32}, seq=sign.seq, prior=sign.prior,
                      deal=sign.deal)
    for session in table.sessions:
        if session is not cheat:
            rejection = session.receive(second)
            assert rejection is not None and rejection.rule == "equivocation"
    table.deliver()
    deal = len(table.sessions[0].finished)
    for session in table.sessions:
        record = (session.finished[deal - 1] if len(session.finished) == deal
                  else session.run)
        assert record is not None and record.outcome is not None
        assert record.verdict.startswith("seat 1 forfeits the deal: equivocation")
    assert len({s.hash for s in table.sessions}) == 1
    for session in table.sessions:
        if session is not cheat:
            again = session.receive(second)
            assert again is not None and not again.evidence
            assert not session.transcript.equivocations
    table.play()
    assert all(s.over for s in table.sessions)
    assert all("forfeits" not in r.verdict for r in table.sessions[0].finished[deal:])
    report = verify(table.sessions[0].export())
    assert report.ok, report


def test_a_fork_nobody_else_saw_is_claimed_after_the_second_grace_period() -> None:
    """A message on a transcript that exists nowhere (no seat is proven to have signed
    two versions of anything): after the second grace period the seat may be claimed."""
    table = MemoryTable("pasur", 3, 61, [heuristic_bot] * 3)
    table.deliver()
    forker = next(s for s in table.sessions if s.due() is not None and s.due().seat == s.me
                  and s.decision() is not None)
    view = forker.decision()
    assert view is not None
    wire = envelope(forker, *move(forker, view.format_action(view.legal_actions()[0])),
                    prior=b"\x07" * 32)
    others = [s for s in table.sessions if s is not forker]
    for session in others:
        rejection = session.receive(wire)
        assert rejection is not None and rejection.rule == "transcript"
        with pytest.raises(ValueError, match="not silent"):
            session.claim_silent()
        session.claim_silent(forked=True)
    table.deliver()
    assert all(any(isinstance(e, Forfeited) and e.seat == forker.me for e in s.events)
               for s in others)


@pytest.mark.parametrize("weakened", [True, False])
def test_fork_and_fall_silent_cannot_freeze_the_table(weakened: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack: sign a second version of an earlier message, then, when due, send one
    message on an invented transcript and fall silent.  Under the weakened rule (a proof
    is only kept, never claimed) no seat can ever claim the cheat: the table is frozen.
    Under the table's rule the proof ends the deal against the cheat at once."""
    if weakened:
        monkeypatch.setattr(ClaimDesk, "claim_cheats", lambda self: None)
    table = MemoryTable("nullern", 4, 23, [heuristic_bot] * 4)
    table.deliver()
    cheat, _, _ = roles(table)
    honest = [s for s in table.sessions if s is not cheat]
    sign = next(env for env in cheat.transcript if env.sender == cheat.me)
    second = envelope(cheat, "sign", {"roster": b"\x02" * 32}, seq=sign.seq, prior=sign.prior,
                      deal=sign.deal)
    view = cheat.decision()
    assert view is not None
    fork = envelope(cheat, *move(cheat, view.format_action(view.legal_actions()[0])),
                    prior=b"\x07" * 32)
    for session in honest:
        session.receive(second)
        session.receive(fork)
    table.deliver()
    if weakened:
        for session in honest:
            with pytest.raises(ValueError):
                session.claim_silent(forked=True)
        table.deliver()
        assert all(s.due() is not None and s.due().seat == cheat.me for s in honest)
        assert not any(isinstance(e, Forfeited) for s in honest for e in s.events)
        return
    for session in honest:
        assert any(isinstance(e, Forfeited) and e.seat == cheat.me and "equivocation" in e.verdict
                   for e in session.events)
    assert len({s.hash for s in table.sessions}) == 1
