"""The rules docs/protocol.md states for an independent implementation (T1-T20), checked
against whole deals at an in-memory table: each check is written from the spec's
formula (hashlib and the words of the doc), not from the code that makes the messages.
The deals that read today's deck's messages (a move's keys, a HAND pick, the sealing
keys) are dealt with it (``deck=LOCK_DECK``)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from typing import Any

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.games import GAMES
from p2pcards.games.core import CHANCE
from p2pcards.protocol.errors import LocalProtocolError
from p2pcards.protocol.randomness import JointRandom
from p2pcards.protocol.source import SeededSource
from p2pcards.table import kinds
from p2pcards.table.codec import (
    ENVELOPE_DOMAIN,
    Envelope,
    open_envelope,
    pack,
    read_envelope,
    seal_envelope,
    unpack,
    usable_seal_key,
)
from p2pcards.table.kinds import Hello
from p2pcards.table.ledger import Ledger
from p2pcards.table.memory import MemoryTable, seat_identity
from p2pcards.table.roster import LOCK_DECK
from p2pcards.table.session import Session
from p2pcards.table.verify import MAX_TRANSCRIPT, verify

TAG = b"p2pcards/joint-random/v1"
P = 2**255 - 19


def spec_choice(seed: bytes, n: int, index: int = 0) -> int:
    limit = (1 << 256) - (1 << 256) % n
    for counter in range(1 << 16):
        value = int.from_bytes(hashlib.sha256(
            seed + index.to_bytes(4, "big") + counter.to_bytes(2, "big")).digest(), "big")
        if value < limit:
            return value % n
    raise AssertionError("no value")


def spec_sample(seed: bytes, n: int, k: int) -> list[int]:
    pool = list(range(n))
    for i in range(k):
        j = i + spec_choice(seed, n - i, i)
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def envelopes(session: Session) -> list[Envelope]:
    doc = unpack(session.export(), "test", MAX_TRANSCRIPT)
    keys = session.roster.keys
    return [open_envelope(wire, keys) for wire in doc["messages"]]


@pytest.fixture(scope="module")
def controlnut() -> tuple[MemoryTable, list[tuple[list[int], bytes, int]], Shown]:
    """Two deals of Control Nut! (seed 4 has HAND steals), and every HAND pick the
    ledger made: (the victim's slots it drew among, the seed, the slot taken)."""
    picks: list[tuple[list[int], bytes, int]] = []
    original = Ledger.pick_taken

    def spy(self: Ledger, seed: bytes) -> Any:
        assert self.take is not None
        held = self.held(self.take[0])
        steps = original(self, seed)
        picks.append((held, seed, self.take[2]))
        return steps

    shown: Shown = []
    tamper = recording(shown)
    table = MemoryTable("controlnut", 4, 4, [heuristic_bot] * 4, tamper=tamper, deck=LOCK_DECK)
    tamper.table_of.append(table)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Ledger, "pick_taken", spy)
        table.play(deals=2)
    assert all(len(s.finished) >= 2 for s in table.sessions)
    return table, picks, shown


def draws(envs: list[Envelope], players: int) -> Iterator[tuple[bytes, list[Envelope]]]:
    """Each joint draw of the transcript: its label (by the spec's table) and its 2N
    messages (N commits then N shares, in seat order)."""
    counters: dict[int, int] = {}
    table = envs[0].table
    i = 0
    dealt = False
    while i < len(envs):
        env = envs[i]
        dealt = dealt or env.kind == "hello"
        if env.kind != "commit":
            i += 1
            continue
        group = envs[i:i + 2 * players]
        assert [(e.kind, e.sender) for e in group] == \
            [("commit", s) for s in range(players)] + [("share", s) for s in range(players)]
        if not dealt:
            label = b"p2pcards/first-dealer/" + table
        else:
            draw = counters.get(env.deal, 0)
            counters[env.deal] = draw + 1
            label = b"p2pcards/chance/" + table + env.deal.to_bytes(8, "big") \
                + draw.to_bytes(2, "big")
        yield label, group
        i += 2 * players


def test_the_table_draws_with_the_labels_and_formulas_of_the_spec(controlnut: Any) -> None:
    """T1, T4, T6, T7, T8: every draw's commitments and seed from its label; the first
    dealer from the seeded twister; the controls, each auction and each HAND pick."""
    table, picks, _ = controlnut
    session = table.sessions[0]
    envs = envelopes(session)
    seeds: dict[int, list[bytes]] = {}
    first: bytes | None = None
    for label, group in draws(envs, 4):
        shares = [e.body["share"] for e in group[4:]]
        for party, (commit, share) in enumerate(zip(group[:4], shares, strict=True)):
            assert commit.body["digest"] == hashlib.sha256(
                TAG + len(label).to_bytes(2, "big") + label + bytes([party]) + share).digest()
        seed = hashlib.sha256(TAG + b"/seed" + label + b"".join(shares)).digest()
        if label.startswith(b"p2pcards/first-dealer/"):
            first = seed
        else:
            seeds.setdefault(group[0].deal, []).append(seed)
    assert first is not None
    # Control Nut!'s first dealer: below(4) on MT19937 seeded as random.Random(seed)
    assert session.finished[0].dealer == random.Random(first).randrange(4)
    names = GAMES["controlnut"].notation.name
    for run in session.finished[:2]:
        chance = [act.action for seat, act in run.acts if seat == CHANCE]
        drawn = seeds[run.index]
        assert len(chance) == len(drawn)  # every chance move of Control Nut! is a draw
        in_play = sorted(52 + i for i in spec_sample(drawn[0], 8, 4))
        assert chance[0] == "controls " + " ".join(names(c) for c in in_play)
        remaining = list(in_play)
        for text, seed in zip(chance[1:], drawn[1:], strict=True):
            if text.startswith("auction"):
                card = remaining[spec_choice(seed, len(remaining))]
                assert text == f"auction {names(card)}"
                remaining.remove(card)
            else:
                assert text.startswith("steal")
    assert picks, "no HAND pick in these deals"
    for held, seed, slot in picks:
        assert held == sorted(held) and slot == held[spec_choice(seed, len(held))]


def test_a_share_is_revealed_only_after_every_commitment() -> None:
    """T2."""
    mine = JointRandom(b"label", 3, 0, SeededSource("t2"))
    with pytest.raises(LocalProtocolError, match="only after every commitment"):
        mine.reveal()


def rewrite(env: Envelope, body: dict[str, Any], key: Any) -> bytes:
    """``env`` with another body, signed again (by its seat's key)."""
    return seal_envelope(key, table=env.table, deal=env.deal, sender=env.sender, seq=env.seq,
                         prior=env.prior, kind=env.kind, body=body).wire


def test_a_share_that_misses_its_commitment_is_refused_at_the_table() -> None:
    """T3: seat 2 reveals another share than the one it committed to."""
    def other_share(sender: int, wire: bytes) -> list[bytes]:
        env = open_envelope(wire, table.sessions[0].roster.keys)
        if sender != 2 or env.kind != "share":
            return [wire]
        return [rewrite(env, {"share": bytes(32)}, seat_identity(31, 2))]

    table = MemoryTable("pasur", 4, 31, [heuristic_bot] * 4, tamper=other_share)
    before = [s.hash for s in table.sessions]
    table.deliver()
    refused = {(d.at, d.rejection.sender, d.rejection.rule) for d in table.rejected}
    assert refused == {(0, 2, "draw"), (1, 2, "draw"), (3, 2, "draw")}
    assert all("does not match its commitment" in d.rejection.reason for d in table.rejected)
    assert all(s.phase.value == "draw" for s in table.sessions if s.me != 2)
    assert before != [s.hash for s in table.sessions]  # (the commitments were taken)


def spec_shown(game: str, text: str) -> list[str]:
    """The cards an act shows, in `shown` order, by the doc's table."""
    notation = GAMES[game].notation
    words = text.split()
    if game == "controlnut" and words[0] == "bid":
        return sorted(words[1:], key=notation.parse)
    if words[0] != "play":
        return []
    if game == "controlnut":
        return [words[-1]] if notation.parse(words[-1]) < 52 else []
    return [words[1]]


Shown = list[tuple[str, list[str], list[list[int]]]]
"""Each act as it left its sender: its text, the names of the cards of its shown slots
(opened by the mover), and the parties of each shown card's keys."""


def recording(shown: Shown) -> Any:
    """A tamper hook that notes every act as it leaves its sender (and delivers it)."""
    def tamper(sender: int, wire: bytes) -> list[bytes]:
        env = read_envelope(wire, 4)
        if env.kind == "act":
            act = kinds.decode_body("act", env.body, sender)
            assert isinstance(act, kinds.Act)
            run = table_of[0].sessions[sender].run
            assert run is not None
            name = table_of[0].sessions[sender].roster.rules.notation.name
            shown.append((act.action, [name(run.ids[run.deck.opened[slot]])
                                       for slot, _ in act.shown],
                          [[party for party, _ in keys] for _, keys in act.shown]))
        return [wire]
    table_of: list[MemoryTable] = []
    tamper.table_of = table_of  # type: ignore[attr-defined]
    return tamper


def check_shown(game: str, shown: Shown) -> list[str]:
    """Every act shows the cards the spec says, in id order, keys by party; returns the
    texts whose text order is not the id order."""
    differ = []
    for text, names, parties in shown:
        assert names == spec_shown(game, text), text
        assert all(p == sorted(set(p)) and p for p in parties), text
        if names != text.split()[1:len(names) + 1]:
            differ.append(text)
    assert len(shown) > 20
    return differ


def test_a_move_shows_its_cards_in_id_order_with_keys_by_party(controlnut: Any) -> None:
    """T10, T11: Control Nut!'s bids (listed by value in the text, by id in `shown`),
    nut cards and controls played; Pasur's captures, whose taken cards are not shown."""
    _, _, shown = controlnut
    differ = check_shown("controlnut", shown)
    assert any(text.startswith("bid") for text in differ)
    assert any(text.startswith("play ") and not names for text, names, _ in shown)
    pasur_shown: Shown = []
    tamper = recording(pasur_shown)
    pasur = MemoryTable("pasur", 4, 9, [heuristic_bot] * 4, tamper=tamper, deck=LOCK_DECK)
    tamper.table_of.append(pasur)
    pasur.play(deals=1)
    assert any(" take " in text for text, _, _ in pasur_shown)
    check_shown("pasur", pasur_shown)


def test_the_first_game_deal_is_deal_0_and_every_deal_counts(controlnut: Any) -> None:
    """T12."""
    table, _, _ = controlnut
    session = table.sessions[0]
    envs = envelopes(session)
    hellos = [e.deal for e in envs if e.kind == "hello"]
    assert hellos[:8] == [0] * 4 + [1] * 4
    first_hello = next(i for i, e in enumerate(envs) if e.kind == "hello")
    assert {e.deal for e in envs[:first_hello]} == {0}
    assert {e.kind for e in envs[:first_hello]} == {"sign", "commit", "share"}
    agree = [i for i, e in enumerate(envs) if e.kind == "agree"]
    assert {e.deal for e in envs[first_hello:agree[3] + 1]} == {0}
    assert {e.deal for e in envs[agree[3] + 1:agree[7] + 1]} == {1}
    assert [run.deck.context.deal for run in session.finished[:2]] == [0, 1]


LOW_ORDER = [0, 1, 325606250916557431795983626356110631294008115727848805560023387167927233504,
             39382357235489614581723060781553021112529911719440698176882885853963445705823,
             P - 1, P, P + 1]
REFUSED = [(u + top).to_bytes(32, "little") for u in LOW_ORDER for top in (0, 1 << 255)]


def test_exactly_the_low_order_sealing_keys_are_refused() -> None:
    """T13: the spec's 14 keys are refused at the table (rule ``hello``); their
    neighbours and keys drawn at random are usable."""
    assert len(set(REFUSED)) == 14 and not any(map(usable_seal_key, REFUSED))
    near = [u + d for u in LOW_ORDER for d in (-2, 2)
            if 0 <= u + d < 1 << 255 and u + d not in LOW_ORDER]
    assert all(usable_seal_key(u.to_bytes(32, "little")) for u in near)
    rng = random.Random("t13")
    assert all(usable_seal_key(rng.randbytes(32)) for _ in range(200))
    for key in REFUSED:
        def bad_hello(sender: int, wire: bytes, key: bytes = key) -> list[bytes]:
            env = read_envelope(wire, 4)
            if sender != 3 or env.kind != "hello":
                return [wire]
            body = kinds.encode_body(Hello(seal_key=key))[1]
            return [rewrite(env, body, seat_identity(13, 3))]

        table = MemoryTable("bidwhist", 4, 13, [heuristic_bot] * 4, tamper=bad_hello,
                            deck=LOCK_DECK)
        table.deliver()
        assert {(d.at, d.rejection.sender, d.rejection.rule) for d in table.rejected} == \
            {(0, 3, "hello"), (1, 3, "hello"), (2, 3, "hello")}, key.hex()


def test_verify_refuses_a_transcript_that_stops_between_deals(controlnut: Any) -> None:
    """T15: cut right after the first deal's last signature."""
    table, _, _ = controlnut
    doc = unpack(table.sessions[0].export(), "test", MAX_TRANSCRIPT)
    envs = [read_envelope(w, 4) for w in doc["messages"]]
    last_agree = [i for i, e in enumerate(envs) if e.kind == "agree" and e.deal == 0][-1]
    doc["messages"] = doc["messages"][:last_agree + 1]
    report = verify(pack(doc))
    assert len(report.deals) == 1 and not report.ok
    assert report.problem == ("the transcript stops with hello from seat 0 due: the game is"
                              " not finished")


def test_verify_refuses_an_envelope_of_another_version(controlnut: Any) -> None:
    """T16: the first message, signed again as version 2, is refused by name."""
    table, _, _ = controlnut
    doc = unpack(table.sessions[0].export(), "test", MAX_TRANSCRIPT)
    env = read_envelope(doc["messages"][0], 4)
    payload = pack([2, env.table, env.deal, env.sender, env.seq, env.prior, env.kind,
                    env.body])
    signature = seat_identity(4, env.sender).sign(ENVELOPE_DOMAIN + payload)
    doc["messages"][0] = pack([payload, signature])
    report = verify(pack(doc))
    assert report.problem is not None and report.problem.startswith("message 0")
    assert "malformed" in report.problem and "protocol version 2" in report.problem
