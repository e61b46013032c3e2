"""Reading a hand history: the whole document validated, :class:`HistoryFormatError`
(a malformed file: exit status 2) naming what is wrong and where."""

from __future__ import annotations

import json
from typing import Any

from p2pcards.games import GAMES, Game
from p2pcards.games.game import OptionError
from p2pcards.history.records import (
    FORFEITS,
    FORMAT,
    HIDDEN,
    RULE_BREACHES,
    Actor,
    HandRecord,
    History,
    HistoryFormatError,
)


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


def _expect_points(value: Any, where: str, units: int) -> list[int]:
    if not isinstance(value, list) or len(value) != units or not all(
            isinstance(p, int) and not isinstance(p, bool) for p in value):
        raise _fail(where, f"expected {units} whole numbers")
    return list(value)


_HAND_KEYS = {"dealer", "deck", "actions", "void", "reason", "penalty", "forfeit", "players",
              "secret", "public"}


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
    public = raw.get("public", False)
    if not isinstance(public, bool):
        raise _fail(f"{where}, public", "expected true or false")
    dealer = _expect_int(raw.get("dealer"), f"{where}, dealer", 0, players - 1)
    deck = _deck(raw.get("deck"), f"{where}, deck", expected, game, public)
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
    record = HandRecord(dealer, deck, actions, public=public)
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
        record.penalty = _penalty(raw["penalty"], where, players, len(actions))
    units = game.unit_count(players)
    if "forfeit" in raw:
        forfeit = raw["forfeit"]
        if not isinstance(forfeit, dict) or set(forfeit) - {"points"} != {"seat", "reason"}:
            raise _fail(f"{where}, forfeit", 'expected {"seat", "reason"} (and "points")')
        if "points" in forfeit:
            if public:
                raise _fail(f"{where}, forfeit points", "a public entry's forfeit has no"
                            " points: replay scores the deal from its actions")
            _expect_points(forfeit["points"], f"{where}, forfeit points", units)
        _expect_int(forfeit["seat"], f"{where}, forfeit seat", 0, players - 1)
        if forfeit["reason"] not in FORFEITS:
            raise _fail(f"{where}, forfeit reason",
                        "expected " + ", ".join(f'"{r}"' for r in FORFEITS[:-1])
                        + f' or "{FORFEITS[-1]}"')
        record.forfeit = dict(forfeit)
    if "secret" in raw:
        secret = raw["secret"]
        if not isinstance(secret, dict) or set(secret) != {"points"}:
            raise _fail(f"{where}, secret", f'expected {{"points": [{units} whole numbers]}}')
        record.secret = _expect_points(secret["points"], f"{where}, secret points", units)
        if public:
            raise _fail(f"{where}, secret", 'a public entry keeps its actions and has no'
                        ' "secret" (the form of before, with no actions)')
        if actions:
            raise _fail(f"{where}, secret", "a deal whose cards stay secret has no actions")
    if sum(x is not None for x in (record.penalty, record.forfeit, record.secret)) \
            + record.void > 1:
        raise _fail(where, "a deal ends by at most one of penalty, forfeit, void and secret")
    return record


def _deck(deck: Any, where: str, expected: list[int], game: Game, public: bool) -> list[str]:
    """The deck's card names: each a card of the game's deck, none twice; in a public
    entry ``?`` (any number of times) for a card not shown."""
    if not isinstance(deck, list) or not all(isinstance(c, str) for c in deck):
        raise _fail(where, "expected a list of card names")
    if len(deck) != len(expected):
        raise _fail(where, f"{len(deck)} cards, a {game.title} deck has {len(expected)}")
    seen: dict[int, int] = {}
    for i, text in enumerate(deck):
        if text.strip() == HIDDEN:
            if not public:
                raise _fail(f"{where}[{i}]", "'?' hides a card: only a public entry"
                            ' ("public": true) may')
            continue
        try:
            card = game.notation.parse(text)
        except ValueError as exc:
            raise _fail(f"{where}[{i}]", str(exc)) from None
        if card in seen:
            raise _fail(f"{where}[{i}]", f"{text} also at deck[{seen[card]}]")
        seen[card] = i
    extra = sorted(set(seen) - set(expected))
    if extra:
        raise _fail(f"{where}[{seen[extra[0]]}]",
                    f"{deck[seen[extra[0]]]} is not in this game's deck")
    return [HIDDEN if text.strip() == HIDDEN else text for text in deck]


def _penalty(pen: Any, where: str, players: int, actions: int) -> dict[str, Any]:
    if not isinstance(pen, dict) or set(pen) != {"seat", "index", "reason"}:
        raise _fail(f"{where}, penalty", 'expected {"seat", "index", "reason"}')
    _expect_int(pen["seat"], f"{where}, penalty seat", 0, players - 1)
    _expect_int(pen["index"], f"{where}, penalty index", 0, max(actions - 1, 0))
    if pen["reason"] not in RULE_BREACHES:
        raise _fail(f"{where}, penalty reason", "expected one of "
                    + ", ".join(sorted(RULE_BREACHES)))
    if pen["index"] >= actions:
        raise _fail(f"{where}, penalty index", "there is no such action")
    return dict(pen)
