"""The OpenSpiel adapters' determinization is exact (needs the ``compare`` extra).

Not part of the default suite (pyproject's ``norecursedirs``); run it with
``python -m pytest tests/compare`` after ``pip install -e ".[compare]"``.  Without
open_spiel the import below fails, so the run errors instead of skipping.

Over seeded random play-outs of OpenSpiel's spades and hearts (with and without
passing), at every decision and for the seat to act and one other seat, every
world drawn from the seat's view is checked against OpenSpiel itself: the hands
OpenSpiel prints for each seat (the observer's exactly as in the truth, every
hand its true size, no card of a suit its holder has failed to follow), every
move of the history legal when replayed move by move in a fresh state, the
public moves and the seat's passes unchanged, and the legal actions our world
reports equal to those of an OpenSpiel state rebuilt from its history, also
after random moves made through our ``step``.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pyspiel
import pytest

from p2pcards.ai.ismcts import search
from p2pcards.compare.adapters import CardTable, history_of, load, replay
from p2pcards.compare.deal import Dealer
from p2pcards.compare.fasthearts import HeartsWorld
from p2pcards.compare.rules import RULES

SUITS = "CDHS"
RANKS = "23456789TJQKA"


def hands_printed(state: pyspiel.State, game: str) -> list[set[str]]:
    """Each seat's hand as OpenSpiel prints it (cards as ``suit + rank``)."""
    hands = []
    for seat in range(4):
        text = state.observation_string(seat) if game == "spades" else \
            state.information_state_string(seat).split("Hand: \n", 1)[1]
        cards: set[str] = set()
        for line in text.splitlines()[:4]:
            suit, _, ranks = line.partition(" ")
            assert suit in SUITS, text
            if ranks != "none":
                cards |= {suit + r for r in ranks}
        hands.append(cards)
    return hands


def card_name(game: str, card: int) -> str:
    if game == "spades":
        return SUITS[card // 13] + RANKS[card % 13]
    return SUITS[card % 4] + RANKS[card // 4]


def voids_shown(game: str, moves: list[tuple[int, int]]) -> list[set[str]]:
    """The suits each seat has failed to follow (written apart from the adapters)."""
    plays = [(p, a) for p, a in moves if 0 <= a < 52]
    out: list[set[str]] = [set() for _ in range(4)]
    for i, (player, card) in enumerate(plays):
        led = card_name(game, plays[i - i % 4][1])[0]
        if card_name(game, card)[0] != led:
            out[player].add(led)
    return out


def public_moves(game: str, state: pyspiel.State) -> list[tuple[int, int]]:
    """The moves after the deal (and after hearts' passing)."""
    pairs = history_of(state)
    start = 52 if game == "spades" else 53
    if game == "hearts" and pairs[0][1] != 0:
        start += 12
    return pairs[start:]


def replays_legally(game: pyspiel.Game, actions: list[int]) -> pyspiel.State:
    state = game.new_initial_state()
    for action in actions:
        assert action in state.legal_actions(), (len(state.history()), action)
        state.apply_action(action)
    return state


def world_state(game: pyspiel.Game, world: CardTable | HeartsWorld) -> pyspiel.State:
    """The OpenSpiel state of a world: its own, or a native world's history replayed."""
    if isinstance(world, HeartsWorld):
        return replay(game, world.history())
    return world.state


def check_world(name: str, game: pyspiel.Game, truth: pyspiel.State, seat: int, *,
                view: CardTable, rng: random.Random) -> None:
    world = view.determinize(rng)
    assert isinstance(world, HeartsWorld) == view.native()
    state = world_state(game, world)
    # every move made so far was legal in this world, replayed move by move
    rebuilt = replays_legally(game, list(state.history()))
    true_hands = hands_printed(truth, name)
    hands = hands_printed(state, name)
    assert hands[seat] == true_hands[seat]
    assert [len(h) for h in hands] == [len(h) for h in true_hands]
    for player, suits in enumerate(voids_shown(name, public_moves(name, truth))):
        assert not {c for c in hands[player] if c[0] in suits}, (player, suits)
    assert public_moves(name, state) == public_moves(name, truth)
    if name == "hearts" and truth.history()[0] != 0:
        own = slice(53 + 3 * seat, 56 + 3 * seat)
        assert state.history()[own] == truth.history()[own]
    assert world.information_key(seat) == view.information_key(seat)
    assert world.observation(seat) == view.observation(seat)
    if truth.current_player() == seat:
        assert world.legal_actions() == list(truth.legal_actions()) == view.legal_actions()
    assert world.legal_actions() == list(rebuilt.legal_actions())
    # play on through our step and clone; OpenSpiel agrees at every move
    walker = world.clone()
    for _ in range(rng.randrange(1, 12)):
        if walker.is_terminal():
            break
        legal = walker.legal_actions()
        replayed = replay_of(game, walker)
        assert legal == list(replayed.legal_actions())
        assert walker.current_player() == replayed.current_player()
        walker.step(rng.choice(legal))
    assert walker.is_terminal() == replay_of(game, walker).is_terminal()
    walker.rollout(rng)
    assert walker.is_terminal()
    rewards = walker.rewards()
    assert rewards == CardTable.world(replay_of(game, walker)).rewards()
    assert all(0.0 <= r <= 1.0 for r in rewards)
    if name == "spades":
        assert rewards[0] == rewards[2] and rewards[1] == rewards[3]
        assert abs(rewards[0] + rewards[1] - 1.0) < 1e-9 or max(rewards) == 1.0


def replay_of(game: pyspiel.Game, table: CardTable | HeartsWorld) -> pyspiel.State:
    state = game.new_initial_state()
    for action in world_state(game, table).history():
        state.apply_action(action)
    return state


def play_outs(name: str, passing: bool, count: int, seed: int, worlds: str = "native") -> int:
    game = load(name, passing)
    checked = 0
    for play in range(count):
        rng = random.Random(f"{seed} {name} {passing} {play}")
        truth = game.new_initial_state()
        while not truth.is_terminal():
            if truth.is_chance_node():
                outcomes = truth.legal_actions()
                truth.apply_action(outcomes[rng.randrange(len(outcomes))])
                continue
            actor = truth.current_player()
            for seat in (actor, rng.choice([s for s in range(4) if s != actor])):
                view = CardTable.view(truth, seat, worlds=worlds)
                for _ in range(2):
                    check_world(name, game, truth, seat, view=view, rng=rng)
                    checked += 1
            truth.apply_action(rng.choice(truth.legal_actions()))
    return checked


def test_spades_worlds_are_exact() -> None:
    assert play_outs("spades", True, 12, seed=1) > 12 * 56 * 4 - 1


def test_hearts_worlds_are_exact() -> None:
    assert play_outs("hearts", True, 12, seed=2) > 12 * 52 * 4 - 1


@pytest.mark.parametrize("worlds", ["native", "pyspiel"])
def test_hearts_without_passing_worlds_are_exact(worlds: str) -> None:
    assert play_outs("hearts", False, 6, seed=3, worlds=worlds) > 6 * 52 * 4 - 1


def stacked_hearts(hands: list[list[int]]) -> pyspiel.State:
    """A hearts deal without passing, seat ``s`` dealt ``hands[s]``."""
    state = load("hearts", passing=False).new_initial_state()
    state.apply_action(0)  # no pass
    for i in range(52):
        state.apply_action(hands[i % 4][i // 4])
    return state


def check_views_after(state: pyspiel.State, plays: int, rng: random.Random) -> None:
    game = load("hearts", passing=False)
    for _ in range(plays):
        legal = state.legal_actions()
        state.apply_action(rng.choice(legal))
        for seat in range(4):
            view = CardTable.view(state, seat)
            for _ in range(3):
                check_world("hearts", game, state, seat, view=view, rng=rng)


def test_hearts_plays_that_reveal_more_than_a_void() -> None:
    """A hand of points only may play points on the first trick, and a hand of hearts
    only may lead one before hearts are broken: the worlds must deal accordingly
    (else the replay of that move is illegal)."""
    rules = RULES["hearts"]
    clubs = [rules.card(0, r) for r in range(13)]
    diamonds = [rules.card(1, r) for r in range(13)]
    hearts = [rules.card(2, r) for r in range(13)]
    spades = [rules.card(3, r) for r in range(13)]
    rng = random.Random(13)
    # seat 1 holds nothing but hearts: its first-trick heart says so
    rest = clubs + diamonds + spades
    rng.shuffle(rest)
    rest.remove(clubs[0])
    hands = [[clubs[0], *rest[:12]], hearts, rest[12:25], rest[25:38]]
    check_views_after(stacked_hearts(hands), 6, rng)
    # seat 1 holds the ace of clubs and twelve hearts: it wins the first trick and
    # must lead a heart before hearts are broken
    rest = clubs[1:12] + diamonds + spades + [hearts[12]]
    rng.shuffle(rest)
    hands = [[clubs[0], *rest[:12]], [clubs[12], *hearts[:12]], rest[12:25], rest[25:38]]
    state = stacked_hearts(hands)
    check_views_after(state, 5, rng)
    led = [a for p, a in history_of(state)[53:] if p == 1]
    assert rules.suit(led[-1]) == 2 and len(led) == 2


def test_a_view_keeps_only_its_seats_information() -> None:
    """Two deals differing only in cards a seat never saw give it the same view."""
    game = load("spades")
    rng = random.Random(5)
    deal = list(range(52))
    rng.shuffle(deal)
    other = deal[:]
    # swap one card between seats 1 and 3 (deal index i goes to seat i % 4)
    other[1], other[3] = other[3], other[1]
    views = []
    for order in (deal, other):
        state = game.new_initial_state()
        for card in order:
            state.apply_action(card)
        views.append(CardTable.view(state, 0))
    assert views[0].seen == views[1].seen
    assert views[0].information_key(0) == views[1].information_key(0)
    hidden = {deal[1], deal[3]}
    seen_cards = set(views[0].seen.dealt)
    assert not hidden & seen_cards


@pytest.mark.parametrize("rollouts", ["random", "policy"])
def test_the_search_plays_a_legal_move_from_a_view(rollouts: str) -> None:
    for name in ("spades", "hearts"):
        game = load(name)
        rng = random.Random(7)
        state = game.new_initial_state()
        while state.is_chance_node() or len(state.history()) < 70:
            state.apply_action(rng.choice(state.legal_actions()))
        view = CardTable.view(state, state.current_player(), rollouts=rollouts)
        result = search(view, rng, iterations=200)
        assert result.action in state.legal_actions()
        assert view.determinize(rng).rollouts == rollouts


def all_deals(cards: list[int], sizes: list[int],
              allowed: list[frozenset[int] | None]) -> list[tuple[frozenset[int], ...]]:
    out = []
    for perm in itertools.permutations(cards):
        hands, start = [], 0
        for size in sizes:
            hands.append(frozenset(perm[start:start + size]))
            start += size
        if all(a is None or h <= a for h, a in zip(hands, allowed, strict=True)):
            out.append(tuple(hands))
    return sorted(set(out), key=lambda hs: [sorted(h) for h in hs])


def test_the_dealer_is_uniform_over_consistent_deals() -> None:
    """Both ways of drawing (shuffles kept when they fit, and the exact count)
    give every consistent deal, each about equally often, and nothing else."""
    cards = [0, 1, 2, 3, 4, 5, 6]
    sizes = [3, 2, 2]
    allowed: list[frozenset[int] | None] = [frozenset({0, 1, 2, 3, 4}), frozenset({2, 3, 5, 6}),
                                            None]
    legal = all_deals(cards, sizes, allowed)
    for exact in (False, True):
        dealer = Dealer(cards, sizes, allowed)
        if exact:
            dealer.rejections = 10**6
        rng = random.Random(11)
        draws = 12_000
        counts = Counter(tuple(frozenset(h) for h in dealer.deal(rng)) for _ in range(draws))
        assert set(counts) == set(legal)
        expected = draws / len(legal)
        for deal in legal:  # five standard deviations of a binomial count
            assert abs(counts[deal] - expected) < 5 * expected ** 0.5, (exact, deal)


def test_rules_cover_both_games() -> None:
    assert set(RULES) == {"spades", "hearts"}
