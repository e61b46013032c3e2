"""Scoring a finished OpenSpiel deal for the match, and the match's statistics (pure Python)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from .rules import PLAYERS, Rules

T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042}
"""Student's t, two-sided 95%, by degrees of freedom (the next lower entry is used)."""


def t95(df: int) -> float:
    if df > 30:
        return 1.96
    return T95[max(k for k in T95 if k <= df)]


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and its 95% interval (Student's t; a single value has no width)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def wilson(hits: int, n: int) -> tuple[float, float]:
    """95% Wilson interval of a rate."""
    if not n:
        return 0.0, 0.0
    z = 1.96
    rate = hits / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def tricks_taken(rules: Rules, plays: list[tuple[int, int]]) -> list[int]:
    """Tricks each seat won (the trump beats any other suit: :attr:`Rules.trump`)."""
    won = [0] * PLAYERS
    for start in range(0, len(plays) - PLAYERS + 1, PLAYERS):
        trick = plays[start:start + PLAYERS]
        led = rules.suit(trick[0][1])

        def strength(item: tuple[int, int], led: int = led) -> tuple[int, int]:
            suit = rules.suit(item[1])
            trump = suit == rules.trump
            return (2 if trump else 1 if suit == led else 0, rules.rank(item[1]))

        won[max(trick, key=strength)[0]] += 1
    return won


@dataclass
class GameRecord:
    """One game of a deal: which seats were ours, OpenSpiel's returns, and the
    bids and tricks (spades)."""

    ours: tuple[int, ...]
    returns: list[float]
    bids: list[int]
    tricks: list[int]

    def points(self, rules: Rules, mine: bool) -> float:
        """The side's score (spades: its team's); in a game of penalty points (hearts),
        its penalty points per seat (lower is better)."""
        seats = [s for s in range(PLAYERS) if (s in self.ours) == mine]
        if rules.penalties:
            return statistics.fmean(26 - self.returns[s] for s in seats)
        return self.returns[seats[0]]

    def exact_bids(self, mine: bool) -> tuple[int, int]:
        seats = [s for s in range(PLAYERS) if (s in self.ours) == mine]
        return sum(self.bids[s] == self.tricks[s] for s in seats if self.bids), \
            len(seats) if self.bids else 0


@dataclass
class SideStats:
    """What one side's searches cost: iterations (simulations), their seconds, and the
    wall time of each decision it searched (more than one legal move)."""

    iterations: int = 0
    search_seconds: float = 0.0
    decisions: int = 0
    wall: float = 0.0

    def add(self, other: SideStats) -> None:
        self.iterations += other.iterations
        self.search_seconds += other.search_seconds
        self.decisions += other.decisions
        self.wall += other.wall

    @property
    def rate(self) -> float:
        return self.iterations / self.search_seconds if self.search_seconds else 0.0

    @property
    def per_move(self) -> float:
        return self.wall / self.decisions if self.decisions else 0.0


@dataclass
class DealResult:
    index: int
    games: list[GameRecord]
    ours: SideStats = field(default_factory=SideStats)
    theirs: SideStats = field(default_factory=SideStats)

    def points(self, rules: Rules, mine: bool) -> float:
        return statistics.fmean(g.points(rules, mine) for g in self.games)

    def margin(self, rules: Rules) -> float:
        """Our advantage per deal: spades, our team's points minus theirs; hearts (penalty
        points), their penalty points per seat minus ours."""
        diff = self.points(rules, True) - self.points(rules, False)
        return -diff if rules.penalties else diff
