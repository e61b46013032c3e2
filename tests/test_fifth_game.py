"""A game is one module: Duel (tests/duel.py), registered at run time, goes everywhere.

Nothing outside the tests knows Duel.  Registered, it deals and keeps views like
the built-in games, plays whole games at the secure in-memory table with the
mental-poker deck and an audit after every deal, replays from the hand history
that table writes, is played by a person at the prompt (pipe input), searched
by ISMCTS and played in the arena.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from p2pcards.bots import SearchBot, arena, heuristic_bot, random_bot
from p2pcards.cli import repl
from p2pcards.games import CHANCE, GAMES, Capabilities, HandState, get_game, register
from p2pcards.games.cards import STANDARD, bits
from p2pcards.history import History, load, loads, replay
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import LOCK_DECK, PROVED_DECK
from p2pcards.table.verify import verify
from tests.duel import DISCARD, DISCARDS, GAME, Duel, DuelState, register_duel, unregister_duel
from tests.test_repl import player, seated
from tests.test_table import history_of


@pytest.fixture(autouse=True)
def duel() -> Iterator[None]:
    register_duel()
    yield
    unregister_duel()


def test_registered_at_run_time_and_gone_after() -> None:
    assert get_game("duel") is GAME
    unregister_duel()
    assert "duel" not in GAMES
    register_duel()


def test_every_seat_s_view_follows_the_deal() -> None:
    """After every action, each seat's view (its log, its own cards) is exactly what the
    full state says that seat knows, as for the built-in games."""
    rng = random.Random(1)
    options = GAME.resolve_options({})
    checked = 0
    for _ in range(200):
        deck = GAME.shuffled_deck(2, options, rng)
        dealer = rng.randrange(2)
        full = GAME.deal(deck, dealer, 2, options)
        views = [GAME.deal(GAME.observed_deck(deck, dealer, 2, options, s), dealer, 2, options,
                           observer=s) for s in range(2)]
        while not full.is_terminal():
            actor = full.current_player()
            action = heuristic_bot(full.view(actor), rng) if rng.random() < 0.5 \
                else random_bot(full.view(actor), rng)
            texts = [full.format_action(action, seat=s) for s in range(2)]
            full.apply(action)
            for seat, view in enumerate(views):
                view.apply_text(texts[seat], actor)
                for place in bits(view.awaiting):
                    view.observe(place, full.may[place])
                assert view.knowledge() == full.view(seat).knowledge(), (seat, texts[seat])
                checked += 1
        assert sum(full.points()) == 4
    assert checked > 2000


def test_a_discard_is_face_down_for_the_other_seat() -> None:
    state = GAME.deal(GAME.deck(2, {}), 0, 2, GAME.resolve_options({}))
    assert isinstance(state, DuelState) and state.phase == DISCARD
    action = state.legal_actions()[0]  # seat 1's (dealer 0): it sees its own card
    assert state.format_action(action, seat=1) == f"discard {STANDARD.name(action - DISCARDS)}"
    assert state.format_action(action, seat=0) == "discard ?"


@pytest.mark.parametrize(("seed", "deck"), [(1, PROVED_DECK), (2, LOCK_DECK)])
def test_whole_games_at_the_secure_table(seed: int, deck: str) -> None:
    """With either deck; with today's, every deal is audited and each seat's view after
    every move is the audited deal's (the proved deck reveals nothing to compare)."""
    table = MemoryTable("duel", 2, seed, [heuristic_bot, random_bot], keep_states=True,
                        deck=deck)
    table.play()
    first = table.sessions[0]
    assert table.rejected == [] and first.over and first.winner is not None
    for session in table.sessions:
        assert (session.totals, session.winner, session.hash) == \
            (first.totals, first.winner, first.hash)
        assert session.finished and all(run.verdict == "ok" for run in session.finished)
        if deck == PROVED_DECK:
            assert not any(run.audits for run in session.finished)  # nothing revealed
            continue
        assert sorted(session.finished[0].audits) == [0, 1]  # every deal audited
        for run in session.finished:  # each view after every move, as the audit shows it
            assert run.outcome is not None
            for full, mine in zip(run.outcome.states, run.views, strict=True):
                assert full.view(session.me).knowledge() == mine
    report = verify(first.export())
    assert report.ok and report.winner == first.winner
    result = replay(loads(history_of(first).dumps()))
    assert result.totals == first.totals and result.winner == first.winner


class Silent(DuelState):
    """Duel's deals without :meth:`HandState.shown_cards`."""

    __slots__ = ()
    shown_cards = HandState.shown_cards  # type: ignore[assignment]


class Mute(Duel):
    """Duel dealing :class:`Silent` states; ``capabilities`` as a test declares them."""

    name = "mute"

    def deal(self, *args: Any, **kwargs: Any) -> DuelState:
        state = super().deal(*args, **kwargs)
        state.__class__ = Silent
        return state


def test_a_game_the_secure_table_cannot_play_is_refused_at_once() -> None:
    """A game that does not declare which cards an action shows cannot be dealt by the
    mental-poker deck: the table refuses it before the first message, naming what it
    lacks.  The local table plays it."""
    mute = Mute()
    mute.capabilities = replace(GAME.capabilities, shown_cards=False)
    register(mute)
    try:
        with pytest.raises(ValueError, match=r"cannot play Duel.*Capabilities.shown_cards"):
            MemoryTable("mute", 2, 1, [heuristic_bot] * 2)
        report = arena.run(arena.Setup("mute", ("heuristic", "random"), seed=2), 2)
        assert report["games"] == 2
    finally:
        GAMES.pop("mute")


def test_a_game_whose_hooks_part_from_its_declaration_is_not_registered() -> None:
    """Declaring a hook the deals lack, or filling in one not declared, is refused when
    the game is registered, naming the capability and the hook."""
    mute = Mute()  # declares shown_cards (Duel's capabilities), its deals lack it
    with pytest.raises(ValueError, match=r"declares Capabilities.shown_cards but does not fill"
                                         r" in HandState.shown_cards"):
        register(mute)
    loud = Duel()  # its deals show cards, it declares nothing
    loud.capabilities = Capabilities()
    with pytest.raises(ValueError, match=r"fills in HandState.shown_cards but does not declare"
                                         r" Capabilities.shown_cards"):
        register(loud)
    assert "mute" not in GAMES and GAMES["duel"] is GAME


def test_the_table_bench_plays_it() -> None:
    from p2pcards.bench.table import table_deals  # noqa: PLC0415

    for deck in (LOCK_DECK, PROVED_DECK):
        result = table_deals("duel", 0.0, deck=deck)
        assert result.deals == 2 and result.messages > 0 and result.spent["engine"] > 0


def test_played_at_the_prompt_and_replayed(tmp_path) -> None:
    rng = random.Random("repl:duel")
    with seated("duel", player(rng), options={"target": 4}) as r:
        assert repl.play(r) == 0
    assert r.table.winner is not None
    text = "\n".join(r.transcript)
    assert "you: discard " in text and "bot1: discard ?" in text  # the other's is face down
    assert "trick 1: " in text
    path = tmp_path / "duel.json"
    path.write_text(r.table.history.dumps())
    history = load(str(path))
    assert isinstance(history, History) and history.game == "duel"
    result = replay(history)
    assert result.totals == r.table.totals and result.winner == r.table.winner


def test_searched_by_ismcts_and_played_in_the_arena() -> None:
    rng = random.Random(3)
    full = GAME.deal(GAME.shuffled_deck(2, {}, rng), 0, 2, GAME.resolve_options({}))
    while full.current_player() != CHANCE and full.phase == DISCARD:
        full.apply(full.legal_actions()[0])
    view = full.view(full.current_player())
    action, share = SearchBot("ismcts", iterations=300).choose(view, rng)
    assert action in view.legal_actions() and share is not None
    report = arena.run(arena.Setup("duel", ("ismcts", "heuristic"), seed=5, iterations=60), 6)
    assert report["game"] == "duel" and report["games"] == 6
    assert {entry["bot"] for entry in report["entries"]} == {"ismcts", "heuristic"}
    assert report["difference"]["won"] + report["difference"]["tied"] \
        + report["difference"]["lost"] == 6
