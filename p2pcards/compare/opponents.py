"""OpenSpiel's two ISMCTS bots, at a wall-clock budget per move.

* ``python``: ``open_spiel.python.algorithms.ismcts.ISMCTSBot``.  It counts
  simulations, not time, so :class:`TimedPythonISMCTS` runs its own search loop
  until the budget is spent (the loop of ``run_search``, unchanged otherwise) and
  counts the simulations.  Its worlds come from OpenSpiel's
  ``State.resample_from_infostate`` (``shipped``) or, through ``set_resampler``,
  from our exact determinization (``correct``, :func:`exact_resampler`).
* ``cpp``: ``pyspiel.ISMCTSBot`` with ``max_wall_clock_time``; its Python binding
  offers no ``set_resampler``, so it always uses the game's own resampler.  It
  reports no simulation count: :class:`CppISMCTS` measures its rate now and then on
  the same position with a fixed number of simulations (outside the move's time).

Both use random rollouts (one per leaf), play the most visited move, and key
their trees on the game's information-state string (hearts) or observation string
(spades, which has no information-state string; its observation string holds the
whole auction and play, so it identifies the information set).
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from .adapters import CardTable

CALIBRATE_EVERY = 4
"""The C++ bot's rate is measured on every fourth position it searches."""


def exact_resampler(rng: random.Random) -> Any:
    """A resampler for ``set_resampler``: the OpenSpiel state of one of our exact worlds.  The
    view of the position last asked about is kept (a search asks about one position
    over and over), so its dealer's counts serve every world of the search."""
    last: dict[tuple[int, ...], CardTable] = {}

    def resample(state: Any, player: int) -> Any:
        key = (player, *state.history())
        view = last.get(key)
        if view is None:
            last.clear()
            view = last[key] = CardTable.view(state, player)
        return view.openspiel_world(rng)

    return resample


class TimedPythonISMCTS(ismcts.ISMCTSBot):  # type: ignore[misc]
    """OpenSpiel's Python ISMCTS searching for ``seconds`` per move."""

    def __init__(self, game: Any, seconds: float, uct_c: float, seed: int,
                 use_observation_string: bool):
        state = np.random.RandomState(seed)
        super().__init__(game, mcts.RandomRolloutEvaluator(1, state), uct_c,
                         max_simulations=1, random_state=state,
                         final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                         use_observation_string=use_observation_string)
        self.seconds = seconds
        self.simulations = 0
        self.searched = 0.0

    def run_search(self, state: Any) -> Any:
        self.reset()
        legal_actions = state.legal_actions()
        if len(legal_actions) == 1:
            return [(legal_actions[0], 1.0)]
        start = time.perf_counter()
        deadline = start + self.seconds
        self._root_node = self.create_new_node(state)
        key = self.get_state_key(state)
        done = 0
        while done < 2 or time.perf_counter() < deadline:  # the root needs two
            sampled = self.sample_root_state(state)
            assert key == self.get_state_key(sampled)
            self.run_simulation(sampled)
            done += 1
        self.simulations += done
        self.searched += time.perf_counter() - start
        return self.get_final_policy(state, self._root_node)


class CppISMCTS:
    """OpenSpiel's C++ ISMCTS (``pyspiel.ISMCTSBot``) searching for ``seconds`` per move."""

    def __init__(self, seconds: float, uct_c: float, seed: int, use_observation_string: bool):
        self.seconds = seconds
        self.uct_c = uct_c
        self.rng = random.Random(seed)
        self.observation = use_observation_string
        self.positions = 0
        self.calibrated = 0
        self.calibration_seconds = 0.0

    def _bot(self, simulations: int, wall: float) -> Any:
        seed = self.rng.randrange(2**31)
        return pyspiel.ISMCTSBot(seed, pyspiel.RandomRolloutEvaluator(1, seed), self.uct_c,
                                 simulations, -1, pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                                 self.observation, False, wall)

    def step(self, state: Any) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        self.positions += 1
        action = int(self._bot(1, self.seconds).step(state))
        if self.positions % CALIBRATE_EVERY == 1:
            simulations = 200
            start = time.perf_counter()
            self._bot(simulations, -1.0).step(state)
            self.calibration_seconds += time.perf_counter() - start
            self.calibrated += simulations
        return action

    @property
    def rate(self) -> float:
        return self.calibrated / self.calibration_seconds if self.calibration_seconds else 0.0
