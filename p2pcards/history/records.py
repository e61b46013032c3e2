"""Hand histories (``p2pcards-history/1``, docs/hand-history.md): read, write, replay.

Reading validates the whole document and raises :class:`HistoryFormatError`
(a malformed file: exit status 2) naming what is wrong and where.  Replaying
re-runs every action through the rules engine with full information and
raises :class:`ReplayError` (an illegal action: exit status 1) with the hand,
the action index, the actor, the text and the rule broken.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from p2pcards.games import GAMES, ActionSyntaxError, Game, HandState, IllegalAction
from p2pcards.games.game import DealSetup, OptionError

FORMAT = "p2pcards-history/1"
Actor = int | str
RULE_BREACHES = frozenset({"renege", "not-held", "must-capture", "capture", "bid", "discard",
                           "declare", "give", "value", "order", "bonus"})
"""Rule codes a ``penalty`` may name: breaches only an audit can prove (not turn order)."""


class HistoryFormatError(ValueError):
    """A malformed hand history; the message names what is wrong and where."""


class ReplayError(Exception):
    """An action of a well-formed history that the rules do not allow."""

    def __init__(self, hand: int, index: int | None, actor: Actor | None, action: str | None,
                 reason: str):
        super().__init__(reason)
        self.hand = hand
        self.index = index
        self.actor = actor
        self.action = action
        self.reason = reason

    def to_json(self) -> dict[str, Any]:
        return {"error": {"hand": self.hand, "index": self.index, "actor": self.actor,
                          "action": self.action, "reason": self.reason}}

    def __str__(self) -> str:
        where = f"hand {self.hand}"
        if self.index is not None:
            where += f", action {self.index} ({self.actor}: {self.action})"
        return f"{where}: {self.reason}"


@dataclass(slots=True)
class HandRecord:
    """One deal: dealer, full deck order, actions, and how it ended if not by play."""

    dealer: int
    deck: list[str]
    actions: list[tuple[Actor, str]] = field(default_factory=list)
    void: bool = False
    reason: str | None = None
    penalty: dict[str, Any] | None = None
    forfeit: dict[str, Any] | None = None
    players: list[str] | None = None
    secret: list[int] | None = None
    """The points of a deal whose cards stay secret (dealt by the proved deck: no
    audit reveals them); its deck is then the blank deck and it has no actions."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dealer": self.dealer, "deck": list(self.deck),
                               "actions": [[a, t] for a, t in self.actions]}
        if self.void:
            out["void"] = True
            if self.reason is not None:
                out["reason"] = self.reason
        if self.penalty is not None:
            out["penalty"] = dict(self.penalty)
        if self.forfeit is not None:
            out["forfeit"] = dict(self.forfeit)
        if self.players is not None:
            out["players"] = list(self.players)
        if self.secret is not None:
            out["secret"] = {"points": list(self.secret)}
        return out


@dataclass(slots=True)
class History:
    game: str
    players: list[str]
    options: dict[str, int] = field(default_factory=dict)
    hands: list[HandRecord] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "game": self.game, "options": dict(self.options),
                "players": list(self.players), "hands": [h.to_json() for h in self.hands]}

    def dumps(self) -> str:
        """Canonical JSON: UTF-8, sorted keys, indent 1, final newline."""
        return canonical_json(self.to_json())


def canonical_json(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------- reading


def _fail(where: str, what: str) -> HistoryFormatError:
    return HistoryFormatError(f"{where}: {what}" if where else what)


def _expect_int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"expected a whole number, got {json.dumps(value)}")
    if not low <= value <= high:
        raise _fail(where, f"{value} is out of range {low}..{high}")
    return value


def _expect_names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise _fail(where, "expected a list of player names")
    for i, name in enumerate(value):
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise _fail(f"{where}[{i}]", "not valid Unicode text") from None
    return list(value)


_HAND_KEYS = {"dealer", "deck", "actions", "void", "reason", "penalty", "forfeit", "players",
              "secret"}


def loads(text: str) -> History:
    """Parse and validate a hand history document."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HistoryFormatError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
                                 ) from None
    except RecursionError:
        raise HistoryFormatError("not JSON this program reads: nested too deeply") from None
    return from_json(doc)


def load(path: str) -> History:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise HistoryFormatError(f"not UTF-8 text ({exc.reason})") from None
    return loads(text)


def from_json(doc: Any) -> History:
    if not isinstance(doc, dict):
        raise _fail("", "a hand history is a JSON object")
    if doc.get("format") != FORMAT:
        raise _fail("format", f"expected {FORMAT!r}, got {json.dumps(doc.get('format'))}")
    unknown = set(doc) - {"format", "game", "options", "players", "hands"}
    if unknown:
        raise _fail("", f"unknown field {sorted(unknown)[0]!r}")
    name = doc.get("game")
    game = GAMES.get(name) if isinstance(name, str) else None
    if game is None:
        raise _fail("game", f"unknown game {json.dumps(name)} (games: {', '.join(sorted(GAMES))})")
    options = doc.get("options", {})
    if not isinstance(options, dict):
        raise _fail("options", "expected an object")
    try:
        game.resolve_options(options)
    except OptionError as exc:
        raise _fail("options", str(exc)) from None
    players = _expect_names(doc.get("players"), "players")
    try:
        game.check_players(len(players))
    except OptionError as exc:
        raise _fail("players", str(exc)) from None
    hands = doc.get("hands")
    if not isinstance(hands, list):
        raise _fail("hands", "expected a list of deals")
    history = History(game.name, players, dict(options), [])
    expected = game.deck(len(players), game.resolve_options(options))
    for k, raw in enumerate(hands):
        history.hands.append(_hand_from_json(raw, f"hand {k}", len(players), expected, game))
    return history


def _hand_from_json(raw: Any, where: str, players: int, expected: list[int],
                    game: Game) -> HandRecord:
    if not isinstance(raw, dict):
        raise _fail(where, "expected an object")
    unknown = set(raw) - _HAND_KEYS
    if unknown:
        raise _fail(where, f"unknown field {sorted(unknown)[0]!r}")
    dealer = _expect_int(raw.get("dealer"), f"{where}, dealer", 0, players - 1)
    deck = raw.get("deck")
    if not isinstance(deck, list) or not all(isinstance(c, str) for c in deck):
        raise _fail(f"{where}, deck", "expected a list of card names")
    if len(deck) != len(expected):
        raise _fail(f"{where}, deck",
                    f"{len(deck)} cards, a {game.title} deck has {len(expected)}")
    seen: dict[int, int] = {}
    for i, text in enumerate(deck):
        try:
            card = game.notation.parse(text)
        except ValueError as exc:
            raise _fail(f"{where}, deck[{i}]", str(exc)) from None
        if card in seen:
            raise _fail(f"{where}, deck[{i}]", f"{text} also at deck[{seen[card]}]")
        seen[card] = i
    extra = sorted(set(seen) - set(expected))
    if extra:
        raise _fail(f"{where}, deck[{seen[extra[0]]}]",
                    f"{deck[seen[extra[0]]]} is not in this game's deck")
    actions_raw = raw.get("actions", [])
    if not isinstance(actions_raw, list):
        raise _fail(f"{where}, actions", "expected a list")
    actions: list[tuple[Actor, str]] = []
    for i, entry in enumerate(actions_raw):
        at = f"{where}, action {i}"
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str)):
            raise _fail(at, 'expected [actor, "text"]')
        actor = entry[0]
        if actor != "chance":
            actor = _expect_int(actor, f"{at}, actor", 0, players - 1)
        actions.append((actor, entry[1]))
    record = HandRecord(dealer, list(deck), actions)
    void = raw.get("void", False)
    if not isinstance(void, bool):
        raise _fail(f"{where}, void", "expected true or false")
    record.void = void
    if "reason" in raw:
        if not isinstance(raw["reason"], str):
            raise _fail(f"{where}, reason", "expected text")
        if not void:
            raise _fail(f"{where}, reason", 'a reason goes with "void": true')
        record.reason = raw["reason"]
    if "players" in raw:
        names = _expect_names(raw["players"], f"{where}, players")
        if len(names) != players:
            raise _fail(f"{where}, players", f"{len(names)} names for {players} seats")
        record.players = names
    if "penalty" in raw:
        pen = raw["penalty"]
        if not isinstance(pen, dict) or set(pen) != {"seat", "index", "reason"}:
            raise _fail(f"{where}, penalty", 'expected {"seat", "index", "reason"}')
        _expect_int(pen["seat"], f"{where}, penalty seat", 0, players - 1)
        _expect_int(pen["index"], f"{where}, penalty index", 0, max(len(actions) - 1, 0))
        if pen["reason"] not in RULE_BREACHES:
            raise _fail(f"{where}, penalty reason", "expected one of "
                        + ", ".join(sorted(RULE_BREACHES)))
        if pen["index"] >= len(actions):
            raise _fail(f"{where}, penalty index", "there is no such action")
        record.penalty = dict(pen)
    if "forfeit" in raw:
        forfeit = raw["forfeit"]
        if not isinstance(forfeit, dict) or set(forfeit) - {"points"} != {"seat", "reason"}:
            raise _fail(f"{where}, forfeit", 'expected {"seat", "reason"} (and "points")')
        if "points" in forfeit:
            points = forfeit["points"]
            units = game.unit_count(players)
            if not isinstance(points, list) or len(points) != units or not all(
                    isinstance(p, int) and not isinstance(p, bool) for p in points):
                raise _fail(f"{where}, forfeit points", f"expected {units} whole numbers")
        _expect_int(forfeit["seat"], f"{where}, forfeit seat", 0, players - 1)
        if forfeit["reason"] not in ("silent", "refused audit", "equivocation", "refused step"):
            raise _fail(f"{where}, forfeit reason",
                        'expected "silent", "refused audit", "equivocation" or'
                        ' "refused step"')
        record.forfeit = dict(forfeit)
    if "secret" in raw:
        secret = raw["secret"]
        units = game.unit_count(players)
        if not isinstance(secret, dict) or set(secret) != {"points"} \
                or not isinstance(secret["points"], list) or len(secret["points"]) != units \
                or not all(isinstance(p, int) and not isinstance(p, bool)
                           for p in secret["points"]):
            raise _fail(f"{where}, secret", f'expected {{"points": [{units} whole numbers]}}')
        if actions:
            raise _fail(f"{where}, secret", "a deal whose cards stay secret has no actions")
        record.secret = list(secret["points"])
    if sum(x is not None for x in (record.penalty, record.forfeit, record.secret)) \
            + record.void > 1:
        raise _fail(where, "a deal ends by at most one of penalty, forfeit, void and secret")
    return record


# ----------------------------------------------------------------- replaying


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
        deck = [game.notation.parse(c) for c in record.deck]
        rules_void = game.void_reason(deck, players)
        if record.void:
            if rules_void is not None and record.actions:
                raise ReplayError(k, 0, *record.actions[0],
                                  "this deal is void: no action is played")
            if rules_void is None and record.reason is None:
                raise ReplayError(k, None, None, None,
                                  "a void deal needs a reason unless the rules void it")
            state = _run_actions(DealSetup(game, players, options, record.dealer, deals),
                                 deck, record, k) \
                if record.actions else None
            results.append(HandResult(None, {"void": True, "reason": record.reason
                                             or rules_void}, state, "void deal"))
            expected_dealer = game.next_dealer(record.dealer, players, True)
            continue
        if record.secret is not None:  # (cards secret: scored as the table signed)
            points = list(record.secret)
            for unit, pts in enumerate(points):
                totals[unit] += pts
            deals += 1
            results.append(HandResult(points, {"secret": True}, None,
                                      "its cards stay secret (the proved deck)"))
            winner = game.winner(totals, deals, options)
            expected_dealer = game.next_dealer(record.dealer, players, False)
            continue
        if rules_void is not None:
            raise ReplayError(k, None, None, None,
                              f'the rules void this deal ({rules_void}); it must say "void": true')
        state = _run_actions(DealSetup(game, players, options, record.dealer, deals), deck,
                             record, k)
        if record.forfeit is not None:
            if state.is_terminal():
                raise ReplayError(k, None, None, None, "a forfeit after the deal was over")
            state.penalize(record.forfeit["seat"], record.forfeit["reason"])
        if not state.is_terminal():
            if k != len(history.hands) - 1:
                raise ReplayError(k, len(record.actions), None, None,
                                  "the deal stops before it is over, but another deal follows")
            results.append(HandResult(None, {**state.detail(), "finished": False}, state,
                                      state.summary(record.players or history.players)))
            break
        points = state.points()
        if record.forfeit is not None and "points" in record.forfeit:
            points = list(record.forfeit["points"])  # (the table's score as it stood)
        for unit, pts in enumerate(points):
            totals[unit] += pts
        deals += 1
        results.append(HandResult(points, state.detail(), state,
                                  state.summary(record.players or history.players)))
        winner = game.winner(totals, deals, options)
        expected_dealer = game.next_dealer(record.dealer, players, False)
    return ReplayResult(game, history, results, totals, winner, winner is not None)


def _run_actions(setup: DealSetup, deck: list[int], record: HandRecord, k: int) -> HandState:
    state = setup.deal(deck)
    penalty = record.penalty
    for i, (actor, text) in enumerate(record.actions):
        if "?" in text.split():
            raise HistoryFormatError(f"hand {k}, action {i}: {text!r} hides cards; a hand history"
                                     " records every card")
        try:
            action = state.parse_action(text)
        except ActionSyntaxError as exc:
            raise HistoryFormatError(f"hand {k}, action {i}: {exc}") from None
        if penalty is not None and i == penalty["index"]:
            _check_penalty(state, action, actor, text, penalty, where=(k, i))
            state.penalize(penalty["seat"], penalty["reason"])
            for j, (_, later) in enumerate(record.actions[i + 1:], i + 1):
                # recorded before the audit stopped the deal: not played, but well-formed
                if "?" in later.split():
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


def _check_penalty(state: HandState, action: int, actor: Actor, text: str,
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
