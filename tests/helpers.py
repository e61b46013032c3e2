"""Building decks that deal given hands (p2pcards/rules/common.md, "Deal mapping")."""

from __future__ import annotations

from p2pcards.games.cards import STANDARD


def cards(text: str) -> list[int]:
    return STANDARD.parse_many(text.split())


def arrange(slots: list[int], wanted: dict[int, list[int]], deck_cards: list[int]) -> list[int]:
    """A deck whose position i holds a card of place ``slots[i]``.

    ``wanted[place]`` lists cards that must be at that place (in slot order);
    the other slots get the remaining cards of ``deck_cards`` in id order.
    """
    rest = [c for c in deck_cards if not any(c in w for w in wanted.values())]
    queues = {p: list(w) for p, w in wanted.items()}
    deck = []
    for place in slots:
        queue = queues.get(place)
        deck.append(queue.pop(0) if queue else rest.pop(0))
    assert all(not q for q in queues.values()), "more cards wanted than the place gets"
    return deck


def bidwhist_deck(hands: dict[int, str], kitty: str = "", dealer: int = 3,
                  kitty_size: int = 6) -> list[int]:
    slots = [(dealer + 1 + i) % 4 if i < 48 else 4 for i in range(48 + kitty_size)]
    deck_cards = list(range(52)) + ([52, 53] if kitty_size == 6 else [52])
    wanted = {seat: cards(text) for seat, text in hands.items()}
    if kitty:
        wanted[4] = cards(kitty)
    return arrange(slots, wanted, deck_cards)


def pasur_deck(hands: dict[int, str], pool: str, stock: str = "", players: int = 2,
               dealer: int = 1) -> list[int]:
    """Hands, the opening pool and the top of the stock (next card first)."""
    opening = 4 * players
    slots = [(dealer + 1 + i) % players if i < opening else
             (-1 if i < opening + 4 else -2) for i in range(52)]
    wanted = {seat: cards(text) for seat, text in hands.items()}
    wanted[-1] = cards(pool)
    if stock:
        wanted[-2] = cards(stock)
    # keep stray jacks out of the opening pool and the stock top unless asked for
    order = sorted(range(52), key=lambda c: (c % 13 == 9, c))
    return arrange(slots, wanted, order)
