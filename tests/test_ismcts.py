"""The search: game-agnostic SO-ISMCTS, on a tiny game and on the card games."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from typing import Self

import pytest

from p2pcards.ai.ismcts import pimc, search, tree_stats
from p2pcards.ai.parallel import RootParallel
from p2pcards.ai.protocol import PublicMoves
from p2pcards.bots import SearchBot, heuristic_bot, make_bot, share_pool
from p2pcards.bots.heuristics.bidwhist import PLAYBOOK, bidding_candidates, bidwhist_action
from p2pcards.games import CHANCE, bidwhist, controlnut, nullern, pasur
from p2pcards.games.cards import bits
from tests.sim import choose


class Pile(PublicMoves):
    """A tiny game defined here, unknown to ``ai``: take 1 or 2 counters in turn;
    whoever takes the last one wins.  Seat 1's secret bonus card (0 or 1) is
    hidden from seat 0 and only decides nothing: it exercises determinization."""

    players = 2

    def __init__(self, counters: int, secret: int | None = 1, turn: int = 0):
        self.counters = counters
        self.secret = secret  # None in seat 0's view
        self.turn = turn

    def current_player(self) -> int:
        return self.turn

    def legal_actions(self) -> list[int]:
        return [n for n in (1, 2) if n <= self.counters]

    def step(self, action: int) -> None:
        self.counters -= action
        self.turn = 1 - self.turn

    def clone(self) -> Self:
        return type(self)(self.counters, self.secret, self.turn)

    def is_terminal(self) -> bool:
        return self.counters == 0

    def rewards(self) -> list[float]:
        winner = 1 - self.turn  # who took the last counter
        return [1.0 if seat == winner else 0.0 for seat in range(2)]

    def determinize(self, rng: random.Random) -> Self:
        world = self.clone()
        if world.secret is None:
            world.secret = rng.randrange(2)
        return world

    def information_key(self, seat: int) -> int:
        return ((self.secret or 0) if seat == 1 else 0) << 8 | self.counters


def test_search_knows_no_game_and_finds_the_winning_move():
    for counters, winning in [(4, 1), (5, 2), (7, 1), (8, 2)]:
        result = search(Pile(counters, secret=None), random.Random(3), iterations=2000)
        assert result.action == winning, counters
        assert result.share > 0.5


def test_same_seed_and_budget_same_decision():
    a = search(Pile(10, secret=None), random.Random(9), iterations=300, early_stop=False)
    b = search(Pile(10, secret=None), random.Random(9), iterations=300, early_stop=False)
    assert a.visits == b.visits and a.action == b.action and a.iterations == 300


def test_time_budget_stops_the_search():
    result = search(Pile(30, secret=None), random.Random(1), seconds=0.05)
    assert result.iterations > 0 and result.seconds < 5


def played_to_a_decision(game, players: int, number: int, rng: random.Random,
                         phase_is_play: bool = True):
    options = game.resolve_options({})
    while True:
        full = game.deal(game.shuffled_deck(players, options, rng), 0, players, options,
                         number=number)
        while not full.is_terminal():
            seat = full.current_player()
            if seat >= 0 and full.forced_action() is None and len(full.legal_actions()) > 1 \
                    and (not phase_is_play or full.phase_name() == "play"):
                return full, seat
            full.apply(full.chance_action(rng) if seat < 0 else choose(full, rng))


@pytest.mark.parametrize(("game", "players", "number"), [
    (bidwhist.GAME, 4, 0), (pasur.GAME, 3, 0), (nullern.GAME, 4, 9), (controlnut.GAME, 4, 0)],
    ids=["bidwhist", "pasur", "nullern", "controlnut"])
def test_search_on_a_view_plays_a_legal_move_and_its_tree_grows(game, players, number):
    rng = random.Random(f"ismcts:{game.name}")
    full, seat = played_to_a_decision(game, players, number, rng)
    view = full.view(seat)
    result = search(view, random.Random(5), iterations=1500, early_stop=False)
    assert result.action in full.legal_actions()
    assert sum(result.visits.values()) == result.iterations == 1500
    deeper = tree_stats(result.root)
    assert any(count for depth, count in deeper.items() if depth >= 2), deeper


def test_hidden_moves_of_other_seats_share_one_node():
    """Another seat's face-down discard is one key for the searcher, whatever was thrown."""
    full = bidwhist.GAME.deal(list(range(54)), 3, 4, bidwhist.GAME.resolve_options({}))
    for seat, text in [(0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass"),
                       (0, "trump S")]:
        full.apply_text(text, seat)
    discards = full.legal_actions()[:50]
    assert len({full.public_action(a, 1) for a in discards}) == 1
    assert len({full.public_action(a, 0) for a in discards}) == 50


def test_searching_through_the_auction_samples_the_discard():
    full = bidwhist.GAME.deal(list(range(54)), 3, 4, bidwhist.GAME.resolve_options({}))
    result = search(full.view(0), random.Random(4), iterations=200)
    assert result.action in full.legal_actions()  # a bid or a pass, searched past the discard
    deeper = tree_stats(result.root)
    assert max(deeper) >= 4  # the tree reaches the bidders' play beyond the auction


def test_pimc_baseline_uses_the_same_search_on_determinized_worlds():
    result = pimc(Pile(7, secret=None), random.Random(2), iterations=2000, worlds=4)
    assert result.action == 1 and result.iterations == 2000
    full, seat = played_to_a_decision(nullern.GAME, 4, 9, random.Random(3))
    assert pimc(full.view(seat), random.Random(1), iterations=200).action in full.legal_actions()


def test_what_the_searcher_is_dealt_inside_the_tree_splits_its_information_sets():
    rng = random.Random(6)
    options = pasur.GAME.resolve_options({})
    while True:  # 2 players, the searcher to play with two cards left before a refill
        full = pasur.GAME.deal(pasur.GAME.shuffled_deck(2, options, rng), 1, 2, options)
        if full.phase == pasur.VOID:
            continue
        if full.current_player() == CHANCE:
            full.apply(full.chance_action(rng))
        while full.count[0] != 2 or full.current_player() != 0:
            full.apply(choose(full, rng))
        if len(full.legal_actions()) > 1:
            break
    result = search(full.view(0), random.Random(1), iterations=600)
    branches = []
    stack = [result.root]
    while stack:
        node = stack.pop()
        if node.after:
            branches.append(len(node.after))
            stack.extend(node.after.values())
        stack.extend(node.children.values())
    assert max(branches) > 1  # after the refill: one set per hand the searcher could get


def test_root_parallel_search_merges_the_workers_root_visits():
    full, seat = played_to_a_decision(nullern.GAME, 4, 9, random.Random(8))
    view = full.view(seat)
    with RootParallel(2) as pool:
        first = pool.search(view, seed=11, iterations=150, early_stop=False)
        again = pool.search(view, seed=11, iterations=150, early_stop=False)
        stopped = pool.search(view, seed=11, iterations=150)
    assert first.action in full.legal_actions()
    assert first.iterations == 300 == sum(first.visits.values())
    assert first.visits == again.visits  # the same seeds, the same decision
    assert stopped.action == first.action and stopped.iterations <= 300
    alone = [search(view, random.Random(s), iterations=150, early_stop=False).visits
             for s in (11, 12)]
    merged = {a: alone[0].get(a, 0) + alone[1].get(a, 0) for a in set(alone[0]) | set(alone[1])}
    assert first.visits == merged


def test_a_shared_pool_serves_one_search_at_a_time_and_starts_warm():
    full, seat = played_to_a_decision(nullern.GAME, 4, 9, random.Random(8))
    view = full.view(seat)
    bots = [make_bot("ismcts", iterations=100, workers=2) for _ in range(3)]
    pool = share_pool([*bots, heuristic_bot, make_bot("ismcts", iterations=100)])
    assert pool is not None and pool.workers == 2
    try:
        assert [b.pool for b in bots] == [pool] * 3  # one pool, started before a search
        alone = pool.search(view, seed=5, iterations=100, early_stop=False).visits
        results: list[dict[int, int]] = []
        threads = [threading.Thread(target=lambda: results.append(
            pool.search(view, seed=5, iterations=100, early_stop=False).visits))
            for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [alone, alone]  # two threads at once: neither spoils the other
    finally:
        pool.close()
    assert share_pool([heuristic_bot, make_bot("ismcts", iterations=10)]) is None


def test_a_pool_whose_worker_died_starts_new_ones_and_a_closed_one_refuses():
    full, seat = played_to_a_decision(nullern.GAME, 4, 9, random.Random(8))
    view = full.view(seat)
    pool = RootParallel(2)
    first = pool.search(view, seed=5, iterations=60, early_stop=False)
    workers = [p for executor in pool._pools for p in executor._processes.values()]
    for process in workers:  # killed from outside (out of memory, a person's kill)
        process.kill()
        process.join()
    again = pool.search(view, seed=5, iterations=60, early_stop=False)
    assert again.visits == first.visits
    executors = list(pool._pools)
    processes = [p for executor in executors for p in executor._processes.values()]
    threads = [executor._executor_manager_thread for executor in executors]
    assert len(processes) == 2 and all(p.is_alive() for p in processes)
    pool.close()
    assert not any(p.is_alive() for p in processes)
    # the executors' own threads have ended too: Python's exit hook, which wakes those
    # still running, cannot then race one closing its pipe (a traceback on the way out)
    assert threads and not any(t is None or t.is_alive() for t in threads)
    with pytest.raises(BrokenProcessPool, match="closed"):
        pool.search(view, seed=5, iterations=60)


KILLED_OWNER = """
import os, signal, sys
from p2pcards.bots import make_bot, share_pool
if __name__ == "__main__":
    pool = share_pool([make_bot("ismcts", iterations=10, workers=2)])
    pids = [p.pid for e in pool._pools for p in e._processes.values()]
    while len(pids) < 2:
        pids = [p.pid for e in pool._pools for p in e._processes.values()]
    print(*pids, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_workers_end_with_an_owner_killed_outright(tmp_path):
    script = tmp_path / "owner.py"
    script.write_text(KILLED_OWNER)
    done = subprocess.run([sys.executable, str(script)], check=False, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == -signal.SIGKILL
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie no one reaps is gone all the same
        return stat.read().split(") ")[-1][0] != "Z"


def test_root_actions_limit_the_search_to_a_models_candidates():
    # with 5 counters taking 2 wins; told to consider only taking 1, the search must
    result = search(Pile(5, secret=None), random.Random(3), iterations=300, root_actions=[1])
    assert result.action == 1 and set(result.visits) <= {1}
    with pytest.raises(ValueError, match="none of the root actions"):
        search(Pile(5, secret=None), random.Random(3), iterations=10, root_actions=[7])


def _at_phase(game, phase_of, rng, players=4):
    """A full state of ``game`` at the first decision for which ``phase_of`` holds."""
    options = game.resolve_options({})
    while True:
        full = game.deal(game.shuffled_deck(players, options, rng), rng.randrange(players),
                         players, options)
        while not full.is_terminal():
            if phase_of(full):
                return full
            full.apply(choose(full, rng))


def test_the_bid_whist_discard_is_searched_over_the_models_candidates():
    rng = random.Random(11)
    kinds = set()
    for _ in range(30):
        full = _at_phase(bidwhist.GAME, lambda s: s.phase == bidwhist.DISCARD_PHASE, rng)
        view = full.view(full.current_player())
        candidates = view.candidate_actions(rng)
        assert candidates and len(candidates) == len(set(candidates)) <= 12
        assert bidwhist.plain_discard(view) in candidates
        for code in candidates:
            full.clone().apply(code)  # every candidate is a legal discard
        kinds.add(full.kind)
        bot = SearchBot("ismcts", iterations=60)
        action, share = bot.choose(view, random.Random(5))
        assert action in view.candidate_actions(random.Random(5)) and share is not None
    assert bidwhist.NOTRUMP_BID in kinds  # the jokers-first rule was exercised


def test_control_nut_bids_from_a_long_hand_are_searched_over_a_spread_of_totals():
    rng = random.Random(12)
    full = _at_phase(controlnut.GAME, lambda s: s.phase == controlnut.AUCTION
                     and len(s.legal_actions()) > 300, rng)
    view = full.view(full.current_player())
    candidates = view.candidate_actions(rng)
    legal = view.legal_actions()
    assert candidates and set(candidates) <= set(legal) and 2 <= len(candidates) <= 8

    def total(action: int) -> int:
        return sum(controlnut.VALUE[c] for c in bits(action & controlnut.PAYLOAD))

    assert min(map(total, candidates)) == min(map(total, legal))
    assert max(map(total, candidates)) == max(map(total, legal))
    action, share = SearchBot("ismcts", iterations=40).choose(view, rng)
    assert action in candidates and share is not None


POLICY = PLAYBOOK.policy
assert POLICY is not None


def test_the_bid_whist_bid_is_searched_over_the_models_neighbours():
    """The searching bot's bid: the model's bid, a pass, one level up, the other
    direction; rollouts from the auction play every seat with the heuristic, and the
    other seats bid by the model inside the search."""
    rng = random.Random(12)
    searched = 0
    for _ in range(12):
        full = _at_phase(bidwhist.GAME, lambda s: s.phase == bidwhist.BID, rng)
        seat = full.current_player()
        view = full.view(seat)
        candidates = bidding_candidates(view, random.Random(1))
        assert candidates and bidwhist_action(view, random.Random(1)) in candidates
        assert set(candidates) <= set(view.legal_actions()) and len(candidates) <= 5
        assert POLICY.sampled_move(full, seat, rng) is None  # the searcher's own bid
        assert full.sampled_move(seat, rng) is None  # the engine alone samples no bid
        nxt = full.clone()
        nxt.apply(candidates[0])
        if nxt.phase == bidwhist.BID:  # another seat's bid, seen from the searcher
            assert POLICY.sampled_move(nxt, seat, rng) == bidwhist_action(nxt, rng)
            assert nxt.sampled_move(seat, rng) is None
        rolled = full.clone()
        POLICY.rollout(rolled, random.Random(3))
        assert rolled.is_terminal() and rolled.level > 0
        bot = SearchBot("ismcts", iterations=40)
        action, share = bot.choose(view, random.Random(5))
        if len(candidates) > 1:
            searched += 1
            assert action in candidates and share is not None
    assert searched >= 6


def test_heuristic_rollouts_play_only_legal_moves():
    rng = random.Random(13)
    options = bidwhist.GAME.resolve_options({})
    for _ in range(40):
        full = bidwhist.GAME.deal(bidwhist.GAME.shuffled_deck(4, options, rng),
                                  rng.randrange(4), 4, options)
        checked = full.clone()
        while not checked.is_terminal():
            checked.apply(bidwhist_action(checked, rng))  # apply() checks every move
        POLICY.rollout(full, random.Random(0))
        assert full.is_terminal() and full.points() == checked.points()

