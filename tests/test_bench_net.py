"""``p2pcards bench net``'s game: real processes on loopback play a whole game, and the
host's stats are what the records are made of."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2pcards.bench.net import play_game


@pytest.mark.slow
def test_a_benchmarked_game_is_played_to_its_end_with_its_deck(tmp_path: Path) -> None:
    stats = play_game("pasur", tmp_path, players=2, deck="proved")
    assert stats["deals"] >= 1
    assert len(stats["deal_ms"]) == stats["deals"]
    assert all(ms > 0 for ms in stats["deal_ms"])
    assert stats["messages"] > stats["deals"]
    assert stats["game_seconds"] > 0
