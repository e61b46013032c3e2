"""A peer's journal: its secrets and every message, on disk before anything is sent.

Records are msgpack lists appended to one owner-only file.  The first is the
table (the roster, this peer's seat keys and its secret seed, the table
settings); then, in the order they happened, every table message taken from the
network (``in``), every message this peer's seats sent (``out``), every
decision (``act``, ``answer``) and claim (``claim``).  :meth:`Journal.commit`
writes and fsyncs; the node commits before it sends.

A process killed at any point and started again with the same command reads
the journal back, replays it through fresh sessions (which, with the same
seed, draw the same secrets and reach the same state; what they sent goes out
again byte for byte, :attr:`p2pcards.table.transcript.Transcript.resend`) and carries
on.

The file (docs/networking.md, "The journal") begins with :data:`MAGIC`, which
names its format; each record is a header of three big-endian 32-bit numbers,
the payload's length, the CRC-32 of the payload and the CRC-32 of the eight
bytes before it (the header's own check), then the payload.  The header is
checked before its length is believed, so a length that runs past the end of
the file is known to be the one written: the last record, cut short by a kill,
and dropped (and so are zeros after the last whole record, which is what some
file systems leave of a write a power cut stopped).  Only the last commit can be
cut short, and nothing of it was sent.  Any other damage stops with
:class:`JournalError` naming the file, the record and its byte, and the file is
left as it is.  Opening writes nothing: what was dropped is cut off by the first
commit, so a journal refused later (a record that does not replay) is left as it
was too.

A journal of the earlier format (no marker: a four-byte length, then the
payload, records the checksums did not yet guard) is read, and the records
appended to it keep its format, so a game under way when p2pcards was upgraded
resumes and finishes in it; every new journal has the checksums.  A length of
that format that runs past the end is believed only if what follows it is the
beginning of one record and no more (msgpack says where a record ends): a length
damaged in the middle of the file is refused, not taken for a record cut short.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

try:
    import fcntl
except ImportError:  # Windows: no advisory lock; one process per journal is up to the user
    fcntl = None  # type: ignore[assignment]

MAGIC = b"p2pcards-journal/2\n"
"""The first bytes of a journal of the checksummed format (format 2).  A journal of
the earlier format (format 1) begins with its first record's length, whose first byte
is zero (a record is at most :data:`MAX_RECORD` bytes), so the two are never
confused."""
HEADER = struct.Struct(">III")
"""A record's header: the payload's length, its CRC-32, the CRC-32 of those 8 bytes."""
OLD_HEADER = struct.Struct(">I")
"""A record's header in the earlier format: the payload's length."""
MAX_RECORD = 1 << 20
ADVICE = ("the file is left as it was (keep it to look into); this seat cannot resume the"
          " game from it: move it aside to start a new table (host --new does so), and the"
          " other peers' transcripts still prove the deals played so far")
"""What a person can do about a journal that does not read (said after the damage)."""


class JournalError(Exception):
    """A journal that cannot be read back or written (the file and the record are named)."""


def damaged(path: Path, number: int, offset: int | None, what: str) -> JournalError:
    """The error for record ``number`` of the journal at ``path``, at byte ``offset``
    (None: not known), of which ``what`` is wrong: the damage named, then what the
    person can do."""
    where = f"record {number}" if offset is None else f"record {number} (byte {offset})"
    return JournalError(f"{path}: {where} {what}: the journal is damaged; {ADVICE}")


def pack_record(record: list[Any], version: int = 2) -> bytes:
    """``record`` as a journal of format ``version`` holds it, header and payload."""
    body: bytes = msgpack.packb(record, use_bin_type=True)
    if version == 1:
        return OLD_HEADER.pack(len(body)) + body
    head = struct.pack(">II", len(body), zlib.crc32(body))
    return head + struct.pack(">I", zlib.crc32(head)) + body


@dataclass
class Contents:
    """A journal file read: its format, its records with the byte each begins at, how
    many bytes they fill (past them only a record cut short, dropped), and whether the
    file holds anything of a journal yet (a file empty, or holding only part of the
    marker, gets a new one)."""

    version: int = 2
    records: list[list[Any]] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    valid: int = 0
    size: int = 0
    """The file's length (past :attr:`valid`: what is dropped)."""

    @property
    def fresh(self) -> bool:
        """Whether the file holds nothing of a journal yet."""
        return self.valid == 0


class Journal:
    def __init__(self, path: Path):
        self.path = path
        self.pending: list[bytes] = []
        self.records: list[list[Any]] = []
        self.offsets: list[int] = []
        """The byte at which each record read back begins (to name it in an error)."""
        self.version = 2
        """The file's format: 2 (checksummed) unless it holds a journal of format 1."""
        self.dropped = 0
        """Bytes of a last record cut short, dropped when the journal was opened (the
        file is cut to the records before them by the first commit)."""
        self._valid = 0  # how many bytes of the file the records read fill
        self._marker = True  # the next commit begins the file with MAGIC
        self._fd: int | None = None  # opened on the first commit
        self._lock_fd: int | None = None
        self._failed: JournalError | None = None

    @classmethod
    def open(cls, path: Path) -> Journal:
        """The journal at ``path``, its records read (none if it does not exist), locked
        for this process (:class:`JournalError` if another p2pcards holds it: two
        processes playing one seat would send two versions of its messages).  A last
        record cut short is dropped (the first commit cuts the file before it); any
        other damage is a :class:`JournalError`.  Opening writes nothing to the file."""
        journal = cls(path)
        journal._lock()
        try:
            if path.exists():
                contents = read_contents(path)
                journal.records, journal.offsets = contents.records, contents.offsets
                if not contents.fresh:  # (else: nothing of a journal yet, a new one)
                    journal.version, journal._marker = contents.version, False
                journal._valid = contents.valid
                journal.dropped = contents.size - contents.valid
        except BaseException:
            journal.abandon()
            raise
        return journal

    def dropped_note(self) -> str:
        """What a peer resumed from this journal says of the record it dropped ("": none
        was)."""
        if not self.dropped:
            return ""
        return (f"; its last {self.dropped} bytes, a record cut short when the program"
                " stopped, were dropped: it was never sent")

    def _lock(self) -> None:
        if fcntl is None:
            return
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot lock the journal ({lock_path}:"
                               f" {exc.strerror or exc})") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise JournalError(f"{self.path}: another p2pcards process is playing from this"
                               " journal") from exc
        self._lock_fd = fd

    def append(self, *record: Any) -> None:
        """``record``, to be written by the next commit (:class:`JournalError` if it is
        more than a journal reads back: it is not written)."""
        packed = pack_record(list(record), self.version)
        size = len(packed) - (HEADER.size if self.version == 2 else OLD_HEADER.size)
        if size > MAX_RECORD:
            raise JournalError(f"{self.path}: a record of {size} bytes (its kind"
                               f" {record[0]!r}) is more than a journal holds"
                               f" ({MAX_RECORD}): it is not written, and this peer stops"
                               " here, before it sends anything that depends on it")
        self.pending.append(packed)

    def commit(self) -> None:
        """Everything appended is on disk when this returns.  A write that fails (the
        disk full) is a :class:`JournalError`, and so is every commit after it: what
        was not written must not be sent."""
        if self._failed is not None:
            raise self._failed
        if not self.pending:
            return
        try:
            self._write(b"".join(self.pending))
        except OSError as exc:
            self._failed = JournalError(
                f"{self.path}: cannot write the journal ({exc.strerror or exc}): this peer"
                " stops here, before it sends what it could not record; once the journal"
                " can be written, the same command goes on from what it holds")
            self._close_file()
            raise self._failed from exc
        self.pending = []

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            created = not self.path.exists()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            if self.dropped:  # (what a kill cut short, cut off before anything follows)
                os.ftruncate(self._fd, self._valid)
            if created:  # the new file's name is on disk too
                directory = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(directory)
                finally:
                    os.close(directory)
        if self._marker:
            data = MAGIC + data
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)
        self._marker = False

    @property
    def failed(self) -> bool:
        """Whether a commit failed: what the journal holds stops short of the game."""
        return self._failed is not None

    def close(self) -> None:
        """Commit what was appended and let go of the file and the lock (a journal whose
        write failed lets go without writing, and one that fails now lets go too)."""
        try:
            if self._failed is None:
                self.commit()
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Let go of the file as a killed process would: what was not committed is lost."""
        self._close_file()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _close_file(self) -> None:
        self.pending = []
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read(path: Path) -> tuple[list[list[Any]], int]:
    """The records, and how many bytes of the file they fill."""
    contents = read_contents(path)
    return contents.records, contents.valid


def read_contents(path: Path) -> Contents:
    """The journal at ``path`` read (:class:`JournalError` if it does not read, but for
    a last record cut short)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal ({exc.strerror})") from exc
    if data.startswith(MAGIC):
        contents = _read_records(path, data)
    elif MAGIC.startswith(data):  # nothing, or the marker cut short: nothing written yet
        contents = Contents()
    elif data[0] == 0:
        contents = _read_old_records(path, data)
    else:
        raise JournalError(f"{path}: not a p2pcards journal (it does not begin with"
                           f" {MAGIC.decode().strip()!r}); {ADVICE}")
    contents.size = len(data)
    return contents


def _read_records(path: Path, data: bytes) -> Contents:
    contents = Contents(2, valid=len(MAGIC))
    at = len(MAGIC)
    while at < len(data):
        number = len(contents.records)
        if at + HEADER.size > len(data):
            break  # a header cut short by a kill: the end of the journal
        size, crc, check = HEADER.unpack_from(data, at)
        if zlib.crc32(data[at:at + 8]) != check:
            if not data[at:].strip(b"\0"):
                break  # zeros where a write was cut off (some file systems leave them)
            raise damaged(path, number, at, "has a header that fails its checksum")
        if size > MAX_RECORD:
            raise damaged(path, number, at, f"claims {size} bytes")
        body = data[at + HEADER.size:at + HEADER.size + size]
        if len(body) < size:
            break  # its header sound, its payload cut short by a kill: the last record
        if zlib.crc32(body) != crc:
            raise damaged(path, number, at, "fails its checksum")
        contents.records.append(_decode(path, number, at, body))
        contents.offsets.append(at)
        at += HEADER.size + size
        contents.valid = at
    return contents


def _read_old_records(path: Path, data: bytes) -> Contents:
    """A journal of format 1.  With no checksum, a length that runs past the end is taken
    for a record cut short only if what follows it is the beginning of one record and
    no more (:func:`_cut_short`)."""
    contents = Contents(1)
    at = 0
    while at + OLD_HEADER.size <= len(data):
        number = len(contents.records)
        (size,) = OLD_HEADER.unpack_from(data, at)
        if size > MAX_RECORD:
            raise damaged(path, number, at, f"claims {size} bytes")
        if at + OLD_HEADER.size + size > len(data):
            if _cut_short(data[at + OLD_HEADER.size:]):
                break  # cut short by a kill: the end of the journal
            raise damaged(path, number, at, f"claims {size} bytes, past the end of the"
                          " file, yet what follows it is not a record cut short")
        body = data[at + OLD_HEADER.size:at + OLD_HEADER.size + size]
        contents.records.append(_decode(path, number, at, body))
        contents.offsets.append(at)
        at += OLD_HEADER.size + size
    contents.valid = at
    return contents


def _cut_short(tail: bytes) -> bool:
    """Whether ``tail`` (what follows a length of format 1, to the end of the file) is
    the beginning of one msgpack value and no more: what a kill leaves of the last
    record.  A value ends where msgpack says it does, so a length damaged in the middle
    of the file, whole records after it, is not taken for one, nor is the length of a
    whole last record."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(tail)
    try:
        unpacker.unpack()
    except msgpack.OutOfData:
        return True  # (the value goes on past the end: cut short)
    except Exception:  # (not msgpack at all)
        return False
    return False  # (a whole value in it: the length is not the one written)


def _decode(path: Path, number: int, at: int, body: bytes) -> list[Any]:
    try:
        record = msgpack.unpackb(body, raw=False, strict_map_key=False)
    except Exception as exc:
        raise damaged(path, number, at, f"is not msgpack ({exc})") from exc
    if not isinstance(record, list) or not record or not isinstance(record[0], str):
        raise damaged(path, number, at, "is not a journal record")
    return record
