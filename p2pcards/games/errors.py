"""What the engines raise: action text that does not read, an impossible
observation, an action the rules forbid."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class ActionSyntaxError(ValueError):
    """Action text that does not parse; the message quotes the text."""


@contextmanager
def reading(text: str) -> Iterator[None]:
    """Report a bad card inside action text ``text`` as an :class:`ActionSyntaxError`."""
    try:
        yield
    except ActionSyntaxError:
        raise
    except ValueError as exc:
        raise ActionSyntaxError(f"cannot read action {text!r}: {exc}") from None


class KnowledgeError(ValueError):
    """An observation that contradicts what the observer knows for certain."""


class IllegalAction(Exception):
    """An action the rules forbid.

    ``code`` is a short stable slug (``renege``, ``not-held``, ``turn``,
    ``phase``, ``bid``, ``discard``, ``must-capture``, ``capture`` ...) used by
    hand histories' ``penalty`` entries; ``reason`` says which rule it breaks.
    """

    def __init__(self, code: str, reason: str, seat: int | None = None):
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.seat = seat
