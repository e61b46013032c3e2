"""The critical path of a proved deal: how long a table waits when every party runs on
a core of its own and messages arrive at once.

A whole deal (keys, the shuffle round, every hand dealt and the rest shown, as
:func:`~p2pcards.protocol.proved.simulate.whole_deal` plays it) is run in one
process, timing each party's every call (CPU time: its steps with their encoding,
each arrival's decoding and checks, each shuffle proof's check, its releases,
openings and records).  Two schedules are then laid on those costs, each party's
calls in the order it makes them, none before the message it needs is out:

- *in turn*: a party checks each shuffle proof when the shuffle arrives, before
  anything else (what the table's session did before it pipelined; a peer may
  still);
- *pipelined*: a party takes a shuffle at once and checks its proof while it has
  nothing else to do (``defer=True``), its own shuffle first; every proof it holds
  is checked before any share of its leaves, and before it opens a card (what the
  table's session does: docs/protocol.md, "Pipelined shuffles").

Once the deck is shuffled, each party releases every share it owes (its shares of
every other seat's cards and of the cards shown), then takes the shares sent to it
and opens its cards: the table's order.  Messages take no time on the wire.

``python -m p2pcards.protocol.proved.timeline [parties] [cards] [deals]`` prints both
(the best of ``deals`` deals) and each party's compute.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..steps import DeckContext
from .deck import ProvedDeck
from .simulate import Table, multiplication_cost, seated


@dataclass(frozen=True)
class Timeline:
    in_turn: float
    """Seconds from the first key share to the last card opened, checking on arrival."""
    pipelined: float
    """The same, checking shuffle proofs in idle time."""
    shuffled: float
    """Seconds until every party holds the checked deck (in turn)."""
    compute: tuple[float, ...]
    """Each party's seconds of compute."""


class _Clocks:
    """Both schedules' clocks, one per party, and the pipelined proofs not yet checked."""

    def __init__(self, parties: int):
        self.turn = [0.0] * parties
        self.pipe = [0.0] * parties
        self.backlog = [0.0] * parties
        self.compute = [0.0] * parties

    def work(self, party: int, seconds: float) -> tuple[float, float]:
        """``party`` spends ``seconds`` on a call of its own; when it ends, both ways."""
        self.compute[party] += seconds
        self.turn[party] += seconds
        self.pipe[party] += seconds
        return self.turn[party], self.pipe[party]

    def flush(self, party: int) -> None:
        """``party`` checks every proof it holds before going on (pipelined)."""
        self.pipe[party] += self.backlog[party]
        self.backlog[party] = 0.0

    def arrive(self, party: int, ready: tuple[float, float], take: float,
               check: float) -> None:
        """A message out at ``ready`` reaches ``party``: ``take`` to decode and take it,
        ``check`` to check its shuffle proof."""
        self.compute[party] += take + check
        self.turn[party] = max(self.turn[party], ready[0]) + take + check
        idle = max(0.0, ready[1] - self.pipe[party])
        self.backlog[party] -= min(idle, self.backlog[party])
        self.pipe[party] = max(self.pipe[party], ready[1]) + take
        self.backlog[party] += check


def _timed(call: Callable[..., object], *args: object, **kwargs: object
           ) -> tuple[object, float]:
    start = time.process_time()
    result = call(*args, **kwargs)
    return result, time.process_time() - start


def _step(deck: ProvedDeck) -> bytes:
    return deck.step().encode()


def _release(deck: ProvedDeck, slots: list[int], to: int | None) -> bytes:
    return deck.release(slots, to).encode()


def _open(deck: ProvedDeck, slots: list[int]) -> None:
    for slot in slots:
        deck.open(slot)


def _assign(deck: ProvedDeck, slots: list[int], to: int) -> None:
    for slot in slots:
        deck.assign(slot, to)


def _broadcast(table: Table, clocks: _Clocks, sender: int, data: bytes,
               ready: tuple[float, float], *, to: Sequence[int] | None = None) -> None:
    table.record.append(data)
    for deck in table.decks:
        if deck.me == sender or (to is not None and deck.me not in to):
            continue
        _, take = _timed(deck.receive, data, defer=True)
        _, check = _timed(deck.check_pending)
        clocks.arrive(deck.me, ready, take, check)


def deal_timeline(context: DeckContext, seed: str = "proved-timeline") -> Timeline:
    """One whole deal's schedules (see the module's text)."""
    table = seated(context, seed)
    parties = context.parties
    clocks = _Clocks(parties)
    while (due := table.decks[0].expected()) is not None:
        party = due[1]
        deck = table.decks[party]
        data, spent = _timed(_step, deck)
        assert isinstance(data, bytes)
        _broadcast(table, clocks, party, data, clocks.work(party, spent))
    shuffled = max(clocks.turn)
    shown = context.size - parties
    groups: list[tuple[list[int], int | None]] = [
        ([s for s in range(shown) if s % parties == seat], seat) for seat in range(parties)]
    groups.append((list(range(shown, context.size)), None))
    released: list[tuple[int, bytes, tuple[float, float], int | None]] = []
    for slots, to in groups:  # each party releases every share it owes at once
        for deck in table.decks:
            if deck.me != to:
                clocks.flush(deck.me)
                data, spent = _timed(_release, deck, slots, to)
                assert isinstance(data, bytes)
                released.append((deck.me, data, clocks.work(deck.me, spent), to))
    for sender, data, ready, to in released:
        _broadcast(table, clocks, sender, data, ready, to=None if to is None else [to])
    for slots, to in groups:
        for deck in table.decks:
            if to is None or deck.me == to:
                clocks.flush(deck.me)
                _, spent = _timed(_open, deck, slots)
                clocks.work(deck.me, spent)
            if to is not None:
                _, spent = _timed(_assign, deck, slots, to)
                clocks.work(deck.me, spent)
    return Timeline(max(clocks.turn), max(clocks.pipe), shuffled, tuple(clocks.compute))


def best_timeline(parties: int, cards: int, deals: int) -> Timeline:
    """The best of ``deals`` deals, figure by figure."""
    runs = [deal_timeline(DeckContext(b"proved-timeline!", d, parties, cards), f"t{d}")
            for d in range(deals)]
    return Timeline(min(r.in_turn for r in runs), min(r.pipelined for r in runs),
                    min(r.shuffled for r in runs),
                    tuple(min(r.compute[p] for r in runs) for p in range(parties)))


def main(argv: Sequence[str]) -> None:
    parties, cards, deals = (int(a) for a in (list(argv) + ["4", "54", "5"][len(argv):]))
    best = best_timeline(parties, cards, deals)
    print(f"{parties} parties, {cards} cards, best of {deals} deals:")
    print(f"  critical path, proofs checked on arrival: {1e3 * best.in_turn:.1f} ms"
          f" (the deck shuffled and checked at {1e3 * best.shuffled:.1f} ms)")
    print(f"  critical path, proofs checked while idle: {1e3 * best.pipelined:.1f} ms")
    print("  compute per party: " + ", ".join(f"{1e3 * s:.1f} ms" for s in best.compute))
    print(f"  one multiplication of a point now: {1e6 * multiplication_cost():.1f} µs")


if __name__ == "__main__":
    main(sys.argv[1:])
