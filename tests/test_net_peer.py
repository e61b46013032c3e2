"""A peer's journal: killed at any point and restarted, it finishes the game exactly as
an uninterrupted peer would (same secrets, same bytes, same result)."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2pcards.net.journal import read
from p2pcards.protocol.source import KeyedSource
from p2pcards.table.codec import open_envelope
from p2pcards.table.roster import LOCK_DECK, PROVED_DECK
from tests.net_helpers import Relay
from tests.table_helpers import envelope, move

KILL_POINTS = [  # every kill point, in real processes: tests/test_net_procs.py
    ("bidwhist", 2, "pshares", 1, PROVED_DECK),  # during the deal's decryption shares
    ("pasur", 1, "audit", 1, LOCK_DECK),  # during today's deck's audit
]
SHORT = {"bidwhist": {"target": 3}, "pasur": {"target": 20}, "controlnut": {"target": 200}}
"""Short games: the kill points are in the first deals."""


def reference(tmp_path: Path, game: str, seed: object, deck: str) -> str:
    relay = Relay(tmp_path / "reference", game, 4, seed, SHORT[game], deck=deck)
    assert relay.play() is False
    assert all(p.over for p in relay.live())
    return relay.history()


@pytest.mark.parametrize(("game", "victim", "kind", "count", "deck"), KILL_POINTS)
def test_a_killed_peer_restarts_from_its_journal(tmp_path: Path, game: str, victim: int, *,
                                                  kind: str, count: int, deck: str) -> None:
    seed = f"kill-{game}-{kind}"
    expected = reference(tmp_path, game, seed, deck)
    relay = Relay(tmp_path / "run", game, 4, seed, SHORT[game], deck=deck)
    seen = 0

    def kill(seat: int, sent: str) -> bool:
        nonlocal seen
        if seat == victim and sent == kind:
            seen += 1
            return seen == count
        return False

    assert relay.play(kill) is True
    assert relay.peers[victim] is None
    relay.play()  # the others go on as far as they can without it
    assert not any(p.over for p in relay.live())
    restored = relay.restart(victim)
    assert relay.play() is False
    assert restored.over and all(p.over for p in relay.live())
    for seat in range(4):
        assert relay.history(seat) == expected
    assert not [r for p in relay.live() for r in p.refusals
                if r.rejection.rule in ("equivocation", "signature", "malformed")]


def test_restored_peer_sends_the_same_bytes(tmp_path: Path) -> None:
    """(Today's deck, whose keys are sealed with a fresh ephemeral key each time: only
    the journal can give them again byte for byte.)"""
    relay = Relay(tmp_path, "pasur", 2, "bytes", SHORT["pasur"], deck=LOCK_DECK)
    assert relay.play(lambda seat, kind: seat == 1 and kind == "keys") is True
    before = [w for w in relay.log if open_envelope(w, relay.roster.keys).sender == 1]
    restored = relay.restart(1)
    assert restored.mine[:len(before)] == before  # sealed keys included, byte for byte
    assert relay.play() is False
    assert restored.over
    assert not [r for p in relay.live() for r in p.refusals
                if r.rejection.rule == "equivocation"]


def test_keyed_source_is_deterministic_and_uniform() -> None:
    a, b = KeyedSource(b"k" * 32, b"x"), KeyedSource(b"k" * 32, b"x")
    assert [a.randbelow(1000) for _ in range(50)] == [b.randbelow(1000) for _ in range(50)]
    assert KeyedSource(b"k" * 32, b"y").token_bytes(32) != KeyedSource(b"k" * 32,
                                                                        b"x").token_bytes(32)
    counts = [0] * 6
    source = KeyedSource(b"u" * 32)
    for _ in range(6000):
        counts[source.randbelow(6)] += 1
    assert all(850 < c < 1150 for c in counts), counts
    with pytest.raises(ValueError, match="seed"):
        KeyedSource(b"short")


@pytest.mark.parametrize("weakened", [True, False])
def test_a_flood_of_evidence_costs_one_copy_of_each_proof(
        tmp_path: Path, weakened: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A seat signs sixty forks of the move it owes and sixty second versions of its first
    message.  Under the weakened rule (every fork and every version kept as evidence, as
    before) each peer journals and logs all of them; under the table's rule one fork and
    one proof, whatever the flood."""
    if weakened:
        monkeypatch.setattr("p2pcards.net.peer.kept_as_evidence",
                            lambda r: r.rule in ("transcript", "equivocation"))
    relay = Relay(tmp_path, "nullern", 4, "flood")
    while not any(peer.decisions() for peer in relay.live()):
        assert relay.step() is not None
    relay.deliver()
    cheat = next(peer for peer in relay.live() if peer.decisions())
    seat = next(iter(cheat.decisions()))
    session = cheat.sessions[seat]
    view = session.decision()
    assert view is not None
    sign = next(env for env in session.transcript if env.sender == seat)
    action = view.format_action(view.legal_actions()[0])
    flood = [envelope(session, *move(session, action), prior=bytes([n]) * 32)
             for n in range(1, 61)]
    flood += [envelope(session, "sign", {"roster": bytes([n]) * 32}, seq=sign.seq,
                       prior=sign.prior, deal=sign.deal) for n in range(1, 61)]
    victim = next(peer for peer in relay.live() if peer is not cheat)
    assert victim.journal is not None
    logged = len(victim.log)
    for wire in flood:
        victim.receive(wire)
    victim.take_outgoing()
    kept = [w for w in victim.log[logged:] if w in flood]
    journaled = [r for r in read(victim.journal.path)[0] if r[0] == "in" and r[1] in flood]
    if weakened:
        assert len(kept) == len(journaled) == 120
    else:
        assert len(kept) == len(journaled) == 2
    assert len(victim.main.rejections) <= len(flood)
