"""Tables that deal with the proved deck (docs/proved-deck.md, docs/protocol.md "The
proved deck at the table"): the roster's setting, the wire kinds, whole games of
every game, a cheat refused on arrival and punished, offline verification, and no
secret revealed after the deal."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.cli.main import main
from p2pcards.history import load as load_history
from p2pcards.history import replay
from p2pcards.protocol.constants import OBSERVER, PUBLIC
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.protocol.proved.group import G, mul
from p2pcards.protocol.proved.messages import Shuffle
from p2pcards.table.codec import CodecError, open_envelope, pack, unpack
from p2pcards.table.events import Forfeited
from p2pcards.table.kinds import Kind, Message, ProvedShares, decode_body, encode_body
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import (
    DEFAULT_DECK,
    LOCK_DECK,
    PROVED_DECK,
    decode_roster,
    make_roster,
)
from p2pcards.table.session import Session, Step
from p2pcards.table.verify import verify

PROVED_KINDS = {Kind.PROVED_KEY, Kind.PROVED_SHUFFLE, Kind.PROVED_REMIX, Kind.PROVED_SHARES,
                Kind.PROVED_ACT}
TODAY_S_DECK = {Kind.UNLOCK, Kind.SHUFFLE, Kind.LOCK, Kind.REMIX, Kind.KEYS, Kind.ACT,
                Kind.AUDIT}


def kinds_of(session: Session) -> Counter[str]:
    return Counter(env.kind for env in session.transcript)


def proved_runs(table: MemoryTable, seat: int = 0) -> list[Any]:
    return table.sessions[seat].finished


# ------------------------------------------------------------------ the setting


def test_the_roster_names_the_deck_and_an_old_roster_keeps_its_hash() -> None:
    identities = [bytes([7 + i]) * 32 for i in range(3)]
    today = make_roster(b"t" * 16, "nullern", identities, deck=LOCK_DECK)
    proved = make_roster(b"t" * 16, "nullern", identities)  # a new table's deck
    assert proved.deck == PROVED_DECK == DEFAULT_DECK
    assert len(today.to_wire()) == 4  # today's deck: the wire (and hash) of before
    assert proved.to_wire()[4] == "proved" and proved.digest() != today.digest()
    assert decode_roster(proved.encode()).deck == "proved"
    assert decode_roster(today.encode()).deck == "lock"
    with pytest.raises(CodecError, match="leaving the deck out"):
        decode_roster(pack([*today.to_wire(), "lock"]))
    with pytest.raises(CodecError, match="unknown deck 'mystery'"):
        decode_roster(pack([*today.to_wire(), "mystery"]))


# ------------------------------------------------------------------- the wire


@pytest.fixture(scope="module")
def pasur() -> MemoryTable:
    """A whole game of Pasur at three seats with the proved deck."""
    table = MemoryTable("pasur", 3, 41, [heuristic_bot] * 3, deck=PROVED_DECK)
    table.play()
    return table


def test_every_proved_kind_is_decoded_strictly(pasur: MemoryTable) -> None:
    session = pasur.sessions[0]
    seen: dict[str, Any] = {}
    for env in session.transcript:
        if env.kind in PROVED_KINDS and env.kind not in seen:
            seen[env.kind] = env
    assert set(seen) == PROVED_KINDS - {Kind.PROVED_REMIX}  # (Pasur re-mixes nothing)
    for kind, env in seen.items():
        message = decode_body(kind, env.body, env.sender)
        assert encode_body(message) == (kind, env.body)
        with pytest.raises(CodecError, match="unknown field"):
            decode_body(kind, {**env.body, "extra": 1}, env.sender)
        with pytest.raises(CodecError, match=f"in seat {env.sender}'s name, signed by seat"):
            decode_body(kind, env.body, (env.sender + 1) % 3)
    key = seen[Kind.PROVED_KEY].body["data"]
    with pytest.raises(CodecError, match=r"pkey\.data: key share\.proof\.s: the message ends"):
        decode_body(Kind.PROVED_KEY, {"data": key[:-1]}, seen[Kind.PROVED_KEY].sender)
    with pytest.raises(CodecError, match=r"pkey\.data must be a byte string of at most 100"):
        decode_body(Kind.PROVED_KEY, {"data": key + b"\0"}, seen[Kind.PROVED_KEY].sender)
    with pytest.raises(CodecError, match="a KeyShare message, not Shuffle"):
        decode_body(Kind.PROVED_SHUFFLE, {"data": key}, seen[Kind.PROVED_KEY].sender)
    shares = seen[Kind.PROVED_SHARES]
    with pytest.raises(CodecError, match="at most 7 items"):
        decode_body(Kind.PROVED_SHARES, {"shares": shares.body["shares"] * 8}, shares.sender)
    with pytest.raises(CodecError, match="a recipient named twice"):
        decode_body(Kind.PROVED_SHARES, {"shares": shares.body["shares"][:1] * 2},
                    shares.sender)


# ------------------------------------------------------------ whole games


@pytest.mark.parametrize(("game", "players", "seed", "remixes", "rounds"), [
    ("bidwhist", 4, 42, 1, 1),  # the bidder re-mixes its hand and the kitty
    ("controlnut", 4, 44, 1, 1),  # a HAND victim re-mixes its cards before the pick
    ("nullern", 3, 44, 0, 1),  # a blind card shown by every seat's share
    ("pasur", 2, 44, 0, 2)])  # a lone opening jack: the stock reshuffled, every seat in turn
def test_a_deal_of_every_game_with_the_proved_deck(game: str, players: int, seed: int,
                                                   remixes: int, rounds: int) -> None:
    table = MemoryTable(game, players, seed, [heuristic_bot] * players, deck=PROVED_DECK)
    table.play(deals=1)
    assert not table.rejected
    runs = [session.finished[0] for session in table.sessions]
    assert {r.verdict for r in runs} == {"ok"}
    assert len({tuple(r.points) for r in runs}) == 1
    assert all(r.agrees.keys() == set(range(players)) for r in runs)
    kinds = Counter(env.kind for env in runs[0].envelopes)
    assert not kinds.keys() & TODAY_S_DECK  # no lock pass, no key, no audit
    deck = runs[0].deck
    assert isinstance(deck, ProvedDeck) and len(deck.rounds) == rounds
    assert kinds[Kind.PROVED_KEY] == players and kinds[Kind.PROVED_SHUFFLE] == players * rounds
    assert kinds[Kind.PROVED_REMIX] == remixes
    report = verify(table.sessions[0].export())  # every proof, re-checked offline
    assert report.refusal is None and report.deals[0].verdict == "ok"
    watched = report.runs[0].deck
    assert isinstance(watched, ProvedDeck)
    assert watched.opened == {s: c for s, c in deck.opened.items()
                              if deck.holder.get(s) == PUBLIC}


def test_a_proved_game_verifies_offline_and_a_changed_one_does_not(
        pasur: MemoryTable) -> None:
    session = pasur.sessions[1]
    assert session.over
    report = verify(session.export())
    assert report.ok and report.totals == session.totals
    assert [d.verdict for d in report.deals] == ["ok"] * len(session.finished)
    assert report.history is not None and replay(report.history).totals == session.totals
    for run in report.runs:  # the watcher re-checked every proof with no secret
        assert isinstance(run.deck, ProvedDeck) and run.deck.me == OBSERVER
        assert not run.audits
    data = session.export()
    doc = unpack(data, "test", limit=len(data))
    position = next(i for i, wire in enumerate(doc["messages"])
                    if open_envelope(wire, session.roster.keys).kind == Kind.PROVED_SHUFFLE)
    wire = bytearray(doc["messages"][position])
    wire[len(wire) // 2] ^= 1
    doc["messages"][position] = bytes(wire)
    changed = verify(pack(doc))
    assert not changed.ok and changed.problem is not None
    assert changed.problem.startswith(f"message {position} ")


def test_the_cards_never_shown_stay_secret() -> None:
    table = MemoryTable("bidwhist", 4, 46, [heuristic_bot] * 4, deck=PROVED_DECK)
    table.play(deals=1)
    runs = [session.finished[0] for session in table.sessions]
    assert {r.verdict for r in runs} == {"ok"}
    decks = [r.deck for r in runs]
    assert all(isinstance(d, ProvedDeck) for d in decks)
    hidden = [s for s in range(len(decks[0].points))
              if decks[0].in_play(s) and decks[0].holder.get(s) != PUBLIC]
    assert hidden  # the bidder's discards, never shown
    for slot in hidden:
        holder = decks[0].holder[slot]
        for seat, deck in enumerate(decks):
            if seat != holder:  # every share but the holder's own, and no way to it
                assert not deck.can_open(slot) and slot not in deck.opened
    kinds = kinds_of(table.sessions[0])
    assert Kind.AUDIT not in kinds and Kind.KEYS not in kinds and Kind.HELLO in kinds
    record = runs[0].outcome.record  # the deal as everyone saw it: no card of those
    assert record.public and record.secret is None and record.actions
    names = {runs[0].ids[decks[decks[0].holder[s]].opened[s]] for s in hidden}
    notation = table.sessions[0].roster.rules.notation
    assert names and not names & {notation.parse(n) for n in record.deck if n != "?"}
    assert all("?" in text.split() for _, text in record.actions if text.startswith("discard"))


# ------------------------------------------------------------------- cheats


def forging(kind: str, change: Callable[[Any], Any]) -> Callable[..., Message]:
    """A seat that sends its message of ``kind`` changed once (its own deck keeps the
    honest one)."""
    done: list[bool] = []

    def forge(session: Session, step: Step, make: Callable[[], Message]) -> Message:
        message = make()
        if step.kind != kind or done:
            return message
        done.append(True)
        return change(message)
    return forge


def swap_two(message: Shuffle) -> Shuffle:
    deck = list(message.deck)
    deck[0], deck[1] = deck[1], deck[0]
    return dataclasses.replace(message, deck=tuple(deck))


def wrong_share(message: ProvedShares) -> ProvedShares:
    first = message.shares[0]
    shares = (mul(12345, G), *first.shares[1:])
    return ProvedShares(party=message.party, shares=(
        dataclasses.replace(first, shares=shares), *message.shares[1:]))


@pytest.mark.parametrize(("kind", "change", "step", "reason"), [
    (Kind.PROVED_SHUFFLE, swap_two, "shuffle", "its shuffle proof: t"),
    (Kind.PROVED_SHARES, wrong_share, "share", "its proof does not hold")])
def test_a_cheat_is_refused_on_arrival_and_forfeits_the_deal(
        kind: str, change: Callable[[Any], Any], step: str, reason: str) -> None:
    table = MemoryTable("nullern", 3, 47, [heuristic_bot] * 3, deck=PROVED_DECK,
                        forges={1: forging(kind, change)})
    table.play(deals=1)
    for seat in (0, 2):
        session = table.sessions[seat]
        run = session.finished[0]
        assert run.verdict.startswith(f"seat 1 forfeits the deal: refused step (its {kind}"
                                      f" refused: {step}: ")
        assert reason in run.verdict
        assert run.outcome.record.forfeit["seat"] == 1
        assert run.outcome.record.forfeit["reason"] == "refused step"
        assert run.signers == [0, 2] and set(run.agrees) == {0, 2}
        assert run.points == table.sessions[0].finished[0].points
        forfeits = [e for e in session.events if isinstance(e, Forfeited)]
        assert forfeits and forfeits[0].seat == 1
    # the signed message is the proof: the transcript holds it, and verify reaches
    # the same verdict from it
    report = verify(table.sessions[0].export())
    assert report.deals[0].verdict == table.sessions[0].finished[0].verdict
    assert report.deals[0].signed == [0, 2]


def test_the_table_command_deals_with_the_proved_deck_and_verify_explains_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, history = tmp_path / "game.bin", tmp_path / "history.json"
    assert main(["table", "pasur", "--players", "2", "--seed", "3", "--deck", "proved",
                 "--transcript", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("deck: proved (cheating refused at once; unplayed cards stay"
                          " secret)\n")
    assert "the game is over" in out and " refused " not in out.split("\n", 1)[1]
    assert main(["verify", str(path), "--explain", "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert "deck round 0 (the 52 card points): 2 of 2 shuffles, each with its proof" in out
    assert "audit: none; the proved deck checked every step on arrival" in out
    assert "dealt: the cards never shown stay secret (" in out and out.endswith("verified\n")
    report = verify(path.read_bytes())
    assert replay(load_history(str(history))).totals == report.totals
