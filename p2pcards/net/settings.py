"""The table settings every peer is shown: the grace period, the turn timer, hints, and
the bot that takes the seat of a player gone silent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p2pcards.table.codec import a_or_an

MAX_BOT_KIND = 16


@dataclass
class Settings:
    """The table settings every peer is shown (seconds; 0: no turn timer; ``replace``:
    the kind of bot that takes the seat of a player gone silent, "" for none)."""

    grace: float = 300.0
    timer: float = 0.0
    hint: bool = False
    replace: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {"grace": self.grace, "timer": self.timer, "hint": self.hint,
                "replace": self.replace}

    @classmethod
    def from_wire(cls, raw: Any) -> Settings:
        if not isinstance(raw, dict):
            raise ValueError("table settings must be a map")
        grace, timer, hint = raw.get("grace"), raw.get("timer"), raw.get("hint")
        replace = raw.get("replace", "")
        if not isinstance(grace, int | float) or not 0 < grace <= 86400 or \
                not isinstance(timer, int | float) or not 0 <= timer <= 86400 or \
                not isinstance(hint, bool):
            raise ValueError("table settings: grace (0-86400 s], timer [0-86400 s], hint")
        if not isinstance(replace, str) or len(replace) > MAX_BOT_KIND or \
                (replace and not replace.isidentifier()):
            raise ValueError("table settings: replace must be a bot kind (a short word)")
        return cls(float(grace), float(timer), hint, replace)

    def describe(self) -> str:
        timer = f"{self.timer:g} s a move" if self.timer else "none"
        stand_in = (f"{a_or_an(self.replace)} bot" if self.replace
                    else "none (it forfeits each deal)")
        return (f"grace period {self.grace:g} s, turn timer {timer}, hints"
                f" {'allowed' if self.hint else 'off'}, stand-in for a seat gone silent:"
                f" {stand_in}")
