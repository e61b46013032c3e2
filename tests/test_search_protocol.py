"""The search protocol for a new game: a view class apart from the world class,
and the defaults of ``PublicMoves`` (``ai/protocol.py``)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from p2pcards.ai.ismcts import VARIANTS, pimc, search
from p2pcards.ai.parallel import RootParallel
from p2pcards.ai.protocol import PublicMoves

PASS, BET = 0, 1


class Showdown(PublicMoves):
    """A world of a tiny betting game unknown to ``ai``: three cards (0 < 1 < 2),
    one to each seat, the other face down.  Seat 0 passes or bets; after a pass
    seat 1 passes (showdown for 1) or bets; facing a bet a seat folds (loses 1)
    or calls (showdown for 2).  Every move is public: the defaults serve."""

    players = 2

    def __init__(self, cards: tuple[int, int], history: tuple[int, ...] = ()):
        self.cards = cards
        self.history = list(history)

    def current_player(self) -> int:
        return len(self.history) % 2

    def legal_actions(self) -> list[int]:
        return [PASS, BET]

    def step(self, action: int) -> None:
        self.history.append(action)

    def clone(self) -> Showdown:
        return Showdown(self.cards, tuple(self.history))

    def is_terminal(self) -> bool:
        h = self.history
        return h in ([PASS, PASS], [BET, PASS], [BET, BET]) or len(h) == 3

    def payoff(self) -> int:
        """What seat 0 wins."""
        h = self.history
        if h == [BET, PASS]:
            return 1
        if h == [PASS, BET, PASS]:
            return -1
        stake = 1 if h == [PASS, PASS] else 2
        return stake if self.cards[0] > self.cards[1] else -stake

    def rewards(self) -> list[float]:
        first = (self.payoff() + 2) / 4
        return [first, 1 - first]

    def information_key(self, seat: int) -> int:
        return self.cards[seat] << 4 | len(self.history)


class Hand:
    """A seat's view: its own card and the moves so far, nothing of the other card.
    It is not a world: it cannot step, and the search never asks it to."""

    players = 2

    def __init__(self, seat: int, card: int, history: tuple[int, ...]):
        self.seat, self.card, self.history = seat, card, history

    def current_player(self) -> int:
        return len(self.history) % 2

    def legal_actions(self) -> list[int]:
        return [PASS, BET]

    def determinize(self, rng: random.Random) -> Showdown:
        other = rng.choice([c for c in range(3) if c != self.card])
        cards = (self.card, other) if self.seat == 0 else (other, self.card)
        return Showdown(cards, self.history)


FACING_A_BET = [  # (seat, card, history, the move that cannot be worse)
    (1, 2, (BET,), BET),   # the best card calls: it wins the showdown
    (1, 0, (BET,), PASS),  # the worst card folds: a call always loses
    (0, 2, (PASS, BET), BET),
    (0, 0, (PASS, BET), PASS),
]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_search_takes_a_view_of_another_class(variant):
    for seat, card, history, best in FACING_A_BET:
        view = Hand(seat, card, history)
        result = search(view, random.Random(5), iterations=400, variant=variant)
        assert result.action == best, (variant, seat, card, history)
        assert sum(result.visits.values()) > 0


def test_root_parallelism_and_pimc_take_a_view_of_another_class():
    seat, card, history, best = FACING_A_BET[1]
    with RootParallel(2) as pool:
        for variant in ("single", "own"):
            result = pool.search(Hand(seat, card, history), 3, iterations=400, variant=variant)
            assert result.action == best and 0 < sum(result.visits.values()) <= 2 * 400
    assert pimc(Hand(seat, card, history), random.Random(1), iterations=400).action == best


class Draw(PublicMoves):
    """A chance node listing its outcomes 0..3, then a move; for the defaults."""

    players = 1

    def __init__(self) -> None:
        self.history: list[int] = []

    def current_player(self) -> int:
        return -1 if not self.history else 0

    def legal_actions(self) -> list[int]:
        return [0, 1, 2, 3] if not self.history else [7, 8]

    def step(self, action: int) -> None:
        self.history.append(action)

    def is_terminal(self) -> bool:
        return len(self.history) == 2


def test_public_moves_defaults():
    world = Draw()
    assert world.public_action(5, 0) == 5 and world.sampled_move(0, random.Random(1)) is None
    assert world.observation(0) == world.observation(1) == 0
    rng = random.Random(7)
    drawn = Counter(Draw().chance_action(rng) for _ in range(4000))
    assert set(drawn) == {0, 1, 2, 3}
    assert all(800 < n < 1200 for n in drawn.values()), drawn  # uniform
    ends = Counter()
    for _ in range(400):
        world = Draw()
        world.rollout(rng)  # chance by chance_action, then a random legal move
        assert world.is_terminal() and world.history[0] in range(4)
        ends[world.history[1]] += 1
    assert set(ends) == {7, 8}
