"""The values that stand where no seat does: one value per meaning, one type per kind.

The games' movers (CHANCE, TERMINAL) and observers (FULL, SPECTATOR), the deck's
holder (PUBLIC) and party (OBSERVER, the table's WATCHER) are all distinct, so
that a value of one meaning is never taken for another's: an engine refuses to
be dealt to, or viewed by, anything but a seat, FULL or SPECTATOR.  Their types
let mypy refuse a comparison across kinds (docs/architecture.md).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from p2pcards.games import GAMES
from p2pcards.games.core import CHANCE, FULL, SPECTATOR, TERMINAL
from p2pcards.protocol.constants import OBSERVER, PUBLIC
from p2pcards.table.state import WATCHER

ROOT = Path(__file__).resolve().parent.parent


def test_every_value_of_its_own_meaning_has_its_own_value() -> None:
    values = {"CHANCE": CHANCE, "TERMINAL": TERMINAL, "FULL": FULL, "SPECTATOR": SPECTATOR,
              "PUBLIC": PUBLIC, "OBSERVER": OBSERVER}
    assert len(set(values.values())) == len(values)
    assert all(value < 0 for value in values.values())  # never a seat
    assert CHANCE < 0 and TERMINAL < 0  # the search: a negative mover is no player
    assert WATCHER == OBSERVER  # one meaning: the table hands its own to the deck


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_deal_is_known_only_to_a_seat_full_information_or_a_spectator(name: str) -> None:
    game = GAMES[name]
    players = game.default_players
    options = game.resolve_options({})
    rng = random.Random(name)
    deck = game.shuffled_deck(players, options, rng)
    while game.is_void_deal(deck, players):
        deck = game.shuffled_deck(players, options, rng)
    full = game.deal(deck, 0, players, options)
    for wrong in (CHANCE, TERMINAL, WATCHER, PUBLIC, players, -3 - players):
        with pytest.raises(ValueError, match="not an observer"):
            game.deal(deck, 0, players, options, observer=wrong)
        with pytest.raises(ValueError, match="not an observer"):
            full.view(wrong)
    with pytest.raises(ValueError, match="not FULL's"):
        full.view(FULL)
    # a spectator's view of the truth is what a spectator is dealt: the public cards
    public = [card if all(c == card for c in (
        game.observed_deck(deck, 0, players, options, s)[i] for s in range(players))) else None
        for i, card in enumerate(deck)]
    spectator = game.deal(public, 0, players, options, observer=SPECTATOR)
    assert full.view(SPECTATOR).knowledge() == spectator.knowledge()
    assert full.view(0).observer == 0 and spectator.observer == SPECTATOR


def test_mypy_refuses_a_value_of_one_kind_for_another(tmp_path: Path) -> None:
    snippet = tmp_path / "mixed.py"
    snippet.write_text(
        "from p2pcards.games.core import CHANCE, FULL, HandState\n"
        "from p2pcards.protocol.constants import PUBLIC\n"
        "from p2pcards.protocol.deck import Deck\n"
        "\n"
        "\n"
        "def mixed(state: HandState, deck: Deck) -> list[bool]:\n"
        "    return [state.observer == CHANCE, deck.me == PUBLIC, deck.me == FULL,\n"
        "            state.observer == FULL, deck.me == 0]\n", encoding="utf-8")
    found = subprocess.run(
        [sys.executable, "-m", "tests.typecheck", "--strict", "--no-incremental",
         "--cache-dir=/dev/null", str(snippet), "protocol"],
        cwd=ROOT, capture_output=True, text=True, check=False).stdout
    errors = [line for line in found.splitlines() if ": error:" in line]
    assert all(line.startswith(str(snippet)) for line in errors), found
    assert sorted(line.split("(left operand type: ")[1] for line in errors) == [
        '"Observer", right operand type: "Mover")  [comparison-overlap]',
        '"Party", right operand type: "Holder")  [comparison-overlap]',
        '"Party", right operand type: "Observer")  [comparison-overlap]',
    ], found
