"""``p2pcards bench table``: the time of a whole deal at an in-memory table, split by layer.

Four sessions play whole deals in one process (heuristic bots in every seat),
so the times are the compute of all four peers together, with no network.
Each game is measured with both decks: today's (records ``table.GAME.*``, the
names they have always had) and the proved deck (``table.proved.GAME.*``).
Every call into a layer is timed *exclusively* (a call into another layer
pauses it), which splits each deal into:

* **crypto**: the deck's curve work (today's deck: multiplications, point
  decompression, hashing to points, commitments and digests; the proved deck:
  everything its state machine does, the proofs made and checked, and every
  point operation wherever it is asked for, decoding included), Ed25519
  signing and verification, HPKE sealing and opening (each also on its own);
* **codec**: msgpack packing and unpacking, message bodies to and from maps;
* **engine**: the game's deal states (moves checked and applied in every view,
  the audit's full replay);
* **bots**: the heuristic bots' decisions;
* **session**: the rest (the session's own bookkeeping, the audit's control).

The wrappers cost about a microsecond a call; the split is a guide, the total
is the measurement.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from p2pcards.bench.record import Record
from p2pcards.bots import heuristic_bot
from p2pcards.games import GAMES
from p2pcards.protocol import audit, curve, deck, steps
from p2pcards.protocol.proved import group
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.table import codec, kinds
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import LOCK_DECK, PIPELINED_DECK

LAYERS = ("crypto", "codec", "engine", "bots", "session")
CRYPTO = ("curve", "signatures", "sealing")


class Split:
    """Exclusive time per layer: a stack of (layer, since)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.stack: list[list[Any]] = [["session", time.perf_counter()]]

    def wrap(self, layer: str, function: Callable[..., Any]) -> Callable[..., Any]:
        stack, spent = self.stack, self.spent

        def timed(*args: Any, **kwargs: Any) -> Any:
            now = time.perf_counter()
            top = stack[-1]
            spent[top[0]] += now - top[1]
            stack.append([layer, now])
            try:
                return function(*args, **kwargs)
            finally:
                end = time.perf_counter()
                inner = stack.pop()
                spent[inner[0]] += end - inner[1]
                stack[-1][1] = end
        return timed

    def close(self) -> None:
        now = time.perf_counter()
        top = self.stack[-1]
        self.spent[top[0]] += now - top[1]
        top[1] = now


@contextmanager
def instrumented(split: Split, game: str) -> Iterator[None]:
    """Wrap the layers' entry points for the duration."""
    rules = GAMES[game]
    players = rules.default_players
    options = rules.resolve_options({})
    state_class = type(rules.deal(rules.deck(players, options), 0, players, options))
    targets: list[tuple[Any, str, str]] = [
        (curve.Multiplier, "times", "curve"),
        (curve.Multiplier, "__init__", "curve"), (curve, "lift", "curve"),
        (steps, "lift", "curve"), (curve, "hash_to_point", "curve"),
        (curve, "inverse", "curve"), (steps.DeckContext, "commitment", "curve"),
        (codec, "_sign", "signatures"), (codec, "_verify", "signatures"),
        (codec, "_encrypt", "sealing"), (codec, "_decrypt", "sealing"),
        (codec, "pack", "codec"), (codec, "unpack", "codec"),
        (kinds, "decode_body", "codec"), (kinds, "encode_body", "codec"),
    ]
    modules = (steps, deck, audit)
    targets += [(module, name, "curve") for module in modules
                for name in ("lift_deck", "shuffle_deck", "rekey_deck", "deck_digest")
                if name in vars(module)]
    targets += [(state_class, name, "engine") for name in (
        "apply", "check", "step", "clone", "parse_action", "format_action", "observe",
        "legal_actions", "knowledge", "penalize", "points")]
    targets += [(type(GAMES[game]), name, "engine") for name in ("deal", "observed_deck")]
    # the proved deck: its state machine (proofs made and checked) and every point
    # operation of libsecp256k1's bindings, wherever the table asks for one
    targets += [(ProvedDeck, name, "curve") for name, value in vars(ProvedDeck).items()
                if callable(value) and (name == "__init__" or not name.startswith("__"))]
    targets += [(type(group.G.key), name, "curve")  # (the bindings' point class)
                for name in ("__init__", "multiply", "combine_keys", "from_secret", "format")]
    saved = [(owner, name, vars(owner).get(name)) for owner, name, _ in targets]
    try:
        for owner, name, layer in targets:
            original = vars(owner).get(name)
            if isinstance(original, classmethod):  # (wrapped as one, so that it stays one)
                setattr(owner, name, classmethod(split.wrap(layer, original.__func__)))
            else:
                setattr(owner, name, split.wrap(layer, getattr(owner, name)))
        yield
    finally:
        for owner, name, original in saved:
            if original is None:  # inherited: the base class's method shows again
                delattr(owner, name)
            else:
                setattr(owner, name, original)


@dataclass
class TableRun:
    """Whole deals of one game at the in-memory table, and where their time went."""

    game: str
    deals: int
    total: float
    spent: dict[str, float]
    messages: int
    bytes: int


def table_deals(game: str, seconds: float, seed: int = 1, deck: str = LOCK_DECK) -> TableRun:
    """Play whole deals with ``deck`` for about ``seconds`` (at least two) and split
    their time."""
    split = Split()
    bot = split.wrap("bots", heuristic_bot)
    deals = messages = sent = 0
    start = time.perf_counter()
    with instrumented(split, game):
        game_number = 0
        table = None
        while deals < 2 or time.perf_counter() - start < seconds:
            if table is None or table.sessions[0].over:
                if table is not None:
                    messages += table.messages
                    sent += table.bytes_sent
                players = GAMES[game].default_players
                table = MemoryTable(game, players, f"bench:{seed}:{game_number}",
                                    [bot] * players, deck=deck)
                game_number += 1
            split.stack[:] = [["session", time.perf_counter()]]
            table.play(deals=len(table.sessions[0].finished) + 1)
            split.close()
            deals += 1
        assert table is not None
        messages += table.messages
        sent += table.bytes_sent
    total = sum(split.spent.values())
    return TableRun(game, deals, total, dict(split.spent), messages, sent)


PREFIXES = {LOCK_DECK: "table", PIPELINED_DECK: "table.proved"}
"""Where each deck's records are named: today's keep the names they were published
under (``table.bidwhist.deal``), the proved deck's say so (``table.proved.bidwhist.deal``)."""


def bench_table(seconds: float = 2.0, seed: int = 1,
                decks: tuple[str, ...] = (LOCK_DECK, PIPELINED_DECK)) -> list[Record]:
    """Every game's deals with each of ``decks``, game by game (the two decks' figures of
    one game taken minutes apart at most, on a machine whose load drifts)."""
    records: list[Record] = []
    for game in GAMES:
        for deck_name in decks:
            records += _deal_records(table_deals(game, seconds, seed, deck_name),
                                     f"{PREFIXES[deck_name]}.{game}")
    return records


def _deal_records(result: TableRun, name: str) -> list[Record]:
    deals = result.deals

    def per_deal(value: float) -> float:
        return round(value / deals, 1)

    records = [Record(f"{name}.deal", per_deal(1000 * result.total), "ms")]
    spent = result.spent
    spent["crypto"] = sum(spent.get(part, 0.0) for part in CRYPTO)
    for layer in LAYERS:
        records.append(Record(f"{name}.deal.{layer}", per_deal(1000 * spent.get(layer, 0.0)),
                              "ms"))
        if layer == "crypto":
            records += [Record(f"{name}.deal.crypto.{part}",
                               per_deal(1000 * spent.get(part, 0.0)), "ms")
                        for part in CRYPTO]
    records.append(Record(f"{name}.messages_per_deal", per_deal(result.messages), "msgs"))
    records.append(Record(f"{name}.bytes_per_deal", per_deal(result.bytes / 1024), "KiB"))
    return records
