"""Run every party of a proved deck in one process: the tests' table and a measure.

Messages go from one :class:`ProvedDeck` to the others as bytes (encoded, then
decoded by each receiver, as on the wire), in protocol order; a test can make a
party cheat (``tamper``: its message is forged before it takes it as its own, or
its shares on their way).  Shares for one seat go to that seat only.

``python -m p2pcards.protocol.proved.simulate [parties] [cards] [deals]`` measures
the compute of each party for whole deals (every proof checked): keys, the shuffle
round, every slot but the last ``parties`` dealt round the table, those shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

from ..curve import SecretSource
from ..source import SeededSource
from ..steps import DeckContext
from .counting import counted
from .deck import ProvedDeck
from .group import G, mul
from .messages import Message

Tamper = Callable[[Message], Message]


class Table:
    """Every party's deck, and the record: every message sent, as bytes, in order
    (what :func:`~p2pcards.protocol.proved.deck.verify_deal` re-checks)."""

    def __init__(self, context: DeckContext, sources: Sequence[SecretSource]):
        self.context = context
        self.decks = [ProvedDeck(context, party, sources[party])
                      for party in range(context.parties)]
        self.record: list[bytes] = []

    def send(self, sender: int, message: Message, *, to: Sequence[int] | None = None,
             defer: bool = False) -> None:
        """``message`` as bytes to every party but the sender (``to``: those only)."""
        data = message.encode()
        self.record.append(data)
        for deck in self.decks:
            if deck.me != sender and (to is None or deck.me in to):
                deck.receive(data, defer=defer)

    def run_round(self, tamper: Tamper | None = None, *, defer: bool = False) -> None:
        """Every step due, key shares included, each broadcast in turn (``defer``: the
        receivers take shuffles now and check their proofs when
        :meth:`ProvedDeck.check_pending` is called)."""
        while (due := self.decks[0].expected()) is not None:
            _, party = due
            self.send(party, self.decks[party].step(tamper), defer=defer)

    def reshuffle(self, slots: Sequence[int], tamper: Tamper | None = None) -> list[int]:
        """A reshuffle of ``slots`` by every party in turn; returns the new slots."""
        for deck in self.decks:
            deck.begin_reshuffle(slots)
        first = len(self.decks[0].points)
        self.run_round(tamper)
        return list(range(first, len(self.decks[0].points)))

    def deal(self, slots: Sequence[int], to: int | None, tamper: Tamper | None = None
             ) -> None:
        """Every party but ``to`` releases its shares of ``slots`` to ``to`` (None:
        every party, to everyone); ``to`` (or everyone) opens them; every party
        records who holds them."""
        for deck in self.decks:
            if deck.me == to:
                continue
            message: Message = deck.release(slots, to)
            if tamper is not None:
                message = tamper(message)
            self.send(deck.me, message, to=None if to is None else [to])
        for deck in self.decks:
            if to is None or deck.me == to:
                for slot in slots:
                    deck.open(slot)
        if to is not None:
            for deck in self.decks:
                for slot in slots:
                    deck.assign(slot, to)

    def remix(self, holder: int, slots: Sequence[int]) -> list[int]:
        """``holder`` re-mixes ``slots``; returns the new slots."""
        first = len(self.decks[holder].points)
        self.send(holder, self.decks[holder].remix(slots))
        return list(range(first, len(self.decks[holder].points)))


def seated(context: DeckContext, seed: str) -> Table:
    """A table whose parties draw from seeded sources (tests and the measure)."""
    return Table(context, [SeededSource(f"{seed}:{p}") for p in range(context.parties)])


def whole_deal(context: DeckContext, seed: str = "proved-simulate") -> Table:
    """A deal as the measure plays it: keys, the shuffle round, then every slot but
    the last ``parties`` dealt round the table (slot ``s`` to seat ``s mod parties``)
    and those shown to everyone."""
    table = seated(context, seed)
    table.run_round()
    shown = context.size - context.parties
    for seat in range(context.parties):
        table.deal([s for s in range(shown) if s % context.parties == seat], seat)
    table.deal(list(range(shown, context.size)), None)
    return table


class _Meter:
    """Compute (CPU) time and multiplications spent by each party: every call of its
    own steps and of its arrivals, nothing else."""

    def __init__(self, parties: int):
        self.spent = [0.0] * parties
        self.multiplications = [0] * parties
        self.base = [0] * parties
        self.party: int | None = None

    def wrap(self, inner: Callable[..., object]) -> Callable[..., object]:
        def run(deck: ProvedDeck, *args: object, **kwargs: object) -> object:
            self.party = deck.me
            start = time.process_time()
            try:
                return inner(deck, *args, **kwargs)
            finally:
                self.spent[deck.me] += time.process_time() - start
                self.party = None
        return run

    def tick(self, tally: list[int]) -> Callable[[], None]:
        """What counts one multiplication in ``tally``, for the party whose call it is."""
        def count() -> None:
            if self.party is not None:
                tally[self.party] += 1
        return count


def measure(parties: int, cards: int, deals: int) -> list[tuple[float, int, int]]:
    """For each party: its seconds of compute for one deal (the best of ``deals``),
    and the multiplications of points and of ``G`` it made."""
    best: list[tuple[float, int, int]] = [(float("inf"), 0, 0)] * parties
    names = ("step", "release", "receive", "open", "assign")
    originals = {name: getattr(ProvedDeck, name) for name in names}
    for d in range(deals):
        meter = _Meter(parties)
        try:
            for name in names:
                setattr(ProvedDeck, name, meter.wrap(originals[name]))
            with counted(meter.tick(meter.multiplications), meter.tick(meter.base)):
                whole_deal(DeckContext(b"proved-measure!!", d, parties, cards), seed=f"m{d}")
        finally:
            for name, inner in originals.items():
                setattr(ProvedDeck, name, inner)
        best = [min(b, (s, m, g)) for b, s, m, g in
                zip(best, meter.spent, meter.multiplications, meter.base, strict=True)]
    return best


def multiplication_cost(rounds: int = 2000) -> float:
    """Seconds of compute of one multiplication of a point by a random scalar, now."""
    source = SeededSource("proved-simulate-calibrate")
    scalars = [1 + source.randbelow(2**255) for _ in range(rounds)]
    start = time.process_time()
    for k in scalars:
        mul(k, G)
    return (time.process_time() - start) / rounds


def main(argv: Sequence[str]) -> None:
    parties, cards, deals = (int(a) for a in (list(argv) + ["4", "52", "5"][len(argv):]))
    each = measure(parties, cards, deals)
    for party, (seconds, multiplications, base) in enumerate(each):
        print(f"party {party}: {1e3 * seconds:.1f} ms, {multiplications} multiplications"
              f" of points, {base} of G")
    print(f"table: {1e3 * sum(s for s, _, _ in each):.1f} ms ({parties} parties, {cards}"
          f" cards, best of {deals} deals per party)")
    print(f"one multiplication of a point now: {1e6 * multiplication_cost():.1f} µs")


if __name__ == "__main__":
    main(sys.argv[1:])
