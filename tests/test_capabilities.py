"""What a game declares it supports (``Game.capabilities``) is what its deals do.

Registering a game holds its declaration against its hooks (a game refused for
it: tests/test_fifth_game.py).  Here every registered game, Duel among them,
plays random deals of each player count at its first, typical and last deal
numbers, and its declaration shows in play: chance acts only where declared, a
table's chance event is only of a declared kind, a move puts cards face down (as
many as its public form hides, of its mover's hand), the table forces a move, voids
a deal or has a deal's cards change its mapping only where declared, exact bids
are asked only of a game of exact bids; and each thing declared happens.  Any
one capability declared otherwise is caught against the hooks.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import fields, replace

import pytest

from p2pcards.games import CHANCE, GAMES, Capabilities, Game, HandState
from p2pcards.games.capabilities import mismatches
from p2pcards.games.hooks import ChanceKind
from p2pcards.games.seats import SPECTATOR
from tests.duel import register_duel, unregister_duel

DEALS = 30
"""Random deals per player count and deal number."""

NAMES = [*GAMES, "duel"]
"""The built-in games, and Duel (registered for each test)."""


@pytest.fixture(autouse=True)
def duel() -> Iterator[None]:
    register_duel()
    yield
    unregister_duel()


def played(game: Game, rng: random.Random) -> set[object]:
    """Random deals of ``game``; asserts that each thing a deal does is declared and
    returns the things seen (capability names, and the chance kinds a table makes)."""
    can = game.capabilities
    seen: set[object] = set()
    options = game.resolve_options({})
    for players in game.player_counts:
        for number in sorted({0, game.representative_deal, game.numbered_deals - 1}):
            for _ in range(DEALS):
                deck = game.shuffled_deck(players, options, rng)
                if game.cards_change_mapping(deck, players):
                    assert can.cards_change_deal
                    seen.add("cards_change_deal")
                state = game.deal(deck, rng.randrange(players), players, options, number=number)
                assert state.void_reason == game.void_reason(deck, players)
                if state.void_reason is not None:
                    assert can.void_deals and state.is_terminal()
                    seen.add("void_deals")
                    continue
                while not state.is_terminal():
                    forced = state.forced_action()
                    if state.current_player() == CHANCE:
                        assert can.chance
                        seen.add("chance")
                        if can.table_chance:
                            kind = state.table_chance().kind
                            assert kind in can.table_chance
                            seen.add(kind)
                        action = state.chance_action(rng)
                    elif forced is not None:
                        assert can.forced_actions
                        seen.add("forced_actions")
                        action = forced
                    else:
                        action = state.random_action(rng)
                        down = state.face_down(action)
                        hidden = state.format_action(action, seat=SPECTATOR).split().count("?")
                        assert len(down) == hidden  # (as the public form of the move hides)
                        if down:
                            mover = state.current_player()
                            assert can.face_down and all(
                                card is not None and state.may[mover] >> card & 1
                                for card in down)  # (the mover's own cards, known to FULL)
                            seen.add("face_down")
                    if can.shown_cards:
                        shown = state.shown_cards(action)
                        assert set(shown) <= set(deck)
                        if shown:
                            seen.add("shown_cards")
                    state.apply(action)
                if can.exact_bids:
                    exact = state.exact_bids()
                    assert len(exact) == players and all(isinstance(e, bool) for e in exact)
                    seen.add("exact_bids")
                else:
                    with pytest.raises(ValueError, match="no exact bids"):
                        state.exact_bids()
    return seen


def declared(can: Capabilities) -> set[object]:
    out: set[object] = {f.name for f in fields(can) if f.name != "table_chance"
                        and getattr(can, f.name)}
    return out | set(can.table_chance)


@pytest.mark.parametrize("name", NAMES)
def test_a_game_does_what_it_declares_and_nothing_it_does_not(name: str) -> None:
    game = GAMES[name]
    game.check_capabilities()
    assert played(game, random.Random(f"capabilities {name}")) == declared(game.capabilities)


def others(can: Capabilities) -> Iterator[tuple[str, Capabilities]]:
    """``can`` with one thing declared otherwise (each capability, each chance kind)."""
    for field in fields(can):
        if field.name == "table_chance":
            if can.chance:
                for kind in ChanceKind:
                    yield kind.name, replace(can, table_chance=can.table_chance ^ {kind})
        elif field.name == "chance" and can.chance:
            yield "chance", replace(can, chance=False, table_chance=frozenset())
        else:
            yield field.name, replace(can, **{field.name: not getattr(can, field.name)})


@pytest.mark.parametrize("name", NAMES)
def test_any_capability_declared_otherwise_is_caught(name: str) -> None:
    game = GAMES[name]
    players, options = game.default_players, game.resolve_options({})
    deals = type(game.deal(game.blank_deck(players, options), 0, players, options))
    assert mismatches(game.capabilities, deals, HandState, type(game), Game) == []
    checked = 0
    for what, wrong in others(game.capabilities):
        found = mismatches(wrong, deals, HandState, type(game), Game)
        assert found, what
        assert any(what in problem for problem in found), (what, found)
        checked += 1
    assert checked >= len(fields(Capabilities)) - 1


def test_a_table_makes_chance_events_only_where_chance_acts() -> None:
    with pytest.raises(ValueError, match="only in a game in which chance acts"):
        Capabilities(shown_cards=True, table_chance=frozenset({ChanceKind.DRAW}))
