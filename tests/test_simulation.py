"""Random play over thousands of deals: cards always placed once, views always exact,
scores adding up, and the saved history replaying to the same result."""

from __future__ import annotations

import random

import pytest

from p2pcards.games import bidwhist, controlnut, pasur
from p2pcards.games.controlnut import CONTROL_MASK, NUT_MASK, STARS
from p2pcards.history import History, loads, replay
from tests.sim import history_of, run_deal

# (game, players, options, deals with views checked after every action)
CONFIGS = [
    (bidwhist.GAME, 4, {}, 1000),
    (bidwhist.GAME, 4, {"kitty": 5}, 1000),
    (pasur.GAME, 2, {}, 700),
    (pasur.GAME, 3, {}, 700),
    (pasur.GAME, 4, {}, 700),
    (controlnut.GAME, 4, {}, 500),
]


def _id(config: tuple[object, ...]) -> str:
    game, players, options, _ = config
    return f"{game.name}-{players}p" + "".join(f"-{k}{v}" for k, v in options.items())


@pytest.mark.parametrize("config", CONFIGS, ids=_id)
def test_views_match_full_state_after_every_action(config):
    game, players, options, deals = config
    rng = random.Random(f"views:{_id(config)}")
    checked = 0
    for _ in range(deals):
        checked += run_deal(game, players, options, rng).views_checked
    assert checked > deals * 40 * players


@pytest.mark.parametrize("config", CONFIGS, ids=_id)
def test_scores_add_up_and_history_replays(config):
    game, players, options, deals = config
    rng = random.Random(f"scores:{_id(config)}")
    runs = [run_deal(game, players, options, rng, check_views=False) for _ in range(deals)]
    for run in runs:
        state = run.state
        if run.record.void:
            continue
        points = state.points()
        if isinstance(state, bidwhist.BidWhistState):
            assert sum(state.books) == 13
            bidders = state.bidder & 1
            assert points[1 - bidders] == 0 or points[bidders] == 0
            assert sum(points) > 0
        elif isinstance(state, controlnut.ControlNutState):
            in_hands = 0
            for hand in state.may:
                in_hands |= hand
            piles = state.won[0] | state.won[1]
            # every star is in a score pile or still in a hand when play ended
            assert sum(STARS[c] for c in range(52) if (piles | in_hands) >> c & 1) == 16
            assert not piles & in_hands & NUT_MASK
            assert sum(state.added) == -(-sum(state.count) // 4)  # ceil(cards left / 4)
            holders = {seat & 1 for seat in range(4) if state.count[seat]}
            assert len(holders) <= 1  # play ended when one partnership (or none) held cards
            assert (piles & CONTROL_MASK) & ~state.in_play == 0
        else:
            assert isinstance(state, pasur.PasurState)
            piles = state.piles
            assert sum(p.bit_count() for p in piles) == 52 or state.last_capturer < 0
            clubs = sorted(((p >> 39) & 0x1FFF).bit_count() for p in piles)
            majority = state.clubs_points if clubs[-1] > clubs[-2] else 0
            if state.last_capturer >= 0:
                assert sum(points) == majority + 3 + 2 + 4 + 4 + 5 * sum(state.surs)
    # Replaying the recorded deals (each as its own one-deal game) gives the same points.
    for run in runs[:200]:
        doc = history_of(game, players, options, [run.record])
        result = replay(loads(doc.dumps()))
        expected = None if run.record.void else run.state.points()
        assert result.hands[0].points == expected


def test_history_round_trip_is_canonical():
    rng = random.Random(7)
    run = run_deal(pasur.GAME, 3, {"sur": 10}, rng, check_views=False)
    doc = history_of(pasur.GAME, 3, {"sur": 10}, [run.record])
    text = doc.dumps()
    again = loads(text)
    assert isinstance(again, History)
    assert again.dumps() == text
    assert text.endswith("\n") and '"options": {\n  "sur": 10\n }' in text
