"""Determinization: a full-information world consistent with a view (docs/bots.md).

The unknown cards of a view are assigned to hidden places so that every card
lies in one of its candidate places and every place holds exactly its count:
a transportation problem, solved here by a randomised greedy pass (most
constrained card first, a random place with room among its candidates) with
augmenting paths when the greedy pass gets stuck.  The result honours every
candidate set of the view (voids, claims, exposed and privately known cards)
whenever that is possible at all.  A view's unseen transfers (a HAND steal:
only one of the victim's known cards crossed) limit how many of their cards
may be in the destination; a random choice of which decides the candidates.

A view that holds a proven contradiction (a renege) may admit no consistent
world; the leftover cards then go to any place with room, so the search
still gets a world and the bot still moves.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol, Self, TypeVar

from p2pcards.games.cards import bits
from p2pcards.games.seats import FULL, Observer


class Determinizable(Protocol):
    """What the determinizer reads and writes of a view (a deal state's places, as
    :class:`~p2pcards.games.places.Places` keeps them, and two of the deal's own
    questions): every :class:`~p2pcards.games.core.HandState` is one."""

    observer: Observer
    may: list[int]
    count: list[int]
    transfers: list[tuple[int, int, int, int, int]]
    awaiting: int
    moves: int

    @property
    def is_full(self) -> bool: ...

    def visible(self, place: int, seat: int) -> bool: ...

    def clone(self) -> Self: ...

    def hidden_mask(self) -> int:
        """Every card in a hidden place."""
        ...

    def _finish_world(self, rng: random.Random) -> None:
        """Complete a world: what only a full state keeps (Pasur's stock order)."""
        ...


S = TypeVar("S", bound=Determinizable)


def assign(candidates: dict[int, list[int]], room: list[int], rng: random.Random
           ) -> tuple[dict[int, int], list[int]]:
    """Place each card in one of its candidate places, within ``room`` per place.

    Returns (card -> place, cards that could not be placed).  A maximum
    assignment: a card is left over only when no assignment places them all.
    """
    room = room[:]
    holder: dict[int, int] = {}
    occupants: list[list[int]] = [[] for _ in room]
    order = list(candidates)
    rng.shuffle(order)
    order.sort(key=lambda c: len(candidates[c]))
    left: list[int] = []
    for card in order:
        places = [p for p in candidates[card] if room[p] > 0]
        if places:
            place = places[int(rng.random() * len(places))]
            holder[card] = place
            occupants[place].append(card)
            room[place] -= 1
        elif not _augment(card, candidates, room, holder, occupants, visited=set()):
            left.append(card)
    return holder, left


def _augment(card: int, candidates: dict[int, list[int]], room: list[int],
             holder: dict[int, int], occupants: list[list[int]], *, visited: set[int]) -> bool:
    """Find room for ``card`` by moving occupants along an augmenting path (DFS)."""
    for place in candidates[card]:
        if place in visited:
            continue
        visited.add(place)
        if room[place] > 0:
            room[place] -= 1
        else:
            for other in occupants[place]:
                if _augment(other, candidates, room, holder, occupants, visited=visited):
                    occupants[place].remove(other)
                    break
            else:
                continue
        holder[card] = place
        occupants[place].append(card)
        return True
    return False


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a view's determinizations share: worked out once per view state."""

    seen: int
    unknown: int
    room: list[int]
    shuffled: tuple[int, int, list[int], list[int]] | None
    """For a plain shuffled deal: (largest place, cards to draw, the other places
    with room, the hidden places); None when claims constrain the unknown cards."""


_LAST: list[tuple[tuple[object, ...], _Plan]] = []
"""The plan of the view determinized last (a search asks thousands of times);
the key holds everything the plan is worked out from."""


def _plan(view: Determinizable) -> _Plan:
    key = (id(view), view.moves, view.observer, tuple(view.may), tuple(view.count),
           len(view.transfers), view.hidden_mask())
    if _LAST and _LAST[0][0] == key:
        return _LAST[0][1]
    visible = [view.visible(p, view.observer) for p in range(len(view.may))]
    seen = 0
    for place, cards in enumerate(view.may):
        if visible[place]:
            seen |= cards
    room = [view.count[p] - (view.may[p].bit_count() if visible[p] else 0)
            for p in range(len(view.may))]
    unknown = view.hidden_mask() & ~seen
    shuffled = None
    if not view.transfers and sum(room) == unknown.bit_count() and all(
            view.may[p] & unknown == unknown for p, r in enumerate(room) if r > 0):
        # Every unknown card may be anywhere with room (no claim, nothing exposed
        # among them): a shuffled deal is a consistent world, uniformly drawn.
        hidden = [p for p in range(len(room)) if not visible[p]]
        filled = [p for p in hidden if room[p] > 0]
        largest = max(filled, key=lambda p: room[p]) if filled else -1
        draw = sum(room[p] for p in filled) - (room[largest] if filled else 0)
        shuffled = (largest, draw, [p for p in filled if p != largest], hidden)
    plan = _Plan(seen, unknown, room, shuffled)
    _LAST[:] = [(key, plan)]
    return plan


def determinize(view: S, rng: random.Random) -> S:
    """A full-information state that ``view`` cannot tell from the truth."""
    if view.is_full:
        return view.clone()
    world = view.clone()
    plan = _plan(view)
    seen, unknown, room = plan.seen, plan.unknown, plan.room
    if plan.shuffled is not None:
        return _deal_unknown(view, world, unknown, room, shuffled=plan.shuffled, rng=rng)
    candidates: dict[int, list[int]] = {card: [] for card in bits(unknown)}
    for place, cards in enumerate(view.may):
        if view.visible(place, view.observer):
            continue
        for card in bits(cards & ~seen):
            candidates.setdefault(card, []).append(place)
    stranded = [card for card, places in candidates.items() if not places]
    for card in stranded:  # ruled out everywhere: a proven contradiction, placed last
        del candidates[card]
    if view.transfers:
        for _ in range(8):  # which cards may have crossed: another draw if none fits
            limited = _limit_transfers(view.transfers, candidates, rng)
            holder, left = assign(limited, room, rng)
            if not left:
                break
    else:
        holder, left = assign(candidates, room, rng)
    left += stranded
    world.may = [view.may[p] if view.visible(p, view.observer) else 0
                 for p in range(len(view.may))]
    for card, place in holder.items():
        world.may[place] |= 1 << card
    if left:  # a proven contradiction: any place with room will do
        free = [p for p in range(len(room)) for _ in range(
            room[p] - sum(1 for q in holder.values() if q == p))]
        rng.shuffle(free)
        for card, place in zip(left, free, strict=False):
            world.may[place] |= 1 << card
    world.observer = FULL
    world.awaiting = 0
    world._finish_world(rng)
    return world


def _limit_transfers(transfers: list[tuple[int, int, int, int, int]],
                     candidates: dict[int, list[int]], rng: random.Random
                     ) -> dict[int, list[int]]:
    """Candidate sets in which at most the number of cards that crossed in each
    unseen transfer can be in its destination: a random choice of which may."""
    limited = dict(candidates)
    for dst, group, n, shown, _ in transfers:
        room = n - (shown & group).bit_count()
        movable = [c for c in bits(group) if dst in limited.get(c, ())]
        if len(movable) <= room:
            continue
        forced = [c for c in movable if len(limited[c]) == 1]
        rest = [c for c in movable if len(limited[c]) > 1]
        allowed = set(forced + rng.sample(rest, max(0, min(len(rest), room - len(forced)))))
        for card in movable:
            if card not in allowed and len(limited[card]) > 1:
                limited[card] = [p for p in limited[card] if p != dst]
    return limited


def _deal_unknown(view: S, world: S, unknown: int, room: list[int], *,
                  shuffled: tuple[int, int, list[int], list[int]], rng: random.Random) -> S:
    """Deal the unknown cards at random into the hidden places' room: a partial
    Fisher-Yates draws the cards of every place but the largest, which takes the
    rest as one mask (the stock or the undealt cards need no drawing card by card)."""
    largest, draw, others, hidden = shuffled
    may = world.may
    for place in hidden:
        may[place] = 0
    if largest >= 0:
        cards = bits(unknown)
        n = len(cards)
        rnd = rng.random
        for i in range(min(draw, n - 1)):  # partial Fisher-Yates: the hot path
            j = i + int(rnd() * (n - i))
            cards[i], cards[j] = cards[j], cards[i]
        at = 0
        taken = 0
        for place in others:
            dealt = 0
            for card in cards[at:at + room[place]]:
                dealt |= 1 << card
            may[place] = dealt
            taken |= dealt
            at += room[place]
        may[largest] = unknown & ~taken
    world.observer = FULL
    world.awaiting = 0
    world._finish_world(rng)
    return world
