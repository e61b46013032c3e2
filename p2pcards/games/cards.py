"""Cards as small integers, card sets as int bitmasks, and card notation (docs/hand-history.md).

Every game numbers its cards 0..M-1 and keeps sets of cards as Python ints
(bit ``c`` set = card ``c`` present), which makes the set operations of the
rules engines single machine-word operations for decks of up to 64 cards and
still exact beyond.  A :class:`Notation` turns card ids into the canonical
names and back; input is forgiving (case, ``10`` for ``T``,
suit symbols), output is always canonical.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence


class CardError(ValueError):
    """Card text that names no card of the deck; the message quotes the text."""


_BYTE_BITS: list[list[tuple[int, ...]]] = [
    [tuple(8 * k + i for i in range(8) if byte >> i & 1) for byte in range(256)]
    for k in range(12)
]
"""``_BYTE_BITS[k][byte]``: the card ids of ``byte`` as the k-th byte of a mask."""


def bits(mask: int) -> list[int]:
    """The card ids in ``mask``, lowest first (a byte at a time, by table lookup,
    up to 96 cards; the search lists legal moves and unknown cards this way)."""
    out: list[int] = []
    k = 0
    while mask:
        byte = mask & 255
        if byte:
            if k < 12:
                out += _BYTE_BITS[k][byte]
            else:
                out += [8 * k + i for i in range(8) if byte >> i & 1]
        mask >>= 8
        k += 1
    return out


def iter_bits(mask: int) -> Iterator[int]:
    """Iterate the card ids in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_of(cards: Iterable[int]) -> int:
    """The bitmask of an iterable of card ids."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


SYMBOLS = "♠♥♦♣"
"""The suit symbols of the standard deck, in suit order (S H D C)."""
_SUIT_SYMBOLS = {
    "♠": "S", "♤": "S", "♥": "H", "♡": "H", "♦": "D", "♢": "D", "♣": "C", "♧": "C",
}


class Notation:
    """Canonical names of one deck and a forgiving parser for them."""

    def __init__(self, deck: str, names: Sequence[str], aliases: dict[str, int] | None = None):
        self.deck = deck
        self.names: tuple[str, ...] = tuple(names)
        self.size = len(self.names)
        self._index: dict[str, int] = {name.upper(): i for i, name in enumerate(self.names)}
        if aliases:
            self._index.update({k.upper(): v for k, v in aliases.items()})

    def _normalise(self, text: str) -> str:
        return text.strip().upper()

    def parse(self, text: str) -> int:
        """The id of the card named ``text``; :class:`CardError` if there is none."""
        if not isinstance(text, str):
            raise CardError(f"card must be text, not {type(text).__name__} {text!r}")
        card = self._index.get(self._normalise(text))
        if card is None:
            raise CardError(f"unknown card {text!r} (not a card of the {self.deck} deck)")
        return card

    def parse_many(self, texts: Iterable[str]) -> list[int]:
        return [self.parse(t) for t in texts]

    def name(self, card: int) -> str:
        return self.names[card]

    def format_cards(self, cards: Iterable[int]) -> str:
        return " ".join(self.names[c] for c in cards)

    def format_mask(self, mask: int) -> str:
        return " ".join(self.names[c] for c in iter_bits(mask))

    # ----------------------------------------------- how a screen shows a card

    def shown(self, card: int) -> str:
        """A card as a person sees it in a hand on screen (the canonical name unless
        the deck has a friendlier face: ``10♥``, or marks some cards: ``A1*``)."""
        return self.names[card]

    def face(self, card: int) -> str:
        """A card as the screen writes it in text (a move, a line of narration): its
        face without the marks of a hand (``10♥``), which the parser reads back."""
        return self.shown(card)

    def style(self, card: int) -> str:
        """The screen's style classes for the card, space-separated (its colour)."""
        return ""

    def group(self, card: int) -> int:
        """Which group a hand shows the card in (its suit); groups in order."""
        return 0

    def rank(self, card: int) -> int:
        """Order within a group: the higher, the further left."""
        return card


class StandardNotation(Notation):
    """The 52-card deck plus jokers: ``AS TD 2C BJ LJ``; input also ``10s``, ``A♠``;
    shown ``A♠ 10♥``, in suit colours, jokers last."""

    def shown(self, card: int) -> str:
        if card >= 52:
            return self.names[card]
        rank = self.names[card][0]
        return ("10" if rank == "T" else rank) + SYMBOLS[card // 13]

    def style(self, card: int) -> str:
        return f"suit-{card // 13}" if card < 52 else "joker"

    def group(self, card: int) -> int:
        return card // 13

    def rank(self, card: int) -> int:
        return card % 13 if card < 52 else 13 + (card == BIG_JOKER)

    def _normalise(self, text: str) -> str:
        text = text.strip().upper().replace("\ufe0f", "")
        for symbol, letter in _SUIT_SYMBOLS.items():
            text = text.replace(symbol, letter)
        if text.startswith("10"):
            text = "T" + text[2:]
        return text


# Standard deck: card = suit * 13 + rank, suits S H D C, ranks 2..A (index 0..12).
SUITS = "SHDC"
RANKS = "23456789TJQKA"
BIG_JOKER = 52
LITTLE_JOKER = 53
STANDARD = StandardNotation(
    "standard",
    [r + s for s in SUITS for r in RANKS] + ["BJ", "LJ"],
)
SUIT_MASKS: tuple[int, ...] = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))
