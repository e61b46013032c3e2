"""What a game says it supports: its capabilities, declared on its descriptor.

A game declares what it does beyond what every game does
(:attr:`p2pcards.games.game.Game.capabilities`, a :class:`Capabilities`), much as
OpenSpiel's ``GameType`` declares a game's chance mode and information.  Each
capability names the hooks a game that has it fills in: some have no default
(which cards an action shows, how a table without a dealer makes a chance
event, which bids were met exactly), the others a default that means "never"
(no forced move, no void deal).  The rest of the program reads the declaration
instead of looking at which methods a game's classes override.

A declaration and the classes that should fill it in are held against each
other by :func:`mismatches`; :func:`p2pcards.games.register` runs it, so a game
that declares a hook it lacks, or fills in one it does not declare, is refused
before anything plays it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from p2pcards.games.hooks import ChanceKind


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a game's deals and descriptor do beyond what every game does (each False,
    or none, unless declared)."""

    shown_cards: bool = False
    """Its deals say which cards each action shows to everyone
    (:meth:`~p2pcards.games.hooks.DealHooks.shown_cards`): the secure table opens
    them, and plays no game without it."""
    chance: bool = False
    """Chance acts in its deals (``current_player()`` is CHANCE; the outcome from
    :meth:`~p2pcards.games.core.HandState.chance_action`): Pasur's stock reshuffle,
    Control Nut!'s draws and steals."""
    table_chance: frozenset[ChanceKind] = frozenset()
    """The kinds of chance event a table without a dealer makes in its deals
    (:meth:`~p2pcards.games.hooks.DealHooks.table_chance`, and by kind
    ``drawn_chance``, ``taken_chance``, ``reshuffled_chance``).  A game in which
    chance acts needs them at the secure table."""
    face_down: bool = False
    """Some of its actions move cards of the mover's hand face down to a place the
    others do not see (a Bid Whist discard): the deal names them
    (:meth:`~p2pcards.games.hooks.DealHooks.face_down`), so that the secure table names
    their slots without reading the action's text."""
    forced_actions: bool = False
    """The table sometimes acts for a seat that has no choice and may not see what
    it plays (:meth:`~p2pcards.games.core.HandState.forced_action`: Nullern's
    blind round)."""
    exact_bids: bool = False
    """Its bids are met exactly or not (:meth:`~p2pcards.games.hooks.DealHooks.exact_bids`:
    Nullern); the arena counts them."""
    void_deals: bool = False
    """The rules may void a deal as dealt, before any action (the descriptor's
    ``void_reason`` and the deal's: Pasur's jacks)."""
    cards_change_deal: bool = False
    """The cards can change where the deal puts its positions (the descriptor's
    ``cards_change_mapping`` and ``shown_after_deal``: Pasur's lone opening jack,
    put back and replaced)."""

    def __post_init__(self) -> None:
        if self.table_chance and not self.chance:
            raise ValueError("a table makes chance events only in a game in which chance acts")


DEAL_HOOKS: Mapping[str, tuple[str, ...]] = {
    "shown_cards": ("shown_cards",),
    "face_down": ("face_down",),
    "chance": ("chance_action",),
    "forced_actions": ("forced_action",),
    "exact_bids": ("exact_bids",),
    "void_deals": ("void_reason",),
}
"""Each capability (a field of :class:`Capabilities`) -> the hooks of the deal state
that a game declaring it fills in, and only such a game."""

CHANCE_HOOKS: Mapping[ChanceKind, str] = {
    ChanceKind.DRAW: "drawn_chance",
    ChanceKind.TAKE: "taken_chance",
    ChanceKind.RESHUFFLE: "reshuffled_chance",
}
"""Each kind of a table's chance event -> the hook of the deal state that makes it
(with ``table_chance``, filled in when any kind is declared)."""

DESCRIPTOR_HOOKS: Mapping[str, tuple[str, ...]] = {
    "void_deals": ("void_reason",),
    "cards_change_deal": ("cards_change_mapping", "shown_after_deal"),
}
"""Each capability -> the hooks of the descriptor that a game declaring it fills in."""


def mismatches(declared: Capabilities, deals: type, deal_base: type, descriptor: type,
               descriptor_base: type) -> list[str]:
    """Where ``declared`` and the classes part: a hook declared but not filled in, or
    filled in but not declared.  ``deals``: the class of the game's deal states,
    whose hooks' defaults are ``deal_base``'s; ``descriptor``: the game's
    descriptor class, over ``descriptor_base``.  Empty when they agree."""
    out: list[str] = []

    def hold(wanted: bool, what: str, cls: type, base: type, name: str) -> None:
        filled = getattr(cls, name) is not getattr(base, name)
        if wanted and not filled:
            out.append(f"it declares {what} but does not fill in {base.__name__}.{name}")
        elif filled and not wanted:
            out.append(f"it fills in {base.__name__}.{name} but does not declare {what}")

    for field, names in DEAL_HOOKS.items():
        for name in names:
            hold(getattr(declared, field), f"Capabilities.{field}", deals, deal_base, name)
    hold(bool(declared.table_chance), "Capabilities.table_chance", deals, deal_base,
         "table_chance")
    for kind, name in CHANCE_HOOKS.items():
        hold(kind in declared.table_chance, f"ChanceKind.{kind.name} in Capabilities.table_chance",
             deals, deal_base, name)
    for field, names in DESCRIPTOR_HOOKS.items():
        for name in names:
            hold(getattr(declared, field), f"Capabilities.{field}", descriptor, descriptor_base,
                 name)
    return out
