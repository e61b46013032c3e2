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


_RECEIVER = re.compile(r"(?<=\S):(\d+)\b")


def name_receivers(text: str, names: Sequence[str]) -> str:
    """An action text's ``CARD:N`` (a card handed to seat N, Control Nut!'s ``give
    A9:1``) as ``CARD:NAME``, the way a person types and completes it; a seat whose
    name is not one word (or is a number) keeps its number."""
    def name(m: re.Match[str]) -> str:
        seat = int(m.group(1))
        who = names[seat] if seat < len(names) else ""
        usable = who and not who.isdigit() and ":" not in who and not any(
            c.isspace() for c in who)
        return f":{who}" if usable else m.group(0)

    return _RECEIVER.sub(name, text)
