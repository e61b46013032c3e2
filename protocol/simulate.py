"""Run every party of a deck in one process: the tests' and the bench's table.

The messages go straight from one :class:`Deck` to the others, in protocol
order; a test can swap a message for a forged one on the way (``tamper``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from protocol.curve import SecretSource
from protocol.deck import LOCK, Deck, DeckContext
from protocol.messages import KeyRelease, Locked, Shuffled

Message = Shuffled | Locked | KeyRelease
Tamper = Callable[[Message], Message]


def seat(context: DeckContext, sources: Sequence[SecretSource]) -> list[Deck]:
    return [Deck(context, party, sources[party]) for party in range(context.parties)]


def shuffle_and_lock(decks: list[Deck], tamper: Tamper | None = None) -> None:
    """Every party's shuffle pass, then every lock pass, each broadcast to the others."""
    while (due := decks[0].expected()) is not None:
        step, party = due
        message: Shuffled | Locked = decks[party].lock() if step == LOCK \
            else decks[party].shuffle()
        broadcast(decks, party, tamper(message) if tamper else message)


def broadcast(decks: list[Deck], sender: int, message: Message) -> None:
    for deck in decks:
        if deck.me != sender:
            deck.receive(message)


def deal(decks: list[Deck], position: int, to: int | None,
         tamper: Tamper | None = None) -> None:
    """Every party releases its key of ``position`` to ``to`` (or everyone), who open it."""
    for deck in decks:
        if deck.me == to:
            continue
        message: Message = deck.release(position, to)
        if tamper:
            message = tamper(message)
        for other in decks:
            if other.me != deck.me and (to is None or other.me == to):
                other.receive(message)
    for deck in decks:
        if to is None or deck.me == to:
            deck.open(position)
