"""A local table with full information: deals, chance, a simple bot per seat, the history.

``play --auto`` runs a whole game here.  Each bot sees only its own seat's
view (derived from the full state), so even the simple bot plays by the
same information rules as a person.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ai.ismcts import pimc, search
from ai.parallel import RootParallel
from p2pcards.games import CHANCE, Game, HandState
from p2pcards.games.core import SPECTATOR
from p2pcards.games.trick_heuristics import bidding_model, heuristic_bot
from p2pcards.history import HandRecord, History

DEFAULT_NAMES = ("ana", "ben", "cy", "dee", "eve", "fay", "gus")
MAX_DEALS = 1000
"""A safety stop for ``--auto`` games whose ties keep playing on."""

Bot = Callable[[HandState, random.Random], int]


def random_bot(view: HandState, rng: random.Random) -> int:
    """The simple bot: a uniformly random legal action of its own view."""
    actions = view.legal_actions()
    return actions[int(rng.random() * len(actions))]


SEARCH_LIMIT = 300
"""Decisions with more legal actions than this are not searched: the game's own rule
decides (the Bid Whist discard, 18,564 choices), else the heuristic bot (Control
Nut! bids from a long hand, up to 560)."""
BOT_NAMES = ("random", "heuristic", "ismcts", "pimc")


@dataclass
class SearchBot:
    """A bot that searches its own view (``ismcts``, or the ``pimc`` baseline), counting
    its iterations and time for reports."""

    kind: str
    iterations: int | None = None
    think: float | None = None
    workers: int = 1
    done: int = 0
    seconds: float = 0.0
    pool: RootParallel | None = None

    def __call__(self, view: HandState, rng: random.Random) -> int:
        actions = view.legal_actions()
        if len(actions) == 1:
            return actions[0]
        if self.kind == "ismcts":
            modelled = bidding_model(view, rng)
            if modelled is not None:
                return modelled
        if len(actions) > SEARCH_LIMIT:  # the game's own rule, else the heuristic's
            sampled = view.sampled_move(view.current_player(), rng)
            return sampled if sampled is not None else heuristic_bot(view, rng)
        if self.kind == "pimc":
            result = pimc(view, rng, iterations=self.iterations, seconds=self.think)
        elif self.workers > 1:  # root parallelism: persistent worker processes
            if self.pool is None:
                self.pool = RootParallel(self.workers)
            result = self.pool.search(view, rng.randrange(1 << 31), iterations=self.iterations,
                                      seconds=self.think)
        else:
            result = search(view, rng, iterations=self.iterations, seconds=self.think)
        self.done += result.iterations
        self.seconds += result.seconds
        return result.action


def make_bot(kind: str, iterations: int | None = None, think: float | None = None,
             workers: int = 1) -> Bot:
    """A bot by name: ``random``, or ``ismcts``/``pimc`` with an iteration or time budget
    (``ismcts`` on ``workers`` processes: root parallelism)."""
    if kind == "random":
        return random_bot
    if kind == "heuristic":
        return heuristic_bot
    if kind in ("ismcts", "pimc"):
        if iterations is None and think is None:
            iterations = 1000
        return SearchBot(kind, iterations, think, workers)
    raise ValueError(f"unknown bot {kind!r} (bots: {', '.join(BOT_NAMES)})")


class LocalGame:
    """A game of several deals at one table, every seat known to the engine."""

    def __init__(self, game: Game, players: int, options: Mapping[str, int], seed: int,
                 names: Sequence[str] | None = None):
        game.check_players(players)
        self.game = game
        self.players = players
        self.options = game.resolve_options(options)
        self.names = list(names or DEFAULT_NAMES[:players])
        self.rng = random.Random(f"p2pcards:{seed}:table")
        self.bot_rngs = [random.Random(f"p2pcards:{seed}:seat:{s}") for s in range(players)]
        self.dealer = game.first_dealer(players, self.rng)
        self.totals = [0] * game.unit_count(players)
        self.deals = 0
        self.winner: int | list[int] | None = None
        self.history = History(game.name, self.names, game.non_default(self.options), [])
        self.finished: list[HandState] = []
        """The deals played out, in order (the arena reads them)."""

    def play(self, bot: Bot | Sequence[Bot] = random_bot,
             say: Callable[[str], None] = lambda line: None) -> History:
        """Play deals until the game is won; ``say`` receives the readable log."""
        game = self.game
        say(f"{game.title}: {', '.join(self._seat_label(s) for s in range(self.players))}")
        while self.winner is None and len(self.history.hands) < MAX_DEALS:
            self.play_deal(bot, say)
        if self.winner is None:
            say(f"stopped after {MAX_DEALS} deals without a winner")
        elif isinstance(self.winner, list):
            say("shared win: " + ", ".join(game.unit_name(u, self.names) for u in self.winner))
        else:
            say(f"winner: {game.unit_name(self.winner, self.names)}")
        return self.history

    def _seat_label(self, seat: int) -> str:
        if self.game.units == "teams":
            return f"{self.names[seat]} (team {seat % 2})"
        return self.names[seat]

    def play_deal(self, bot: Bot | Sequence[Bot], say: Callable[[str], None]) -> HandState:
        bots = list(bot) if isinstance(bot, Sequence) else [bot] * self.players
        game, names = self.game, self.names
        deck = game.shuffled_deck(self.players, self.options, self.rng)
        record = HandRecord(self.dealer, [game.notation.name(c) for c in deck])
        self.history.hands.append(record)
        say("")
        say(f"deal {len(self.history.hands)}, dealer {names[self.dealer]}")
        state = game.deal(deck, self.dealer, self.players, self.options, number=self.deals)
        if state.is_terminal():  # voided by the rules before any action
            record.void = True
            record.reason = "jacks in the opening pool"
            say(f"  {state.summary(names)}: the same dealer deals again")
            self.dealer = game.next_dealer(self.dealer, self.players, True)
            return state
        while not state.is_terminal():
            seat = state.current_player()
            before = state.clone()
            if seat == CHANCE:
                action = state.chance_action(self.rng)
                text = state.format_action(action)
                record.actions.append(("chance", text))
                say(f"  chance: {state.format_action(action, seat=SPECTATOR)}")
            else:
                forced = state.forced_action()
                action = forced if forced is not None else bots[seat](state.view(seat),
                                                                       self.bot_rngs[seat])
                text = state.format_action(action)
                record.actions.append((seat, text))
                say(f"  {names[seat]}: {text}")
            state.apply(action)
            for line in state.narrate(before, action, names):
                say(f"    {line}")
        self.finished.append(state)
        points = state.points()
        for unit, pts in enumerate(points):
            self.totals[unit] += pts
        self.deals += 1
        say(f"  result: {state.summary(names)}")
        say("  totals: " + ", ".join(f"{game.unit_name(u, names)} {t}"
                                     for u, t in enumerate(self.totals)))
        self.winner = game.winner(self.totals, self.deals, self.options)
        self.dealer = game.next_dealer(self.dealer, self.players, False)
        return state
