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
them in proportion to their weights, then draws a fresh generation; so a
search's worlds follow the model's posterior more closely the larger the pool,
at the cost of one weight per world drawn.

Nothing here names a game: a game's model is supplied by the bots' registry
(``p2pcards/bots/registry.py``, ``Playbook.belief``).  A belief should keep
every world possible (mix its model with a floor) so that a player who does
not play as the model expects only flattens the weights; when every weight of
a generation is equal the worlds are exactly the view's own.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Protocol

from .protocol import SearchState, SearchView

__all__ = ["POOL", "Belief", "Inferred", "effective_share"]

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
    _cumulative: list[float] = field(default_factory=list, repr=False)
    _left: int = 0
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
        if self._left <= 0:
            self._generation(rng)
        self._left -= 1
        pick = bisect_right(self._cumulative, rng.random() * self._cumulative[-1])
        return self._worlds[min(pick, len(self._worlds) - 1)].clone()

    def _generation(self, rng: random.Random) -> None:
        worlds = [self.view.determinize(rng) for _ in range(self.pool)]
        logs = [self.belief.log_weight(w) for w in worlds]
        top = max(logs)
        weights = [math.exp(x - top) for x in logs]
        total = 0.0
        cumulative = []
        for w in weights:
            total += w
            cumulative.append(total)
        self._worlds, self._cumulative, self._left = worlds, cumulative, self.pool
        self.generations += 1
        self.spread += effective_share(weights)

    def __getstate__(self) -> dict[str, object]:
        # the worlds of a generation stay where they were drawn
        return {"view": self.view, "belief": self.belief, "pool": self.pool}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["view"], state["belief"], state["pool"])  # type: ignore[misc]


def effective_share(weights: list[float]) -> float:
    """Kish's effective sample size of ``weights`` as a share of their number: 1 when
    all are equal, 1/n when one world takes all the weight."""
    total = sum(weights)
    square = sum(w * w for w in weights)
    return total * total / (square * len(weights)) if square else 1.0
