"""Run every party of a deck in one process: the tests' and the bench's table.

The messages go straight from one :class:`Deck` to the others, in protocol
order; a test can make a party cheat (``tamper``): its pass is forged before
it takes the message as its own, and a key release on its way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .curve import SecretSource
from .deck import Deck, Message
from .steps import DeckContext

Tamper = Callable[[Message], Message]


def seat(context: DeckContext, sources: Sequence[SecretSource]) -> list[Deck]:
    return [Deck(context, party, sources[party]) for party in range(context.parties)]


def run_round(decks: list[Deck], tamper: Tamper | None = None) -> None:
    """Every pass of the round under way, each broadcast to the others in turn."""
    while (due := decks[0].expected()) is not None:
        _, party = due
        message: Message = decks[party].step(tamper)  # type: ignore[arg-type]
        broadcast(decks, party, message)


shuffle_and_lock = run_round


def reshuffle(decks: list[Deck], slots: Sequence[int], tamper: Tamper | None = None) -> None:
    for deck in decks:
        deck.begin_reshuffle(list(slots))
    run_round(decks, tamper)


def broadcast(decks: list[Deck], sender: int, message: Message) -> None:
    for deck in decks:
        if deck.me != sender:
            deck.receive(message)


def deal(decks: list[Deck], slot: int, to: int | None, tamper: Tamper | None = None) -> None:
    """Every party that locks ``slot`` releases its key to ``to`` (or everyone), who open it."""
    for deck in decks:
        if deck.me == to or deck.me not in deck.lockers[slot]:
            continue
        message: Message = deck.release(slot, to)
        if tamper:
            message = tamper(message)
        for other in decks:
            if other.me != deck.me and (to is None or other.me == to):
                other.receive(message)
    for deck in decks:
        if to is None or deck.me == to:
            deck.open(slot)
    if to is not None:  # who was dealt what is public: the session tells every party
        for deck in decks:
            deck.assign(slot, to)
