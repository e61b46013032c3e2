"""The peers' ``--stats`` side by side: what a person at the table waits for.

Every peer of ``p2pcards bench net`` times on the machine's one monotonic clock
(:mod:`p2pcards.net.moveclock`, :mod:`p2pcards.net.handclock`), so a time at one
peer can be set against a time at another:

- a move, from leaving its seat to the last seat applying it (:func:`move_ms`);
- the next hand, from the last message of a deal leaving its sender to the last
  seat holding its hand of the next deal (:func:`next_hand_ms`);

and, where the peers counted their multiplications of points (the proved deck's
work, which does not depend on the machine), the most any one peer made between
those two instants (:func:`next_hand_mults`) and each peer's in a whole deal
(:func:`deal_mults`).  :func:`wait_records` makes the records of all of them.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from p2pcards.bench.record import Record

__all__ = ["deal_mults", "move_ms", "next_hand_ms", "next_hand_mults", "quantile",
           "wait_records"]

Stats = Mapping[str, Any]
"""One peer's ``--stats``."""


def quantile(values: Sequence[float], q: float) -> float:
    """The value ``q`` of the way up ``values`` in order (0.9: the 90th percentile)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def move_ms(peers: Sequence[Stats]) -> list[float]:
    """Each move's time from leaving its seat to the last seat applying it, in ms: the
    peers' ``--stats`` side by side (a move some peer never timed, none)."""
    out = []
    for made in peers:
        for key in made["made"]:
            times = [peer["moves"].get(key) for peer in peers]
            if None not in times:
                out.append(round((max(times) - made["moves"][key]) * 1000, 1))
    return out


def _marks(peer: Stats, name: str) -> dict[int, tuple[float, int]]:
    """Deal -> (seconds, multiplications) of one of a peer's lists of marks."""
    return {int(deal): (float(at), int(count)) for deal, at, count in peer.get(name, [])}


def _boundaries(peers: Sequence[Stats]) -> list[tuple[list[tuple[float, int]],
                                                     list[tuple[float, int]]]]:
    """For each deal ``d`` whose end and next hand every peer marked, in order: every
    peer's end of ``d`` and its hand of ``d + 1``."""
    ends = [_marks(peer, "deal_ends") for peer in peers]
    hands = [_marks(peer, "hands") for peer in peers]
    deals = sorted(set.intersection(*(set(e) for e in ends),
                                    *({d - 1 for d in h} for h in hands))) if peers else []
    return [([e[d] for e in ends], [h[d + 1] for h in hands]) for d in deals]


def next_hand_ms(peers: Sequence[Stats]) -> list[float]:
    """For each deal boundary, in ms: from the deal's last message leaving its sender
    (the earliest peer's end of the deal) to every seat holding its hand of the next
    (the latest peer's hand)."""
    return [round((max(at for at, _ in hands) - min(at for at, _ in ends)) * 1000, 1)
            for ends, hands in _boundaries(peers)]


def next_hand_mults(peers: Sequence[Stats]) -> list[int]:
    """For each deal boundary: the most multiplications any one peer made between its
    own end of the deal and its holding its hand of the next."""
    return [max(hand - end for (_, end), (_, hand) in zip(ends, hands, strict=True))
            for ends, hands in _boundaries(peers)]


def deal_mults(peers: Sequence[Stats]) -> list[int]:
    """Each peer's multiplications in each deal, peer by peer: from the end of the deal
    before (for the first, from the peer's start) to the end of this one."""
    out = []
    for peer in peers:
        before = 0
        for _, (_, count) in sorted(_marks(peer, "deal_ends").items()):
            out.append(count - before)
            before = count
    return out


def wait_records(name: str, peers: Sequence[Stats], *, mults: bool = False) -> list[Record]:
    """``name.move_median`` and ``_p90``, ``name.next_hand_median`` and ``_p90`` (none
    for a game of one deal), and with ``mults`` ``name.next_hand_mults`` and
    ``name.deal_mults`` (medians)."""
    records: list[Record] = []
    for what, values in (("move", move_ms(peers)), ("next_hand", next_hand_ms(peers))):
        if values:
            records += [Record(f"{name}.{what}_median", statistics.median(values), "ms"),
                        Record(f"{name}.{what}_p90", quantile(values, 0.9), "ms")]
    if mults:
        for what, counts in (("next_hand", next_hand_mults(peers)),
                             ("deal", deal_mults(peers))):
            if counts:
                records.append(Record(f"{name}.{what}_mults", statistics.median(counts),
                                      "mults"))
    return records
