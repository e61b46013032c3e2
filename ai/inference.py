"""Inference in the sampling: worlds weighted by what the other players did.

A view's determinizer draws every world its player cannot tell from the truth
alike.  The other players' bids and plays say more: a player who bid seven
rarely holds a handful of twos.  A :class:`Belief` scores a world by how likely
the other players' past actions are, under a model of those players, given the
cards the world gives them (``log_weight``: a log-likelihood, up to a constant).
:class:`Inferred` wraps a view so that its ``determinize`` draws worlds by that
weight: importance resampling (sampling-importance-resampling, as the particle
filters of the card-game literature do).  Each *generation* it draws ``pool``
worlds from the view, weighs them, and hands out ``pool`` worlds drawn from
them in proportion to their weights (systematic resampling, in a shuffled
order), then draws a fresh generation; so a search's worlds follow the model's
posterior more closely the larger the pool, at the cost of one weight per
world drawn.  A world handed out more than once is cloned for all but its
last use.

Nothing here names a game: a game's model is supplied by the bots' registry
(``p2pcards/bots/registry.py``, ``Playbook.belief``).  A belief should keep
every world possible (mix its model with a floor) so that a player who does
not play as the model expects only flattens the weights; when every weight of
a generation is equal, each of its worlds is handed out once: exactly the
view's own worlds.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Protocol

from .protocol import SearchState, SearchView

__all__ = ["POOL", "Belief", "Inferred", "effective_share", "systematic"]

POOL = 32
"""Worlds drawn, weighed and resampled per generation (measured: docs/bots.md)."""


class Belief(Protocol):
    """A model of the other players' past actions, for one view."""

    def log_weight(self, world: SearchState) -> float:
        """How likely the other players' actions so far are in ``world`` (the log of
        a likelihood, up to a constant common to every world of the view)."""
        ...


@dataclass
class Inferred:
    """``view`` whose worlds are drawn in proportion to ``belief``'s weights (see the
    module docstring); the search takes it in place of the view.  Picklable when
    the view and the belief are (root parallelism sends it to the workers, where
    each draws its own generations)."""

    view: SearchView[SearchState]
    belief: Belief
    pool: int = POOL
    _worlds: list[SearchState] = field(default_factory=list, repr=False)
    _order: list[int] = field(default_factory=list, repr=False)
    _uses: list[int] = field(default_factory=list, repr=False)
    generations: int = 0
    """Generations drawn so far."""
    spread: float = 0.0
    """The sum over generations of :func:`effective_share` (its mean: ``spread /
    generations``)."""

    players: int = field(init=False)

    def __post_init__(self) -> None:
        self.players = self.view.players

    def current_player(self) -> int:
        return self.view.current_player()

    def legal_actions(self) -> list[int]:
        return self.view.legal_actions()

    def determinize(self, rng: random.Random) -> SearchState:
        if not self._order:
            self._generation(rng)
        index = self._order.pop()
        self._uses[index] -= 1
        world = self._worlds[index]
        return world if not self._uses[index] else world.clone()  # its last use: itself

    def _generation(self, rng: random.Random) -> None:
        worlds = [self.view.determinize(rng) for _ in range(self.pool)]
        logs = [self.belief.log_weight(w) for w in worlds]
        top = max(logs)
        weights = [math.exp(x - top) for x in logs]
        order = systematic(weights, self.pool, rng)
        rng.shuffle(order)
        uses = [0] * len(worlds)
        for index in order:
            uses[index] += 1
        self._worlds, self._order, self._uses = worlds, order, uses
        self.generations += 1
        self.spread += effective_share(weights)

    def __getstate__(self) -> dict[str, object]:
        # the worlds of a generation stay where they were drawn
        return {"view": self.view, "belief": self.belief, "pool": self.pool}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["view"], state["belief"], state["pool"])  # type: ignore[misc]


def systematic(weights: list[float], count: int, rng: random.Random) -> list[int]:
    """``count`` indices of ``weights`` drawn in proportion to them by systematic
    resampling: one uniform offset, then ``count`` evenly spaced points along the
    cumulative weights.  Each index is drawn its expected number of times rounded
    up or down, so equal weights draw every index exactly once."""
    total = sum(weights)
    step = total / count
    point = rng.random() * step
    out: list[int] = []
    cumulative = 0.0
    index = -1
    for _ in range(count):
        while cumulative <= point and index + 1 < len(weights):
            index += 1
            cumulative += weights[index]
        out.append(index)
        point += step
    return out


def effective_share(weights: list[float]) -> float:
    """Kish's effective sample size of ``weights`` as a share of their number: 1 when
    all are equal, 1/n when one world takes all the weight."""
    total = sum(weights)
    square = sum(w * w for w in weights)
    return total * total / (square * len(weights)) if square else 1.0
