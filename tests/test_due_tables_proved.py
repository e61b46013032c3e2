"""The tables of docs/protocol.md, "What is due with the proved deck, game by game",
against play, as tests/test_due_tables.py checks today's deck's.

The test reads the *step*, *from* and *kind* columns of every table in that section,
plays one deal of each game on the in-process table with seeded bots under both rules
of the proved deck (``proved`` and ``proved-pipelined``), works out where each group
falls from the deal's public hand-history entry by the rules of the *due* column (the
same schedules as today's deck's tables), and compares, one message at a time, the
(kind, sender) of every message the table took.  For each ``pshares`` it also compares
the recipients of its grants, in order, and how many slots it shows to everyone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from p2pcards.table.codec import Envelope
from p2pcards.table.kinds import Kind, ProvedAgree, ProvedShares, decode_body
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import AGREED_DECK, PIPELINED_DECK, PROVED_DECK
from tests.test_due_tables import (
    BLIND_ROUND,
    SCHEDULES,
    Expand,
    Moment,
    Row,
    accepted,
    compare,
    expander,
    known,
    play,
    seats_from,
)
from tests.test_due_tables import due_tables as read_tables

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"
SECTION = "### What is due with the proved deck, game by game"
TITLES = {"bidwhist": "Bid Whist with the proved deck",
          "controlnut": "Control Nut! with the proved deck",
          "nullern": "Nullern with the proved deck", "pasur": "Pasur with the proved deck"}
DECKS = [PROVED_DECK, PIPELINED_DECK]
EVERYONE = "everyone"


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{SECTION}\n")
    ends = [i for i in (text.find("\n## ", start + 1), text.find("\n### ", start + 1))
            if i >= 0]
    return text[start:min(ends)]


def due_tables() -> dict[str, list[Row]]:
    return read_tables(section())


SENDERS: dict[str, Callable[[Moment], list[int]]] = {
    "every seat, in seat order": lambda m: list(range(m.players)),
    "every signer, in seat order": lambda m: list(range(m.players)),  # (nobody forfeits)
    "every seat, from seat d mod N": lambda m: seats_from(m, m.deal),
    "every seat, from seat (d + 1) mod N": lambda m: seats_from(m, m.deal + 1),
    "every seat but the taker, in seat order":
        lambda m: [s for s in range(m.players) if s != known(m.taker)],
    "every seat but the victim, in seat order":
        lambda m: [s for s in range(m.players) if s != known(m.victim)],
    "seat (D + 1) mod N": lambda m: [(m.dealer + 1) % m.players],
    "the dealer": lambda m: [m.dealer],
    "the seat to move": lambda m: [known(m.mover)],
    "the taker": lambda m: [known(m.taker)],
    "the victim": lambda m: [known(m.victim)],
    "the thief": lambda m: [known(m.thief)],
}

Content = tuple[tuple[int | str, ...], int]
"""A ``pshares`` as the test compares it: its grants' recipients in order (``everyone``
or a seat), and how many slots it shows to everyone."""


def others(m: Moment, sender: int) -> tuple[int, ...]:
    return tuple(s for s in range(m.players) if s != sender)


def nullern_deal(m: Moment, s: int) -> Content:
    return ((EVERYONE,), 1) if m.blind else ((EVERYONE, *others(m, s)), 1)


SHARES: dict[tuple[str, str], Callable[[Moment, int], Content]] = {
    ("Bid Whist", "deal 4"): lambda m, s: (others(m, s), 0),
    ("Bid Whist", "kitty 1"): lambda m, s: ((known(m.taker),), 0),
    ("Bid Whist", "kitty 4"): lambda m, s: ((known(m.taker),), 0),
    ("Control Nut!", "deal 4"): lambda m, s: (others(m, s), 0),
    ("Control Nut!", "steal 2"): lambda m, s: ((known(m.victim),), 0),
    ("Control Nut!", "steal 5"): lambda m, s: ((known(m.thief),), 0),
    ("Nullern", "deal 4"): nullern_deal,
    ("Nullern", "blind 1"): lambda m, s: ((EVERYONE,), 1),
    ("Pasur", "deal 4"): lambda m, s: ((EVERYONE, *others(m, s)), 4),
    ("Pasur", "jack 1"): lambda m, s: ((EVERYONE,), 1),
    ("Pasur", "refill 1"): lambda m, s: (others(m, s), 0),
}
"""What each ``pshares`` row's content column says, per sender."""


expand = expander(SENDERS, Kind.PROVED_SHARES, SHARES,
                  lambda title: title.removesuffix(" with the proved deck"))
"""The messages the proved deck's tables give for the groups of a schedule, in order."""


def pshares(env: Envelope) -> Content | None:
    """What the test compares of a ``pshares``: its grants' recipients in order and how
    many slots it shows to everyone."""
    if env.kind != Kind.PROVED_SHARES:
        return None
    message = decode_body(env.kind, env.body, env.sender)
    assert isinstance(message, ProvedShares)
    return (tuple(EVERYONE if s.to is None else s.to for s in message.shares),
            sum(len(s.slots) for s in message.shares if s.to is None))


def check_deals(table: MemoryTable, game: str, *, round_: int = 1) -> list[str]:
    run = table.sessions[0].finished[0]
    assert run.verdict in ("ok", "void: jacks in the opening pool")
    players = table.players  # (the opening as today's deck has it: its own test)
    return compare(table, game, due_tables()[TITLES[game]], TITLES[game], round_=round_,
                   opening=lambda base: [(kind, s, None) for kind in ("sign", "commit", "share")
                                         for s in range(players)],
                   rows_as=expand, got=accepted(table, pshares))


def groups(game: str) -> set[str]:
    return {row.group for row in due_tables()[TITLES[game]]}


def test_every_table_is_read_and_every_phrase_known() -> None:
    tables = due_tables()
    assert set(tables) == set(TITLES.values())
    for title, rows in tables.items():
        assert rows, title
        assert Kind.AUDIT not in {row.kind for row in rows}
        for row in rows:
            assert row.sender in SENDERS, f"{title}, {row.group}: {row.sender!r}"


@pytest.mark.parametrize("deck", DECKS)
def test_bid_whist_deal(deck: str) -> None:
    used = check_deals(play("bidwhist", 4, 1, deck=deck), "bidwhist")
    assert set(used) == groups("bidwhist")


@pytest.mark.parametrize("deck", DECKS)
def test_control_nut_deal(deck: str) -> None:
    """Seed 1, deal 1: two HAND steals."""
    used = check_deals(play("controlnut", 4, 1, deck=deck), "controlnut")
    assert set(used) == groups("controlnut")
    assert used.count("steal") == 2 and used.count("draw") >= 5


@pytest.mark.parametrize("deck", DECKS)
@pytest.mark.parametrize("round_", [3, BLIND_ROUND])
def test_nullern_deal(deck: str, round_: int) -> None:
    table = play("nullern", 2, 5, deck=deck, number=round_ - 1)
    used = check_deals(table, "nullern", round_=round_)
    assert ("blind" in used) == (round_ == BLIND_ROUND)
    if round_ == BLIND_ROUND:
        assert set(used) == groups("nullern")


@pytest.mark.parametrize("deck", DECKS)
def test_pasur_deal(deck: str) -> None:
    """Seed 12 at three seats, deal 1: one jack in the opening pool (the stock
    reshuffled from seat 2), then refills."""
    used = check_deals(play("pasur", 3, 12, deck=deck), "pasur")
    assert set(used) == groups("pasur")
    assert used.count("refill") == 3


@pytest.mark.parametrize(("seed", "jack_shown"), [(4, False), (12, True)])
def test_pasur_void_deals(seed: int, jack_shown: bool) -> None:
    """At two seats, deal 0: seed 4 has two jacks in the opening pool; seed 12 one jack,
    replaced by a jack."""
    table = play("pasur", 2, seed, deck=PIPELINED_DECK, deal=0)
    run = table.sessions[0].finished[0]
    assert run.outcome is not None and run.outcome.void
    used = check_deals(table, "pasur")
    assert used == ["deal", *(["jack"] if jack_shown else []), "end"]


# ------------------------------------------------------------------ shares on the agreement

AGREED_KINDS = {Kind.ACT: Kind.PROVED_MOVE, Kind.PROVED_ACT: Kind.PROVED_MOVE,
                Kind.AGREE: Kind.PROVED_AGREE}
"""The kinds a ``proved-ahead-2`` table sends where the tables name these."""


def as_agreed(rows_as: Expand) -> Expand:
    """The tables' messages as a ``proved-ahead-2`` table sends them in a deal whose deck
    no deal before prepared (the game's first): the differences the section states, no
    ``hello``, no ``opened``, every move a ``pmove``, the agreement ``pagree``s."""
    def expand(title: str, rows: list[Row], schedule: list[tuple[str, Moment]]) -> list[Any]:
        return [(AGREED_KINDS.get(kind, kind), seat, content)
                for kind, seat, content in rows_as(title, rows, schedule)
                if kind not in (Kind.HELLO, Kind.OPENED)]
    return expand


@pytest.mark.parametrize(("game", "players", "seed"), [
    ("bidwhist", 4, 1), ("controlnut", 4, 1), ("pasur", 3, 12)])
def test_the_first_deal_at_a_table_with_shares_on_the_agreement(
        game: str, players: int, seed: int) -> None:
    """The game's first deal at a ``proved-ahead-2`` table follows the tables with the
    differences the section states; the next deal, its deck carried on those moves,
    begins with the first signer's ``pshares`` alone, the others' having come on their
    ``pagree``s: exactly the grants the tables' first ``pshares`` row gives each."""
    table = play(game, players, seed, deck=AGREED_DECK)
    session = table.sessions[0]
    run = session.finished[0]
    title = TITLES[game]
    first = [item for item, env in zip(accepted(table, pshares), session.transcript,
                                       strict=True) if env.deal <= run.index]
    record = run.outcome.record if run.outcome is not None else None
    assert record is not None
    base = Moment(players, run.index, record.dealer)
    schedule = [("deal", base), *SCHEDULES[game](record, base), ("end", base)]
    want = [(kind, s, None) for kind in ("sign", "commit", "share") for s in range(players)]
    want += as_agreed(expand)(title, due_tables()[title], schedule)
    assert first == want
    # the next deal: its deal row's shares, every signer's but seat 0's on its pagree
    dealer = (record.dealer + 1) % players
    rows = due_tables()[title]
    deal_rows = expand(title, rows, [("deal", Moment(players, run.index + 1, dealer))])
    shares_due = [(s, content) for kind, s, content in deal_rows if kind == Kind.PROVED_SHARES]
    carried = {}
    for env in session.transcript:
        if env.deal == run.index and env.kind == Kind.PROVED_AGREE:
            message = decode_body(env.kind, env.body, env.sender)
            assert isinstance(message, ProvedAgree)
            if message.shares is not None:
                carried[env.sender] = (tuple(EVERYONE if s.to is None else s.to
                                             for s in message.shares.shares),
                                       sum(len(s.slots) for s in message.shares.shares
                                           if s.to is None))
    assert carried == {s: content for s, content in shares_due if s != 0}
    nxt = [(str(env.kind), env.sender, pshares(env)) for env in session.transcript
           if env.deal == run.index + 1]
    assert nxt[0] == (Kind.PROVED_SHARES, 0, dict(shares_due)[0])
    assert nxt[1][0] in (Kind.PROVED_MOVE, Kind.COMMIT)  # the first move, or a draw's
