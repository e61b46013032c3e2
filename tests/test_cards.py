"""Card notation (p2pcards/rules/common.md, "Card notation") and bitmask helpers."""

from __future__ import annotations

import pytest

from p2pcards.games.cards import STANDARD, CardError, bits, mask_of
from p2pcards.games.controlnut import CONTROLNUT
from p2pcards.games.nullern import NULLERN


def test_standard_cards_are_small_ints_with_canonical_names():
    assert STANDARD.size == 54
    assert [STANDARD.name(c) for c in (0, 12, 13, 51, 52, 53)] == ["2S", "AS", "2H", "AC", "BJ",
                                                                      "LJ"]
    assert len(set(STANDARD.names)) == 54


@pytest.mark.parametrize(("text", "canonical"), [
    ("AS", "AS"), ("as", "AS"), ("10d", "TD"), ("10♦", "TD"), ("T♦", "TD"), ("k♥", "KH"),
    ("2♣", "2C"), ("q♠", "QS"), (" jh ", "JH"), ("bj", "BJ"), ("Lj", "LJ"), ("A♠️", "AS"),
])
def test_standard_input_accepts_10_any_case_and_suit_symbols(text, canonical):
    assert STANDARD.name(STANDARD.parse(text)) == canonical


@pytest.mark.parametrize("text", ["", "1S", "11H", "ZZ", "A", "AX", "JJ", "10"])
def test_unknown_card_text_raises_an_error_naming_it(text):
    with pytest.raises(CardError, match=f"unknown card {text!r}"):
        STANDARD.parse(text)


def test_nullern_and_controlnut_notation():
    assert NULLERN.size == 80 and NULLERN.name(NULLERN.parse("b20")) == "B20"
    assert NULLERN.name(0) == "R1" and NULLERN.name(79) == "B20"
    assert CONTROLNUT.size == 60 and CONTROLNUT.name(CONTROLNUT.parse("w13")) == "W13"
    assert CONTROLNUT.name(CONTROLNUT.parse("trump")) == "TRUMP"
    with pytest.raises(CardError, match="unknown card 'R21'"):
        NULLERN.parse("R21")


def test_card_sets_are_bitmasks():
    cards = STANDARD.parse_many(["AS", "2H", "BJ"])
    mask = mask_of(cards)
    assert bits(mask) == sorted(cards)
    assert STANDARD.format_mask(mask) == "AS 2H BJ"
    assert mask.bit_count() == 3
