"""A table of the proved deck keeps its moves and proves reneges (docs/hand-history.md,
"Public entries"; docs/proved-deck.md, "Breaches only hidden cards prove").

Nothing is revealed after a deal of the proved deck, so its hand-history entry is
the deal as a seat with no cards saw it, and a renege is proven by the card shown
later against the seat's claim.  The tests check both against what only they can
know: every card of the deal, decrypted with every seat's key share (the table
never reveals one), and the audit's full-information replay of the same deal.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.cli.main import main
from p2pcards.games import HandState, IllegalAction
from p2pcards.games.cards import bits
from p2pcards.history import HIDDEN, History, loads, replay
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.protocol.proved.elgamal import combine, decryption_share
from p2pcards.table.explain import explain
from p2pcards.table.kinds import Kind, ProvedAct, encode_body
from p2pcards.table.memory import MemoryTable
from p2pcards.table.replay import Outcome, replay_deal
from p2pcards.table.roster import PROVED_DECK
from p2pcards.table.run import DealRun
from p2pcards.table.session import Session
from p2pcards.table.verify import Report, verify
from tests.table_helpers import envelope


def every_card(runs: list[DealRun]) -> dict[int, int]:
    """Slot -> game card of every slot of one deal, decrypted with every seat's key share
    (``runs``: the deal at each seat; only a test holds all the shares)."""
    decks = [run.deck for run in runs]
    assert all(isinstance(d, ProvedDeck) for d in decks)
    first = decks[0]
    assert isinstance(first, ProvedDeck)
    cards = {}
    for slot, point in enumerate(first.points):
        shares = [decryption_share(point, d._x) for d in decks]  # type: ignore[union-attr]
        cards[slot] = runs[0].ids[first.card_of[combine(point, shares)]]
    return cards


def opened_to_everyone(watched: DealRun, players: int) -> set[int]:
    """The slots the offline verifier (no secret) could open: those every seat released
    a share of to everyone."""
    deck = watched.deck
    assert isinstance(deck, ProvedDeck)
    return {slot for slot, shares in deck.shares.items() if len(shares) == players}


def audited(runs: list[DealRun]) -> Outcome:
    """The audit's verdict on the deal (today's deck would reveal every card): the moves
    replayed with full information from the true deck."""
    cards = every_card(runs)
    run = runs[0]
    deck = [cards[slot] for slot in range(len(run.ids))]
    acts = [(seat, SimpleNamespace(action=act.action, slots=act.slots,
                                   shown=tuple((slot, ()) for slot in act.shown)))
            for seat, act in run.acts]
    return replay_deal(run.ledger.setup, deck, acts, cards)  # type: ignore[arg-type]


@dataclass
class Renege:
    seat: int
    index: int
    deal: int


def renege_when_it_can(done: list[Renege]) -> Callable[[MemoryTable], bool]:
    """A seat that, the first time it can, fails to follow suit while holding the suit
    (a play every seat's public view allows): its own engine would refuse the card and
    then drop the suit it claims to lack from its view, so the cheat skips both for its
    own view only (its public view, like every other seat's, keeps the claim)."""

    def cheat(table: MemoryTable) -> bool:
        for session in table.sessions:
            view = session.decision()
            run = session.run
            if done or view is None or run is None or run.public is None:
                continue
            codes = [c for c in bits(view.may[session.me]) if breaks(view, c, "renege")
                     and not breaks(run.public, c)]
            if not codes:
                continue
            against_its_own_rules(session, view, codes[0])
            done.append(Renege(session.me, len(run.acts) - 1, run.index))
            return True
        return False
    return cheat


def against_its_own_rules(session: Session, view: HandState, code: int) -> None:
    """``session`` plays ``code``, its own view neither checking the move nor taking the
    claim it makes (every other state, its public view included, does both)."""
    cls = type(view)
    check, claim = cls.check, cls._claim_void

    def own_check(self: HandState, action: int) -> None:
        if self is not view:
            check(self, action)

    def own_claim(self: HandState, *args: Any) -> None:
        if self is not view:
            claim(self, *args)

    with patch.object(cls, "check", own_check), patch.object(cls, "_claim_void", own_claim):
        session.act(code)


def breaks(state: HandState, code: int, rule: str = "") -> bool:
    """Whether ``state``'s engine refuses ``code`` (for ``rule``, if named)."""
    try:
        state.check(code)
    except IllegalAction as error:
        return not rule or error.code == rule
    return False


def play_a_renege(game: str, players: int, seed: int) -> tuple[MemoryTable, Renege]:
    table = MemoryTable(game, players, seed, [heuristic_bot] * players, deck=PROVED_DECK)
    done: list[Renege] = []
    cheat = renege_when_it_can(done)
    while not (done and all(len(s.finished) > done[0].deal for s in table.sessions)):
        table.deliver()
        if not cheat(table):
            assert table.step(), "the table stopped before the renege's deal ended"
    table.deliver()
    return table, done[0]


def history(session: Session) -> History:
    return History(session.roster.rules.name, [s.name for s in session.roster.seats],
                   dict(session.roster.options),
                   [run.outcome.record for run in session.finished if run.outcome])


RENEGES = {"bidwhist": ("bidwhist", 4, 1), "controlnut": ("controlnut", 4, 2),
           "controlnut at once": ("controlnut", 4, 9), "nullern": ("nullern", 3, 1)}
"""Case -> game, players and a seed at which a renege is proven by a card shown later;
or at once, by the claim itself (Control Nut!: a card everyone knew to be in the seat's
hand or in one other's, that one having claimed the suit too, is left with no place)."""


@pytest.fixture(scope="module")
def reneges() -> dict[str, tuple[MemoryTable, Renege]]:
    return {case: play_a_renege(game, players, seed)
            for case, (game, players, seed) in RENEGES.items()}


@pytest.mark.parametrize("case", sorted(RENEGES))
def test_a_renege_is_proven_by_the_card_shown_and_penalised_as_the_audit_would(
        reneges: dict[str, tuple[MemoryTable, Renege]], case: str) -> None:
    table, cheat = reneges[case]
    runs = [session.finished[cheat.deal] for session in table.sessions]
    penalty = {"seat": cheat.seat, "index": cheat.index, "reason": "renege"}
    audit = audited(runs)
    assert audit.record.penalty == penalty  # what today's deck's audit would give
    for run in runs:  # every seat reached it alone, from the public proof
        assert run.outcome is not None and run.outcome.record.penalty == penalty
        assert run.points == audit.points
        assert run.verdict.startswith(f"seat {cheat.seat} broke the rules at move"
                                      f" {cheat.index}: renege (proven by move")
        assert run.agrees.keys() == set(range(len(runs)))
    assert not table.rejected
    record = runs[0].outcome.record  # type: ignore[union-attr]
    proof = len(record.actions) - 1  # the deal stopped at the move that proved it
    assert run.verdict.endswith(f"(proven by move {proof})")
    assert (proof == cheat.index) == case.endswith("at once")
    assert record.public and not record.forfeit
    assert len({json.dumps(r.outcome.record.to_json()) for r in runs  # type: ignore[union-attr]
                }) == 1
    result = replay(loads(history(table.sessions[0]).dumps()))
    assert result.hands[cheat.deal].points == audit.points
    assert result.hands[cheat.deal].detail["penalty"] == {"seat": cheat.seat,
                                                          "reason": "renege"}
    report = verify(table.sessions[1].export())  # offline, from the transcript alone
    assert report.refusal is None
    assert report.deals[cheat.deal].verdict == run.verdict
    assert report.deals[cheat.deal].points == audit.points
    assert report.deals[cheat.deal].signed == list(range(len(runs)))
    assert report.history is not None
    assert report.history.hands[cheat.deal].to_json() == record.to_json()
    assert f"a card shown proves a breach: move {proof}," in explain(report)


PUBLIC = {"bidwhist": (4, 1, 1), "controlnut": (4, 2, 1), "nullern": (3, 3, 3),
          "pasur": (3, 4, 2)}
"""Game -> players, seed, deals: Bid Whist's kitty re-mixed with the bidder's hand (its
positions unknown after), Pasur's second deal void by its opening jacks and its first a
lone jack's stock reshuffled."""


@pytest.fixture(scope="module")
def public_games() -> dict[str, tuple[MemoryTable, Report]]:
    out = {}
    for game, (players, seed, deals) in PUBLIC.items():
        table = MemoryTable(game, players, seed, [heuristic_bot] * players, deck=PROVED_DECK)
        table.play(deals=deals)
        out[game] = table, verify(table.sessions[0].export())
    return out


@pytest.mark.parametrize("game", sorted(PUBLIC))
def test_a_proved_deal_s_entry_replays_and_scores_as_the_table_did(
        public_games: dict[str, tuple[MemoryTable, Report]], game: str) -> None:
    table, report = public_games[game]
    session = table.sessions[0]
    done = history(session)
    assert all(hand.public and hand.secret is None for hand in done.hands)
    result = replay(loads(done.dumps()))
    assert [h.points for h in result.hands] == [None if run.outcome and run.outcome.void
                                                else run.points for run in session.finished]
    entries = [r.to_json() for r in done.hands]
    for other in table.sessions[1:]:  # every seat writes the same bytes
        assert [r.to_json() for r in history(other).hands] == entries
    assert report.history is not None  # and so does the offline verifier
    assert [r.to_json() for r in report.history.hands] == entries


@pytest.mark.parametrize("game", sorted(PUBLIC))
def test_a_proved_deal_s_entry_names_no_card_that_was_never_shown(
        public_games: dict[str, tuple[MemoryTable, Report]], game: str) -> None:
    table, report = public_games[game]
    notation = table.sessions[0].roster.rules.notation
    secret = 0
    for index, watched in enumerate(report.runs[:len(report.deals)]):
        runs = [session.finished[index] for session in table.sessions]
        cards = every_card(runs)
        shown = {cards[slot] for slot in opened_to_everyone(watched, len(runs))}
        record = runs[0].outcome.record  # type: ignore[union-attr]
        for position, name in enumerate(record.deck):  # slot i is deck position i
            opened = position in opened_to_everyone(watched, len(runs))
            assert (name != HIDDEN) == opened, (position, name)
            if opened:
                assert name == notation.name(cards[position])
        named = {notation.parse(w) for w in record.deck if w != HIDDEN}
        for _, text in record.actions:
            for word in text.split():
                try:
                    named.add(notation.parse(word))
                except ValueError:
                    continue
        deck = set(runs[0].ids)
        assert named & deck <= shown  # (Control Nut!'s controls are not deck cards)
        secret |= len(deck - shown)
    if game in ("bidwhist", "nullern"):  # the discards, the cards not dealt
        assert secret


# ------------------------------------------------------------- malformed entries


def rewrite(doc: dict[str, Any], path: Path, capsys: pytest.CaptureFixture[str]
            ) -> tuple[int, str]:
    path.write_text(json.dumps(doc), encoding="utf-8")
    code = main(["replay", str(path)])
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def renege_doc(reneges: dict[str, tuple[MemoryTable, Renege]]) -> tuple[dict[str, Any], str]:
    """The Bid Whist game of the renege as a document, and a card never shown in it."""
    table, cheat = reneges["bidwhist"]
    runs = [session.finished[cheat.deal] for session in table.sessions]
    watched = verify(table.sessions[0].export()).runs[cheat.deal]
    cards = every_card(runs)
    shown = {cards[s] for s in opened_to_everyone(watched, 4)}
    hidden = next(card for card in runs[0].ids if card not in shown)
    name = table.sessions[0].roster.rules.notation.name
    return json.loads(history(table.sessions[0]).dumps()), name(hidden)


def hide_first(hand: dict[str, Any], card: str) -> None:
    hand["deck"][hand["deck"].index(HIDDEN)] = card


def name_the_discard(hand: dict[str, Any], card: str) -> None:
    """The bidder's discard written with its cards (any six: the text alone gives it away)."""
    (index,) = [i for i, (_, text) in enumerate(hand["actions"]) if text.startswith("discard")]
    names = [name for name in hand["deck"] if name != HIDDEN][:6]
    hand["actions"][index][1] = "discard " + " ".join(names)


MALFORMED: dict[str, tuple[Callable[[dict[str, Any], str], None], int, str]] = {
    "a card never shown named in the deck": (hide_first, 2, "is never shown in this deal"),
    "the discard named": (name_the_discard, 2,
                          "names cards a seat with no cards does not see"),
    "a hidden card in an entry that is not public": (
        lambda hand, card: hand.pop("public"), 2, "'?' hides a card: only a public entry"),
    "public is not true or false": (
        lambda hand, card: hand.update(public="yes"), 2, "public: expected true or false"),
    "secret beside public": (
        lambda hand, card: hand.update(secret={"points": [0, 4]}), 2,
        'a public entry keeps its actions and has no "secret"'),
    "a forfeit with points": (
        lambda hand, card: (hand.pop("penalty"), hand.update(
            forfeit={"seat": 0, "reason": "silent", "points": [0, 1]})), 2,
        "a public entry's forfeit has no points"),
    "the penalty at another move": (
        lambda hand, card: hand["penalty"].update(index=hand["penalty"]["index"] - 1), 1,
        "the entry must end with that penalty"),
    "no penalty": (lambda hand, card: hand.pop("penalty"), 1,
                   "the entry must end with that penalty"),
    "a move after the proof": (
        lambda hand, card: hand["actions"].append(hand["actions"][-1]), 1,
        "no action follows it"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_corrupt_public_entry_is_refused_naming_what_and_where(
        reneges: dict[str, tuple[MemoryTable, Renege]], renege_doc: tuple[dict[str, Any], str],
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    doc, hidden = renege_doc
    deal = reneges["bidwhist"][1].deal
    assert rewrite(doc, tmp_path / "good.json", capsys) == (0, "")
    change, status, message = MALFORMED[case]
    bad = copy.deepcopy(doc)
    change(bad["hands"][deal], hidden)
    code, err = rewrite(bad, tmp_path / "bad.json", capsys)
    assert code == status, err
    assert message in err and f"hand {deal}" in err and "Traceback" not in err


def test_a_forfeit_for_equivocation_keeps_the_moves_every_seat_took() -> None:
    """A seat signs two versions of its move; the next seat takes one and answers it,
    the others the other: once the proof is claimed, every seat goes back to where the
    versions part, and each writes the same entry, without either version or the
    answer (the public view and the moves are taken back together)."""
    table = MemoryTable("bidwhist", 4, 59, [heuristic_bot] * 4, deck=PROVED_DECK)
    for _ in range(2):
        table.step()
    table.deliver()
    step = table.sessions[0].due()
    assert step is not None and step.kind == Kind.PROVED_ACT
    cheat, nxt = table.sessions[step.seat], table.sessions[(step.seat + 1) % 4]
    others = [s for s in table.sessions if s not in (cheat, nxt)]
    view = cheat.decision()
    assert view is not None
    first, second = (envelope(cheat, Kind.PROVED_ACT, encode_body(ProvedAct(
        party=cheat.me, action=view.format_action(code), shown=(), slots=(), shares=None))[1])
        for code in view.legal_actions()[:2])
    assert nxt.receive(first) is None
    for session in others:
        assert session.receive(second) is None
    move = nxt.decision()
    assert move is not None
    nxt.act(heuristic_bot(move.clone(), table.rngs[nxt.me]))
    assert len(nxt.run.acts) == 4  # type: ignore[union-attr]
    table.deliver()
    nxt.receive(second)  # the relay brings every version to every seat
    for session in others:
        session.receive(first)
    table.deliver()
    entries = {json.dumps(s.finished[0].outcome.record.to_json())  # type: ignore[union-attr]
               for s in table.sessions}
    assert len(entries) == 1
    record = table.sessions[0].finished[0].outcome.record  # type: ignore[union-attr]
    assert record.public and record.forfeit == {"seat": cheat.me, "reason": "equivocation"}
    assert len(record.actions) == 2  # the two moves before the versions part
    points = replay(loads(history(table.sessions[0]).dumps())).hands[0].points
    assert points == table.sessions[0].finished[0].points and points[cheat.me % 2] == 0
