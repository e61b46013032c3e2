"""Golden vectors of the table's own constructions (docs/protocol.md, "Joint randomness"
and "Card ids"): a joint draw of four parties and what the table makes of it, and each
game's cards by id.

Everything is computed with the code's own functions from fixed shares:
:class:`~p2pcards.protocol.randomness.JointRandom` for the commitments and the seed,
the labels the table gives its draws (the table's own label functions,
:func:`~p2pcards.table.dealing.first_dealer_label` and
:func:`~p2pcards.table.dealing.chance_label`), ``choice`` and ``sample``, the games' first-dealer
rules on the seeded generator the table hands them, Control Nut!'s chance moves,
and each game's deck and notation.  :func:`build` is merged into
:func:`p2pcards.table.vectors.build`.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from p2pcards.games import GAMES
from p2pcards.games.core import SPECTATOR
from p2pcards.protocol.randomness import JointRandom, choice, sample
from p2pcards.table.dealing import SeedDraw, chance_label, first_dealer_label

PARTIES = 4
CONTROLNUT_DEAL = 259
"""The deal of the Control Nut! draws: both of its low bytes non-zero (0x0103), so that
the deal's byte order shows in their labels."""


class _Shares:
    """A secret source that hands out one fixed share (a vector's, never play's)."""

    def __init__(self, share: bytes):
        self.share = share

    def randbelow(self, n: int) -> int:
        raise AssertionError("a joint draw asks only for its share")

    def token_bytes(self, n: int) -> bytes:
        assert n == len(self.share)
        return self.share


def _share(party: int) -> bytes:
    return hashlib.sha256(f"p2pcards/vectors/joint/{party}".encode()).digest()


def joint_draw(label: bytes, shares: list[bytes]) -> dict[str, Any]:
    """Every party's side of one draw, run to its seed: the label, the commitments
    (in party order) and the seed, as every party computes them."""
    sides = [JointRandom(label, len(shares), p, _Shares(s)) for p, s in enumerate(shares)]
    commits = [side.commit() for side in sides]
    for side in sides:
        for commit in commits:
            if commit.party != side.me:
                side.receive(commit)
    reveals = [side.reveal() for side in sides]
    for side in sides:
        for reveal in reveals:
            if reveal.party != side.me:
                side.receive(reveal)
    seeds = {side.seed() for side in sides}
    assert len(seeds) == 1
    return {"label": label, "commitments": [c.digest for c in commits], "seed": seeds.pop()}


def build(table: bytes) -> dict[str, Any]:
    return {"joint_random": joint_random(table), "card_ids": card_ids()}


def joint_random(table: bytes) -> dict[str, Any]:
    """Four parties' fixed shares; the first dealer's draw and what each game makes of
    it; a deal's chance draws, ``choice`` and ``sample`` on one, and Control Nut!'s
    controls and auctioned control drawn by the table's labels."""
    shares = [_share(p) for p in range(PARTIES)]
    first = joint_draw(first_dealer_label(table), shares)
    dealers = {}
    for name in sorted(GAMES):
        game = GAMES[name]
        dealers[name] = {str(n): game.first_dealer(n, random.Random(first["seed"]))
                         for n in game.player_counts}
    first["dealers"] = dealers
    draw = joint_draw(chance_label(table, 2, 1), shares)
    seed = draw["seed"]
    draw["choice"] = [{"n": n, "index": index, "value": choice(seed, n, index)}
                      for n, index in ((1, 0), (2, 0), (4, 0), (13, 0), (52, 0), (54, 0),
                                       (7, 3), (1 << 64, 0))]
    draw["sample"] = [{"n": n, "k": k, "value": sample(seed, n, k)}
                      for n, k in ((8, 4), (52, 52), (80, 5), (5, 0))]
    return {"parties": PARTIES, "shares": shares, "first_dealer": first, "draw": draw,
            "controlnut": controlnut_draws(table, shares)}


def controlnut_draws(table: bytes, shares: list[bytes]) -> list[dict[str, Any]]:
    """The first two joint draws of a Control Nut! deal (deal CONTROLNUT_DEAL): the
    controls in play, then the control auctioned first; each with its deal, label, seed
    and the chance move's text as every view takes it."""
    game = GAMES["controlnut"]
    state = game.deal(game.deck(PARTIES, {}), 0, PARTIES, game.resolve_options({}))
    out = []
    for index in range(2):
        draw = joint_draw(chance_label(table, CONTROLNUT_DEAL, index), shares)
        code = state.drawn_chance(SeedDraw(draw["seed"]))
        out.append({"deal": CONTROLNUT_DEAL, "label": draw["label"], "seed": draw["seed"],
                    "action": state.format_action(code, seat=SPECTATOR)})
        state.apply(code)
    return out


def card_ids() -> list[dict[str, Any]]:
    """Each game's deck: the card name of every id, in id order, as the game's own
    notation prints it (and Control Nut!'s controls, ids after the deck's, not dealt)."""
    out = []
    for name, options in (("bidwhist", {}), ("bidwhist", {"kitty": 5}), ("controlnut", {}),
                          ("nullern", {}), ("pasur", {})):
        game = GAMES[name]
        resolved = game.resolve_options(options)
        ids = game.deck(game.default_players, resolved)
        entry: dict[str, Any] = {"game": name, "options": options,
                                 "names": [game.notation.name(c) for c in ids]}
        assert ids == list(range(len(ids)))  # (the deck's card i is the game's id i)
        if name == "controlnut":  # the controls: ids 52..59, never dealt
            entry["controls"] = [game.notation.name(c) for c in range(52, 60)]
        out.append(entry)
    return out
