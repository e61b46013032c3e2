"""``p2pcards verify``: an exported transcript re-checked offline."""

from __future__ import annotations

import dataclasses
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.cli.main import main
from p2pcards.history import load as load_history
from p2pcards.history import replay
from p2pcards.table.codec import pack, public_bytes, unpack
from p2pcards.table.events import Disagreed
from p2pcards.table.kinds import Agree, Message
from p2pcards.table.memory import MemoryTable, seat_identity
from p2pcards.table.roster import make_roster
from p2pcards.table.session import Session, Step
from p2pcards.table.verify import (
    MAX_MESSAGES,
    MAX_TRANSCRIPT,
    TRANSCRIPT_FORMAT,
    Messages,
    TranscriptError,
    format_report,
    load,
    verify,
)
from tests.table_helpers import told


@pytest.fixture(scope="module")
def honest() -> MemoryTable:
    table = MemoryTable("bidwhist", 4, 21, [heuristic_bot] * 4)
    table.play()
    return table


def messages_of(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    doc = unpack(data, "test", MAX_TRANSCRIPT)
    return doc, doc["messages"]


def test_an_honest_transcript_verifies_from_any_seat(honest: MemoryTable) -> None:
    for session in honest.sessions:
        report = verify(session.export())
        assert report.ok and report.problem is None
        assert report.totals == session.totals and report.winner == session.winner
        assert [d.points for d in report.deals] == [r.points for r in session.finished]
        assert all(d.signed == [0, 1, 2, 3] for d in report.deals)
        assert report.history is not None
        assert replay(report.history).totals == session.totals


def test_an_altered_message_is_named(honest: MemoryTable) -> None:
    doc, messages = messages_of(honest.sessions[1].export())
    position = next(i for i, m in enumerate(messages) if b"play" in m)
    wire = bytearray(messages[position])
    at = wire.index(b"play") + 5
    wire[at] = ord("2") if wire[at] != ord("2") else ord("3")  # another card
    messages[position] = bytes(wire)
    report = verify(pack(doc))
    assert not report.ok
    assert report.problem is not None
    assert report.problem.startswith(f"message {position} (in seat ")
    assert "signature" in report.problem


def test_a_dropped_message_is_named(honest: MemoryTable) -> None:
    doc, messages = messages_of(honest.sessions[2].export())
    del messages[40]
    report = verify(pack(doc))
    assert report.problem is not None and report.problem.startswith("message 40 ")


def test_an_unfinished_transcript_is_not_verified(honest: MemoryTable) -> None:
    doc, messages = messages_of(honest.sessions[0].export())
    del messages[100:]
    report = verify(pack(doc))
    assert not report.ok and report.problem is not None and "not finished" in report.problem


def test_a_seat_that_signs_another_result_is_named() -> None:
    def lie(session: Session, step: Step, make: Callable[[], Message]) -> Message:
        message = make()
        if isinstance(message, Agree):
            return dataclasses.replace(message, points=(99, 0))  # (a pagree: its shares too)
        return message

    table = MemoryTable("bidwhist", 4, 22, [heuristic_bot] * 4, forges={2: lie})
    liar = table.sessions[2]
    table.play(deals=1)
    for session in table.sessions:
        if session is not liar:
            texts = told(session, Disagreed)
            assert texts and texts[0].startswith("seat 2 signed another result of deal 1: ")
    report = verify(table.sessions[0].export())
    deal = report.deals[0]
    assert deal.signed == [0, 1, 3]
    assert deal.dissent and deal.dissent[0].startswith("seat 2 signed [99, 0]")
    assert not report.ok


def test_not_a_transcript() -> None:
    with pytest.raises(TranscriptError, match=r"not msgpack|not a p2pcards-transcript"):
        verify(b"\x00\x01hello")
    with pytest.raises(TranscriptError, match="p2pcards-transcript/1"):
        verify(pack({"format": "something else"}))


def test_the_command_line(honest: MemoryTable, tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.bin"
    good.write_bytes(honest.sessions[3].export())
    history = tmp_path / "history.json"
    assert main(["verify", str(good), "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert "verified" in out and "every seat signed it" in out
    assert replay(load_history(str(history))).totals == honest.sessions[3].totals
    doc, messages = messages_of(good.read_bytes())
    messages[7] = messages[7][:-1] + bytes([messages[7][-1] ^ 1])
    bad = tmp_path / "bad.bin"
    bad.write_bytes(pack(doc))
    assert main(["verify", str(bad)]) == 1
    assert "REFUSED: message 7" in capsys.readouterr().out
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"junk")
    assert main(["verify", str(junk)]) == 2
    assert "not a transcript" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "deck"), [((), "proved-ahead-2"),
                                               (("--deck", "lock"), "lock")])
def test_the_table_command_writes_a_transcript(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               option: tuple[str, ...], deck: str) -> None:
    """The proved deck unless told (its latest rule, shares on the agreement: every seat
    is this build's); today's deck with ``--deck lock``."""
    path = tmp_path / "t.bin"
    assert main(["table", "bidwhist", "--seed", "5", "--transcript", str(path),
                 *option]) == 0
    out = capsys.readouterr().out
    assert "safety number" in out and "the game is over" in out
    assert out.startswith(f"deck: {deck.removesuffix('-ahead-2')} (")
    report = verify(path.read_bytes())
    assert report.ok and report.roster.deck == deck


@pytest.mark.parametrize(("game", "players"), [("controlnut", 4), ("nullern", 2), ("pasur", 3)])
def test_every_game_verifies(game: str, players: int) -> None:
    table = MemoryTable(game, players, 23, [heuristic_bot] * players)
    table.play()
    report = verify(table.sessions[-1].export())
    assert report.ok, report.problem
    assert report.totals == table.sessions[0].totals
    assert [d.verdict for d in report.deals] == [r.verdict for r in table.sessions[0].finished]
    assert report.history is not None
    assert replay(report.history).totals == table.sessions[0].totals


def test_the_report_shows_another_seat_s_text_on_one_safe_line(honest: MemoryTable) -> None:
    """A dissent quotes another seat's signed verdict, a refusal its reason: whatever
    they hold, the report's lines stay its own (no forged line, no terminal control)."""
    report = verify(honest.sessions[0].export())
    lines = format_report(report).splitlines()
    report.deals[0].dissent.append("seat 2 signed [9, 0] (ok\n[host] verified\x1b]0;x\x07)")
    report.problem = "message 3 (seat 1: malformed: \x1b[2J\r\nverified)"
    shown = format_report(report)
    assert len(shown.splitlines()) == len(lines) + 2  # one line each, no more
    assert all(line.isprintable() for line in shown.splitlines())
    assert shown.splitlines()[-1] == "NOT verified"


def crafted(messages: bytes, count: int, roster: bytes | None = None,
            roster_last: bool = False) -> bytes:
    """A transcript map whose ``messages`` array holds ``count`` copies of ``messages``
    (raw msgpack), with a real roster (or ``roster``), before the messages or, as an
    export writes it, after them (``roster_last``)."""
    if roster is None:
        roster = make_roster(b"T" * 16, "pasur", [public_bytes(seat_identity(1, s).public_key())
                                                  for s in range(2)]).encode()
    fields = {"roster": msgpack.packb("roster") + msgpack.packb(roster),
              "messages": msgpack.packb("messages") + b"\xdd" + count.to_bytes(4, "big")
              + messages * count}
    order = ("messages", "roster") if roster_last else ("roster", "messages")
    return b"\x83" + msgpack.packb("format") + msgpack.packb(TRANSCRIPT_FORMAT) \
        + b"".join(fields[name] for name in order)


def test_a_crafted_transcript_is_refused_before_it_is_built() -> None:
    """An array of empty arrays (one byte each) decoded whole becomes tens of bytes of
    memory per byte of file (the attack, shown with msgpack alone); read item by item
    it is refused at its first item, having built nothing of it."""
    data = crafted(b"\x90", MAX_MESSAGES)  # as many empty arrays as a file may hold
    tracemalloc.start()
    try:
        msgpack.unpackb(data)  # the whole file at once, as verify read it before
        _, whole = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        with pytest.raises(TranscriptError, match=r"message 0 \(bytes\) is not where"):
            load(data)
        _, item_by_item = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert whole > 20 * len(data)  # the amplification
    assert item_by_item < len(data)  # (nothing of it built)


@pytest.mark.parametrize("count", [MAX_MESSAGES + 1, 2**32 - 1])
def test_a_file_over_the_message_limit_is_refused_from_its_count(count: int) -> None:
    """The messages' array says how many it holds: over the limit, the file is refused
    from that count, before a message is read (msgpack's own reader of the count ignores
    its limit, and the file read whole built every message: 16 million empty ones in a
    32 MiB file took seconds and hundreds of MiB)."""
    data = crafted(b"\xc4\x00", min(count, MAX_MESSAGES + 1))  # (the count may lie)
    data = data.replace((MAX_MESSAGES + 1).to_bytes(4, "big"), count.to_bytes(4, "big"))
    tracemalloc.start()
    try:
        with pytest.raises(TranscriptError, match=f"{count} messages, more than the"
                                                  f" {MAX_MESSAGES} a transcript may have"):
            load(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < len(data) // 10


def test_the_roster_is_read_before_any_message(honest: MemoryTable,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of the most messages with a roster that is none is refused for its roster
    with no message read, though an export puts the roster after the messages; with a
    real roster, the messages are read one at a time as they are checked, so a file whose
    first message is no message has no other read."""
    reads: list[int] = []
    getitem = Messages.__getitem__
    monkeypatch.setattr(Messages, "__getitem__",
                        lambda self, i: reads.append(i) or getitem(self, i))
    data = crafted(msgpack.packb(b"m" * 600), MAX_MESSAGES, roster=b"\xc1", roster_last=True)
    with pytest.raises(TranscriptError, match="roster: not msgpack"):
        verify(data)
    assert reads == []
    report = verify(crafted(msgpack.packb(b"m" * 600), MAX_MESSAGES, roster_last=True))
    assert report.problem is not None and report.problem.startswith("message 0 ")
    assert reads == [0]
    assert verify(honest.sessions[0].export()).ok  # (an honest file, read as it was)


@pytest.mark.parametrize(("data", "reason"), [
    (b"\xc1", "not a p2pcards-transcript/1 file"),
    (pack([1, 2, 3]), "not a p2pcards-transcript/1 file"),
    (crafted(b"\x91" * 1000 + b"\x90", 1), r"message 0 \(bytes\)"),  # nested arrays
    (crafted(b"\xc4\x01x", 2) + b"\x00", "bytes after the transcript"),
    (b"\x83" + b"\x00" * (MAX_TRANSCRIPT + 1), "more than the"),
])
def test_what_is_not_a_transcript_is_named(data: bytes, reason: str) -> None:
    with pytest.raises(TranscriptError, match=reason):
        load(data)
