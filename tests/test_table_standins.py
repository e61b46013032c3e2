"""A table goes on when a friend leaves: a bot takes the seat of a peer gone silent
from the next deal, under a roster every live peer signs again, and the person takes
the seat back at a deal boundary after coming back (docs/protocol.md, "Seats that
change hands").  Peers wired in memory (tests/net_helpers.py); in real processes:
tests/test_net_procs.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2pcards.history import History
from p2pcards.net.peer import Peer
from p2pcards.table import kinds
from p2pcards.table.codec import seal_envelope
from p2pcards.table.decks import ACTS
from p2pcards.table.events import SeatsChanged
from p2pcards.table.kinds import Back
from p2pcards.table.memory import seat_identity
from p2pcards.table.roster import LOCK_DECK
from p2pcards.table.state import WATCHER, Rule
from p2pcards.table.verify import verify
from tests.net_helpers import Relay, histories
from tests.table_helpers import told


def drive(relay: Relay, until: int | None = None) -> None:
    """Play on, claiming the seat due silent whenever the table is stuck (the clock's
    part), until every live peer is over or has finished ``until`` deals."""
    for _ in range(2000):
        if all(p.over for p in relay.live()):
            return
        if until is not None and all(len(p.main.finished) >= until for p in relay.live()):
            return
        if relay.step() is None and not all(p.over for p in relay.live()):
            claimed = [seat for peer in relay.live() for seat in peer.claim_silent()]
            assert claimed, "stuck, and nobody can claim the seat due"
    raise AssertionError("the game did not end")


def history(peer: Peer) -> History:
    report = verify(peer.main.export())
    assert report.ok, report.problem
    assert report.history is not None
    return report.history


def test_a_bot_takes_the_seat_of_a_peer_gone_for_good(tmp_path: Path) -> None:
    relay = Relay(tmp_path, "nullern", 4, "stand-in", replace="heuristic",
                  deck=LOCK_DECK)  # (Nullern's 20 deals: the cheaper deck)
    assert relay.play(after=lambda seat, kind: seat == 2 and kind in ACTS)  # gone for good
    drive(relay)
    live = relay.live()
    assert len(live) == 3 and all(p.over for p in live)
    assert len({p.main.hash for p in live}) == 1
    runner = live[0]
    assert 2 in runner.sessions and runner.sessions[2].me == 2  # seat 0's peer runs it
    current = runner.current
    assert current.seats[2].bot == "heuristic" and current.seats[2].run_by == 0
    assert current.seats[2].identity != relay.roster.seats[2].identity
    changed = told(runner.main, SeatsChanged)
    assert len(changed) == 1 and "a heuristic bot run by seat 0 stands in" in changed[0]
    assert current.safety_number() in changed[0]
    hands, runs = history(runner).hands, runner.main.finished
    assert len(hands) == len(runs)
    forfeited = next(k for k, r in enumerate(runs) if "forfeits" in r.verdict)
    assert runs[forfeited].verdict == "seat 2 forfeits the deal: silent"
    assert all(h.players is None for h in hands[:forfeited + 1])
    assert all(h.players is not None and h.players[2].endswith("(bot)")
               for h in hands[forfeited + 1:])
    assert not any("forfeits" in r.verdict for r in runs[forfeited + 1:]), \
        "the stand-in forfeited"
    assert len(histories(*live)) == 1


def test_without_a_replacement_kind_the_seat_forfeits_every_deal(tmp_path: Path) -> None:
    """The weakened rule (no stand-in: the table as it was): a seat gone for good
    forfeits every deal it is due in, and the game drags through the grace periods."""
    relay = Relay(tmp_path, "nullern", 4, "stand-in", replace="")
    assert relay.play(after=lambda seat, kind: seat == 2 and kind in ACTS)
    drive(relay, until=3)
    runs = relay.live()[0].main.finished[:3]
    assert [r.verdict for r in runs] == ["seat 2 forfeits the deal: silent"] * 3
    assert relay.live()[0].current == relay.roster


def test_the_person_takes_the_seat_back_at_the_next_boundary(tmp_path: Path) -> None:
    relay = Relay(tmp_path, "nullern", 4, "come back", replace="heuristic",
                  deck=LOCK_DECK)  # (Nullern's 20 deals: the cheaper deck)
    assert relay.play(after=lambda seat, kind: seat == 2 and kind in ACTS)
    drive(relay, until=2)  # the forfeit, then a deal with the stand-in
    assert relay.live()[0].current.seats[2].bot == "heuristic"
    back = relay.restart(2)  # the same identity, from its journal
    assert back.sessions[2].me == WATCHER  # benched: it watches its seat played by the bot
    drive(relay)
    live = relay.live()
    assert len(live) == 4 and all(p.over for p in live)
    assert back.sessions[2].me == 2 and back.current.seats[2] == relay.roster.seats[2]
    assert len({p.main.hash for p in live}) == 1
    hands = history(back).hands
    stand_in = [k for k, h in enumerate(hands) if h.players is not None]
    assert stand_in and hands[stand_in[-1] + 1].players is None  # back in its own seat
    assert len(histories(*live)) == 1


@pytest.mark.parametrize("game", ["pasur", "bidwhist"])
def test_a_joiner_with_a_bot_gone_for_good_is_replaced_whole(tmp_path: Path,
                                                             game: str) -> None:
    """A peer that ran two seats (its person's and a bot's): both fall silent together,
    and both get stand-ins run by the lowest live person's peer."""
    players = 3 if game == "pasur" else 4
    relay = Relay(tmp_path, game, players, "two seats", replace="heuristic",
                  run_by={players - 1: 1})
    assert relay.play(after=lambda seat, kind: seat == 1 and kind == "hello")
    drive(relay)
    runner = relay.live()[0]
    current = runner.current
    assert {current.seats[1].run_by, current.seats[players - 1].run_by} == {0}
    assert all(p.over for p in relay.live())
    assert len(histories(*relay.live())) == 1


def test_the_prompt_shows_the_roster_as_it_stands(tmp_path: Path) -> None:
    """``who`` at a networked prompt: after a stand-in came, the roster names it and
    gives the new safety number."""
    from prompt_toolkit.input import create_pipe_input  # noqa: PLC0415
    from prompt_toolkit.output import DummyOutput  # noqa: PLC0415

    from p2pcards.cli.netrepl import NetPrompt  # noqa: PLC0415
    from p2pcards.net.settings import Settings  # noqa: PLC0415

    relay = Relay(tmp_path, "nullern", 4, "stand-in", replace="heuristic")
    assert relay.play(after=lambda seat, kind: seat == 2 and kind in ACTS)
    drive(relay, until=2)
    peer = relay.live()[1]
    with create_pipe_input() as pipe:
        prompt = NetPrompt("nullern", input=pipe, output=DummyOutput())

        async def chat(text: str) -> None:
            pass

        prompt.seated(relay.roster, 1, Settings(replace="heuristic"), chat)
        before = prompt.roster_text
        prompt.reseated(peer.current)
    assert relay.roster.safety_number() in before
    assert peer.current.safety_number() in prompt.roster_text
    assert "2: seat2" in prompt.roster_text and "(heuristic bot run by seat 0)" in \
        prompt.roster_text.splitlines()[2]


def test_the_runner_restarted_from_its_journal_runs_the_same_stand_in(tmp_path: Path) -> None:
    """The peer that runs a stand-in is killed and started again: from its journal it
    makes the same stand-in identity and sends again exactly the bytes it sent, so the
    game finishes with one history (no second version reads as cheating)."""
    relay = Relay(tmp_path, "nullern", 4, "runner", replace="heuristic",
                  deck=LOCK_DECK)  # (Nullern's 20 deals: the cheaper deck)
    assert relay.play(after=lambda seat, kind: seat == 2 and kind in ACTS)
    drive(relay, until=2)
    runner = relay.live()[0]
    assert 2 in runner.sessions
    stand_in = runner.current.seats[2].identity
    moves = 0

    def kill_runner(seat: int, kind: str) -> bool:
        nonlocal moves
        moves += seat == 0 and kind in ACTS
        return seat == 0 and moves == 3

    for _ in range(200):
        if relay.play(after=kill_runner):
            break
        assert relay.live()[0] is runner
        for peer in relay.live():
            peer.claim_silent()
    assert relay.peers[0] is None
    restored = relay.restart(0)
    assert restored.current.seats[2].identity == stand_in and 2 in restored.sessions
    drive(relay)
    live = relay.live()
    assert all(p.over for p in live) and len(histories(*live)) == 1
    for peer in live:
        assert not any(r.rejection.rule == "equivocation" for r in peer.refusals)


def test_what_was_held_from_a_seat_that_changed_hands_is_dropped(tmp_path: Path) -> None:
    """A claim held from a seat's first identity (sent on a transcript this seat had not
    reached) when a stand-in takes the seat: re-read after the change, it no longer
    verifies, and it is dropped, not taken and not fatal."""
    relay = Relay(tmp_path, "nullern", 4, "held", replace="heuristic")
    keys = [seat_identity("held", s) for s in range(4)]
    assert relay.play(after=lambda seat, kind: seat == 2 and kind in ACTS)
    drive(relay, until=2)
    session = relay.live()[1].main
    assert session.roster.seats[2].identity != relay.roster.seats[2].identity
    stale = seal_envelope(keys[2], table=session.table, deal=session.machine.deal_index(),
                          sender=2, seq=session.transcript.seq_in[2], prior=b"\x05" * 32,
                          kind="silent", body={"seat": 0}).wire
    session.claims.held[2] = stale
    drive(relay, until=3)  # every message taken retries what is held
    assert 2 not in session.claims.held
    assert all(len(p.main.finished) >= 3 for p in relay.live())  # and the table plays on


def test_a_return_that_crosses_the_hand_back_is_settled_not_a_fork(tmp_path: Path) -> None:
    """A benched peer says ``back`` once a deal; one said just as the runner's ``seat``
    message gave the seat back reaches the others after it, signed by the key the roster
    holds for the seat again.  It is no message of the transcript: every seat refuses
    it as overtaken (``stale``: never shown, neither journaled nor relayed), and none
    reads it as a message on another transcript (a fork)."""
    relay = Relay(tmp_path, "nullern", 3, "crossing", replace="heuristic", deck=LOCK_DECK)
    assert relay.play(after=lambda seat, kind: seat == 1 and kind in ACTS)
    drive(relay, until=2)
    back = relay.restart(1)
    drive(relay, until=4)  # the seat given back meanwhile
    assert back.sessions[1].me == 1
    session = back.sessions[1]
    kind, body = kinds.encode_body(Back(seat=1))
    late = seal_envelope(seat_identity("crossing", 1), table=session.table,
                         deal=session.machine.deal_index() - 1, sender=1,
                         seq=session.transcript.seq_in[1], prior=relay.live()[0].progress,
                         kind=kind, body=body).wire
    for peer in relay.live():
        if peer is not back:
            logged = len(peer.log)
            kept, refused = peer.receive(late)
            assert not kept and len(peer.log) == logged
            assert [r.rejection.rule for r in refused] == [Rule.STALE] * len(peer.sessions)
    drive(relay)
    live = relay.live()
    assert all(p.over for p in live) and len({p.main.hash for p in live}) == 1


def test_a_benched_seat_is_heard_once_a_deal(tmp_path: Path) -> None:
    """A benched seat's own identity signs its return only, once a deal: more returns of
    a deal it has said it in, or of deals to come, are refused as overtaken (never
    shown), and no peer journals or relays them, however many it signs."""
    relay = Relay(tmp_path, "nullern", 3, "benched", replace="heuristic", deck=LOCK_DECK)
    assert relay.play(after=lambda seat, kind: seat == 1 and kind in ACTS)
    drive(relay, until=2)
    back = relay.restart(1)
    assert back.sessions[1].me == WATCHER
    for _ in range(200):  # until the others have its return of this deal
        if relay.step() is None:
            break
        runner = relay.live()[0]
        deal = runner.main.machine.deal_index()
        if runner.main.returns.heard.get(1) == deal:
            break
    runner = relay.live()[0]
    deal = runner.main.machine.deal_index()
    assert runner.main.returns.heard.get(1) == deal
    kind, body = kinds.encode_body(Back(seat=1))
    logged = len(runner.log)
    for n in range(40):
        wire = seal_envelope(seat_identity("benched", 1), table=runner.main.table,
                             deal=deal + (n % 2) * 5, sender=1,
                             seq=runner.main.transcript.seq_in[1], prior=bytes([n]) * 32,
                             kind=kind, body=body).wire
        kept, refused = runner.receive(wire)
        assert not kept
        assert [r.rejection.rule for r in refused] == [Rule.STALE] * len(runner.sessions)
    assert len(runner.log) == logged
    drive(relay)
    live = relay.live()
    assert all(p.over for p in live) and len({p.main.hash for p in live}) == 1
