"""The table settings every peer is shown: the grace period, the turn timer, hints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Settings:
    """The table settings every peer is shown (seconds; 0: no turn timer)."""

    grace: float = 300.0
    timer: float = 0.0
    hint: bool = False

    def to_wire(self) -> dict[str, Any]:
        return {"grace": self.grace, "timer": self.timer, "hint": self.hint}

    @classmethod
    def from_wire(cls, raw: Any) -> Settings:
        if not isinstance(raw, dict):
            raise ValueError("table settings must be a map")
        grace, timer, hint = raw.get("grace"), raw.get("timer"), raw.get("hint")
        if not isinstance(grace, int | float) or not 0 < grace <= 86400 or \
                not isinstance(timer, int | float) or not 0 <= timer <= 86400 or \
                not isinstance(hint, bool):
            raise ValueError("table settings: grace (0-86400 s], timer [0-86400 s], hint")
        return cls(float(grace), float(timer), hint)

    def describe(self) -> str:
        timer = f"{self.timer:g} s a move" if self.timer else "none"
        return (f"grace period {self.grace:g} s, turn timer {timer}, hints"
                f" {'allowed' if self.hint else 'off'}")
