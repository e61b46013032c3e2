"""Shuffle ahead at a proved table whose roster names ``proved-ahead`` (docs/protocol.md,
"Shuffle ahead"): the next deal's deck is keyed and shuffled on this deal's moves, each
step checked by every seat (a shuffle's proof in idle time) before any card of it
opens; the next deal then begins with only its shares left to send.  A move that
carries the wrong step is refused, a step that does not hold is a proven cheat, a
proof found false later is judged when the next deal begins, and every change of the
table (a forfeit, seats changing hands, the game's end) discards the prepared deck by
the rule every seat applies alike."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.cli.main import main
from p2pcards.games.core import SPECTATOR
from p2pcards.protocol.constants import OBSERVER
from p2pcards.protocol.errors import RemoteProtocolError
from p2pcards.protocol.proved.deck import KEY, SHUFFLE, ProvedDeck
from p2pcards.protocol.proved.messages import KeyShare, Remix, Shuffle
from p2pcards.protocol.steps import DeckContext
from p2pcards.table import kinds
from p2pcards.table.codec import CodecError, Envelope, read_envelope
from p2pcards.table.decks import ACTS
from p2pcards.table.explain import explain
from p2pcards.table.kinds import Kind, ProvedAct, ProvedMove, clip, decode_body
from p2pcards.table.memory import MemoryTable
from p2pcards.table.phases import ahead
from p2pcards.table.phases.machine import PhaseMachine
from p2pcards.table.roster import AHEAD_DECK
from p2pcards.table.seats import SeatChanges
from p2pcards.table.session import Session
from p2pcards.table.verify import verify
from tests.table_helpers import envelope
from tests.test_proved_verdicts import matches
from tests.test_table_pipeline import Sent, watched
from tests.test_table_silence import history


def kinds_of(session: Session, deal: int) -> Counter[str]:
    return Counter(env.kind for env in session.transcript if env.deal == deal)


def carried(session: Session, deal: int) -> list[tuple[int, KeyShare | Shuffle]]:
    """The steps of deal ``deal + 1``'s deck that deal ``deal``'s moves carried."""
    out = []
    for env in session.transcript:
        if env.deal == deal and env.kind == Kind.PROVED_MOVE:
            message = decode_body(env.kind, env.body, env.sender)
            assert isinstance(message, ProvedMove)
            if message.ahead is not None:
                out.append((env.sender, message.ahead))
    return out


def table_of(game: str, players: int, seed: object, sent: list[Sent] | None = None
             ) -> MemoryTable:
    holder: list[MemoryTable] = []
    table = MemoryTable(game, players, seed, [heuristic_bot] * players, deck=AHEAD_DECK,
                        tamper=None if sent is None else watched(holder, sent))
    holder.append(table)
    return table


def test_the_next_deal_is_shuffled_on_the_moves_and_begins_with_its_shares() -> None:
    sent: list[Sent] = []
    table = table_of("bidwhist", 4, 5, sent)
    table.play(deals=2)
    seat = table.sessions[0]
    assert len(seat.finished) >= 2
    first, second = kinds_of(seat, 0), kinds_of(seat, 1)
    assert first[Kind.PROVED_KEY] == 4 and first[Kind.PROVED_SHUFFLE] == 4  # (as today)
    steps = carried(seat, 0)  # every key share and shuffle of deal 1 came on a move
    assert sorted(s for s, m in steps if isinstance(m, KeyShare)) == [0, 1, 2, 3]
    shuffles = [s for s, m in steps if isinstance(m, Shuffle)]
    assert shuffles == [1, 2, 3, 0]  # round 0 of deal 1 starts at seat 1
    assert second[Kind.PROVED_KEY] == 0 and second[Kind.PROVED_SHUFFLE] == 0
    assert first[Kind.PROVED_ACT] == second[Kind.PROVED_ACT] == 0  # (pmove in its place)
    # deal 1 opens from that deck: its first message is the shares (no hello: the
    # proved deck seals nothing)
    deal1 = [env.kind for env in seat.transcript if env.deal == 1]
    assert deal1[:4] == [Kind.PROVED_SHARES] * 4
    assert Kind.HELLO not in first and Kind.HELLO not in second
    assert {run.verdict for s in table.sessions for run in s.finished} == {"ok"}
    assert len({s.hash for s in table.sessions}) == 1
    report = verify(seat.export())  # (the watching session follows the same rule)
    assert [d.verdict for d in report.deals] == ["ok"] * len(seat.finished)
    assert report.history is not None and report.history.dumps() == \
        history(seat).dumps()
    assert "came on the moves of the deal before" in explain(report)
    # no seat's share left while it held a proof of its deal's deck unchecked (the hook
    # asserts it as each pshares and each move leaves), deal 1's taken from the moves
    # of deal 0 included: every seat's first message of deal 1 is its shares
    every = Counter(env.kind for env in seat.transcript)
    for kind in (Kind.PROVED_MOVE, Kind.PROVED_SHARES):
        assert [k for _, k, _ in sent].count(kind) == every[kind] > 0


def test_steps_no_move_carried_are_due_at_the_boundary() -> None:
    """Nullern's first round deals one card each: seven seats make 7 bids and 7 cards
    of moves, fewer than the 14 steps of the next deck; what the moves did not carry is
    due as ``pkey`` and ``pshuffle`` when the next deal begins, in turn."""
    table = table_of("nullern", 7, 3)
    table.play(deals=2)
    seat = table.sessions[0]
    steps = carried(seat, 0)
    keys = sum(isinstance(m, KeyShare) for _, m in steps)
    shuffles = sum(isinstance(m, Shuffle) for _, m in steps)
    assert keys + shuffles < 14  # (the test needs some left for the boundary)
    second = kinds_of(seat, 1)
    assert second[Kind.PROVED_KEY] == 7 - keys
    assert second[Kind.PROVED_SHUFFLE] - shuffles_after_round_0(seat, 1) == 7 - shuffles
    assert seat.finished[1].verdict == "ok"
    assert [d.verdict for d in verify(seat.export()).deals][:2] == ["ok", "ok"]


def shuffles_after_round_0(session: Session, deal: int) -> int:
    count = 0
    for env in session.transcript:
        if env.deal == deal and env.kind == Kind.PROVED_SHUFFLE:
            message = decode_body(env.kind, env.body, env.sender)
            assert isinstance(message, Shuffle)
            count += message.round > 0
    return count


def test_idle_precomputation_changes_no_byte() -> None:
    """Whether a seat makes its step of the next deck and checks the others' in idle
    time or not at all until due, it sends the same bytes: its secrets of that deck
    come from a stream of their own, drawn in the same order."""
    busy = table_of("pasur", 3, 11)
    busy.play(deals=2)
    lazy = table_of("pasur", 3, 11)
    lazy._idle = lazy._collect  # type: ignore[method-assign]
    lazy.play(deals=2)
    assert [env.wire for env in busy.sessions[0].transcript] == \
        [env.wire for env in lazy.sessions[0].transcript]
    assert carried(busy.sessions[0], 0)


# ================================================================ cheats


def forge_ahead(monkeypatch: pytest.MonkeyPatch, cheat: int, change: Callable[[Any], Any],
                what: str) -> None:
    """Seat ``cheat``'s first step ``what`` (KEY or SHUFFLE) of the next deck, carried on
    a move, is changed once; its own deck takes the changed step (so that it goes on as
    if it were honest, as a cheat would)."""
    honest = ahead.attach
    done: list[bool] = []

    def attach(m: PhaseMachine, move: ProvedAct) -> ProvedMove:
        deck = m.ahead
        if m.me != cheat or done or deck is None or ahead.due(m, m.me) != what:
            return honest(m, move)
        done.append(True)
        return ProvedMove(party=move.party, action=move.action, shown=move.shown,
                          slots=move.slots, shares=move.shares, ahead=deck.step(change))
    monkeypatch.setattr(ahead, "attach", attach)


def swap_two(message: Shuffle) -> Shuffle:
    deck = list(message.deck)
    deck[0], deck[1] = deck[1], deck[0]
    return dataclasses.replace(message, deck=tuple(deck))


def bad_key(message: KeyShare) -> KeyShare:
    proof = dataclasses.replace(message.proof, s=(message.proof.s + 1))
    return dataclasses.replace(message, proof=proof)


def first_refusal(session: Session, deal: int) -> tuple[int, str]:
    """What an observer's deck, taking each step of deal ``deal + 1`` carried on deal
    ``deal``'s moves with every proof checked at once, refuses first."""
    run = session.finished[0]
    context = DeckContext(session.table, deal + 1, session.roster.players, run.deck.context.size)
    deck = ProvedDeck(context, OBSERVER)
    for _, step in carried(session, deal):
        try:
            deck.receive(step)
        except RemoteProtocolError as error:
            assert error.party is not None
            return error.party, f"{error.step}: {error.reason}"
    raise AssertionError("no step was refused")


def test_a_bad_shuffle_proof_carried_is_judged_when_the_next_deal_begins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cheat = 2
    forge_ahead(monkeypatch, cheat, swap_two, SHUFFLE)
    table = table_of("bidwhist", 4, 5)
    table.play(deals=2)
    honest = [s for s in table.sessions if s.me != cheat]
    seat, reason = first_refusal(honest[0], 0)
    assert seat == cheat and reason.startswith("shuffle: its shuffle proof: t")
    verdict = clip(f"seat {cheat} forfeits the deal: refused step (its pmove refused:"
                   f" ahead {reason})")
    assert matches(verdict)  # (a template of docs/protocol.md, word for word)
    for session in honest:
        assert session.finished[0].verdict == "ok"  # the deal it was carried in stands
        second = session.finished[1]
        assert second.verdict == verdict
        # judged before any message of deal 1: no share of that deck ever left
        assert [env.kind for env in second.envelopes] == [Kind.AGREE] * 3
    assert len({s.hash for s in honest}) == 1
    report = verify(honest[0].export())
    assert [d.verdict for d in report.deals][:2] == ["ok", verdict]


def test_a_bad_key_proof_carried_is_a_proven_cheat_at_once_and_discards_the_deck(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cheat = 1
    forge_ahead(monkeypatch, cheat, bad_key, KEY)
    table = table_of("bidwhist", 4, 5)
    table.play(deals=2)  # (the cheat, which took its own step, is left behind)
    honest = [s for s in table.sessions if s.me != cheat]
    seat, reason = first_refusal(honest[0], 0)
    assert seat == cheat and reason.startswith("key: its proof of knowledge does not hold")
    verdict = clip(f"seat {cheat} forfeits the deal: refused step (its pmove refused:"
                   f" ahead {reason})")
    assert matches(verdict)
    for session in honest:
        first = session.finished[0]
        assert first.verdict == verdict
        assert first.envelopes[-4].kind == Kind.PROVED_MOVE  # the move is the proof
        assert first.envelopes[-4].sender == cheat
    # the prepared deck was discarded: deal 1 keys and shuffles in full
    for session in honest:
        run = session.run
        assert run is not None and run.index == 1 and run.deck.carried == 0
        assert run.deck.expected() == (KEY, 1)  # (round 0 of deal 1: seat 1 first)
    report = verify(honest[0].export())
    assert report.deals[0].verdict == verdict


# ================================================================ refused moves


def move_due(table: MemoryTable, want: str | None) -> tuple[Session, ProvedMove]:
    """Play until a seat's move is due whose step of the next deck is ``want``; that
    seat and its honest move without the step (a bid: no card shown)."""
    for _ in range(400):
        table.deliver()
        step = table.sessions[0].due()
        assert step is not None
        if step.kind in ACTS:
            mover = table.sessions[step.seat]
            view = mover.decision()
            if ahead.due(mover.machine, mover.me) == want and view is not None:
                code = heuristic_bot(view.clone(), table.rngs[mover.me])
                if not view.shown_cards(code) and not view.face_down(code):
                    return mover, ProvedMove(party=mover.me, action=view.format_action(
                        code, seat=SPECTATOR))
        assert table.step()
    raise AssertionError(f"no move with {want} due")


def step_of(session: Session, kind: Kind, sender: int) -> Any:
    """The first ``kind`` message of ``sender`` in the transcript (deal 0's own)."""
    env = next(e for e in session.transcript if e.kind == kind and e.sender == sender)
    return decode_body(env.kind, env.body, env.sender)


def refused(receiver: Session, wire: bytes) -> tuple[str, str]:
    before = (len(receiver.transcript), receiver.hash)
    rejection = receiver.receive(wire)
    assert rejection is not None
    assert (len(receiver.transcript), receiver.hash) == before  # nothing changed
    return rejection.rule, rejection.reason


@pytest.mark.parametrize(("want", "carry", "reason"), [
    (KEY, None, "a move of seat {s} must carry its key share for deal 1"),
    (KEY, "shuffle", "a move of seat {s} must carry its key share for deal 1"),
    (None, "key", "a move of seat {s} carries a step for deal 1 that is not due from it"),
])
def test_a_move_without_the_step_due_or_with_one_not_due_is_refused(
        want: str | None, carry: str | None, reason: str) -> None:
    table = table_of("bidwhist", 4, 5)
    mover, honest = move_due(table, want)
    step = None if carry is None else step_of(
        mover, Kind.PROVED_SHUFFLE if carry == "shuffle" else Kind.PROVED_KEY, mover.me)
    message = dataclasses.replace(honest, ahead=step)
    wire = envelope(mover, Kind.PROVED_MOVE, kinds.encode_body(message)[1])
    receiver = table.sessions[(mover.me + 1) % 4]
    assert refused(receiver, wire) == ("ahead", reason.format(s=mover.me))


def test_a_step_in_another_name_or_of_another_class_is_malformed() -> None:
    table = table_of("bidwhist", 4, 5)
    mover, honest = move_due(table, KEY)
    receiver = table.sessions[(mover.me + 1) % 4]
    other = step_of(mover, Kind.PROVED_KEY, receiver.me)
    body = kinds.encode_body(honest)[1] | {"ahead": other.encode()}
    assert refused(receiver, envelope(mover, Kind.PROVED_MOVE, body)) == (
        "malformed", f"pmove.ahead: in seat {receiver.me}'s name, signed by seat {mover.me}")
    remix = next((decode_body(e.kind, e.body, e.sender) for e in mover.transcript
                  if e.kind == Kind.PROVED_REMIX), None)
    if remix is not None:
        assert isinstance(remix, Remix)
        forged = envelope(table.sessions[remix.party], Kind.PROVED_MOVE,
                          kinds.encode_body(honest)[1] | {"ahead": remix.encode()})
        rule, why = refused(receiver, forged)
        assert rule == "malformed" and "a Remix message, not KeyShare or Shuffle" in why
    # a pact where a pmove is due is out of turn
    pact = envelope(mover, Kind.PROVED_ACT, {k: v for k, v in
                                             kinds.encode_body(honest)[1].items()
                                             if k != "ahead"})
    assert refused(receiver, pact)[0] == "turn"


# ================================================================ discard or complete


def test_a_forfeit_discards_the_prepared_deck_at_every_seat() -> None:
    """A seat claimed silent mid-deal: the deal is scored, and the next deal keys and
    shuffles in full at every seat (claims may have taken moves back at some)."""
    table = table_of("bidwhist", 4, 8)
    for _ in range(12):
        table.step()
    table.deliver()
    step = table.sessions[0].due()
    assert step is not None and step.kind in ACTS
    assert carried(table.sessions[0], 0)  # steps were carried before the forfeit
    for session in table.sessions:
        if session.me != step.seat:
            session.claim_silent()
    table.deliver()
    for session in table.sessions:  # (deal 1 began: the deck prepared is deal 2's)
        prepared = session.machine.ahead
        assert session.machine.deals == 1 and prepared is not None
        assert prepared.context.deal == 2
    table.play(deals=2)
    seat = table.sessions[0]
    assert seat.finished[0].verdict == f"seat {step.seat} forfeits the deal: silent"
    second = kinds_of(seat, 1)
    assert second[Kind.PROVED_KEY] == 4 and second[Kind.PROVED_SHUFFLE] >= 4
    assert seat.finished[1].verdict == "ok"
    assert len({s.hash for s in table.sessions}) == 1


def test_the_game_over_drops_the_prepared_deck() -> None:
    table = table_of("controlnut", 4, 61)
    table.play()
    assert all(s.over and s.machine.ahead is None for s in table.sessions)
    last = table.sessions[0].finished[-1].index
    assert carried(table.sessions[0], last)  # its steps were carried, never used


def test_a_watcher_follows_the_rule_without_secrets() -> None:
    table = table_of("pasur", 2, 4)
    table.play(deals=2)
    report = verify(table.sessions[1].export())
    assert [d.verdict for d in report.deals][:2] == ["ok", "ok"]
    wires = [env.wire for env in table.sessions[1].transcript]
    envs: list[Envelope] = [read_envelope(w, 2) for w in wires]
    assert sum(e.kind == Kind.PROVED_MOVE for e in envs) > 0


# ================================================================ stored transcripts

AHEAD_GAME = Path(__file__).parent / "data" / "proved_ahead_pasur_game.bin"
"""Seat 0's transcript of a whole game of Pasur at two seats (seed 5) of the proved deck
with its shuffle-ahead rule (``proved-ahead``), as the build of link protocol version 6
recorded it (``p2pcards table pasur --players 2 --seed 5 --transcript FILE``): its
second deal void by the rules (jacks in the opening pool), the deck prepared during it
kept for the third; a later rule of the deck must leave it verifying as it does."""
AHEAD_REPORT = """\
Pasur at table 4c9583dafd3923d5df10cf8386319365: seat0 (seat 0), seat1 (seat 1)
safety number 83714 93342 21468 44617; 402 messages
deal 1 (dealer seat0): ok; points 6 14; every seat signed it
deal 2 (dealer seat1): void: jacks in the opening pool; points 0 0; every seat signed it
deal 3 (dealer seat1): ok; points 13 7; every seat signed it
deal 4 (dealer seat0): ok; points 7 18; every seat signed it
deal 5 (dealer seat1): ok; points 18 7; every seat signed it
deal 6 (dealer seat0): ok; points 2 23; every seat signed it
totals 46 69; winner: seat1
verified
"""
AHEAD_HISTORY = "9a76a95d15e38ed7206db1d32571f125e77f5baad680c0fd161df6da615e5f73"
"""The SHA-256 of the hand history ``verify --history`` wrote of it."""
AHEAD_CHEAT = Path(__file__).parent / "data" / "proved_ahead_cheat.bin"
"""Seat 0's transcript of Pasur at three seats (seed 5, ``MemoryTable`` with
``forge_ahead(monkeypatch, 1, swap_two, SHUFFLE)``, ``play(deals=2)``, ``export()``):
seat 1's shuffle of the second deal's deck, carried on a move of the first, has a
proof that does not hold; the first deal stands, and seat 1 forfeits the second at its
beginning (the transcript stops where the cheat, which never checked its own proof,
is left behind)."""
AHEAD_CHEAT_REPORT = """\
Pasur at table 4c9583dafd3923d5df10cf8386319365: seat0 (seat 0), seat1 (seat 1), seat2 (seat 2)
safety number 11288 85725 89351 59739; 94 messages
deal 1 (dealer seat0): ok; points 6 11 3; every seat signed it
deal 2 (dealer seat1): seat1 forfeits the deal: refused step (its pmove refused: ahead\
 shuffle: its shuffle proof: t1 does not hold); points 0 0 0; signed by seat0, seat2\
 (all that were to)
REFUSED: the transcript stops with pkey from seat 1 due: the game is not finished
totals 6 11 3; the game is not over
NOT verified
"""


def test_a_whole_game_shuffled_ahead_verifies_as_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "history.json"
    assert main(["verify", str(AHEAD_GAME), "--history", str(history)]) == 0
    assert capsys.readouterr().out == AHEAD_REPORT
    assert hashlib.sha256(history.read_bytes()).hexdigest() == AHEAD_HISTORY
    report = verify(AHEAD_GAME.read_bytes())
    assert report.roster.deck == AHEAD_DECK
    # deal 2 was void before any move: the deck prepared during it, kept, carried
    # nothing, and deal 3 keyed it in full; every other deal after the first began
    # with its deck carried on the moves before it
    runs = report.runs  # (carried: 2 key shares and 2 shuffles)
    assert [run.deck.carried for run in runs] == [0, 4, 0, 4, 4, 4]
    assert sum(env.kind == Kind.PROVED_KEY for env in runs[2].envelopes) == 2
    assert not any(env.kind == Kind.PROVED_KEY for run in runs[3:] for env in run.envelopes)


def test_a_stored_cheat_of_a_step_carried_verifies_as_recorded(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(AHEAD_CHEAT)]) == 1
    assert capsys.readouterr().out == AHEAD_CHEAT_REPORT


def test_a_seat_message_comes_first_and_a_proof_carried_is_judged_after_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A table where a ``seat`` message is due at every boundary (as with a stand-in in a
    seat): the runner sends it, changing nothing, before the deal's deck is taken, and
    a carried shuffle whose proof is false is judged at the end of the next deal's round
    0, after it, at every honest seat alike (not at the runner first, while the others
    wait for its ``seat``)."""
    monkeypatch.setattr(SeatChanges, "due", lambda self, roster: True)
    cheat = 3
    forge_ahead(monkeypatch, cheat, swap_two, SHUFFLE)
    table = table_of("nullern", 7, 3)
    table.play(deals=2)
    honest = [s for s in table.sessions if s.me != cheat]
    assert len({s.hash for s in honest}) == 1  # (the cheat alone is left behind)
    assert {d.at for d in table.rejected} <= {cheat}
    steps = carried(honest[0], 0)
    assert any(s == cheat and isinstance(m, Shuffle) for s, m in steps)
    assert sum(isinstance(m, Shuffle) for _, m in steps) < 7  # (round 0 left to deal 1)
    second = honest[0].finished[1]
    kinds = [env.kind for env in honest[0].transcript if env.deal == 1]
    assert kinds[:2] == [Kind.SEAT, Kind.PROVED_SHUFFLE]  # (it changed nothing: no signs)
    assert Kind.PROVED_SHARES not in kinds
    assert second.verdict.startswith(f"seat {cheat} forfeits the deal: refused step (its"
                                     " pmove refused: ahead shuffle: its shuffle proof: t")
    assert verify(honest[0].export()).deals[1].verdict == second.verdict


def test_a_step_of_another_round_is_malformed() -> None:
    """A shuffle carried on a move is one of round 0, naming no slots (the prepared deck
    has no other round): anything else does not decode."""
    table = table_of("bidwhist", 4, 5)
    mover, honest = move_due(table, KEY)
    shuffle = step_of(mover, Kind.PROVED_SHUFFLE, mover.me)
    for changed in (dataclasses.replace(shuffle, round=1),
                    dataclasses.replace(shuffle, slots=(0, 1))):
        body = kinds.encode_body(honest)[1] | {"ahead": changed.encode()}
        with pytest.raises(CodecError, match=r"^ahead: a shuffle of round 0 \(the card"
                                             r" points\) only$"):
            decode_body(Kind.PROVED_MOVE, body, mover.me)
