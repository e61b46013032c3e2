"""The journal never loses data silently (docs/networking.md, "The journal"): every
record checksummed; only a last record cut short by a kill dropped on opening (and cut
off by the first commit, never by opening); any other damage refused with the file,
the record and its byte named, and the file left as it was; a journal of the earlier
format opened and resumed, a length of it damaged in the middle refused too; a record
that reads but does not replay named, never a traceback; at the command line, one line
and status 2."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2pcards.cli import netcmd
from p2pcards.net.identity import encode_id
from p2pcards.net.invite import Invite, parse_invite
from p2pcards.net.journal import (
    HEADER,
    MAGIC,
    MAX_RECORD,
    OLD_HEADER,
    Journal,
    JournalError,
    pack_record,
    read,
    read_contents,
)
from p2pcards.net.peer import Peer
from p2pcards.net.series import fresh_journal, settle
from p2pcards.net.settings import Settings
from p2pcards.table.roster import LOCK_DECK
from tests.net_helpers import Lines, Relay, make_host, make_joiner
from tests.test_net_procs import free_port

P2PCARDS = [sys.executable, "-m", "p2pcards"]


def write(path: Path, records: list[list[Any]]) -> bytes:
    """A journal of ``records``, written as the program writes one; its bytes."""
    journal = Journal.open(path)
    for record in records:
        journal.append(*record)
    journal.close()
    return path.read_bytes()


def spans(data: bytes) -> list[tuple[int, int]]:
    """Where each record of a journal of the checksummed format begins and ends."""
    found, at = [], len(MAGIC)
    while at < len(data):
        end = at + HEADER.size + HEADER.unpack_from(data, at)[0]
        found.append((at, end))
        at = end
    return found


def many(count: int) -> list[list[Any]]:
    """``count`` records of various lengths."""
    return [["table", {"n": 0}]] + [["in", bytes([n % 251]) * (n * 37 % 300 + 1)]
                                    for n in range(1, count)]


def flipped(data: bytes, at: int, mask: int = 0x10) -> bytes:
    return data[:at] + bytes([data[at] ^ mask]) + data[at + 1:]


def refused(path: Path, *expected: str) -> str:
    """Opening the journal at ``path`` is refused, the error says each of ``expected``
    and what the person can do, and the file is left as it was."""
    before = path.read_bytes()
    with pytest.raises(JournalError) as caught:
        Journal.open(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    for text in expected:
        assert text in message
    assert "the file is left as it was" in message and "host --new" in message
    assert path.read_bytes() == before
    again = Journal.open(path.with_name("other"))  # (the lock let go: no file left open)
    again.close()
    return message


# ------------------------------------------------------------------ the format


def test_a_new_journal_is_written_in_the_checksummed_format(tmp_path: Path) -> None:
    path = tmp_path / "j"
    data = write(path, [["in", b"one"]])
    body = msgpack.packb(["in", b"one"], use_bin_type=True)
    head = struct.pack(">II", len(body), zlib.crc32(body))
    assert data == MAGIC + head + struct.pack(">I", zlib.crc32(head)) + body
    journal = Journal.open(path)  # appended: no second marker
    assert journal.version == 2 and journal.records == [["in", b"one"]]
    journal.append("in", b"two")
    journal.close()
    assert path.read_bytes() == data + pack_record(["in", b"two"])
    assert read(path) == ([["in", b"one"], ["in", b"two"]], len(path.read_bytes()))
    assert path.stat().st_mode & 0o777 == 0o600


def test_one_process_per_journal(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal.open(path)
    with pytest.raises(JournalError, match="another p2pcards process"):
        Journal.open(path)  # two processes playing one seat would send two versions
    journal.close()


LAST_CUTS = {"in its header": (1, 6, 11), "in its payload": (12, 13, -1)}


@pytest.mark.parametrize("cut", [*LAST_CUTS["in its header"], *LAST_CUTS["in its payload"]])
def test_a_last_record_cut_short_by_a_kill_is_dropped(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "j"
    records = many(5)
    data = write(path, records)
    start, end = spans(data)[-1]
    left = data[:end + cut if cut < 0 else start + cut]
    path.write_bytes(left)
    journal = Journal.open(path)
    assert journal.records == records[:-1]
    assert journal.dropped == len(left) - start
    assert "were dropped: it was never sent" in journal.dropped_note()
    journal.close()  # (nothing committed: nothing written, nothing cut)
    assert path.read_bytes() == left
    journal = Journal.open(path)
    assert path.read_bytes() == left  # opening writes nothing
    journal.append("in", b"after")
    journal.commit()  # the first commit cuts what was dropped, then appends
    assert path.read_bytes() == data[:start] + pack_record(["in", b"after"])
    journal.append("in", b"again")
    journal.close()
    assert read(path)[0] == [*records[:-1], ["in", b"after"], ["in", b"again"]]


def test_what_a_kill_leaves_before_any_record_is_no_journal_yet(tmp_path: Path) -> None:
    """A file cut inside its marker, or empty, holds nothing yet: the next commit writes
    the marker again; a whole journal opened has nothing to drop."""
    path = tmp_path / "j"
    data = write(path, [["in", b"one"]])
    for cut in (0, 1, len(MAGIC) - 1):
        path.write_bytes(data[:cut])
        journal = Journal.open(path)
        assert journal.records == [] and path.read_bytes() == data[:cut]
        journal.append("in", b"two")
        journal.close()
        assert path.read_bytes() == MAGIC + pack_record(["in", b"two"])
    journal = Journal.open(path)
    assert journal.dropped == 0 and journal.dropped_note() == ""
    journal.close()


def test_zeros_where_a_write_was_cut_off_are_dropped(tmp_path: Path) -> None:
    """(Some file systems grow a file before its bytes reach the disk: a power cut
    leaves zeros there, which hold no record.)"""
    path = tmp_path / "j"
    records = many(4)
    data = write(path, records)
    path.write_bytes(data + bytes(300))
    journal = Journal.open(path)
    assert journal.records == records and journal.dropped == 300
    journal.append("in", b"after")
    journal.close()
    assert path.read_bytes() == data + pack_record(["in", b"after"])
    path.write_bytes(data + bytes(300) + b"\x01")  # not only zeros: damage
    refused(path, f"record 4 (byte {len(data)}) has a header that fails its checksum")


# ------------------------------------------------------------------ damage


def test_a_length_damaged_in_the_middle_is_refused_not_taken_for_a_kill(
        tmp_path: Path) -> None:
    """351 records, the length of record 176 made to run past the end: what the earlier
    rule took for a record cut short, dropping it and every record after it, 175 of
    351, without a word.  Refused in either format."""
    path = tmp_path / "table.journal"
    data = write(path, many(351))
    start, _ = spans(data)[176]
    for size in (len(data), len(data) - start - HEADER.size + 1, 3):  # past the end, or not
        damaged = data[:start] + struct.pack(">I", size) + data[start + 4:]
        path.write_bytes(damaged)
        refused(path, f"record 176 (byte {start}) has a header that fails its checksum",
                "the journal is damaged")
    path.write_bytes(data[:start] + struct.pack(">I", 2 << 20) + data[start + 4:])
    refused(path, f"record 176 (byte {start}) has a header")
    old = old_format(many(351))  # the earlier format: no checksum, yet whole records
    start = len(old_format(many(351)[:176]))  # follow the length, which a kill leaves not
    for size in (len(old), len(old) - start - OLD_HEADER.size + 1):
        path.write_bytes(old[:start] + OLD_HEADER.pack(size) + old[start + 4:])
        refused(path, f"record 176 (byte {start}) claims {size} bytes, past the end of the"
                " file, yet what follows it is not a record cut short",
                "the journal is damaged")
    last = len(old_format(many(351)[:350]))  # the last record's length too: it is whole
    path.write_bytes(old[:last] + OLD_HEADER.pack(len(old)) + old[last + 4:])
    refused(path, f"record 350 (byte {last}) claims")


@pytest.mark.parametrize("where", ["the length", "the payload's checksum",
                                   "the header's checksum", "the payload"])
@pytest.mark.parametrize("which", [1, 176, 349, 350])
def test_a_flipped_bit_in_a_complete_record_is_refused(tmp_path: Path, which: int,
                                                       where: str) -> None:
    """Anywhere in a whole record, the last one included (it is whole: no kill cut it)."""
    path = tmp_path / "j"
    data = write(path, many(351))
    start, end = spans(data)[which]
    at = {"the length": start + 2, "the payload's checksum": start + 5,
          "the header's checksum": start + 9, "the payload": (start + HEADER.size + end) // 2}
    path.write_bytes(flipped(data, at[where], 0x01))
    message = refused(path, f"record {which} (byte {start}) ")
    if where == "the payload":
        assert "fails its checksum" in message and "header" not in message.split(":")[1]
    else:
        assert "has a header that fails its checksum" in message


def test_a_journal_that_is_not_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j"
    path.write_bytes(b"{}\n")
    refused(path, "not a p2pcards journal")
    data = write(tmp_path / "whole", many(3))
    path.write_bytes(flipped(data, 3))
    refused(path, "not a p2pcards journal")
    path.write_bytes(flipped(data, 0, data[0]))  # (its first byte zero: the earlier format)
    refused(path, "record 0 (byte 0) claims")


def test_a_record_that_is_not_a_journal_record_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.journal"
    for body, what in ((b"\xc1\xc1\xc1", "is not msgpack"), (b"\x01", "is not a journal"
                                                               " record")):
        head = struct.pack(">II", len(body), zlib.crc32(body))
        path.write_bytes(MAGIC + head + struct.pack(">I", zlib.crc32(head)) + body)
        refused(path, f"record 0 (byte {len(MAGIC)}) {what}")
        path.write_bytes(OLD_HEADER.pack(len(body)) + body)  # the earlier format too
        refused(path, f"record 0 (byte 0) {what}")


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_byte_changed_is_refused_or_in_a_record_cut_short(tmp_path: Path,
                                                              data: st.DataObject) -> None:
    """Whatever single byte is changed, in a whole journal or in one a kill cut short:
    a change in a whole record, or in the marker, is refused; a change in what the kill
    left of the last record is refused or dropped with it; the records read are never
    others than the ones written."""
    path = tmp_path / "j"
    path.unlink(missing_ok=True)  # (one file for every example)
    records = data.draw(st.lists(st.tuples(st.sampled_from(["in", "out", "act"]),
                                           st.binary(max_size=40)), min_size=1, max_size=6))
    written = [list(r) for r in records]
    whole = write(path, written)
    cut = data.draw(st.integers(len(MAGIC), len(whole)))
    at = data.draw(st.integers(0, cut - 1))
    damaged = flipped(whole[:cut], at, data.draw(st.integers(1, 255)))
    path.write_bytes(damaged)
    complete = [end for _, end in spans(whole) if end <= cut]
    kept = len(complete)
    try:
        journal = Journal.open(path)
    except JournalError:
        assert path.read_bytes() == damaged
        return
    assert path.read_bytes() == damaged
    assert at >= (complete[-1] if complete else len(MAGIC)), "a whole record changed"
    assert journal.records == written[:kept]
    journal.append("in", b"after")
    journal.close()
    assert path.read_bytes() == whole[:complete[-1] if complete else len(MAGIC)] + \
        pack_record(["in", b"after"])


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_earlier_format_drops_a_record_cut_short_and_refuses_a_length_damaged(
        tmp_path: Path, data: st.DataObject) -> None:
    """A journal of the earlier format cut anywhere opens with its whole records; one
    whose length is made to run past the end, but for a record cut short, is refused,
    the last record's included: what follows it holds a whole record."""
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "old.journal"  # (one per example)
    records = data.draw(st.lists(st.tuples(
        st.sampled_from(["in", "out", "act"]),
        st.one_of(st.binary(max_size=300), st.integers(-(1 << 63), (1 << 64) - 1),
                  st.text(max_size=40))),
        min_size=1, max_size=6))
    written = [["table", {"n": 0}], *(list(r) for r in records)]
    whole = old_format(written)
    ends = [len(old_format(written[:n])) for n in range(1, len(written) + 1)]
    cut = data.draw(st.integers(ends[0], len(whole)))
    path.write_bytes(whole[:cut])
    journal = Journal.open(path)
    assert journal.records == written[:sum(end <= cut for end in ends)]
    assert journal.dropped == cut - max(end for end in ends if end <= cut)
    journal.close()
    assert path.read_bytes() == whole[:cut]
    which = data.draw(st.integers(0, len(written) - 1))
    start = ends[which - 1] if which else 0
    size = data.draw(st.integers(len(whole) - start - OLD_HEADER.size + 1, MAX_RECORD))
    path.write_bytes(whole[:start] + OLD_HEADER.pack(size) + whole[start + 4:])
    refused(path, f"record {which} (byte {start}) claims {size} bytes, past the end")


# ------------------------------------------------------------------ the earlier format


def old_format(records: list[list[Any]]) -> bytes:
    """``records`` as a journal of the earlier format held them: a length, a payload."""
    bodies = [msgpack.packb(record, use_bin_type=True) for record in records]
    return b"".join(OLD_HEADER.pack(len(body)) + body for body in bodies)


def killed_at(tmp_path: Path, seat: int, kind: str, count: int) -> Relay:
    """A table of Pasur (today's deck) whose seat ``seat`` was killed right after its
    ``count``-th message of kind ``kind``."""
    relay = Relay(tmp_path, "pasur", 2, "journal", {"target": 20}, deck=LOCK_DECK)
    seen = 0

    def kill(sender: int, sent: str) -> bool:
        nonlocal seen
        seen += sender == seat and sent == kind
        return sender == seat and sent == kind and seen == count

    assert relay.play(kill) is True
    return relay


def test_a_journal_of_the_earlier_format_opens_and_resumes(tmp_path: Path) -> None:
    reference = Relay(tmp_path / "reference", "pasur", 2, "journal", {"target": 20},
                      deck=LOCK_DECK)
    assert reference.play() is False
    relay = killed_at(tmp_path / "run", 1, "act", 3)
    records = read(relay.path(1))[0]
    old = old_format(records)
    cut = old_format([["in", b"x" * 100]])[:60]
    relay.path(1).write_bytes(old + cut)  # cut short by the kill
    restored = relay.restart(1)
    assert relay.play() is False
    assert restored.over
    assert relay.history(1) == relay.history(0) == reference.history()
    data = relay.path(1).read_bytes()
    assert data.startswith(old) and data[0] == 0  # the game went on in its format
    contents = read_contents(relay.path(1))
    assert contents.version == 1 and contents.records[:len(records)] == records
    assert len(contents.records) > len(records)
    assert write(tmp_path / "fresh", records).startswith(MAGIC)  # a new one: checksummed


def test_a_bit_flipped_in_an_old_journal_is_named_when_it_does_not_replay(
        tmp_path: Path) -> None:
    """The earlier format has no checksum: a move's code changed reads, and its replay
    fails (the rules refuse it), which is named rather than raised."""
    relay = killed_at(tmp_path, 1, "act", 3)
    records = read(relay.path(1))[0]
    number = max(n for n, r in enumerate(records) if r[0] == "act")
    records[number] = ["act", 1, records[number][2] ^ 1]
    data = old_format(records)
    relay.path(1).write_bytes(data)
    offset = len(old_format(records[:number]))
    journal = Journal.open(relay.path(1))
    with pytest.raises(JournalError) as caught:
        Peer.restore(journal)
    journal.close()
    message = str(caught.value)
    assert message.startswith(f"{relay.path(1)}: record {number} (byte {offset}) does not"
                              " replay (its kind 'act'; IllegalAction: ")
    assert "the file is left as it was" in message
    assert relay.path(1).read_bytes() == data


# ------------------------------------------------------------------ replaying


UNREPLAYABLE = {
    "an illegal move": (["act", 1, 1 << 20], "its kind 'act'; IllegalAction: "),
    "a seat not this peer's": (["act", 7, 0], "its kind 'act'; KeyError: 7"),
    "a record too short": (["claim", 1], "its kind 'claim'; IndexError: "),
    "a message sent that is not one": (["out", b"junk"], "its kind 'out'; ValueError: a"
                                                         " message this peer sent"),
    "a void not this seat's": (["void", 0, "why"], "its kind 'void'; "),
}


@pytest.mark.parametrize("case", sorted(UNREPLAYABLE))
def test_a_record_that_reads_but_does_not_replay_is_named(tmp_path: Path,
                                                          case: str) -> None:
    relay = killed_at(tmp_path, 1, "act", 3)
    record, expected = UNREPLAYABLE[case]
    path = relay.path(1)
    with path.open("ab") as f:
        f.write(pack_record(record))
    number = len(read(path)[0]) - 1
    offset = spans(path.read_bytes())[number][0]
    journal = Journal.open(path)
    with pytest.raises(JournalError) as caught:
        Peer.restore(journal)
    journal.close()
    assert str(caught.value).startswith(f"{path}: record {number} (byte {offset}) does not"
                                        f" replay ({expected}")
    assert "the journal is damaged; the file is left as it was" in str(caught.value)


def test_a_table_record_or_a_kind_that_does_not_read_is_named(tmp_path: Path) -> None:
    path = tmp_path / "j"
    write(path, [["table", {"roster": b"x"}]])
    journal = Journal.open(path)
    with pytest.raises(JournalError, match=r"record 0 \(byte 19\) does not replay \(its"
                       r" table; CodecError: "):
        Peer.restore(journal)
    journal.close()
    path = tmp_path / "short"
    write(path, [["table"]])
    journal = Journal.open(path)
    with pytest.raises(JournalError, match=r"record 0 \(byte 19\) does not replay \(its"
                       r" table; IndexError: "):
        Peer.restore(journal)
    journal.close()
    path = tmp_path / "empty"
    path.write_bytes(b"")
    journal = Journal.open(path)
    with pytest.raises(JournalError, match="does not begin with its table"):
        Peer.restore(journal)
    journal.close()
    path = tmp_path / "in-first"
    write(path, [["in", b"x"], ["table", {}]])
    journal = Journal.open(path)
    with pytest.raises(JournalError, match=r"record 0 \(byte 19\) is not the table's \(its"
                       r" kind 'in'\): the journal does not begin with its table: the"
                       r" journal is damaged; the file is left as it was"):
        Peer.restore(journal)
    journal.close()
    relay = killed_at(tmp_path / "table", 1, "act", 1)
    with relay.path(1).open("ab") as f:
        f.write(pack_record(["frob", 1]))
    journal = Journal.open(relay.path(1))
    with pytest.raises(JournalError, match=r"is of a kind this p2pcards does not journal"
                       r" \('frob'\)"):
        Peer.restore(journal)
    journal.close()


def test_a_journal_refused_on_replay_keeps_even_what_a_kill_cut_short(
        tmp_path: Path) -> None:
    """A record that does not replay, then a last record cut short: opening drops the
    one cut short but writes nothing, so the journal refused keeps every byte."""
    relay = killed_at(tmp_path, 1, "act", 3)
    path = relay.path(1)
    with path.open("ab") as f:
        f.write(pack_record(["act", 1, 1 << 20]) + pack_record(["in", b"x" * 80])[:40])
    before = path.read_bytes()
    journal = Journal.open(path)
    assert journal.dropped == 40
    with pytest.raises(JournalError, match=r"does not replay \(its kind 'act'; IllegalAction"):
        Peer.restore(journal)
    journal.close()
    assert path.read_bytes() == before


def with_settings(path: Path, settings: dict[str, Any]) -> list[list[Any]]:
    """The journal at ``path`` written again with ``settings`` in its table record (what
    a host's or a joiner's holds); its records."""
    records = read(path)[0]
    records[0][1]["settings"] = settings
    path.write_bytes(MAGIC + b"".join(pack_record(r) for r in records))
    return records


def test_a_host_or_joiner_resumed_names_what_does_not_read_and_what_was_dropped(
        tmp_path: Path) -> None:
    relay = killed_at(tmp_path / "table", 1, "act", 3)
    invite = Invite("127.0.0.1", 9, bytes(32), bytes(16))
    for name, kept in (("host", {"table": {"replace": ""}}),
                       ("joe", {"table": {"replace": ""}, "token": bytes(16)})):
        path = tmp_path / f"{name}.journal"
        shutil.copy(relay.path(1), path)
        with_settings(path, kept)  # (no grace period, no turn timer)
        with pytest.raises(JournalError) as caught:
            make_host(tmp_path) if name == "host" else make_joiner(tmp_path, invite, name)
        assert str(caught.value).startswith(
            f"{path}: record 0 does not read (the table's settings; ValueError: table"
            " settings: grace")
    path = tmp_path / "kim.journal"  # (joe's is held till the test ends)
    shutil.copy(relay.path(1), path)
    with_settings(path, {"table": Settings(grace=60).to_wire(), "token": bytes(16)})
    with path.open("ab") as f:
        f.write(pack_record(["in", b"cut short"])[:20])
    joiner = make_joiner(tmp_path, invite, "kim")
    said = joiner.say
    assert isinstance(said, Lines)
    assert said[0].startswith(f"resuming from {path} (")
    assert said[0].endswith("; its last 20 bytes, a record cut short when the program"
                            " stopped, were dropped: it was never sent)")
    joiner.journal.close()


# ------------------------------------------------------------------ writing


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_journal_that_cannot_be_written_stops_every_commit(tmp_path: Path) -> None:
    """(A disk full: what could not be recorded must not be sent.)"""
    path = tmp_path / "j"
    journal = Journal.open(path)
    path.symlink_to("/dev/full")  # (the file opens at the first commit)
    journal.append("in", b"one")
    with pytest.raises(JournalError, match=r"j: cannot write the journal \(No space left on"
                       r" device\): this peer stops here, before it sends"):
        journal.commit()
    journal.append("in", b"two")
    with pytest.raises(JournalError, match="cannot write the journal"):
        journal.commit()
    journal.close()  # lets go, writes nothing
    assert Journal.open(tmp_path / "other").records == []


def test_a_record_more_than_a_journal_reads_back_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "j"
    before = write(path, [["in", b"one"]])
    journal = Journal.open(path)
    with pytest.raises(JournalError, match=r"j: a record of \d+ bytes \(its kind 'in'\) is"
                       r" more than a journal holds \(1048576\): it is not written"):
        journal.append("in", bytes(MAX_RECORD))
    journal.close()
    assert path.read_bytes() == before
    big = ["in", bytes(MAX_RECORD - 100)]  # (what fits is written, and reads back)
    write(tmp_path / "big", [big])
    assert read(tmp_path / "big")[0] == [big]


def test_a_journal_that_cannot_be_locked_or_moved_is_a_journal_error(
        tmp_path: Path) -> None:
    """(Each as the command says a journal problem: one line, never a traceback.)"""
    (tmp_path / "j.lock").mkdir()
    with pytest.raises(JournalError, match=r"j: cannot lock the journal \(.*j\.lock: Is a"
                       r" directory\)"):
        Journal.open(tmp_path / "j")
    older = tmp_path / "t-2.journal"  # an older table's game 2, moved aside for a new one
    older.write_bytes(b"older")
    (tmp_path / "t-2.abandoned").mkdir()
    (tmp_path / "t-2.abandoned" / "x").touch()  # (nothing can be renamed onto it)
    with pytest.raises(JournalError, match=r"t-2\.journal: cannot rename the journal to"
                       r" t-2\.abandoned \("):
        fresh_journal(tmp_path / "t.journal", 2)
    assert older.read_bytes() == b"older"


def test_a_finished_game_whose_journal_cannot_be_kept_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A game over whose journal cannot be renamed done, or whose last commit fails: a
    journal error (the command's one line and status 2), and the journal is not kept
    as done."""
    relay = Relay(tmp_path, "pasur", 2, "journal", {"target": 20}, deck=LOCK_DECK)
    assert relay.play() is False
    peer = relay.peers[0]
    assert peer is not None and peer.over and peer.journal is not None
    done = relay.path(0).with_suffix(".done")
    done.mkdir()
    (done / "x").touch()
    with pytest.raises(JournalError, match=r"seat0\.journal: cannot rename the journal to"
                       r" seat0\.done \("):
        settle(peer, peer.journal)
    assert relay.path(0).exists()
    if not Path("/dev/full").exists():
        return
    path = tmp_path / "full.journal"
    journal = Journal.open(path)
    path.symlink_to("/dev/full")  # (a disk full: the file opens at the first commit)
    journal.append("in", b"last")
    assert netcmd._settle_journal(journal, peer) is False
    said = capsys.readouterr().err
    assert said.startswith(f"p2pcards: {path}: cannot write the journal (No space left on"
                           " device)") and said.count("\n") == 1
    assert journal.failed and path.is_symlink() and not path.with_suffix(".done").exists()


# ------------------------------------------------------------------ the command line


def run(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*P2PCARDS, *argv], env={**os.environ, "P2PCARDS_HOME": str(home)},
                          capture_output=True, text=True, timeout=60, check=False)


def said_once(done: subprocess.CompletedProcess[str], path: Path, *expected: str) -> None:
    """The command ended with status 2 and one line naming the journal, no traceback."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr.startswith(f"p2pcards: {path}: ") and done.stderr.count("\n") == 1
    for text in expected:
        assert text in done.stderr
    assert "the file is left as it was" in done.stderr


@pytest.mark.slow
def test_host_and_join_stop_on_a_damaged_journal_in_one_line(tmp_path: Path) -> None:
    """In real processes: a host whose journal has a bit flipped in a middle record, and
    one whose journal of the earlier format has a length damaged to run past the end; a
    joiner whose journal has a record that reads but does not replay, then one a kill
    cut short; and a host whose last game, finished, is kept in a damaged journal (a
    series of games): status 2, one line, and every file the same bytes as before."""
    tables = tmp_path / "host" / "tables"
    tables.mkdir(parents=True)
    relay = killed_at(tmp_path / "table", 1, "act", 3)
    data = relay.path(1).read_bytes()
    start, end = spans(data)[5]
    port = free_port()
    journal = tables / f"host-pasur-{port}.journal"
    journal.write_bytes(flipped(data, (start + end) // 2))
    host = ["host", "pasur", "--players", "2", "--bot", "heuristic", "--bind", "127.0.0.1",
            "--port", str(port)]
    said_once(run(tmp_path / "host", *host), journal,
              f"record 5 (byte {start}) fails its checksum")
    assert journal.read_bytes() == flipped(data, (start + end) // 2)
    records = read(relay.path(1))[0]
    old = old_format(records)
    start = len(old_format(records[:5]))
    damaged = old[:start] + OLD_HEADER.pack(len(old)) + old[start + 4:]
    journal.write_bytes(damaged)
    said_once(run(tmp_path / "host", *host), journal,
              f"record 5 (byte {start}) claims {len(old)} bytes, past the end of the file")
    assert journal.read_bytes() == damaged

    invite = "p2pcards://127.0.0.1:9/" + "A" * 52 + "/" + "A" * 26
    joined = tmp_path / "joiner" / "tables" / \
        f"join-{encode_id(parse_invite(invite).token)}.journal"
    joined.parent.mkdir(parents=True)
    unreplayable = data + pack_record(["act", 1, 1 << 20]) + \
        pack_record(["in", b"x" * 80])[:40]
    joined.write_bytes(unreplayable)
    said_once(run(tmp_path / "joiner", "join", invite, "--bot", "heuristic"), joined,
              f"record {len(spans(data))} (byte {len(data)}) does not replay (its kind"
              " 'act'; IllegalAction: ")
    assert joined.read_bytes() == unreplayable

    journal.unlink()
    done = journal.with_suffix(".done")
    done.write_bytes(data[:end] + b"\x01" + data[end + 1:])  # the length of record 6
    series = journal.with_suffix(".series")
    series.write_text('{"format": "p2pcards-series/1", "ended": "", "games": [{"table":'
                      ' "00", "result": {"game": "pasur", "names": ["a", "b"], "totals":'
                      ' [1, 2], "winner": 1}}]}')
    said_once(run(tmp_path / "host", *host), done,
              f"record 6 (byte {end}) has a header that fails its checksum")
    assert done.read_bytes() == data[:end] + b"\x01" + data[end + 1:]


@pytest.mark.slow
def test_a_host_that_cannot_write_its_journal_stops_in_one_line(tmp_path: Path) -> None:
    """A table of the host and its bot begins at once, and its first commit fails (the
    journal's directory is gone): status 2, one line, nothing sent."""
    tables = tmp_path / "home" / "tables"
    tables.mkdir(parents=True)
    port = free_port()
    journal = tables / f"host-pasur-{port}.journal"
    journal.symlink_to(tmp_path / "gone" / "host.journal")
    done = run(tmp_path / "home", "host", "pasur", "--players", "2", "--bots", "1", "--bot",
               "heuristic", "--bind", "127.0.0.1", "--port", str(port))
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"p2pcards: {journal}: cannot write the journal (No such file or" \
        " directory): this peer stops here, before it sends what it could not record;" \
        " once the journal can be written, the same command goes on from what it holds\n"
    assert "Traceback" not in done.stdout and "roster:" not in done.stdout
