"""The files a command writes: checked before any work starts, written at the end.

Every output option (``--save``, ``--transcript``, ``--history``, ``--stats``,
``--invite-file``) is checked when the command starts, before a game is
played or a table opened: the path must not be a directory, and its directory
must exist and be writable (so is the file, if it exists).  The check creates
nothing and changes nothing.  A write that fails at the end anyway (the disk
full, the directory removed meanwhile) is said in one line, and the command
goes on to its other outputs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

EXIT_OUTPUT = 2
"""The exit status of a command whose output cannot be written (docs/networking.md,
"Exit statuses")."""


def problem(path: str, *, directory: bool = False) -> str | None:
    """Why ``path`` cannot be written (None: it can).  With ``directory``, ``path`` is a
    directory the command fills, made if it does not exist."""
    if not path:
        return "an empty path"
    target = Path(path)
    if directory:
        if target.exists():
            if not target.is_dir():
                return "it exists and is not a directory"
            return None if os.access(target, os.W_OK | os.X_OK) else \
                "the directory is not writable"
        parent = next((p for p in target.absolute().parents if p.exists()), None)
        if parent is None or not parent.is_dir():
            return f"{parent} is not a directory"
        return None if os.access(parent, os.W_OK | os.X_OK) else \
            f"the directory {parent} is not writable"
    if target.is_dir():
        return "it is a directory"
    parent = target.parent
    if not parent.exists():
        return f"the directory {parent} does not exist"
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"the directory {parent} is not writable"
    if target.exists() and not os.access(target, os.W_OK):
        return "the file is not writable"
    return None


def check(options: Iterable[tuple[str, str | None]], *, directories: Iterable[str] = ()
          ) -> str | None:
    """The first of ``(option, path)`` (a path None: not asked for) that cannot be
    written, as a line naming the option, the path and the reason; or two options
    naming one file.  None: all can be written.  ``directories``: the options whose
    path is a directory."""
    folders = set(directories)
    seen: dict[str, str] = {}
    for option, path in options:
        if path is None:
            continue
        why = problem(path, directory=option in folders)
        if why is not None:
            return f"{option} {path}: cannot write there: {why}"
        where = os.path.realpath(path)
        if where in seen:
            return f"{seen[where]} and {option} name the same file {path}"
        seen[where] = option
    return None


def write(option: str, path: str, data: bytes | str) -> bool:
    """Write ``data`` to ``path`` (an output of ``option``); if that fails, say so in one
    line and return False."""
    try:
        if isinstance(data, str):
            Path(path).write_text(data, encoding="utf-8")
        else:
            Path(path).write_bytes(data)
    except OSError as exc:
        print(f"p2pcards: {option} {path}: could not write it: {exc.strerror or exc}",
              file=sys.stderr)
        return False
    return True
