"""A local table with full information: deals, chance, a bot per seat, the history.

``play --auto``, the REPL of ``play`` and the arena run games here.  Each bot
sees only its own seat's view (derived from the full state), so every bot
plays by the same information rules as a person.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from p2pcards.games import CHANCE, Game, HandState
from p2pcards.games.core import FULL, SPECTATOR
from p2pcards.games.display import Cards, Styled
from p2pcards.games.prose import name_receivers
from p2pcards.history import HandRecord, History

DEFAULT_NAMES = ("ana", "ben", "cy", "dee", "eve", "fay", "gus")
MAX_DEALS = 1000
"""A safety stop for ``--auto`` games whose ties keep playing on."""

Seat = Callable[[HandState, random.Random], int]
"""Whoever decides for a seat: a legal action of the seat's own view."""


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
        self.numbers: list[int] = []
        """Each finished deal's number as ``start_deal`` told it (a void deal has one)."""
        self.state: HandState | None = None
        """The deal in progress (full information), once dealt."""
        self.record: HandRecord | None = None

    def play(self, bot: Seat | Sequence[Seat],
             say: Callable[[str], None] = lambda line: None, *, pace: float = 0.0,
             show_pool: bool = False) -> History:
        """Play deals until the game is won; ``say`` receives the readable log, a move
        ``pace`` seconds after the one before; with ``show_pool`` it tells the cards
        that lie face up on the table between plays (Pasur's pool) after each move."""
        game = self.game
        say(f"{game.title}: {', '.join(self._seat_label(s) for s in range(self.players))}")
        while self.winner is None and len(self.history.hands) < MAX_DEALS:
            self.play_deal(bot, say, pace=pace, show_pool=show_pool)
        say(self.result_line())
        return self.history

    def totals_line(self) -> str:
        """``totals: ana 12, ben 30`` (teams as the game names them)."""
        return "totals: " + ", ".join(f"{self.game.unit_name(u, self.names)} {t}"
                                      for u, t in enumerate(self.totals))

    def result_line(self) -> str:
        """``winner: NAME``, ``shared win: NAME, NAME``, or why there is none."""
        game, winner = self.game, self.winner
        if winner is None:
            return f"stopped after {MAX_DEALS} deals without a winner" \
                if len(self.history.hands) >= MAX_DEALS else "the game is not over"
        if isinstance(winner, list):
            return "shared win: " + ", ".join(game.unit_name(u, self.names) for u in winner)
        return f"winner: {game.unit_name(winner, self.names)}"

    def pool_text(self) -> str | None:
        """The cards face up on the table between plays (the game's ``pool`` row, as in
        Pasur), in the hand history's notation; None in a game without a pool."""
        state = self.state
        if state is None:
            return None
        row = next((r for r in state.table_rows(self.names) if r.label == "pool"), None)
        if row is None:
            return None
        return "".join(" ".join(state.notation.name(c) for c in piece.cards)
                       if isinstance(piece, Cards) else
                       piece.text if isinstance(piece, Styled) else piece
                       for piece in row.pieces)

    def _seat_label(self, seat: int) -> str:
        if self.game.units == "teams":
            return f"{self.names[seat]} (team {seat % 2})"
        return self.names[seat]

    def play_deal(self, bot: Seat | Sequence[Seat], say: Callable[[str], None], *,
                  pace: float = 0.0, show_pool: bool = False) -> HandState:
        bots = list(bot) if isinstance(bot, Sequence) else [bot] * self.players
        for line in self.start_deal():
            say(line)
        state = self.state
        assert state is not None
        pool = self.pool_text() if show_pool else None
        if pool is not None and not state.is_terminal():
            say(f"  pool: {pool}")
        while not state.is_terminal():
            seat = state.current_player()
            if seat == CHANCE:
                lines = self.act_chance()
            else:
                forced = state.forced_action()
                action = forced if forced is not None else bots[seat](state.view(seat),
                                                                       self.bot_rngs[seat])
                if pace > 0:
                    time.sleep(pace)
                lines = self.act(seat, action)
                if pool is not None and not state.is_terminal():  # (at the end the
                    lines[0] += f"; pool {self.pool_text()}"  # narration tells the sweep)
            for line in lines:
                say(line)
        for line in self.end_deal():
            say(line)
        return state

    # ------------------------------------------------- one step at a time (the REPL)

    def start_deal(self) -> list[str]:
        """Shuffle and deal the next deal; the lines say what happened.  A deal the
        rules void at once (Pasur's jacks in the opening pool) is recorded and over."""
        game, names = self.game, self.names
        deck = game.shuffled_deck(self.players, self.options, self.rng)
        self.record = HandRecord(self.dealer, [game.notation.name(c) for c in deck])
        self.history.hands.append(self.record)
        lines = ["", f"deal {len(self.history.hands)}, dealer {names[self.dealer]}"]
        self.state = game.deal(deck, self.dealer, self.players, self.options, number=self.deals)
        if self.state.void_reason is not None:  # voided by the rules before any action
            self.record.void = True
            self.record.reason = self.state.void_reason
            lines.append(f"  {self.state.summary(names)}: the same dealer deals again")
            self.dealer = game.next_dealer(self.dealer, self.players, True)
        return lines

    def act(self, seat: int, action: int, observer: int = FULL) -> list[str]:
        """``seat`` takes ``action``, checked (:class:`IllegalAction` names the rule
        broken; nothing changes then).  The lines tell it as ``observer`` sees it
        (cards it does not see are ``?``)."""
        state, record = self.state, self.record
        assert state is not None and record is not None
        state.check_actor(seat)
        before = state.clone()
        state.apply(action)
        record.actions.append((seat, before.format_action(action)))
        told = name_receivers(before.format_action(action, seat=observer), self.names)
        return [f"  {self.names[seat]}: {told}",
                *(f"    {line}" for line in state.narrate(before, action, self.names))]

    def act_chance(self, observer: int = SPECTATOR) -> list[str]:
        """The table draws the pending chance event (controls, a steal, a reshuffle)."""
        state, record = self.state, self.record
        assert state is not None and record is not None
        before = state.clone()
        action = state.chance_action(self.rng)
        record.actions.append(("chance", state.format_action(action)))
        state.apply(action)
        return [f"  chance: {before.format_action(action, seat=observer)}",
                *(f"    {line}" for line in state.narrate(before, action, self.names))]

    def end_deal(self) -> list[str]:
        """Score the finished deal; the lines give the result and the totals."""
        state = self.state
        assert state is not None and state.is_terminal()
        if self.record is not None and self.record.void:
            return []
        game, names = self.game, self.names
        self.finished.append(state)
        self.numbers.append(len(self.history.hands))
        points = state.points()
        for unit, pts in enumerate(points):
            self.totals[unit] += pts
        self.deals += 1
        self.winner = game.winner(self.totals, self.deals, self.options)
        self.dealer = game.next_dealer(self.dealer, self.players, False)
        return [f"  result: {state.summary(names)}",
                "  totals: " + ", ".join(f"{game.unit_name(u, names)} {t}"
                                         for u, t in enumerate(self.totals))]

    def snapshot(self) -> Snapshot:
        """Everything a move changes, for ``undo`` (within the deal)."""
        assert self.state is not None and self.record is not None
        return Snapshot(self.state.clone(), len(self.record.actions), self.rng.getstate(),
                        [r.getstate() for r in self.bot_rngs])

    def restore(self, snap: Snapshot) -> None:
        assert self.record is not None
        self.state = snap.state.clone()
        del self.record.actions[snap.actions:]
        self.rng.setstate(snap.rng)
        for r, st in zip(self.bot_rngs, snap.bot_rngs, strict=True):
            r.setstate(st)


@dataclass
class Snapshot:
    state: HandState
    actions: int
    rng: tuple[object, ...]
    bot_rngs: list[tuple[object, ...]]
