"""``p2pcards bench deck``: the mental-poker deck's compute, party by party.

All parties run in one process, and every call of every party is timed on its
own, which gives per table size:

* the **critical path**: what the table waits for when every party has its own
  machine: per broadcast step the sender's pass plus the slowest receiver's
  check, then the slowest recipient's openings (dealing is parallel);
* **all parties**: the sum of every party's compute, setup included;
* **setup**: one party hashing the card points and drawing its secrets, which
  needs nobody else and so can run before the deal;
* the **audit** as one party runs it;
* the curve multiplications done, against the floor of 2·N·M (one per card
  per party in each of the two passes).
"""

from __future__ import annotations

import time
from typing import Any

from p2pcards.bench.record import Record
from p2pcards.protocol import curve
from p2pcards.protocol.audit import audit_deck
from p2pcards.protocol.deck import Deck
from p2pcards.protocol.source import SeededSource
from p2pcards.protocol.steps import DeckContext

TABLES = [(4, 54), (7, 80)]


def _timed(call: Any, *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = call(*args)
    return value, time.perf_counter() - start


def deck_round(parties: int, size: int, deal: int, seed: str
               ) -> tuple[float, float, float, float, int]:
    """(critical path, all parties, audit, setup) in seconds, and multiplications, for
    one deal.  Setup (hashing the card points, drawing the secrets) needs nothing from
    the other parties, so a table does it before the deal (during the last one): it is
    reported apart, not in the critical path."""
    curve.card_points.cache_clear()  # every deal has its own points
    context = DeckContext(b"bench-table", deal, parties, size)
    spent = [0.0] * parties
    decks: list[Deck] = []
    setup = 0.0
    for party in range(parties):
        curve.card_points.cache_clear()  # each party hashes its own card points
        deck, seconds = _timed(Deck, context, party, SeededSource(f"{seed}:{party}"))
        decks.append(deck)
        spent[party] += seconds
        setup = max(setup, seconds)
    critical = 0.0
    before = curve.Multiplier.operations
    while (due := decks[0].expected()) is not None:
        _, sender = due
        message, seconds = _timed(decks[sender].step)
        spent[sender] += seconds
        slowest = 0.0
        for deck in decks:
            if deck.me != sender:
                _, took = _timed(deck.receive, message)
                spent[deck.me] += took
                slowest = max(slowest, took)
        critical += seconds + slowest
    opening = [0.0] * parties
    for position in range(size):
        owner = position % parties
        for deck in decks:
            if deck.me != owner:
                release, seconds = _timed(deck.release, position, owner)
                spent[deck.me] += seconds
                _, took = _timed(decks[owner].receive, release)
                opening[owner] += took
        _, took = _timed(decks[owner].open, position)
        opening[owner] += took
    for party in range(parties):
        spent[party] += opening[party]
    critical += max(opening)
    operations = curve.Multiplier.operations - before
    reveals = {deck.me: deck.secrets() for deck in decks}
    verdict, audit_seconds = _timed(audit_deck, decks[0], reveals)
    if not verdict.ok:
        raise AssertionError(f"an honest bench deal failed its audit: {verdict}")
    return critical, sum(spent), audit_seconds, setup, operations


def bench_deck(seconds: float = 2.0, seed: int = 1) -> list[Record]:
    """Best of several deals per table size (the least disturbed by other work)."""
    records: list[Record] = []
    rounds = max(3, round(seconds * 2))
    for parties, size in TABLES:
        results = [deck_round(parties, size, deal, f"bench:{seed}:{deal}")
                   for deal in range(rounds)]
        tag = f"{size}x{parties}"
        def best(k: int, results: list[tuple[float, float, float, float, int]] = results
                 ) -> float:
            return round(1000 * min(r[k] for r in results), 1)

        records += [
            Record(f"deck.shuffle_lock_deal.{tag}", best(0), "ms"),
            Record(f"deck.shuffle_lock_deal.{tag}.all_parties", best(1), "ms"),
            Record(f"deck.audit.{tag}", best(2), "ms"),
            Record(f"deck.setup.{tag}", best(3), "ms"),
            Record(f"deck.multiplications.{tag}.over_floor",
                   round(results[0][4] / (2 * parties * size), 3), "x"),
        ]
    return records
