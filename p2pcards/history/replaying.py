"""Replaying a hand history: every deal re-run through the rules engine, with full
information (a public entry: as a seat with no cards, :mod:`p2pcards.history.public`);
:class:`ReplayError` (an illegal action: exit status 1) with the hand, the action
index, the actor, the text and the rule broken."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p2pcards.games import GAMES, ActionSyntaxError, Game, HandState, IllegalAction
from p2pcards.games.game import DealSetup
from p2pcards.history.public import replay_public
from p2pcards.history.records import HIDDEN, HandRecord, History, HistoryFormatError, ReplayError


@dataclass(slots=True)
class HandResult:
    points: list[int] | None
    detail: dict[str, Any]
    state: HandState | None
    summary: str


@dataclass(slots=True)
class ReplayResult:
    game: Game
    history: History
    hands: list[HandResult]
    totals: list[int]
    winner: int | list[int] | None
    complete: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game.name, "units": self.game.units,
            "hands": [{"points": h.points, "detail": h.detail} for h in self.hands],
            "totals": self.totals, "winner": self.winner, "complete": self.complete,
        }


def replay(history: History) -> ReplayResult:
    """Re-run every deal of ``history``; :class:`ReplayError` at the first illegal step."""
    game = GAMES[history.game]
    players = len(history.players)
    options = game.resolve_options(history.options)
    totals = [0] * game.unit_count(players)
    results: list[HandResult] = []
    expected_dealer: int | None = None
    winner: int | list[int] | None = None
    deals = 0
    for k, record in enumerate(history.hands):
        if winner is not None:
            raise ReplayError(k, None, None, None, "the game was already won before this deal")
        if expected_dealer is not None and record.dealer != expected_dealer:
            raise ReplayError(k, None, None, None, f"seat {expected_dealer} deals this deal, "
                              f"not seat {record.dealer}")
        setup = DealSetup(game, players, options, record.dealer, deals)
        names = record.players or history.players
        if record.secret is not None:  # (cards secret: scored as the table signed)
            result = HandResult(list(record.secret), {"secret": True}, None,
                                "its cards stay secret (the proved deck)")
        elif record.public:
            result = _result(replay_public(setup, record, k), record, names)
        else:
            state, rules_void = _replay_full(setup, record, k)
            result = _result(state, record, names, rules_void)
            if record.forfeit is not None and "points" in record.forfeit \
                    and result.points is not None:
                result.points = list(record.forfeit["points"])  # (the table's score)
        if result.points is None and not record.void:
            if k != len(history.hands) - 1:
                raise ReplayError(k, len(record.actions), None, None,
                                  "the deal stops before it is over, but another deal follows")
            results.append(result)
            break
        results.append(result)
        if result.points is not None:
            for unit, pts in enumerate(result.points):
                totals[unit] += pts
            deals += 1
            winner = game.winner(totals, deals, options)
        expected_dealer = game.next_dealer(record.dealer, players, record.void)
    return ReplayResult(game, history, results, totals, winner, winner is not None)


def _result(state: HandState | None, record: HandRecord, names: list[str],
            rules_void: str | None = None) -> HandResult:
    """A deal's result: void (no points), unfinished (no points yet), or its points."""
    if record.void:
        reason = record.reason or rules_void or (state.void_reason if state else None)
        return HandResult(None, {"void": True, "reason": reason}, state, "void deal")
    assert state is not None
    if not state.is_terminal():
        return HandResult(None, {**state.detail(), "finished": False}, state,
                          state.summary(names))
    return HandResult(state.points(), state.detail(), state, state.summary(names))


def _replay_full(setup: DealSetup, record: HandRecord, k: int
                 ) -> tuple[HandState | None, str | None]:
    """A deal with every card known (None for a void deal with no actions), and why the
    rules void it (None: they do not)."""
    game = setup.game
    deck = [game.notation.parse(c) for c in record.deck]
    rules_void = game.void_reason(deck, setup.players)
    if record.void:
        if rules_void is not None and record.actions:
            raise ReplayError(k, 0, *record.actions[0], "this deal is void: no action is played")
        if rules_void is None and record.reason is None:
            raise ReplayError(k, None, None, None,
                              "a void deal needs a reason unless the rules void it")
        return (_run_actions(setup, deck, record, k) if record.actions else None), rules_void
    if rules_void is not None:
        raise ReplayError(k, None, None, None,
                          f'the rules void this deal ({rules_void}); it must say "void": true')
    state = _run_actions(setup, deck, record, k)
    if record.forfeit is not None:
        if state.is_terminal():
            raise ReplayError(k, None, None, None, "a forfeit after the deal was over")
        state.penalize(record.forfeit["seat"], record.forfeit["reason"])
    return state, None


def _run_actions(setup: DealSetup, deck: list[int], record: HandRecord, k: int) -> HandState:
    state = setup.deal(deck)
    penalty = record.penalty
    for i, (actor, text) in enumerate(record.actions):
        if HIDDEN in text.split():
            raise HistoryFormatError(f"hand {k}, action {i}: {text!r} hides cards; a hand history"
                                     ' records every card (but a public entry, "public": true)')
        try:
            action = state.parse_action(text)
        except ActionSyntaxError as exc:
            raise HistoryFormatError(f"hand {k}, action {i}: {exc}") from None
        if penalty is not None and i == penalty["index"]:
            _check_penalty(state, action, actor, text, penalty, where=(k, i))
            state.penalize(penalty["seat"], penalty["reason"])
            for j, (_, later) in enumerate(record.actions[i + 1:], i + 1):
                # recorded before the audit stopped the deal: not played, but well-formed
                if HIDDEN in later.split():
                    raise HistoryFormatError(f"hand {k}, action {j}: {later!r} hides cards")
                try:
                    state.parse_action(later)
                except ActionSyntaxError as exc:
                    raise HistoryFormatError(f"hand {k}, action {j}: {exc}") from None
            return state
        try:
            state.check_actor(actor)
            state.apply(action)
        except IllegalAction as exc:
            raise ReplayError(k, i, actor, text, exc.reason) from None
    return state


def _check_penalty(state: HandState, action: int, actor: Any, text: str,
                   penalty: dict[str, Any], *, where: tuple[int, int]) -> None:
    k, i = where
    if state.is_terminal():
        raise ReplayError(k, i, actor, text, "the penalty names an action after the deal was over")
    if actor != penalty["seat"]:
        raise ReplayError(k, i, actor, text, f"the penalty names seat {penalty['seat']}, but "
                          f"this action is by {actor}")
    try:
        state.check_actor(actor)
        state.check(action)
    except IllegalAction as exc:
        if exc.code != penalty["reason"]:
            raise ReplayError(k, i, actor, text, f"the penalty says {penalty['reason']!r}, but "
                              f"the action breaks another rule ({exc.code}: {exc.reason})"
                              ) from None
        return
    raise ReplayError(k, i, actor, text, f"the penalty says {penalty['reason']!r}, but this "
                      "action is legal")
