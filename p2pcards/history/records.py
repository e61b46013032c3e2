"""The records of a hand history (``p2pcards-history/1``, docs/hand-history.md): one
deal, a whole game, their canonical JSON, and the errors of reading and replaying."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

FORMAT = "p2pcards-history/1"
Actor = int | str
RULE_BREACHES = frozenset({"renege", "not-held", "must-capture", "capture", "bid", "discard",
                           "declare", "give", "value", "order", "bonus"})
"""Rule codes a ``penalty`` may name: breaches only an audit or a proof about hidden
cards can prove (not turn order)."""
FORFEITS = ("silent", "refused audit", "equivocation", "refused step")
"""The reasons a ``forfeit`` may give."""
HIDDEN = "?"
"""A card a public entry (and a seat's own log) does not show."""


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
    """One deal: dealer, deck order, actions, and how it ended if not by play."""

    dealer: int
    deck: list[str]
    """Card names by deck position; in a public entry ``?`` where no card was shown."""
    actions: list[tuple[Actor, str]] = field(default_factory=list)
    void: bool = False
    reason: str | None = None
    penalty: dict[str, Any] | None = None
    forfeit: dict[str, Any] | None = None
    players: list[str] | None = None
    secret: list[int] | None = None
    """The points of a deal whose cards stay secret, as the proved deck's tables wrote
    it before public entries: the blank deck, no actions (still read)."""
    public: bool = False
    """A public entry: the deal as a seat with no cards saw it (the proved deck's: its
    cards never shown stay secret); ``?`` for what was not shown (docs/hand-history.md,
    "Public entries")."""

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
        if self.public:
            out["public"] = True
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
