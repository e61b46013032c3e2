"""Peers restored from their journals wherever they were killed: a host that runs a
stand-in among them (docs/networking.md, "When something goes wrong")."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2pcards.table.decks import ACTS
from p2pcards.table.verify import verify
from tests.net_helpers import Relay


@pytest.mark.parametrize("kill_after", [3, 13, 28, 61])
def test_a_host_that_ran_a_stand_in_resumes_wherever_it_is_killed(
        tmp_path: Path, kill_after: int) -> None:
    """A Bid Whist host whose peer also runs two bot seats: seat 1's peer is gone for
    good, a stand-in the host's peer runs plays its seat, and the host is killed after
    its ``kill_after``-th message since.  Restored from its journal (its replay makes
    the deck's held-back checks before each decision, as its driver did), it plays the
    game to the end with the others on one transcript."""
    relay = Relay(tmp_path, "bidwhist", 4, "standin-restore", {"target": 15},
                  replace="heuristic", run_by={2: 0, 3: 0})
    assert relay.play(after=lambda seat, kind: seat == 1 and kind in ACTS)  # seat 1 gone
    sent = 0

    def after(seat: int, kind: str) -> bool:
        nonlocal sent
        sent += seat == 0
        return seat == 0 and sent >= kill_after

    for _ in range(20000):
        step = relay.step(after)
        if step is True:
            break
        if step is None:
            assert not all(p.over for p in relay.live()), "the game ended first"
            assert any(p.claim_silent() for p in relay.live())
    else:
        raise AssertionError("the host was never killed")
    peer = relay.restart(0)
    stand_ins = peer.main.machine.seats.stand_ins(peer.current)
    for _ in range(20000):
        step = relay.step()
        if step is None:
            if all(p.over for p in relay.live()):
                break
            assert any(p.claim_silent() for p in relay.live()), "stuck after the restart"
    peers = relay.live()
    assert all(p.over for p in peers) and len({p.main.hash for p in peers}) == 1
    assert verify(peers[0].main.export()).ok
    assert stand_ins or kill_after == 3  # (the stand-in was seated before most kills)
