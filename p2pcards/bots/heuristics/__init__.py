"""The built-in games' rule-based bots and search models, one module per game.

Each module registers its ``PLAYBOOK`` under its game's name when imported
(:mod:`p2pcards.bots.registry`).
"""

from __future__ import annotations

from p2pcards.bots.heuristics import bidwhist, controlnut, nullern, pasur

__all__ = ["bidwhist", "controlnut", "nullern", "pasur"]
