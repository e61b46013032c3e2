"""Inference from the other players' plays (p2pcards/bots/evidence.py, docs/bots.md)."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable

import pytest

from p2pcards.ai.inference import Inferred
from p2pcards.bench.infer import measure
from p2pcards.bots import SearchBot, heuristic_bot, make_bot, parse_options, playbook
from p2pcards.bots.evidence import ALL, Play, later_cards, play_log_weight
from p2pcards.bots.heuristics import bidwhist as bidwhist_book
from p2pcards.bots.heuristics import nullern as nullern_book
from p2pcards.bots.registry import random_bot
from p2pcards.games import CHANCE, GAMES, HandState, bidwhist, nullern

Chooser = Callable[[HandState, random.Random], int]


def test_later_cards_are_the_cards_each_player_played_from_then_on():
    # three players: seat 1 leads card 0, seat 2 plays 1, seat 0 plays 2; then seat 2
    # leads 5 and seat 0 plays 3
    later = later_cards([(1, [0, 1, 2]), (2, [5, 3])], 3)
    assert later == [[1 << 0, 1 << 1 | 1 << 5, 1 << 2 | 1 << 3], [1 << 5, 1 << 3]]


def test_a_play_weighs_the_worlds_where_its_player_could_have_done_otherwise():
    plays = (Play(1, later=1 << 4, within=0b1111_0000, against=0b0100_0000),
             Play(2, later=0, within=ALL, against=0b1))
    # seat 1 held card 6 (with card 4, played later) in one world, not in the other
    assert play_log_weight(plays, [0, 1 << 6, 0], 0.2) == pytest.approx(math.log(0.2))
    assert play_log_weight(plays, [0, 1 << 7, 0], 0.2) == 0.0
    # the suit it had to follow bounds the choice: card 6 counts only within it
    outside = (Play(1, later=0, within=0b0011_0000, against=0b0100_0000),)
    assert play_log_weight(outside, [0, 1 << 6, 0], 0.2) == 0.0
    assert play_log_weight(plays, [0, 1 << 6, 1], 0.2) == pytest.approx(2 * math.log(0.2))


def _deals(name: str, chooser: Chooser, seed: int, deals: int,
           probe: Callable[[HandState, HandState, int], None]) -> None:
    """Play ``deals`` deals of ``name`` with ``chooser`` in every seat, calling
    ``probe(full, view, seat)`` before each move."""
    game = GAMES[name]
    rng = random.Random(seed)
    options = game.resolve_options({})
    players = game.default_players
    for number in range(deals):
        full = game.deal(game.shuffled_deck(players, options, rng), number % players, players,
                         options, number=number % game.numbered_deals)
        while not full.is_terminal():
            seat = full.current_player()
            if seat == CHANCE:
                full.apply(full.chance_action(rng))
                continue
            view = full.view(seat)
            probe(full, view, seat)
            forced = full.forced_action()
            full.apply(forced if forced is not None else chooser(view, rng))


@pytest.mark.parametrize(("name", "floor"), [("nullern", nullern_book.PLAY_FLOOR),
                                             ("bidwhist", bidwhist_book.PLAY_FLOOR)])
def test_the_heuristic_never_plays_against_its_own_model(name, floor):
    """Deals the heuristic plays: every play the evidence reads as against the model was
    one its player could not have made otherwise, so the real hands explain every one
    (the public trick, the need and the cards to choose among are rebuilt right); deals
    played at random are explained worse, which the test would not see if it could not
    fail."""
    seen = {"heuristic": [0, 0], "random": [0, 0]}

    def probe(kind: str) -> Callable[[HandState, HandState, int], None]:
        def look(full: HandState, view: HandState, seat: int) -> None:
            belief = playbook(view).belief(view, True)
            if belief is None:
                return
            plays = belief.plays  # type: ignore[attr-defined]
            assert all(p.seat != seat for p in plays)
            seen[kind][0] += len(plays)
            seen[kind][1] += round(-play_log_weight(plays, full.may, floor) / -math.log(floor))
        return look

    _deals(name, heuristic_bot, 5, 4, probe("heuristic"))
    _deals(name, random_bot, 5, 4, probe("random"))
    assert seen["heuristic"][0] > 20 and seen["heuristic"][1] == 0
    assert seen["random"][1] > 0


def test_the_state_keeps_the_tricks_of_the_deal_in_order():
    game = GAMES["nullern"]
    options = game.resolve_options({})
    rng = random.Random(8)
    full = game.deal(game.shuffled_deck(4, options, rng), 0, 4, options, number=6)
    tricks: list[tuple[int, tuple[int, ...]]] = []
    while not full.is_terminal():
        before = full.tricks_played
        full.apply(heuristic_bot(full.view(full.current_player()), rng))
        if full.tricks_played > before:
            assert full.last_trick is not None
            tricks.append(full.last_trick)
    assert list(full.past) == tricks and len(tricks) == full.cards
    assert full.view(2).past == full.past
    # the record of the past is left out of the exact endgames' key
    other = full.clone()
    other.past = ()
    assert other.solve_key() == full.solve_key()


@pytest.mark.parametrize("name", ["nullern", "bidwhist"])
def test_reading_plays_makes_the_real_deal_likelier_than_reading_bids_alone(name):
    """bench infer's figure: on deals the heuristic played, the belief that reads the
    plays makes the real hidden cards likelier than the one reading bids only (a
    misread trick would count a play the real hands explain as one against the model,
    and make the real deal less likely)."""
    tally = measure(name, "heuristic", 3, 11)
    assert len(tally.deal_plays) >= 6
    assert statistics.fmean(tally.deal_plays) > statistics.fmean(tally.deal)


def test_a_bot_reading_plays_searches_worlds_weighed_by_them(searched):
    seen = searched
    assert parse_options("ismcts:i=2").infer == 2
    bot = make_bot("ismcts:i=2", iterations=40)
    bids = make_bot("ismcts:i=1", iterations=40)
    assert isinstance(bot, SearchBot) and isinstance(bids, SearchBot)
    game = GAMES["nullern"]
    options = game.resolve_options({})
    rng = random.Random(12)
    full = game.deal(game.shuffled_deck(4, options, rng), 1, 4, options, number=8)
    while full.phase == nullern.BIDDING or full.tricks_played < 3:
        full.apply(heuristic_bot(full.view(full.current_player()), rng))
    seat = full.current_player()
    assert full.is_legal(bot(full.view(seat), random.Random(1)))
    inferred = seen[-1]
    assert isinstance(inferred, Inferred)
    assert len(inferred.belief.plays) > 0  # type: ignore[attr-defined]
    assert full.is_legal(bids(full.view(seat), random.Random(1)))
    assert isinstance(seen[-1], Inferred)
    assert seen[-1].belief.plays == ()  # type: ignore[attr-defined]


def test_notrump_tricks_are_read_as_the_rules_play_them():
    """Bid Whist in notrump, which the heuristic never bids: the first bidder bids four
    notrump and the rest pass, then the heuristic plays, but for a leader holding a
    joker, who leads it (a lead is never read).  Jokers never win there, a joker led
    leaves the suit to the next card, and a player void in the suit led must play a
    joker while it holds one: the real hands still explain every play read."""
    game = GAMES["bidwhist"]
    options = game.resolve_options({})
    rng = random.Random(21)
    jokers_led = misses = read = 0
    for number in range(30):
        full = game.deal(game.shuffled_deck(4, options, rng), number % 4, 4, options)
        full.apply(bidwhist.bid_code(4, bidwhist.NOTRUMP_BID))
        while full.phase == bidwhist.BID:
            full.apply(bidwhist.PASS)
        while not full.is_terminal():
            seat = full.current_player()
            view = full.view(seat)
            belief = playbook(view).belief(view, True)
            if belief is not None:
                plays = belief.plays  # type: ignore[attr-defined]
                read += len(plays)
                misses += round(play_log_weight(plays, full.may, bidwhist_book.PLAY_FLOOR)
                                / math.log(bidwhist_book.PLAY_FLOOR))
            jokers = full.may[seat] & bidwhist.JOKERS
            if full.phase == bidwhist.PLAY and not full.trick and jokers:
                full.apply(jokers.bit_length() - 1)
            else:
                full.apply(heuristic_bot(view, rng))
        assert full.kind == bidwhist.NOTRUMP_BID
        jokers_led += sum(bool(bidwhist.JOKERS >> cards[0] & 1) for _, cards in full.past)
    assert read > 100 and misses == 0 and jokers_led > 1
