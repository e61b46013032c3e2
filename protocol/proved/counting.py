"""Counting the proved deck's multiplications, which do not depend on the machine.

Every multiplication of the proved deck goes through coincurve's point class
(:mod:`.group`): ``PublicKey.multiply`` for a point other than ``G`` and
``PublicKey.from_secret`` for ``G``.  :func:`patch` wraps both so that each call
is told first; :func:`counted` does so for a block (the measure of
:mod:`.simulate`), and :func:`count_if_asked` for the rest of a process when
:data:`COUNT_VARIABLE` says so (every peer of ``p2pcards bench net``).  Nothing
is wrapped otherwise: a process that does not ask pays nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from coincurve import PublicKey

__all__ = ["COUNT_VARIABLE", "Multiplications", "count_if_asked", "counted", "patch"]

COUNT_VARIABLE = "P2PCARDS_COUNT_MULTIPLICATIONS"
"""Set (non-empty, not ``0``): the process counts its multiplications of points
(``--stats`` of ``host`` and ``join`` report them at each of the driver's marks)."""


@dataclass
class Multiplications:
    """Multiplications made since counting began: of a point, and of ``G``."""

    points: int = 0
    base: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """(A driver checks proofs in a worker thread too: no count is lost.)"""

    @property
    def total(self) -> int:
        return self.points + self.base

    def point(self) -> None:
        with self._lock:
            self.points += 1

    def generator(self) -> None:
        with self._lock:
            self.base += 1


def patch(point: Callable[[], None], base: Callable[[], None]) -> Callable[[], None]:
    """From now on ``point()`` is called before each multiplication of a point and
    ``base()`` before each of ``G``; returns what puts coincurve back as it was."""
    multiply = PublicKey.multiply
    from_secret = PublicKey.__dict__["from_secret"]
    inner = from_secret.__func__

    def counted_multiply(self: PublicKey, scalar: bytes, update: bool = False) -> PublicKey:
        point()
        return multiply(self, scalar, update)

    def counted_from_secret(cls: type[PublicKey], secret: bytes, *args: Any,
                            **kwargs: Any) -> PublicKey:
        base()
        return inner(cls, secret, *args, **kwargs)  # type: ignore[no-any-return]

    PublicKey.multiply = counted_multiply  # type: ignore[method-assign]
    PublicKey.from_secret = classmethod(counted_from_secret)  # type: ignore[method-assign,assignment]

    def restore() -> None:
        PublicKey.multiply = multiply  # type: ignore[method-assign]
        PublicKey.from_secret = from_secret  # type: ignore[method-assign]
    return restore


@contextmanager
def counted(point: Callable[[], None], base: Callable[[], None]) -> Iterator[None]:
    """:func:`patch` for the block only."""
    restore = patch(point, base)
    try:
        yield
    finally:
        restore()


_PROCESS: list[Multiplications] = []
"""The process's tally, once :func:`count_if_asked` has begun it."""


def count_if_asked(environ: Mapping[str, str] | None = None) -> Multiplications | None:
    """Where :data:`COUNT_VARIABLE` is set, count every multiplication of this process
    from now on (for good; asked again, the same tally) and return the tally; otherwise
    change nothing and return None."""
    value = (os.environ if environ is None else environ).get(COUNT_VARIABLE, "")
    if value in ("", "0"):
        return None
    if not _PROCESS:
        tally = Multiplications()
        patch(tally.point, tally.generator)
        _PROCESS.append(tally)
    return _PROCESS[0]
