"""The table session: whole games by four in-memory sessions, views, audit, agreement.

A table deals with the proved deck unless told; the tests that compare each seat's
view with the deal its audit reveals, or read the keys and the audited record, are
today's deck's (``deck=LOCK_DECK``): the proved deck reveals nothing after the deal
(its own tests: tests/test_table_proved.py)."""

from __future__ import annotations

import gc
import weakref

import pytest

from p2pcards.bots import heuristic_bot, random_bot
from p2pcards.history import History, loads, replay
from p2pcards.table.events import Alarmed, Disagreed, RosterSigned
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import LOCK_DECK, PIPELINED_DECK, PROVED_DECK
from p2pcards.table.session import Session
from tests.table_helpers import told

SEVEN_SEATS = pytest.mark.slow


def finished_table(seed: int, **kwargs: object) -> MemoryTable:
    table = MemoryTable("bidwhist", 4, seed, [heuristic_bot, random_bot] * 2, **kwargs)
    table.play()
    return table


def history_of(session: Session) -> History:
    names = [seat.name for seat in session.roster.seats]
    return History(session.roster.rules.name, names, {}, [run.outcome.record
                                                  for run in session.finished
                                                  if run.outcome is not None])


def check_views(table: MemoryTable) -> int:
    """Each seat's view after every move is the audited deal's view from that seat."""
    compared = 0
    for session in table.sessions:
        for run in session.finished:
            assert run.outcome is not None
            states = run.outcome.states
            assert len(states) == len(run.views)
            for index, (full, mine) in enumerate(zip(states, run.views, strict=True)):
                assert full.view(session.me).knowledge() == mine, (session.me, index)
                compared += 1
    return compared


def check_agreement(table: MemoryTable) -> None:
    sessions = table.sessions
    first = sessions[0]
    assert table.rejected == []
    for s in sessions:
        assert (s.totals, s.winner, s.hash) == (first.totals, first.winner, first.hash)
        assert not [e for e in s.events if isinstance(e, (Disagreed, Alarmed))]
        assert all(run.verdict == "ok" or run.verdict.startswith("void: jacks")
                   for run in s.finished)


def check_whole_game(table: MemoryTable) -> None:
    """Over alike everywhere, every view right, and the history replays to the end."""
    first = table.sessions[0]
    assert first.over
    check_agreement(table)
    assert check_views(table) > 0
    result = replay(loads(history_of(first).dumps()))
    assert result.totals == first.totals and result.winner == first.winner


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_whole_games_end_alike_at_every_seat(seed: int) -> None:
    table = finished_table(seed, keep_states=True)
    sessions = table.sessions
    assert all(s.over for s in sessions)
    assert table.rejected == []
    first = sessions[0]
    assert first.winner is not None and max(first.totals) >= 7
    for s in sessions:
        assert (s.totals, s.winner, s.hash) == (first.totals, first.winner, first.hash)
        assert [e.payload for e in s.transcript] == [e.payload for e in first.transcript]
        assert not [e for e in s.events if isinstance(e, (Disagreed, Alarmed))]
    # the audited history replays to the same totals, from any seat's export
    for s in sessions:
        result = replay(loads(history_of(s).dumps()))
        assert result.totals == first.totals and result.winner == first.winner


def test_each_view_is_the_audited_deal_seen_from_its_seat() -> None:
    table = finished_table(4, keep_states=True, deck=LOCK_DECK)
    assert check_views(table) >= 4 * 55  # at least one whole deal at each seat


def test_a_view_never_holds_another_seats_hidden_cards() -> None:
    table = MemoryTable("bidwhist", 4, 5, [heuristic_bot] * 4, deck=LOCK_DECK)
    table.play(deals=1)
    for session in table.sessions:
        run = session.finished[0]
        assert run.outcome is not None
        dealt = run.outcome.record.deck
        # what the seat could open: its own hand, the cards shown, the kitty if it won it
        known = {session.roster.rules.notation.name(run.ids[c]) for c in run.deck.opened.values()}
        bidder = run.outcome.state.bidder  # type: ignore[attr-defined]
        own = {dealt[i] for i in range(48) if (run.dealer + 1 + i) % 4 == session.me}
        played = {text.split()[1] for _, text in run.outcome.record.actions
                  if text.startswith("play")}
        allowed = own | played | (set(dealt[48:]) if bidder == session.me else set())
        assert known <= allowed
        assert own <= known


def test_every_seat_signs_the_same_transcript_and_result() -> None:
    table = MemoryTable("bidwhist", 4, 6, [heuristic_bot] * 4)
    table.play(deals=2)
    hashes = set()
    for session in table.sessions:
        for run in session.finished:
            assert sorted(run.agrees) == [0, 1, 2, 3]
            assert {a.transcript for a in run.agrees.values()} == {run.agree_hash}
            assert {a.points for a in run.agrees.values()} == {tuple(run.points)}
            hashes.add((run.index, run.agree_hash))
    assert len(hashes) == 2  # one hash per deal, the same at every seat


def test_the_roster_is_signed_and_shown_as_a_safety_number() -> None:
    table = MemoryTable("bidwhist", 4, 7, [heuristic_bot] * 4)
    table.deliver()
    numbers = {s.roster.safety_number() for s in table.sessions}
    assert len(numbers) == 1
    (number,) = numbers
    assert len(number) == 23 and number.replace(" ", "").isdigit()
    signs = [e for e in table.sessions[0].transcript if e.kind == "sign"]
    assert [e.sender for e in signs] == [0, 1, 2, 3]
    assert all(e.body["roster"] == table.sessions[0].roster.digest() for e in signs)
    seated = told(table.sessions[1], RosterSigned)
    assert seated and number in seated[0]


def test_the_same_seed_plays_the_same_game() -> None:
    """Everything but the sealed bodies (HPKE draws its ephemeral key from OpenSSL) is
    reproducible under a seed."""
    first, second = finished_table(8).sessions[0], finished_table(8).sessions[0]
    assert history_of(first).dumps() == history_of(second).dumps()
    unsealed = [[(e.sender, e.kind, e.body) for e in s.transcript
                 if e.kind not in ("keys", "agree")] for s in (first, second)]
    assert unsealed[0] == unsealed[1]


# ------------------------------------------------------------------ Nullern


@pytest.mark.parametrize(("players", "keep"), [(2, True), (3, False), (4, False),
                                               pytest.param(7, False, marks=SEVEN_SEATS)])
def test_nullern_whole_games_with_the_blind_round(players: int, keep: bool) -> None:
    table = MemoryTable("nullern", players, 30 + players, [heuristic_bot] * players,
                        keep_states=keep, deck=LOCK_DECK)
    table.play()
    check_agreement(table)
    first = table.sessions[0]
    assert first.over and len(first.finished) == 20
    if keep:
        assert check_views(table) > 20 * players
    result = replay(loads(history_of(first).dumps()))
    assert result.totals == first.totals and result.winner == first.winner
    blind = first.finished[-1]
    keys = [e for e in blind.envelopes if e.kind == "keys"]
    # the blind deal gives nobody a key of a hand card: only the turned card is shown
    assert all(e.body["sealed"] == [] and len(e.body["public"]) == 1 for e in keys[:players])
    # then each blind card is shown by every seat's key, just before it is played
    assert len(keys) == players + players * players
    assert all(e.body["sealed"] == [] and len(e.body["public"]) == 1 for e in keys[players:])


@pytest.mark.parametrize("players", [3, pytest.param(7, marks=SEVEN_SEATS)])
def test_nullern_views_at_three_and_seven_seats(players: int) -> None:
    table = MemoryTable("nullern", players, 40 + players, [heuristic_bot] * players,
                        keep_states=True, deck=LOCK_DECK)
    table.play(deals=2)
    check_agreement(table)
    assert check_views(table) > 0
    for session in table.sessions:
        assert replay(loads(history_of(session).dumps())).complete is False


def test_the_table_bench_splits_a_deal_into_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    from p2pcards.bench import table as bench  # noqa: PLC0415
    from p2pcards.bench.table import table_deals  # noqa: PLC0415

    result = table_deals("bidwhist", 0.0)  # (today's deck: the records' first meaning)
    assert result.deals == 2 and result.messages > 150
    spent = result.spent
    assert set(spent) >= {"curve", "signatures", "sealing", "codec", "engine", "bots", "session"}
    assert sum(spent.values()) == pytest.approx(result.total)
    assert spent["curve"] > spent["engine"]  # the deck's arithmetic outweighs the rules
    # the proved deck's records, named apart (``p2pcards bench table`` gives both)
    monkeypatch.setattr(bench, "GAMES", {"pasur": bench.GAMES["pasur"]})
    records = {r.name: r.value for r in bench.bench_table(0.0, decks=(PIPELINED_DECK,))}
    layers = {f"table.proved.pasur.deal.{layer}" for layer in bench.LAYERS}
    assert set(records) == {"table.proved.pasur.deal", "table.proved.pasur.messages_per_deal",
                            "table.proved.pasur.bytes_per_deal", *layers,
                            *(f"table.proved.pasur.deal.crypto.{part}"
                              for part in bench.CRYPTO)}
    assert records["table.proved.pasur.deal.crypto.sealing"] == 0  # nothing sealed
    assert records["table.proved.pasur.deal.crypto.curve"] > \
        records["table.proved.pasur.deal.engine"] + records["table.proved.pasur.deal.session"]
    assert sum(records[name] for name in layers) == pytest.approx(
        records["table.proved.pasur.deal"], abs=0.5)


# ------------------------------------------------------------------ Pasur


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pasur_whole_games(players: int) -> None:
    """Seed 1 brings a void deal at two seats and an opening jack put back into the
    stock (a secret reshuffle) at four."""
    table = MemoryTable("pasur", players, 1, [heuristic_bot] * players, keep_states=True,
                        deck=LOCK_DECK)
    table.play()
    check_whole_game(table)
    first = table.sessions[0]
    records = [run.outcome.record for run in first.finished if run.outcome]
    if players == 2:
        void = [r for r in records if r.void]
        assert void and void[0].actions == [] and void[0].reason == "jacks in the opening pool"
        index = records.index(void[0])
        assert records[index + 1].dealer == void[0].dealer  # the same dealer deals again
    if players == 4:
        stock = [text for r in records for actor, text in r.actions if actor == "chance"]
        assert stock and all(len(text.split()) == 1 + 52 - 4 * 4 - 4 for text in stock)


# ------------------------------------------------------------------ Control Nut!


@pytest.mark.parametrize("seed", [1, 2])
def test_control_nut_whole_games(seed: int) -> None:
    table = MemoryTable("controlnut", 4, seed, [heuristic_bot] * 4, keep_states=True,
                        deck=LOCK_DECK)
    table.play()
    check_whole_game(table)
    assert max(table.sessions[0].totals) > 300


def test_control_nut_chance_is_joint_and_a_steal_stays_between_victim_and_thief() -> None:
    table = MemoryTable("controlnut", 4, 1, [heuristic_bot] * 4, deck=LOCK_DECK)
    table.play(deals=1)
    first = table.sessions[0]
    run = first.finished[0]
    assert run.outcome is not None
    chance = [text for actor, text in run.outcome.record.actions if actor == "chance"]
    assert chance[0].startswith("controls ") and chance[1].startswith("auction ")
    # every chance move was drawn jointly: a commit and a share from every seat each
    commits = [e for e in run.envelopes if e.kind == "commit"]
    assert len(commits) == 4 * len(chance)
    steals = [(act, text) for (actor, act), (_, text)
              in zip(run.acts, run.outcome.record.actions, strict=True)
              if actor == -1 and text.startswith("steal")]
    assert steals, "seed 1 has a HAND steal in its first deal"
    for act, text in steals:
        (slot,) = act.slots
        victim, card = int(text.split()[1]), text.split()[2]
        assert card != "?"  # the audited record names the card
        # the victim's key of the slot went sealed to the thief alone
        (release,) = [(sender, step) for sender, step, _ in run.key_steps
                      if any(slot in slots for _, slots in step.grants)]
        sender, step = release
        ((thief, slots),) = step.grants
        assert sender == victim and slots == (slot,) and thief != victim
        shown_later = any(slot in dict(a.shown) for _, a in run.acts)
        for session in table.sessions:
            opened = slot in session.finished[0].deck.opened
            if session.me not in (victim, thief):
                assert not opened or shown_later
        # the victim re-mixed every card it held just before the draw
        assert [e for e in run.envelopes if e.kind == "remix" and e.sender == victim]


def test_a_table_dropped_is_freed_at_once() -> None:
    """A session and its parts (the claim desk, the intake, the phase machine, the
    decks) hold no reference cycle: a table dropped is freed by reference counting,
    not left to the cycle collector, which a long game would keep busy."""
    gc.collect()
    gc.disable()
    try:
        for deck in (LOCK_DECK, PROVED_DECK):
            table = MemoryTable("pasur", 4, 5, [heuristic_bot] * 4, deck=deck)
            table.play(deals=1)
            session = table.sessions[0]
            parts = [weakref.ref(part) for part in (
                session, session.desk, session.intake, session.machine, session.returns)]
            run = session.run
            assert run is not None and session.finished
            parts += [weakref.ref(run), weakref.ref(run.deck), weakref.ref(session.finished[0])]
            del table, session, run
            assert [ref() for ref in parts] == [None] * len(parts)
    finally:
        gc.enable()
