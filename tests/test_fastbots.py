"""Bots that answer fast: the early stop returns the full budget's move, pondered
trees are continued, forced moves are played at once."""

from __future__ import annotations

import argparse
import json
import os
import random
import threading

import pytest

from p2pcards.ai.inference import Inferred
from p2pcards.ai.ismcts import CLOCK_EVERY, Node, grow, search, settled
from p2pcards.ai.parallel import RootParallel
from p2pcards.bench.wait import main as wait_main
from p2pcards.bots import (
    SearchBot,
    default_think,
    default_workers,
    heuristic_bot,
    make_bot,
    playbook,
    unsplit_games,
)
from p2pcards.bots.ponder import Pondering, follow, ponders
from p2pcards.bots.waiting import WaitSetup, measure, quantile
from p2pcards.cli import netcmd
from p2pcards.games import CHANCE, GAMES, bidwhist, controlnut, get_game, nullern, pasur
from p2pcards.local import LocalGame
from tests.sim import choose
from tests.test_ismcts import Pile


def test_settled_counts_the_iterations_left_and_the_tie_break():
    legal = [3, 5, 9]
    assert settled(legal, {3: 10, 5: 4}, 5)  # 4 + 5 < 10
    assert not settled(legal, {3: 10, 5: 4}, 7)
    # a tie after every visit left goes to the lower code: 3 keeps it, 5 does not
    assert settled(legal, {3: 10, 5: 4}, 6)
    assert not settled(legal, {5: 10, 3: 4}, 6)
    assert settled(legal, {5: 10, 3: 4}, 5)
    assert settled(legal, {}, 0)  # all level and nothing left: 3, the lowest, is chosen
    assert not settled(legal, {9: 2}, 2)  # 3 (no visit) and 9 would tie: 3 is lower
    assert settled([7], {}, 100)


def positions(game, players: int, number: int, seed: int, count: int):
    """``count`` decisions with a choice, spread over random deals of ``game``."""
    rng = random.Random(seed)
    options = game.resolve_options({})
    found = []
    while len(found) < count:
        full = game.deal(game.shuffled_deck(players, options, rng), rng.randrange(players),
                         players, options, number=number)
        while not full.is_terminal() and len(found) < count:
            seat = full.current_player()
            if seat >= 0 and full.forced_action() is None and len(full.legal_actions()) > 1 \
                    and len(full.legal_actions()) <= 300 and rng.random() < 0.15:
                found.append((full.clone(), seat))
            full.apply(full.chance_action(rng) if seat < 0 else choose(full, rng))
    return found


@pytest.mark.parametrize(("game", "players", "number"), [
    (bidwhist.GAME, 4, 0), (pasur.GAME, 4, 0), (nullern.GAME, 4, 3), (controlnut.GAME, 4, 0)],
    ids=["bidwhist", "pasur", "nullern", "controlnut"])
def test_the_early_stop_plays_the_move_of_the_whole_budget(game, players, number):
    stopped_early = 0
    for k, (full, seat) in enumerate(positions(game, players, number, 7, 8)):
        view = full.view(seat)
        policy = playbook(view).policy
        whole = search(view, random.Random(k), iterations=400, policy=policy, early_stop=False)
        early = search(view, random.Random(k), iterations=400, policy=policy)
        assert early.action == whole.action, (k, view.format_action(whole.action))
        assert early.iterations <= whole.iterations == 400
        # the visits early are those of the whole search's first iterations
        assert all(early.visits.get(a, 0) <= whole.visits.get(a, 0) for a in whole.visits)
        stopped_early += early.iterations < 400
    assert stopped_early >= 1


def test_the_search_stops_early_when_one_move_dominates():
    # two counters: taking both wins at once, taking one loses
    result = search(Pile(2, secret=None), random.Random(1), iterations=2000)
    assert result.action == 2
    # the margin grows by one a visit as the visits left shrink by one: about half
    assert result.iterations <= 1000 + CLOCK_EVERY
    assert result.visits[2] - result.visits.get(1, 0) > 2000 - result.iterations
    whole = search(Pile(2, secret=None), random.Random(1), iterations=2000, early_stop=False)
    assert whole.action == 2 and whole.iterations == 2000


def test_root_parallel_stops_early_with_the_move_of_the_whole_budget():
    with RootParallel(2) as pool:
        early = pool.search(Pile(2, secret=None), seed=3, iterations=800)
        whole = pool.search(Pile(2, secret=None), seed=3, iterations=800, early_stop=False)
    assert early.action == whole.action == 2
    assert early.iterations < whole.iterations == 1600


def test_growing_in_parts_builds_the_same_tree_as_at_once():
    view = Pile(9, secret=None)
    once, parts = Node(-1), Node(-1)
    grow(view, 0, once, random.Random(2), iterations=300)
    rng = random.Random(2)
    for _ in range(3):
        grow(view, 0, parts, rng, iterations=100)
    assert {a: c.visits for a, c in once.children.items()} == \
        {a: c.visits for a, c in parts.children.items()}


def test_a_continued_tree_counts_its_visits_toward_the_budget():
    first = search(Pile(9, secret=None), random.Random(4), iterations=300, early_stop=False)
    more = search(Pile(9, secret=None), random.Random(5), iterations=500, early_stop=False,
                  root=first.root)
    assert more.reused == 300 and more.iterations == 200
    assert sum(more.visits.values()) == 500
    done = search(Pile(9, secret=None), random.Random(5), iterations=250, root=first.root)
    assert done.iterations == 0 and done.reused == 500


@pytest.mark.parametrize("game", ["bidwhist", "pasur", "nullern", "controlnut"])
def test_ismcts_and_ismcts_full_play_the_same_deal_at_an_iteration_budget(game):
    spec = get_game(game)
    records = []
    for kind in ("ismcts", "ismcts-full"):
        table = LocalGame(spec, spec.default_players, {}, 3)
        table.play_deal(make_bot(kind, iterations=60), lambda line: None)
        assert table.record is not None
        records.append(table.record.actions)
    assert records[0] == records[1]


def test_forced_moves_cost_no_search():
    bot = SearchBot("ismcts", iterations=500)
    state = Pile(1, secret=None)  # one legal move
    assert bot.choose(state, random.Random(1)) == (1, None)  # type: ignore[arg-type]
    assert bot.searches == 0


def _to_person(table: LocalGame, bots, person: int = 0) -> None:
    """Play the table (bots, chance, forced moves) until ``person`` is to choose."""
    state = table.state
    assert state is not None
    while not state.is_terminal():
        mover = state.current_player()
        if mover == CHANCE:
            table.act_chance()
        elif state.forced_action() is not None:
            table.act(mover, state.forced_action())
        elif mover == person:
            return
        else:
            table.act(mover, bots[mover](state.view(mover), table.bot_rngs[mover]))


@pytest.mark.parametrize("game", ["bidwhist", "nullern"])
def test_pondered_visits_are_continued_and_counted(game):
    spec = get_game(game)
    table = LocalGame(spec, 4, {}, 5)
    bots = [None] + [make_bot("ismcts", think=0.05) for _ in range(3)]
    assert all(ponders(bot) for bot in bots[1:]) and not ponders(make_bot("ismcts-full",
                                                                             think=1.0))
    play = bidwhist.PLAY if game == "bidwhist" else nullern.PLAY
    state = None
    nxt = 1
    while True:  # a play of the person's with a bot to move right after it
        if state is None or state.is_terminal():
            if state is not None:
                table.end_deal()
            table.start_deal()
            state = table.state
            assert state is not None
        _to_person(table, bots)
        if state.is_terminal():
            continue
        if state.phase == play and len(state.legal_actions()) > 1 \
                and len(state.trick) < 3:  # the next seat moves after the person
            pondering = Pondering(table, bots)
            pondering.start()
            tree = pondering.trees[nxt]
            # it ponders with its search's own worlds: inferred where its game's bots infer
            assert isinstance(tree.view, Inferred) == (game == "nullern")
            while sum(c.visits for c in tree.root.children.values()) < 400 \
                    and pondering.running:
                threading.Event().wait(0.01)  # let the thread ponder (no time is asserted)
            assert pondering.running
            pondering.stop()
            assert not pondering.running
            # the person's move that the next bot's tree explored most (the tree holds
            # the cards the bot supposes the person may hold: maybe not the real ones)
            children = tree.root.children
            seen = [a for a in state.legal_actions()
                    if state.public_action(a, nxt) in children]
            if seen:
                action = max(seen, key=lambda a: children[state.public_action(a, nxt)].visits)
                break
        table.act(0, heuristic_bot(state.view(0), random.Random(1)))
    before = [(bot.searches, bot.reused) for bot in bots[1:]]
    table.act(0, action)
    assert state.current_player() == nxt
    bot = bots[nxt]
    assert isinstance(bot, SearchBot)
    view = state.view(nxt)
    chosen = pondering.decide(bot, view, table.bot_rngs[nxt])
    assert chosen in view.legal_actions()
    assert bot.reused > before[0][1] and bot.searches == before[0][0] + 1
    assert pondering.tree_for(nxt) is None  # a tree is given once


def test_follow_takes_chance_and_hidden_moves_as_the_search_keys_them():
    spec = get_game("pasur")
    rng = random.Random(9)
    options = spec.resolve_options({})
    full = spec.deal(spec.shuffled_deck(2, options, rng), 0, 2, options)
    while full.current_player() != 1 or len(full.legal_actions()) < 2:
        full.apply(full.chance_action(rng) if full.current_player() == CHANCE
                   else choose(full, rng))
    root = Node(-1)
    grow(full.view(0), 0, root, random.Random(1), iterations=3000)
    # walk a path the tree holds: the most visited keys, taking the real moves
    start = full.clone()
    texts = []
    node = root
    for _ in range(2):
        if full.current_player() == CHANCE:
            action = full.chance_action(rng)
        else:
            action = next((a for a in full.legal_actions()
                           if full.public_action(a, 0) in node.children), None)
            if action is None:
                break
        texts.append(full.format_action(action))
        before_chance = full.current_player() == CHANCE
        node = node.children[full.public_action(action, 0)]
        full.apply(action)
        if not before_chance:
            node = node.after[full.observation(0)] if node.after else None
        if node is None:
            break
    assert follow(root, start, 0, texts) is node


def test_the_wait_measure_times_every_prompt():
    report = measure(WaitSetup("pasur", deals=1, think=0.01, seed=2))
    assert report.deals == 1 and report.searches > 0
    assert len(report.waits) >= 2 and all(w >= 0 for w in report.waits)
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([5.0], 0.9) == 5.0


def test_the_wait_suite_prints_records_and_refuses_bad_options(capsys):
    assert wait_main(["--games", "pasur", "--deals", "1", "--think", "0.01", "--json"]) == 0
    names = {record["name"] for record in json.loads(capsys.readouterr().out)}
    assert {"wait.pasur.median", "wait.pasur.p90", "wait.all.median"} <= names
    assert wait_main(["--games", "poker"]) == 2
    assert "unknown game 'poker'" in capsys.readouterr().err
    assert wait_main(["--deals", "0"]) == 2
    assert "--deals must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("cores", [None, 1, 2, 8])
def test_default_bots_split_their_search_only_where_the_arena_found_it_as_strong(
        monkeypatch, cores):
    # Control Nut!'s two trees of half the search lost to one tree (docs/benchmarks.md)
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert [name for name, game in GAMES.items() if not game.split_search] == ["controlnut"]
    assert unsplit_games() == "Control Nut!"  # (the help of --workers and --think)
    for game in GAMES.values():
        two = game.split_search and (cores or 1) >= 2
        assert default_workers(game) == (2 if two else 1)
        assert default_think(default_workers(game)) == (0.5 if two else 1.0)


def test_a_networked_peer_makes_its_bots_for_the_game_at_its_table(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    bots = netcmd._BotMaker(argparse.Namespace(think=None))
    try:
        one = bots("ismcts", get_game("controlnut"))
        assert isinstance(one, SearchBot) and one.workers == 1 and one.pool is None
        assert one.think == 1.0 and bots.pool is None
        two = bots("ismcts", get_game("pasur"))
        assert isinstance(two, SearchBot) and two.workers == 2 and two.think == 0.5
        assert two.pool is bots.pool is not None
        again = bots("ismcts", get_game("bidwhist"))  # the same pool for every bot
        assert isinstance(again, SearchBot) and again.pool is bots.pool
        assert bots("no-such-bot", get_game("pasur")) is heuristic_bot
    finally:
        bots.close()
