"""The tables of docs/protocol.md, "What is due, game by game", against play.

The test reads the *step*, *from* and *kind* columns of every table in that
section. It plays one deal of each game on the in-process table with seeded
bots. It then works out, from the audited hand history of that deal, where
each group of rows falls, by the rules the tables' *due* column states. It
expands each row's *from* phrase into seats and compares the result, one
message at a time, with the (kind, sender) of every message the table
accepted. For each `keys`, it also compares the seats its sealed parts go to
and how many keys it shows in the clear. A phrase, step or kind the test does
not know fails it: the doc and this file change together.

The tables are today's deck's (lock passes, keys, the audit): the table here deals
with it (``deck=LOCK_DECK``); the proved deck's messages are in "The proved deck at
the table" and tests/test_table_proved.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.history import HandRecord
from p2pcards.table.codec import Envelope, open_envelope
from p2pcards.table.kinds import Kind
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import LOCK_DECK
from tests.table_helpers import envelope

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"
SECTION = "### What is due, game by game"
HEADER = ["step", "from", "kind", "content", "due"]
TITLES = {"bidwhist": "Bid Whist", "controlnut": "Control Nut!", "nullern": "Nullern",
          "pasur": "Pasur"}
BLIND_ROUND = 20


# ------------------------------------------------------------------ the doc


@dataclass(frozen=True)
class Row:
    """One row of a due table: its step (group and number), who sends, which kind."""

    group: str
    number: int
    """The step's number in its group (0 for a step that is one row)."""
    sender: str
    """The *from* column, its code spans unmarked."""
    kind: str


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{SECTION}\n")
    return text[start:text.index("\n## ", start)]


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().removeprefix("|").removesuffix("|")
            .split("|")]


def due_tables(text: str | None = None) -> dict[str, list[Row]]:
    """Each table of the section (or of ``text``, another section) by its heading (only
    tables whose header is :data:`HEADER`)."""
    tables: dict[str, list[Row]] = {}
    heading = ""
    rows: list[Row] | None = None
    for line in (section() if text is None else text).splitlines():
        if line.startswith("#### "):
            heading, rows = line.removeprefix("#### ").strip(), None
            continue
        if not line.startswith("|"):
            rows = None
            continue
        row = cells(line)
        if row == HEADER:
            assert heading not in tables, f"two due tables under {heading!r}"
            rows = tables[heading] = []
            continue
        if rows is None or set(line) <= set("|- "):
            continue
        step, sender, kind = row[0], row[1], row[2]
        named = re.fullmatch(r"(.+?)(?: (\d+))?", step)
        quoted = re.fullmatch(r"`(\w+)`", kind)
        assert named is not None and quoted is not None, f"{heading}: row {line!r}"
        assert quoted[1] in set(Kind), f"{heading}: no message kind {quoted[1]!r}"
        rows.append(Row(named[1], int(named[2] or 0), sender.replace("`", ""), quoted[1]))
    return tables


# --------------------------------------------------------------- the phrases


@dataclass(frozen=True)
class Moment:
    """What a *from* phrase refers to where a group falls in a deal."""

    players: int
    deal: int
    """d: the deal's number at the table (void deals counted)."""
    dealer: int
    """D."""
    blind: bool = False
    """Nullern's blind round."""
    mover: int | None = None
    taker: int | None = None
    victim: int | None = None
    thief: int | None = None


def known(seat: int | None) -> int:
    assert seat is not None, "a phrase names a seat this point of the deal does not have"
    return seat


def seats_from(m: Moment, first: int) -> list[int]:
    return [(first + i) % m.players for i in range(m.players)]


SENDERS: dict[str, Callable[[Moment], list[int]]] = {
    "every seat, in seat order": lambda m: list(range(m.players)),
    "every signer, in seat order": lambda m: list(range(m.players)),  # (nobody forfeits)
    "every seat, from seat d mod N": lambda m: seats_from(m, m.deal),
    "every seat, from seat (d + 1) mod N": lambda m: seats_from(m, m.deal + 1),
    "every seat but the taker, in seat order":
        lambda m: [s for s in range(m.players) if s != known(m.taker)],
    "every seat but the proposer, from the proposer's left":
        lambda m: seats_from(m, known(m.mover) + 1)[:-1],
    "seat (D + 1) mod N": lambda m: [(m.dealer + 1) % m.players],
    "the dealer": lambda m: [m.dealer],
    "the seat to move": lambda m: [known(m.mover)],
    "the taker": lambda m: [known(m.taker)],
    "the victim": lambda m: [known(m.victim)],
    "the thief": lambda m: [known(m.thief)],
}
"""Every *from* phrase of the tables: the seats that send, in order."""


def others(m: Moment, sender: int) -> tuple[int, ...]:
    return tuple(s for s in range(m.players) if s != sender)


Content = tuple[tuple[int, ...], int]
"""A ``keys`` message as the test compares it: the seats its sealed parts go to, and
how many keys it shows in the clear."""

KEYS: dict[tuple[str, str], Callable[[Moment, int], Content]] = {
    ("Bid Whist", "deal 4"): lambda m, s: (others(m, s), 0),
    ("Bid Whist", "kitty 1"): lambda m, s: ((known(m.taker),), 0),
    ("Control Nut!", "deal 4"): lambda m, s: (others(m, s), 0),
    ("Control Nut!", "steal 4"): lambda m, s: ((known(m.thief),), 0),
    ("Nullern", "deal 4"): lambda m, s: (() if m.blind else others(m, s), 1),
    ("Nullern", "blind 1"): lambda m, s: ((), 1),
    ("Pasur", "deal 4"): lambda m, s: (others(m, s), 4),
    ("Pasur", "jack 1"): lambda m, s: ((), 1),
    ("Pasur", "refill 1"): lambda m, s: (others(m, s), 0),
}
"""What each ``keys`` row's content column says, per sender."""


def expander(senders: dict[str, Callable[[Moment], list[int]]], kind: Kind,
             contents: dict[tuple[str, str], Callable[[Moment, int], Any]],
             table: Callable[[str], str] = lambda title: title) -> Expand:
    """The messages a deck's due tables give for a schedule of groups: each row's
    ``senders`` phrase as its seats, and a message of ``kind`` with its ``contents`` (the
    content column, by the ``table`` a title names and the step)."""
    def expand(title: str, rows: list[Row], schedule: list[tuple[str, Moment]]) -> list[Any]:
        out: list[Any] = []
        for group, moment in schedule:
            steps = [row for row in rows if row.group == group]
            assert steps, f"{title}: the table has no step {group!r}"
            assert [row.number for row in steps] in ([0], list(range(1, len(steps) + 1))), \
                f"{title}: the steps of {group!r} are not numbered 1, 2, … in order"
            for row in steps:
                assert row.sender in senders, f"{title}: an unknown phrase {row.sender!r}"
                name = f"{row.group} {row.number}" if row.number else row.group
                for seat in senders[row.sender](moment):
                    content = None
                    if row.kind == kind:
                        where = (table(title), name)
                        assert where in contents, f"{title}: no content check for {name!r}"
                        content = contents[where](moment, seat)
                    out.append((row.kind, seat, content))
        return out
    return expand


Expand = Callable[[str, list[Row], list[tuple[str, Moment]]], list[Any]]
"""A due table's rows, for a schedule of its groups, as the messages they make."""
expand = expander(SENDERS, Kind.KEYS, KEYS)
"""The messages today's deck's tables give for the groups of a schedule, in order."""


# ------------------------------------------------- where the groups fall in a deal


def moves(record: HandRecord, base: Moment) -> Iterator[tuple[str, Moment]]:
    """Every move of the record (chance moves left out): ``first move``, then ``move``."""
    first = True
    for actor, _text in record.actions:
        if isinstance(actor, int):
            yield ("first move" if first else "move"), replace(base, mover=actor)
            first = False


def bidwhist(record: HandRecord, base: Moment) -> Iterator[tuple[str, Moment]]:
    """The kitty after the auction's fourth move (the dealer's); the taker is the seat
    that declares next."""
    taker = record.actions[4][0]
    assert isinstance(taker, int)
    for i, point in enumerate(moves(record, base)):
        yield point
        if i == 3:
            yield "kitty", replace(base, taker=taker)


def controlnut(record: HandRecord, base: Moment) -> Iterator[tuple[str, Moment]]:
    """A draw before each chance move that is not a steal; a steal's group for each
    `steal` (the thief: the seat that played HAND last)."""
    first, thief = True, None
    for actor, text in record.actions:
        if not isinstance(actor, int):
            if text.startswith("steal "):
                yield "steal", replace(base, victim=int(text.split()[1]), thief=thief)
            else:
                yield "draw", base
            continue
        if text == "play HAND":
            thief = actor
        yield ("first move" if first else "move"), replace(base, mover=actor)
        first = False


def nullern(record: HandRecord, base: Moment) -> Iterator[tuple[str, Moment]]:
    """In the blind round, the blind group before each `play`."""
    for (_, text), (group, moment) in zip(record.actions, moves(record, base), strict=True):
        if base.blind and text.startswith("play "):
            yield "blind", moment
        yield group, moment


def pasur(record: HandRecord, base: Moment) -> Iterator[tuple[str, Moment]]:
    """The opening pool's jacks (the record's deck: hands, pool, stock); a refill after
    every 4N-th move while the stock holds cards."""
    n = base.players
    jacks = [card.startswith("J") for card in record.deck[4 * n:4 * n + 5]]
    if sum(jacks[:4]) >= 2:
        return  # void at once
    if sum(jacks[:4]) == 1:
        yield "jack", base
        if jacks[4]:
            return  # a jack replaced by a jack: void
        yield "reshuffle", base
    refills = (48 - 4 * n) // (4 * n)
    for i, point in enumerate(moves(record, base), 1):
        yield point
        if i % (4 * n) == 0 and i // (4 * n) <= refills:
            yield "refill", base


SCHEDULES: dict[str, Callable[[HandRecord, Moment], Iterator[tuple[str, Moment]]]] = {
    "bidwhist": bidwhist, "controlnut": controlnut, "nullern": nullern, "pasur": pasur}


# ------------------------------------------------------------------ play


def play(game: str, players: int, seed: int, *, deal: int = 1, number: int = 0,
         deck: str = LOCK_DECK) -> MemoryTable:
    """One deal (and the next deal's opening, if the game goes on), played as the table's
    deal ``deal`` (d: 1 by default, so that "in seat order" and "from seat d mod N"
    name different orders) and the match's deal ``number`` (Nullern's round, less
    one), as if the deals before had been played; with ``deck``."""
    table = MemoryTable(game, players, seed, [heuristic_bot] * players, deck=deck)
    for session in table.sessions:  # (before the first dealer is drawn: nothing dealt yet)
        session.machine.deals = deal
        session.machine.scored = number
    table.play(deals=1)
    assert table.rejected == []
    assert len({session.hash for session in table.sessions}) == 1
    return table


def sealed_keys(env: Envelope) -> Content | None:
    """What the test compares of a ``keys``: the seats of its sealed parts and how many
    keys it shows."""
    if env.kind != Kind.KEYS:
        return None
    return tuple(r for r, _ in env.body["sealed"]), len(env.body["public"])


def accepted(table: MemoryTable, content: Callable[[Envelope], Any] = sealed_keys
             ) -> list[tuple[str, int, Any]]:
    """Every message the table took, in order: (kind, sender, and its ``content``: for
    ``keys``, :func:`sealed_keys`)."""
    return [(str(env.kind), env.sender, content(env)) for env in table.sessions[0].transcript]


def check_deals(table: MemoryTable, game: str, *, round_: int = 1) -> list[str]:
    """The table's messages against the doc's: the table's opening, the deal played and
    the next deal's opening rows; the groups the deal used."""
    tables = due_tables()
    return compare(table, game, tables[TITLES[game]], TITLES[game], round_=round_,
                   opening=lambda base: expand("Before the first deal",
                                               tables["Before the first deal"],
                                               [("seating", base), ("first dealer", base)]),
                   rows_as=expand, got=accepted(table))


def compare(table: MemoryTable, game: str, rows: list[Row], title: str, *, round_: int,
            opening: Callable[[Moment], list[Any]], rows_as: Expand,
            got: list[Any]) -> list[str]:
    """The messages the table took (``got``) against what the doc's ``rows`` of ``title``
    make of its first deal (``rows_as``), after ``opening``, then the next deal's opening
    rows if the game goes on; the groups the deal used (either deck's due tables)."""
    session = table.sessions[0]
    run = session.finished[0]
    assert run.outcome is not None
    record = run.outcome.record
    players, deal = table.players, run.index
    base = Moment(players, deal, record.dealer, blind=round_ == BLIND_ROUND)
    schedule = [("deal", base), *SCHEDULES[game](record, base), ("end", base)]
    want = opening(base) + rows_as(title, rows, schedule)
    if session.over:
        assert got == want
    else:
        dealer = record.dealer if run.outcome.void else (record.dealer + 1) % players
        assert session.run is not None and session.run.dealer == dealer
        want += rows_as(title, rows, [("deal", Moment(players, deal + 1, dealer))])
        assert got[:len(want)] == want
    return [group for group, _ in schedule]


def groups(game: str) -> set[str]:
    return {row.group for row in due_tables()[TITLES[game]]}


# ------------------------------------------------------------------ the tests


def test_every_table_is_read_and_every_phrase_known() -> None:
    tables = due_tables()
    assert set(tables) == {"Before the first deal", *TITLES.values(), "In place of a move"}
    for title, rows in tables.items():
        assert rows, title
        for row in rows:
            assert row.sender in SENDERS, f"{title}, {row.group}: {row.sender!r}"


def test_every_requirement_names_a_test_of_this_file() -> None:
    names = re.findall(r"tests/test_due_tables\.py::(\w+)", section())
    items = re.findall(r"^- \*\*G(\d+)\.\*\*", section(), re.MULTILINE)
    assert items == [str(i) for i in range(1, len(items) + 1)] and len(items) >= 10
    for line in section().splitlines():
        if line.startswith("- **G"):
            assert "tests/test_due_tables.py::" in line, line
    assert names and all(callable(globals().get(name)) for name in names), names


def test_bid_whist_deal() -> None:
    table = play("bidwhist", 4, 1)
    used = check_deals(table, "bidwhist")
    assert set(used) == groups("bidwhist")


def test_control_nut_deal() -> None:
    table = play("controlnut", 4, 1)  # seed 1: two HAND steals in deal 1
    used = check_deals(table, "controlnut")
    assert set(used) == groups("controlnut")
    assert used.count("steal") >= 1 and used.count("draw") >= 5  # controls, 4 auctions


@pytest.mark.parametrize(("players", "round_"), [(2, 3), (2, BLIND_ROUND)])
def test_nullern_deal(players: int, round_: int) -> None:
    table = play("nullern", players, 5, number=round_ - 1)
    used = check_deals(table, "nullern", round_=round_)
    assert ("blind" in used) == (round_ == BLIND_ROUND)
    if round_ != BLIND_ROUND:
        return
    assert set(used) == groups("nullern") and table.sessions[0].over
    # each blind card is played from the one slot every seat's keys just showed
    envelopes = table.sessions[0].finished[0].envelopes
    plays = [i for i, env in enumerate(envelopes) if env.kind == Kind.ACT
             and str(env.body["action"]).startswith("play ")]
    assert len(plays) == players
    for i in plays:
        shown = {slot for env in envelopes[i - players:i] for slot, _ in env.body["public"]}
        ((slot, _),) = envelopes[i].body["shown"]
        assert shown == {slot}


def test_pasur_deal() -> None:
    """Seed 6 at three seats, deal 1: one jack in the opening pool (the extra card, the
    stock reshuffled from seat 2), then three refills."""
    table = play("pasur", 3, 6)
    used = check_deals(table, "pasur")
    assert set(used) == groups("pasur")
    assert used.count("refill") == 3


@pytest.mark.parametrize(("seed", "jack_shown"), [(18, False), (22, True)])
def test_pasur_void_deals(seed: int, jack_shown: bool) -> None:
    """At two seats: seed 18 has two jacks in the opening pool; seed 22 one jack,
    replaced by a jack. Either way the deal goes to its audit with no move, and the
    same dealer deals deal 1 (its deck rotated on by one seat)."""
    table = play("pasur", 2, seed, deal=0)
    run = table.sessions[0].finished[0]
    assert run.outcome is not None and run.outcome.void
    used = check_deals(table, "pasur")
    assert used == ["deal", *(["jack"] if jack_shown else []), "end"]


def test_keys_out_of_seat_order_are_refused() -> None:
    """While seat 1's `keys` of the deal is due, seat 2's, built on the same transcript,
    is not taken: the deal's keys go in seat order, one at a time."""
    roster = MemoryTable("bidwhist", 4, 1, [heuristic_bot] * 4,
                         deck=LOCK_DECK).sessions[0].roster

    def hold_seat_1(sender: int, wire: bytes) -> list[bytes]:
        kind = open_envelope(wire, roster.keys).kind
        return [] if (sender, kind) == (1, Kind.KEYS) else [wire]

    table = MemoryTable("bidwhist", 4, 1, [heuristic_bot] * 4, tamper=hold_seat_1,
                        deck=LOCK_DECK)
    table.deliver()
    receiver, early = table.sessions[0], table.sessions[2]
    assert receiver.due() == early.due()
    due = receiver.due()
    assert due is not None and (due.kind, due.seat) == (Kind.KEYS, 1)
    assert early.hash == receiver.hash
    wire = envelope(early, "keys", {"sealed": [], "public": []})
    rejection = receiver.receive(wire)
    assert rejection is not None and rejection.rule == "turn"
    assert "keys from seat 1 is due" in rejection.reason
    assert receiver.due() == due


@pytest.mark.parametrize("agree", [True, False])
def test_a_vote_to_void(agree: bool) -> None:
    """The seat to move proposes to void the deal in place of its move; the others answer
    from its left. All yes: the audits are due. A no: nobody else answers, and the
    proposer moves."""
    tables = due_tables()
    table = MemoryTable("bidwhist", 4, 2, [heuristic_bot] * 4, consent=agree,
                        deck=LOCK_DECK)
    table.deliver()
    step = table.sessions[0].due()
    assert step is not None and step.kind == Kind.ACT
    proposer = step.seat
    before = len(accepted(table))
    table.sessions[proposer].propose_void("a test")
    base = Moment(4, 0, table.sessions[0].run.dealer if table.sessions[0].run else -1,
                  mover=proposer)
    vote = expand("In place of a move", tables["In place of a move"], [("vote", base)])
    if agree:
        table.play(deals=1)
        rest = expand("Bid Whist", tables["Bid Whist"], [("end", base)])
        assert accepted(table)[before:before + len(vote) + len(rest)] == vote + rest
        run = table.sessions[0].finished[0]
        assert run.outcome is not None and run.outcome.void
    else:
        while len(accepted(table)) < before + 3 and table.step():
            pass
        no = vote[:2]  # the void and the first answer, a no
        assert accepted(table)[before:before + 3] == [*no, ("act", proposer, None)]
