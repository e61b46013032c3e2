"""``p2pcards bench infer``: how well sampled worlds predict the real hidden cards.

For each game whose playbook has a ``belief`` (docs/bots.md, "Inference in the
sampling"), deals are played out by bots from one seeded source; at each seat's
first card of the play, and again when half its cards are gone, its view
draws :data:`WORLDS` worlds uniformly (the determinizer) and as many by the
belief from the bids (:class:`~p2pcards.ai.inference.Inferred`), and as many by
the belief from the bids and plays.  For every card another
player really holds and the seat cannot place for sure, the figures are, per
sampler, the share of worlds giving the card to that player (its mean over the
cards: ``placed``), and the mean log of that share, smoothed (``loglik``,
nats a card; higher is better).  ``gain`` is the
inferred log-likelihood minus the uniform one, averaged over the positions
(``gain_low`` and ``gain_high``: its 95% interval over the positions).
``deal_gain`` asks the same of the whole deal: the log of how much more likely
the belief's posterior makes the real hidden cards than uniform sampling does
(the belief's weight of the real deal over its mean weight in :data:`WORLDS`
uniform worlds), in nats per position; every card at once, with no sampling
noise from counting.  The same figures with the plays read too (``i=2``) end in
``_plays``; ``plays_over_bids`` is ``deal_gain_plays`` less ``deal_gain``, position
by position (what reading the plays adds).

The deals and the bots' moves come from one seeded source, the samplers' worlds
from another, so a change to a sampler changes no deal.  Two kinds of deals:
played by the ``heuristic`` bots (whose bids are the
belief's own model: the most it can gain) and by ``ismcts:i=0`` at 200
iterations a move (bids by a search that does not infer, which the model only
approximates).
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from typing import cast

from p2pcards.ai.inference import Belief, Inferred
from p2pcards.bench.record import Record
from p2pcards.bots import make_bot, playbook
from p2pcards.bots.registry import DEFAULT, PLAYBOOKS, Bot, no_belief
from p2pcards.games import CHANCE, GAMES, HandState
from p2pcards.games.cards import bits

WORLDS = 256
"""Worlds each sampler draws at each position."""


SAMPLERS = ("uniform", "inferred", "plays")
"""Uniform worlds, worlds inferred from the bids (``i=1``), from the bids and plays
(``i=2``)."""


@dataclass
class Probes:
    """Per position, each sampler's mean share placed right and mean log-likelihood."""

    placed: dict[str, list[float]]
    loglik: dict[str, list[float]]
    spread: list[float]
    deal: list[float]
    spread_plays: list[float]
    deal_plays: list[float]


def bench_infer(seconds: float = 2.0, seed: int = 1) -> list[Record]:
    """The figures of the module docstring, ``10 * seconds`` deals a game and kind."""
    deals = max(2, round(10 * seconds))
    records: list[Record] = []
    for name in GAMES:
        if PLAYBOOKS.get(name, DEFAULT).belief is no_belief:
            continue  # no model: its worlds are drawn uniformly
        for kind in ("heuristic", "ismcts"):
            tally = measure(name, kind, deals, seed)
            prefix = f"infer.{name}.{kind}"
            for sampler in SAMPLERS:
                records.append(Record(f"{prefix}.placed_{sampler}",
                                      round(statistics.fmean(tally.placed[sampler]), 4), "share"))
                records.append(Record(f"{prefix}.loglik_{sampler}",
                                      round(statistics.fmean(tally.loglik[sampler]), 4), "nats"))
            gains = [b - a for a, b in zip(tally.loglik["uniform"], tally.loglik["inferred"],
                                           strict=True)]
            with_plays = [b - a for a, b in zip(tally.loglik["uniform"], tally.loglik["plays"],
                                                strict=True)]
            for figure, values in (("gain", gains), ("deal_gain", tally.deal),
                                   ("gain_plays", with_plays),
                                   ("deal_gain_plays", tally.deal_plays),
                                   ("plays_over_bids", [b - a for a, b in zip(
                                       tally.deal, tally.deal_plays, strict=True)])):
                mean = statistics.fmean(values)
                half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) \
                    if len(values) > 1 else 0.0
                records.append(Record(f"{prefix}.{figure}", round(mean, 4), "nats"))
                records.append(Record(f"{prefix}.{figure}_low", round(mean - half, 4), "nats"))
                records.append(Record(f"{prefix}.{figure}_high", round(mean + half, 4), "nats"))
            records.append(Record(f"{prefix}.effective_share",
                                  round(statistics.fmean(tally.spread), 3), "share"))
            records.append(Record(f"{prefix}.effective_share_plays",
                                  round(statistics.fmean(tally.spread_plays), 3), "share"))
            records.append(Record(f"{prefix}.positions", len(gains), "count"))
    return records


def measure(name: str, kind: str, deals: int, seed: int) -> Probes:
    """Play ``deals`` deals of ``name`` with ``kind`` bots and score both samplers."""
    game = GAMES[name]
    rng = random.Random(f"infer:{name}:{kind}:{seed}")  # the deals and the bots' moves
    probing = random.Random(f"infer-probe:{name}:{kind}:{seed}")  # the samplers' worlds
    # the worlds inferred from the plays, drawn apart: the other figures stay as they were
    probing_plays = random.Random(f"infer-probe-plays:{name}:{kind}:{seed}")
    players = game.default_players
    options = game.resolve_options({})
    # the search without inference, whatever the game's default: the deals stay the same
    bots: list[Bot] = [make_bot(f"{kind}:i=0" if kind == "ismcts" else kind, iterations=200)
                       for _ in range(players)]
    tally = Probes({s: [] for s in SAMPLERS}, {s: [] for s in SAMPLERS}, [], [], [], [])
    for number in range(deals):
        full = game.deal(game.shuffled_deck(players, options, rng), number % players, players,
                         options, number=number % game.numbered_deals)
        probed: set[tuple[int, int]] = set()
        while not full.is_terminal():
            seat = full.current_player()
            if seat == CHANCE:
                full.apply(full.chance_action(rng))
                continue
            _probe(full, seat, probed, tally, probing, rng_plays=probing_plays)
            forced = full.forced_action()
            full.apply(forced if forced is not None else bots[seat](full.view(seat), rng))
    return tally


def _probe(full: HandState, seat: int, probed: set[tuple[int, int]], tally: Probes,
           rng: random.Random, *, rng_plays: random.Random) -> None:
    left = full.moves_left()
    if left is None:
        return
    held = full.count[seat]
    dealt = held + full.played_by[seat].bit_count()
    stage = 0 if held == dealt else 1 if held * 2 <= dealt else -1
    if stage < 0 or (seat, stage) in probed:
        return
    probed.add((seat, stage))
    view = full.view(seat)
    belief = playbook(view).belief(view, False)
    plays = playbook(view).belief(view, True)
    if belief is None or plays is None:
        return
    unknown = [(card, place) for place in range(full.players) if place != seat
               for card in bits(full.may[place]) if len(view.candidates(card)) > 1]
    if not unknown:
        return
    inferred = Inferred(view, belief)
    played = Inferred(view, plays)
    for sampler, draw, source in (("uniform", view.determinize, rng),
                                  ("inferred", inferred.determinize, rng),
                                  ("plays", played.determinize, rng_plays)):
        hits = dict.fromkeys((c for c, _ in unknown), 0)
        for _ in range(WORLDS):
            world = cast(HandState, draw(source))
            for card, place in unknown:
                if world.may[place] >> card & 1:
                    hits[card] += 1
        shares = [hits[c] / WORLDS for c, _ in unknown]
        tally.placed[sampler].append(statistics.fmean(shares))
        tally.loglik[sampler].append(statistics.fmean(
            math.log((hits[c] + 0.5) / (WORLDS + 0.5 * len(view.candidates(c))))
            for c, _ in unknown))
    tally.spread.append(inferred.spread / max(1, inferred.generations))
    tally.spread_plays.append(played.spread / max(1, played.generations))
    tally.deal.append(_deal_gain(full, view, belief, rng))
    tally.deal_plays.append(_deal_gain(full, view, plays, rng_plays))


def _deal_gain(full: HandState, view: HandState, belief: Belief, rng: random.Random) -> float:
    """The real deal's log-likelihood under ``belief``'s posterior, less under uniform
    sampling (nats)."""
    logs = [belief.log_weight(view.determinize(rng)) for _ in range(WORLDS)]
    top = max(logs)
    norm = top + math.log(statistics.fmean(math.exp(x - top) for x in logs))
    return belief.log_weight(full) - norm
