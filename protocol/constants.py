"""The deck's limits and the parties that are not seats, each defined once.

A deal has 2 to 7 parties and 2 to 128 cards; at most 64 rounds of passes, and
each party at most 64 re-mixes; its slots (re-mixes and reshuffles add slots) at most
4096.  A message's lists are bounded by the same figures when it is decoded,
so nothing a peer sends can make a party build more than a deal can need.
"""

from __future__ import annotations

from typing import Final, NewType

MIN_PARTIES: Final = 2
MAX_PARTIES: Final = 7
MIN_CARDS: Final = 2
MAX_CARDS: Final = 128
MAX_ROUNDS: Final = 64
"""Rounds (each an optional unlock pass, a shuffle pass and a lock pass) in one deal,
and re-mixes by one party in one deal."""
MAX_SLOTS: Final = 4096
"""Slots in one deal: the deck's, and those that re-mixes and reshuffles add."""
MAX_ITEMS: Final = 1024
"""Most items in one list of a message (a round of points, of keys, of slots)."""

Holder = NewType("Holder", int)
"""Who can open a slot as a deck knows it: a party, or :data:`PUBLIC`."""
Party = NewType("Party", int)
"""A deck's (or a joint draw's) own party, ``me``: a party, or :data:`OBSERVER`."""

PUBLIC: Final = Holder(-3)
"""The ``holder`` of a slot shown to everyone."""
OBSERVER: Final = Party(-2)
"""``me`` of a party that only watches: it checks every step and opens what is
shown, but holds no secret (offline verification of a transcript).

Neither value is ever sent (a key released to everyone says ``to=None``); each
has its own type, and both differ from each other and from the games' values
that stand where no seat does (CHANCE -1, TERMINAL -4, FULL -5, SPECTATOR -6), which
the table uses beside these (docs/architecture.md)."""
