"""How the rules' prose names seats, and naming them for a reader.

The engines explain a refusal in words, naming seats by number (``seat 0 does
not hold AS``, ``it is seat 2's turn``); the table's verdicts and a seat's alarm
quote them.  A reader sees names instead: :func:`name_seats` is the one place
that turns a seat's number in such prose into its name, ``you`` and ``your``
for the reader's own seat.  Everything else the program says about a seat is
written from its number where it is shown, never read back out of text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

YOU = "you"
"""The name a screen gives the person's own seat."""

_SEAT = re.compile(r"\bseat (\d+)('s)?(?![\w-])( \w)?")


def name_seats(text: str, names: Sequence[str]) -> str:
    """``text`` of the rules with each ``seat N`` by its name (``names[N]``; a number
    with no name stays as it is); the seat named :data:`YOU` reads "you", and its
    possessive "your" (``your hand``) or "yours"."""
    def name(m: re.Match[str]) -> str:
        seat = int(m.group(1))
        if seat >= len(names):
            return m.group(0)
        who, noun = names[seat], m.group(3) or ""
        if m.group(2):  # your hand; not yours
            return ("your" if noun else "yours") + noun if who == YOU else f"{who}'s{noun}"
        return who + noun

    return _SEAT.sub(name, text)
