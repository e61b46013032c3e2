"""A peer's journal: its secrets and every message, on disk before anything is sent.

Records are length-prefixed msgpack lists appended to one owner-only file.
The first is the table (the roster, this peer's seat keys and its secret seed,
the table settings); then, in the order they happened, every table message
taken from the network (``in``), every message this peer's seats sent
(``out``), every decision (``act``, ``answer``) and claim (``claim``).
:meth:`Journal.commit` writes and fsyncs; the node commits before it sends.

A process killed at any point and started again with the same command reads
the journal back, replays it through fresh sessions (which, with the same
seed, draw the same secrets and reach the same state; what they sent goes out
again byte for byte, :attr:`p2pcards.table.transcript.Transcript.resend`) and carries
on.  A record cut short by the kill is the end of the journal; anything else
that does not read is an error naming the file and the record.
"""

from __future__ import annotations

import os
import struct
from io import BufferedWriter
from pathlib import Path
from typing import Any

import msgpack

try:
    import fcntl
except ImportError:  # Windows: no advisory lock; one process per journal is up to the user
    fcntl = None  # type: ignore[assignment]

HEADER = struct.Struct(">I")
MAX_RECORD = 1 << 20


class JournalError(Exception):
    """A journal that cannot be read back (the file and the record are named)."""


class Journal:
    def __init__(self, path: Path):
        self.path = path
        self.pending: list[bytes] = []
        self.records: list[list[Any]] = []
        self._file: BufferedWriter | None = None  # opened on the first commit
        self._lock_fd: int | None = None

    @classmethod
    def open(cls, path: Path) -> Journal:
        """The journal at ``path``, its records read (none if it does not exist), locked
        for this process (:class:`JournalError` if another p2pcards holds it: two
        processes playing one seat would send two versions of its messages)."""
        journal = cls(path)
        journal._lock()
        try:
            if path.exists():
                journal.records, valid = read(path)
                if valid < path.stat().st_size:  # a record cut short: dropped, not extended
                    os.truncate(path, valid)
        except BaseException:
            journal.abandon()
            raise
        return journal

    def _lock(self) -> None:
        if fcntl is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_path = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise JournalError(f"{self.path}: another p2pcards process is playing from this"
                               " journal") from exc
        self._lock_fd = fd

    def append(self, *record: Any) -> None:
        body: bytes = msgpack.packb(list(record), use_bin_type=True)
        self.pending.append(HEADER.pack(len(body)) + body)

    def commit(self) -> None:
        """Everything appended is on disk when this returns."""
        if not self.pending:
            return
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            created = not self.path.exists()
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._file = os.fdopen(fd, "ab")
            if created:  # the new file's name is on disk too
                directory = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(directory)
                finally:
                    os.close(directory)
        self._file.write(b"".join(self.pending))
        self._file.flush()
        os.fsync(self._file.fileno())
        self.pending = []

    def close(self) -> None:
        self.commit()
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = None


    def abandon(self) -> None:
        """Let go of the file as a killed process would: what was not committed is lost."""
        self.pending = []
        if self._file is not None:
            # closed here, not left to the garbage collector, which would close its
            # descriptor again, whatever file holds that number by then (every commit
            # flushes it: closing writes nothing)
            self._file.close()
            self._file = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def read(path: Path) -> tuple[list[list[Any]], int]:
    """The records, and how many bytes of the file they fill."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal ({exc.strerror})") from exc
    records: list[list[Any]] = []
    at = 0
    while at + HEADER.size <= len(data):
        (size,) = HEADER.unpack_from(data, at)
        if size > MAX_RECORD:
            raise JournalError(f"{path}: record {len(records)} claims {size} bytes")
        if at + HEADER.size + size > len(data):
            break  # cut short by a kill: the end of the journal
        try:
            record = msgpack.unpackb(data[at + HEADER.size:at + HEADER.size + size],
                                     raw=False, strict_map_key=False)
        except Exception as exc:
            raise JournalError(f"{path}: record {len(records)} is not msgpack ({exc})") from exc
        if not isinstance(record, list) or not record or not isinstance(record[0], str):
            raise JournalError(f"{path}: record {len(records)} is not a journal record")
        records.append(record)
        at += HEADER.size + size
    return records, at
