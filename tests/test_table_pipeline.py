"""Pipelined shuffles at a proved table whose roster names ``proved-pipelined``
(docs/protocol.md, "Pipelined shuffles"): a seat takes another seat's shuffle with its
proof unchecked, shuffles and sends first, checks the proofs when it is idle, and never
lets a share leave before every proof is checked; a proof refused late gives the
verdict a check on arrival gives, at every seat, in ``p2pcards verify``, and after a
peer's restart from its journal.  A roster naming plain ``proved`` keeps the rule of
link protocol version 4: every shuffle proof checked on arrival, the verdict at the bad
shuffle, and a transcript recorded by that build verifies as it did."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.cli.main import main
from p2pcards.net.journal import Journal
from p2pcards.net.peer import Peer
from p2pcards.protocol.constants import OBSERVER
from p2pcards.protocol.errors import RemoteProtocolError
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.table.codec import open_envelope, read_envelope, unpack
from p2pcards.table.events import Forfeited
from p2pcards.table.kinds import Kind, ProvedAct, ProvedShares, clip, decode_body
from p2pcards.table.memory import MemoryTable, Tamper
from p2pcards.table.roster import PIPELINED_DECK, PROVED_DECK
from p2pcards.table.session import Forge, Session
from p2pcards.table.verify import verify
from tests.net_helpers import Relay
from tests.test_table_proved import forging, swap_two

Sent = tuple[int, Kind, int]
"""(sender, kind, how many shuffle proofs the sender held unchecked as it went out)."""


def watched(table_of: list[MemoryTable], sent: list[Sent]) -> Tamper:
    """A tamper hook that delivers every message as it is and notes, as it leaves its
    sender, the kind and the sender's unchecked shuffle proofs."""
    def tamper(sender: int, wire: bytes) -> list[bytes]:
        table = table_of[0]
        env = read_envelope(wire, table.players)
        run = table.sessions[sender].run
        pending = len(run.deck.pending) if run is not None \
            and isinstance(run.deck, ProvedDeck) else 0
        sent.append((sender, Kind(env.kind), pending))
        if env.kind in (Kind.PROVED_SHARES, Kind.PROVED_ACT, Kind.PROVED_MOVE):
            message = decode_body(env.kind, env.body, env.sender)
            carries = isinstance(message, ProvedShares) or (
                isinstance(message, ProvedAct) and message.shares is not None)
            assert not (carries and pending), f"seat {sender}'s shares left with" \
                                              f" {pending} shuffle proof(s) unchecked"
        return [wire]
    return tamper


def bidwhist(sent: list[Sent], forges: dict[int, Forge] | None = None,
             deck: str = PIPELINED_DECK) -> MemoryTable:
    holder: list[MemoryTable] = []
    table = MemoryTable("bidwhist", 4, 61, [heuristic_bot] * 4, deck=deck,
                        tamper=watched(holder, sent), forges=forges or {})
    holder.append(table)
    return table


@pytest.mark.parametrize(("deck", "unchecked"), [(PIPELINED_DECK, [0, 1, 1, 1]),
                                                 (PROVED_DECK, [0, 0, 0, 0])])
def test_the_next_shuffler_sends_before_it_checks_and_no_share_leaves_unchecked(
        deck: str, unchecked: list[int]) -> None:
    """Pipelined: every shuffler after the first sends while its input's proof is
    unchecked.  Plain ``proved``: none ever holds one unchecked."""
    sent: list[Sent] = []
    table = bidwhist(sent, deck=deck)
    table.play(deals=1)
    shuffles = [(seat, pending) for seat, kind, pending in sent
                if kind == Kind.PROVED_SHUFFLE]
    assert [seat for seat, _ in shuffles[:4]] == [0, 1, 2, 3]  # deal 0: seat 0 first
    assert [pending for _, pending in shuffles[:4]] == unchecked
    if deck == PROVED_DECK:  # (nor any other message)
        assert all(pending == 0 for _, _, pending in sent)
    shares = [i for i, (_, kind, _) in enumerate(sent) if kind == Kind.PROVED_SHARES]
    assert shares and all(sent[i][2] == 0 for i in shares)  # (and the hook asserts it)
    runs = [session.finished[0] for session in table.sessions]
    assert {run.verdict for run in runs} == {"ok"}
    assert all(not run.deck.pending for run in runs)
    report = verify(table.sessions[0].export())
    assert report.deals[0].verdict == "ok" and report.deals[0].signed == [0, 1, 2, 3]


def on_arrival_verdict(session: Session, cheat: int) -> str:
    """What a check on arrival says of the deal's proved-deck messages: the proved deck
    of an observer takes them, each proof checked as it comes (the table before
    pipelining), and the verdict the session gave then."""
    run = session.finished[0]
    deck = ProvedDeck(run.deck.context, OBSERVER)
    for env in run.envelopes:
        if env.kind not in (Kind.PROVED_KEY, Kind.PROVED_SHUFFLE):
            continue
        try:
            deck.receive(decode_body(env.kind, env.body, env.sender))  # type: ignore[arg-type]
        except RemoteProtocolError as error:
            assert error.party == cheat
            return clip(f"seat {cheat} forfeits the deal: refused step (its {env.kind}"
                        f" refused: {error.step}: {error.reason})")
    raise AssertionError("no proof was refused")


def test_a_bad_shuffle_proof_found_late_is_the_same_proven_cheat_at_every_seat() -> None:
    sent: list[Sent] = []
    table = bidwhist(sent, {1: forging(Kind.PROVED_SHUFFLE, swap_two)})
    table.play(deals=1)
    # seat 2 shuffled on top of seat 1's bad deck before it checked it; seat 3 knew
    # it bad (seat 1's proof stays pending, and nothing after it is checked) and
    # shuffled in turn all the same, so that every seat's transcript is the same
    shuffles = [(seat, pending) for seat, kind, pending in sent
                if kind == Kind.PROVED_SHUFFLE]
    assert shuffles[:4] == [(0, 0), (1, 1), (2, 1), (3, 2)]
    assert Kind.PROVED_SHARES not in {kind for _, kind, _ in sent}  # no share ever left
    expected = on_arrival_verdict(table.sessions[0], cheat=1)
    assert "its shuffle proof: t" in expected
    for seat in (0, 2, 3):  # seat 2 is not blamed for shuffling on top of it
        run = table.sessions[seat].finished[0]
        assert run.verdict == expected
        assert run.outcome is not None and run.outcome.record.forfeit is not None
        assert run.outcome.record.forfeit["seat"] == 1
        assert run.outcome.record.forfeit["reason"] == "refused step"
        assert run.points == table.sessions[0].finished[0].points
        assert run.signers == [0, 2, 3] and set(run.agrees) == {0, 2, 3}
        assert run.agree_hash == table.sessions[0].finished[0].agree_hash
        assert [e.seat for e in table.sessions[seat].events if isinstance(e, Forfeited)] == [1]
    assert sum(1 for s, kind, _ in sent if kind == Kind.PROVED_SHUFFLE and s == 3) == 1
    report = verify(table.sessions[0].export())  # the signed shuffle is the proof
    assert report.deals[0].verdict == expected
    assert report.deals[0].signed == [0, 2, 3]


def test_a_seat_restarted_between_its_shuffle_and_its_check_checks_again(
        tmp_path: Path) -> None:
    relay = Relay(tmp_path, "bidwhist", 4, "pipeline-kill", {"target": 3})
    assert relay.play(lambda seat, kind: seat == 2 and kind == Kind.PROVED_SHUFFLE) is True
    relay.play()  # the others go on as far as they can without it
    peer = Peer.restore(Journal.open(relay.path(2)))  # (Relay.restart, looked into)
    run = peer.main.run
    assert run is not None and isinstance(run.deck, ProvedDeck)
    assert run.deck.pending and peer.main.machine.unchecked()  # seats 0 and 1's proofs
    relay.rejoin(2, peer)
    assert not run.deck.pending  # checked at the end of its round
    assert relay.play() is False
    assert all(p.over for p in relay.live())
    history = relay.history(2)
    assert all(relay.history(seat) == history for seat in range(4))


def test_at_a_plain_proved_table_the_verdict_comes_at_the_bad_shuffle() -> None:
    """The rule of a roster recorded by link version 4 (or by a host with a peer of
    it): seat 1's shuffle proof is refused on arrival, and the deal ends there, the
    seats after it never shuffling, with the same verdict at every honest seat and in
    ``p2pcards verify``."""
    sent: list[Sent] = []
    table = bidwhist(sent, {1: forging(Kind.PROVED_SHUFFLE, swap_two)}, deck=PROVED_DECK)
    table.play(deals=1)
    shuffles = [(seat, pending) for seat, kind, pending in sent
                if kind == Kind.PROVED_SHUFFLE]
    assert shuffles == [(0, 0), (1, 0)]  # seats 2 and 3 never shuffle on top of it
    assert all(pending == 0 for _, _, pending in sent)  # no proof ever left unchecked
    expected = on_arrival_verdict(table.sessions[0], cheat=1)
    for seat in (0, 2, 3):
        run = table.sessions[seat].finished[0]
        assert run.verdict == expected
        assert run.signers == [0, 2, 3]
        assert [env.kind for env in run.envelopes].count(Kind.PROVED_SHUFFLE) == 2
    report = verify(table.sessions[2].export())
    assert report.deals[0].verdict == expected and report.deals[0].signed == [0, 2, 3]


OLD_CHEAT = Path(__file__).parent / "data" / "proved_pasur_shuffle_cheat.bin"
"""Seat 0's transcript of one deal of Pasur at three seats (seed 5) of the proved deck,
recorded by the build of link protocol version 4 (main at e3245db: MemoryTable with
``forges={1: forging(Kind.PROVED_SHUFFLE, swap_two)}``, ``play(deals=1)``, ``export()``):
seat 1 cheats in the middle of the round's shuffles, and the deal ended at its shuffle."""
OLD_REPORT = """\
Pasur at table 4c9583dafd3923d5df10cf8386319365: seat0 (seat 0), seat1 (seat 1), seat2 (seat 2)
safety number 32364 26930 66530 94397; 20 messages
deal 1 (dealer seat0): seat1 forfeits the deal: refused step (its pshuffle refused:\
 shuffle: its shuffle proof: t1 does not hold); points 0 0 0; signed by seat0, seat2\
 (all that were to)
REFUSED: the transcript stops with hello from seat 1 due: the game is not finished
totals 0 0 0; the game is not over
NOT verified
"""
"""What that build's ``p2pcards verify`` printed of it (exit status 1: the game is not
over, the file holding its first deal only)."""


def test_a_transcript_of_the_earlier_build_verifies_as_it_did(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(OLD_CHEAT)]) == 1
    assert capsys.readouterr().out == OLD_REPORT
    report = verify(OLD_CHEAT.read_bytes())
    assert report.roster.deck == PROVED_DECK
    assert [(d.verdict, d.signed) for d in report.deals] == [(
        "seat 1 forfeits the deal: refused step (its pshuffle refused: shuffle: its"
        " shuffle proof: t1 does not hold)", [0, 2])]


PIPELINED_GAME = Path(__file__).parent / "data" / "proved_pipelined_pasur_game.bin"
"""Seat 0's transcript of a whole game of Pasur at two seats (seed 5) of the proved deck
with its pipelined rule (``proved-pipelined``), as the build of link protocol version 5
recorded it (main at d5f6249: ``p2pcards table pasur --players 2 --seed 5 --transcript
FILE``): a later rule of the deck must leave it verifying as it does."""
PIPELINED_REPORT = """\
Pasur at table 4c9583dafd3923d5df10cf8386319365: seat0 (seat 0), seat1 (seat 1)
safety number 66404 85165 86551 96906; 410 messages
deal 1 (dealer seat0): ok; points 6 14; every seat signed it
deal 2 (dealer seat1): ok; points 27 3; every seat signed it
deal 3 (dealer seat0): ok; points 20 5; every seat signed it
deal 4 (dealer seat1): ok; points 6 14; every seat signed it
deal 5 (dealer seat0): ok; points 7 18; every seat signed it
totals 66 54; winner: seat0
verified
"""
PIPELINED_HISTORY = "32a46f29837e2f614eb52d5586c5b5fc4d7965e1ae5653028432646acd2580bb"
"""The SHA-256 of the hand history that build's ``verify --history`` wrote of it."""


def test_a_whole_pipelined_game_of_the_earlier_build_verifies_as_it_did(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "history.json"
    assert main(["verify", str(PIPELINED_GAME), "--history", str(history)]) == 0
    assert capsys.readouterr().out.startswith(PIPELINED_REPORT)
    assert hashlib.sha256(history.read_bytes()).hexdigest() == PIPELINED_HISTORY
    assert verify(PIPELINED_GAME.read_bytes()).roster.deck == PIPELINED_DECK


PIPELINED_CHEAT = Path(__file__).parent / "data" / "proved_pipelined_refused.bin"
"""Seat 0's transcript of one deal of Pasur at three seats (seed 5) of the proved deck
with its pipelined rule, recorded by this build (MemoryTable with ``deck=PIPELINED_DECK``,
``forges={1: forging(Kind.PROVED_SHUFFLE, swap_two)}``, ``play(deals=1)``, ``export()``):
seat 1's shuffle proof, taken unchecked, fails; seat 2 shuffles on top of it all the
same, and the verdict comes at the round's end."""
PIPELINED_CHEAT_REPORT = """\
Pasur at table 4c9583dafd3923d5df10cf8386319365: seat0 (seat 0), seat1 (seat 1), seat2 (seat 2)
safety number 81968 12603 57885 75455; 21 messages
deal 1 (dealer seat0): seat1 forfeits the deal: refused step (its pshuffle refused:\
 shuffle: its shuffle proof: t1 does not hold); points 0 0 0; signed by seat0, seat2\
 (all that were to)
REFUSED: the transcript stops with hello from seat 1 due: the game is not finished
totals 0 0 0; the game is not over
NOT verified
"""
"""What ``p2pcards verify`` prints of it (exit status 1: the file holds its first deal
only)."""


def test_a_pipelined_refusal_judged_at_the_rounds_end_verifies_as_recorded(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(PIPELINED_CHEAT)]) == 1
    assert capsys.readouterr().out == PIPELINED_CHEAT_REPORT
    report = verify(PIPELINED_CHEAT.read_bytes())
    assert report.roster.deck == PIPELINED_DECK
    # the file itself, read apart from the session: every shuffle of the round is in it,
    # the cheat's in the middle, and the agreement follows the round's last shuffle
    roster = report.roster
    envelopes = [open_envelope(wire, roster.keys)
                 for wire in unpack(PIPELINED_CHEAT.read_bytes(), "test")["messages"]]
    kinds = [(env.kind, env.sender) for env in envelopes[9:]]  # (after the draw)
    assert kinds == [(Kind.HELLO, 0), (Kind.HELLO, 1), (Kind.HELLO, 2),
                     (Kind.PROVED_KEY, 0), (Kind.PROVED_KEY, 1), (Kind.PROVED_KEY, 2),
                     (Kind.PROVED_SHUFFLE, 0), (Kind.PROVED_SHUFFLE, 1),
                     (Kind.PROVED_SHUFFLE, 2), (Kind.AGREE, 0), (Kind.AGREE, 2),
                     (Kind.HELLO, 0)]  # (the next deal's first, as seat 0 sent it)
    # a check on arrival of the same messages refuses seat 1's shuffle: the same verdict
    deal = report.runs[0]
    deck = ProvedDeck(deal.deck.context, OBSERVER)
    refused: list[str] = []
    for env in envelopes:
        if env.kind in (Kind.PROVED_KEY, Kind.PROVED_SHUFFLE) and not refused:
            try:
                deck.receive(decode_body(env.kind, env.body, env.sender))  # type: ignore[arg-type]
            except RemoteProtocolError as error:
                assert error.party == env.sender == 1
                refused.append(clip(f"seat 1 forfeits the deal: refused step (its {env.kind}"
                                    f" refused: {error.step}: {error.reason})"))
    assert refused == [report.deals[0].verdict]
    agree = next(env for env in envelopes if env.kind == Kind.AGREE)
    assert agree.body["verdict"] == report.deals[0].verdict
