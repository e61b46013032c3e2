"""The match script runs, reports, and refuses what OpenSpiel cannot play (needs the
``compare`` extra; see test_openspiel_adapters.py)."""

from __future__ import annotations

import random
import subprocess
import sys

import pyspiel  # noqa: F401 (errors, rather than skips, without the extra)
import pytest

from p2pcards.ai.endgame import Solver
from p2pcards.compare.adapters import CardTable, load
from p2pcards.compare.fasthearts import HeartsWorld
from p2pcards.compare.match import our_search


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "p2pcards.compare.match", *args],
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_short_spades_match_reports_every_figure() -> None:
    done = run("spades", "--think", "0.005", "--deals", "2", "--seed", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["deal 0", "deal 1"]
    text = done.stdout
    assert "2 deals x 2 seatings, seed 3" in text
    assert "team points per deal: ours" in text
    assert "our margin per deal (paired)" in text
    assert "bids made exactly (tricks == bid): ours " in text and "/8 = " in text
    assert "iterations/s: ours" in text


def test_a_short_hearts_match_against_the_cpp_bot() -> None:
    """Our worlds native by default, or OpenSpiel's states when asked."""
    for worlds in ("native", "pyspiel"):
        chosen = () if worlds == "native" else ("--worlds", worlds)
        done = run("hearts", "--think", "0.02", "--deals", "1", "--opponent", "cpp",
                   "--sampler", "shipped", "--no-pass", "--rollouts", "policy", *chosen)
        assert done.returncode == 0, done.stderr
        assert "penalty points per seat per deal (lower is better)" in done.stdout
        assert f"ours (search, policy rollouts, {worlds} worlds) vs OpenSpiel cpp ISMCTS " \
            "(shipped sampler" in done.stdout


def test_what_openspiel_cannot_play_is_refused_with_the_reason() -> None:
    cases = [
        (("spades", "--opponent", "cpp", "--sampler", "shipped"), "cannot play spades"),
        (("spades", "--sampler", "shipped"), "ResampleFromInfostate is not implemented"),
        (("hearts", "--sampler", "shipped"), "add --no-pass"),
        (("hearts", "--opponent", "cpp", "--sampler", "correct"), "no set_resampler"),
        (("hearts", "--ours", "nosuch"), "no function 'nosuch'"),
        (("hearts", "--worlds", "fast"), "invalid choice: 'fast'"),
    ]
    for args, reason in cases:
        done = run(*args, "--think", "0.01", "--deals", "1")
        assert done.returncode == 2, args
        assert reason in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_our_side_can_be_a_variant_of_the_search() -> None:
    done = run("spades", "--think", "0.005", "--deals", "1", "--seed", "3",
               "--ours", "search:own")
    assert done.returncode == 0, done.stderr
    assert "ours (search:own, random rollouts) vs OpenSpiel" in done.stdout
    refused = run("spades", "--think", "0.005", "--deals", "1", "--ours", "search:bogus")
    assert refused.returncode == 2 and "no search 'bogus'" in refused.stderr
    for bad, reason in (("search:c=x", "c must be a number"),
                        ("search:own:c=500", "c must be from 0 to 100")):
        refused = run("spades", "--think", "0.005", "--deals", "1", "--ours", bad)
        assert refused.returncode == 2 and reason in refused.stderr, refused.stderr


def test_our_side_can_carry_its_exploration_constant() -> None:
    chosen = our_search("search:own:c=0.3")
    assert chosen.keywords == {"variant": "own", "exploration": 0.3}  # type: ignore[attr-defined]
    done = run("spades", "--think", "0.005", "--deals", "1", "--seed", "3",
               "--ours", "search:c=0.2")
    assert done.returncode == 0, done.stderr
    assert "ours (search:c=0.2, random rollouts) vs OpenSpiel" in done.stdout


def test_our_side_can_solve_hearts_endgames_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """``:e=N``: each native world with at most N cards left is solved, not rolled out
    (a fresh solver for each search), and the options around it still hold."""
    rng = random.Random(7)
    state = load("hearts", passing=False).new_initial_state()
    while state.is_chance_node() or len(state.history()) < 1 + 52 + 40:  # 12 cards left
        state.apply_action(rng.choice(state.legal_actions()))
    view = CardTable.view(state, state.current_player(), "policy")
    solved: list[tuple[Solver, int]] = []  # (the solver, the cards left in its world)
    real = Solver.solve

    def counted(self: Solver, world: HeartsWorld) -> list[float] | None:
        solved.append((self, world.moves_left()))
        return real(self, world)

    monkeypatch.setattr(Solver, "solve", counted)
    chosen = our_search("search:c=0.25:e=12")
    assert chosen.args[1] == 12  # type: ignore[attr-defined]
    for _ in range(2):
        result = chosen(view, rng, iterations=60, early_stop=False)
        assert result.action in state.legal_actions()
    assert len(solved) == 120  # every world at its rollout, and a solver for each search
    assert len({id(solver) for solver, _ in solved}) == 2
    solved.clear()
    our_search("search:c=0.25:e=9")(view, rng, iterations=60, early_stop=False)
    assert 0 < len(solved) < 60 and max(left for _, left in solved) <= 9  # the rest: rolled out
    for bad, reason in (("search:e=x", "e must be a whole number of cards"),
                        ("search:e=0", "e must be from 1 to 52")):
        with pytest.raises(ValueError, match=reason):
            our_search(bad)
    for where in (("spades",), ("hearts",), ("hearts", "--no-pass", "--worlds", "pyspiel")):
        refused = run(*where, "--think", "0.01", "--deals", "1", "--ours", "search:e=8")
        assert refused.returncode == 2, refused.stdout
        assert "exact endgames solve hearts' native worlds only" in refused.stderr
    done = run("hearts", "--think", "0.01", "--deals", "1", "--no-pass", "--rollouts",
               "policy", "--ours", "search:c=0.25:e=8")
    assert done.returncode == 0, done.stderr
    assert "ours (search:c=0.25:e=8, policy rollouts, native worlds) vs" in done.stdout
