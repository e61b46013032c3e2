"""Shares on the agreement at a proved table whose roster names ``proved-ahead-2``
(docs/protocol.md, "Shares on the agreement"): the next deal's deck is shuffled on this
deal's moves as under ``proved-ahead``, and each signer of this deal's result but the
first carries its shares of the next deal's cards on its ``pagree``; the next hand then
waits for one message, the first signer's ``pshares``, and no ``opened`` report is due.
No seat can open a card of its next deal before every signature is in; an agreement
that lacks the shares due, carries some not due or a proof that does not hold is
refused, changing nothing."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from pathlib import Path

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.cli.main import main
from p2pcards.table import kinds
from p2pcards.table.codec import read_envelope
from p2pcards.table.explain import explain
from p2pcards.table.kinds import Kind, ProvedAgree, ProvedShares, decode_body
from p2pcards.table.memory import MemoryTable
from p2pcards.table.phases import ahead
from p2pcards.table.roster import AGREED_DECK, AHEAD_DECK
from p2pcards.table.session import Session
from p2pcards.table.state import EVERYONE, Phase
from p2pcards.table.verify import verify
from tests.table_helpers import envelope
from tests.test_table_silence import history


def table_of(game: str, players: int, seed: object, deck: str = AGREED_DECK,
             drop: tuple[int, Kind] | None = None) -> MemoryTable:
    """A table of heuristic bots; ``drop``: (seat, kind) of the first message of that kind
    from that seat, never delivered (kept in :attr:`dropped`)."""
    holder: list[MemoryTable] = []

    def tamper(sender: int, wire: bytes) -> list[bytes]:
        table = holder[0]
        for session in table.sessions:  # (the rule's promise, checked as each message leaves)
            prepared = session.machine.ahead
            if prepared is not None:
                assert not any(prepared.can_open(slot) for slot in range(len(prepared.points)))
        if drop is not None and not dropped and (sender, read_envelope(
                wire, table.players).kind) == drop:
            dropped.append(wire)
            return []
        return [wire]

    dropped: list[bytes] = []
    table = MemoryTable(game, players, seed, [heuristic_bot] * players, deck=deck,
                        tamper=tamper)
    holder.append(table)
    table.dropped = dropped  # type: ignore[attr-defined]
    return table


def agreement(session: Session, deal: int) -> dict[int, ProvedShares | None]:
    """Signer -> the shares its ``pagree`` of ``deal`` carried."""
    out = {}
    for env in session.transcript:
        if env.deal == deal and env.kind == Kind.PROVED_AGREE:
            message = decode_body(env.kind, env.body, env.sender)
            assert isinstance(message, ProvedAgree)
            out[env.sender] = message.shares
    return out


def grants(step: object) -> list[tuple[int | None, tuple[int, ...]]]:
    return [(None if r is EVERYONE else r, slots) for r, slots in step.grants]  # type: ignore[attr-defined]


def test_each_signer_but_the_first_carries_its_shares_and_the_next_hand_waits_for_one(
) -> None:
    table = table_of("bidwhist", 4, 5)
    table.play(deals=2)
    seat = table.sessions[0]
    carried = agreement(seat, 0)
    assert carried[0] is None and all(carried[s] is not None for s in (1, 2, 3))
    # deal 1 begins with the first signer's shares alone, then its first move: no key
    # share, no shuffle (carried on the moves), no report
    deal1 = [(env.kind, env.sender) for env in seat.transcript if env.deal == 1]
    assert deal1[0] == (Kind.PROVED_SHARES, 0) and deal1[1][0] == Kind.PROVED_MOVE
    every = Counter(env.kind for env in seat.transcript)
    assert every[Kind.OPENED] == every[Kind.AGREE] == 0 and every[Kind.PROVED_AGREE] >= 8
    for sender in (1, 2, 3):  # each carried what its deal step of deal 1 grants
        shares = carried[sender]
        assert shares is not None
        step = next(s for s in seat.finished[1].ledger.deal_steps() if s.seat == sender
                    and s.kind == Kind.PROVED_SHARES)
        assert [(s.to, s.slots) for s in shares.shares] == grants(step)
    assert not seat.machine.early  # (settled when the deal began)
    # the same game as under proved-ahead, card for card and move for move: only the
    # messages that carry the shares differ
    old = table_of("bidwhist", 4, 5, deck=AHEAD_DECK)
    old.play(deals=2)
    for new_run, old_run in zip(seat.finished, old.sessions[0].finished, strict=True):
        assert new_run.acts == old_run.acts and new_run.points == old_run.points
        assert new_run.outcome is not None and old_run.outcome is not None
        assert new_run.outcome.record.deck == old_run.outcome.record.deck
    assert {run.verdict for s in table.sessions for run in s.finished} == {"ok"}
    assert len({s.hash for s in table.sessions}) == 1 and not table.rejected
    report = verify(seat.export())
    assert [d.verdict for d in report.deals] == ["ok"] * len(seat.finished)
    assert report.history is not None and report.history.dumps() == history(seat).dumps()


@pytest.mark.parametrize(("game", "players", "seed"), [
    ("pasur", 3, 11), ("nullern", 4, 2), ("controlnut", 4, 61)])
def test_every_game_plays_without_reports_and_no_hand_opens_before_the_agreement(
        game: str, players: int, seed: int) -> None:
    """Whole games of the other three (the hook checks, as each message leaves, that no
    seat can open a card of a prepared deck); Pasur's refills, Nullern's short rounds
    (whose decks the moves cannot carry whole: their boundaries key and shuffle in
    full, no shares on the agreement) and Control Nut!'s steals go on with no
    ``opened``."""
    table = table_of(game, players, seed)
    table.play()
    seat = table.sessions[0]
    assert seat.over and not table.rejected and len({s.hash for s in table.sessions}) == 1
    every = Counter(env.kind for env in seat.transcript)
    assert every[Kind.OPENED] == 0
    boundaries = [agreement(seat, run.index) for run in seat.finished[:-1]]
    with_shares = [a for a in boundaries if any(v is not None for v in a.values())]
    assert with_shares  # (some boundary sent them)
    for signed in with_shares:
        assert signed[0] is None and all(signed[s] is not None for s in range(1, players))
    assert all(v is None for v in agreement(seat, seat.finished[-1].index).values())
    assert all(s.machine.ahead is None for s in table.sessions)  # (dropped at the end)
    report = verify(seat.export())
    assert report.history is not None and report.history.dumps() == history(seat).dumps()


def held(table: MemoryTable, seat: int) -> tuple[MemoryTable, Session, bytes]:
    """The table with ``seat``'s ``pagree`` of deal 0 held back from every other seat:
    (the table, the next seat, which now waits for it, the honest message)."""
    (wire,) = table.dropped  # type: ignore[attr-defined]
    receiver = table.sessions[(seat + 1) % table.players]
    assert receiver.due() is not None and receiver.due().seat == seat  # type: ignore[union-attr]
    return table, receiver, wire


def refused(receiver: Session, wire: bytes) -> tuple[str, str]:
    before = (len(receiver.transcript), receiver.hash)
    rejection = receiver.receive(wire)
    assert rejection is not None
    assert (len(receiver.transcript), receiver.hash) == before  # nothing changed
    return rejection.rule, rejection.reason


def forged(sender: Session, honest: bytes, shares: ProvedShares | None) -> bytes:
    env = read_envelope(honest, len(sender.roster.seats))
    message = decode_body(env.kind, env.body, env.sender)
    assert isinstance(message, ProvedAgree)
    body = kinds.encode_body(dataclasses.replace(message, shares=shares))[1]
    return envelope(sender, Kind.PROVED_AGREE, body, seq=env.seq, prior=env.prior, deal=env.deal)


def test_an_agreement_without_the_shares_due_or_with_a_bad_one_is_refused() -> None:
    table = table_of("bidwhist", 4, 5, drop=(2, Kind.PROVED_AGREE))
    table.play(deals=1)
    table, receiver, honest = held(table, 2)
    sender = table.sessions[2]
    env = read_envelope(honest, 4)
    shares = decode_body(env.kind, env.body, env.sender).shares  # type: ignore[union-attr]
    assert shares is not None
    assert refused(receiver, forged(sender, honest, None)) == (
        "ahead", "the agreement of seat 2 must carry its shares for deal 1")
    first, *rest = shares.shares
    swapped = dataclasses.replace(first, proofs=(first.proofs[1], first.proofs[0],
                                                 *first.proofs[2:]))
    bad = ProvedShares(party=2, shares=(swapped, *rest))
    rule, reason = refused(receiver, forged(sender, honest, bad))
    assert rule == "ahead" and reason.startswith(
        f"ahead share: slot {first.slots[0]}: its proof does not hold (")
    fewer = ProvedShares(party=2, shares=tuple(rest))
    rule, reason = refused(receiver, forged(sender, honest, fewer))
    assert rule == "ahead" and reason.startswith("shares of [") and "not of deal 1's grants" \
        in reason
    assert receiver.receive(honest) is None  # the honest one is taken after all that


def test_the_first_signer_s_agreement_carries_none() -> None:
    table = table_of("pasur", 3, 11, drop=(0, Kind.PROVED_AGREE))
    table.play(deals=1)
    table, receiver, honest = held(table, 0)
    sender = table.sessions[0]
    m = sender.machine
    step = ahead.first_step(m, 0)
    assert step is not None and m.ahead is not None
    extra = m.ahead.shares_for(step)
    assert refused(receiver, forged(sender, honest, extra)) == (
        "ahead", "the agreement of seat 0 carries shares for deal 1 that are not due from it")
    assert receiver.receive(honest) is None


def test_a_signer_silent_at_the_agreement_has_the_next_deal_shuffled_in_full() -> None:
    """Seat 2's signature never comes: the others claim it silent, the result stands
    without it, the prepared deck (of which seat 1 had sent its shares) is discarded at
    every seat and the next deal keys and shuffles in full, with every report-free
    step of a first deal."""
    table = table_of("bidwhist", 4, 8, drop=(2, Kind.PROVED_AGREE))
    table.play(deals=1)
    table.deliver()
    for session in table.sessions:
        if session.me != 2:
            assert session.machine.phase == Phase.AGREE
            session.claim_silent()
    table.deliver()
    for session in (table.sessions[0], table.sessions[1], table.sessions[3]):
        assert session.machine.deals == 1
    table.play(deals=2)
    seat = table.sessions[0]
    assert seat.finished[0].verdict == "ok" and seat.finished[1].verdict == "ok"
    assert agreement(seat, 0)[1] is not None and 2 not in agreement(seat, 0)
    second = Counter(env.kind for env in seat.transcript if env.deal == 1)
    assert second[Kind.PROVED_KEY] == 4 and second[Kind.PROVED_SHUFFLE] == 4
    deal1 = [env.kind for env in seat.transcript if env.deal == 1]
    before_play = deal1[:deal1.index(Kind.PROVED_MOVE)]
    assert before_play.count(Kind.PROVED_SHARES) == 4 and second[Kind.OPENED] == 0
    assert seat.finished[1].deck.carried == 0
    assert len({table.sessions[s].hash for s in (0, 1, 3)}) == 1


# ================================================================ stored transcript

AGREED_GAME = Path(__file__).parent / "data" / "proved_ahead2_pasur_game.bin"
"""Seat 0's transcript of a whole game of Pasur at two seats (seed 5) of the proved deck
with the next deal's shares sent on the agreement (``proved-ahead-2``), as the build of
link protocol version 7 recorded it (``p2pcards table pasur --players 2 --seed 5
--transcript FILE``): the decks of ``proved_ahead_pasur_game.bin`` card for card, its
second deal void by the rules before any move (the deck prepared during it, kept,
carried nothing: the third keys and shuffles in full, and its agreement carries no
shares); a later rule of the deck must leave it verifying as it does."""
AGREED_REPORT = """\
Pasur at table 4c9583dafd3923d5df10cf8386319365: seat0 (seat 0), seat1 (seat 1)
safety number 01619 10775 94411 96944; 336 messages
deal 1 (dealer seat0): ok; points 6 14; every seat signed it
deal 2 (dealer seat1): void: jacks in the opening pool; points 0 0; every seat signed it
deal 3 (dealer seat1): ok; points 4 16; every seat signed it
deal 4 (dealer seat0): ok; points 12 18; every seat signed it
deal 5 (dealer seat1): ok; points 18 7; every seat signed it
deal 6 (dealer seat0): ok; points 2 23; every seat signed it
totals 42 78; winner: seat1
verified
"""
AGREED_HISTORY = "745c2a5d108a84922bffdcfcecc80dbb029cd81ef29266728465d929d0019c09"
"""The SHA-256 of the hand history ``verify --history`` wrote of it."""


def test_a_whole_game_with_shares_on_the_agreement_verifies_as_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    written = tmp_path / "history.json"
    assert main(["verify", str(AGREED_GAME), "--history", str(written)]) == 0
    assert capsys.readouterr().out == AGREED_REPORT
    assert hashlib.sha256(written.read_bytes()).hexdigest() == AGREED_HISTORY
    report = verify(AGREED_GAME.read_bytes())
    assert report.roster.deck == AGREED_DECK
    kinds_in = Counter(env.kind for run in report.runs for env in run.envelopes)
    assert kinds_in[Kind.OPENED] == 0 and kinds_in[Kind.PROVED_AGREE] > 0
    told = explain(report)  # (--explain counts the pagrees and says which carried shares)
    assert "agreement: signed by seat0, seat1 (2 pagree messages; to sign: every seat)" in told
    assert "1 of them carrying the signer's shares of the next deal's cards" in told
