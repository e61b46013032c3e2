"""Reading moves at the prompt (p2pcards/cli/moves.py), as both prompts read them.

Positions come from seeded random deals; each test types what a person would
and checks the legal action it is matched to, or the refusal's words.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from itertools import permutations

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from p2pcards.cli import moves, repl
from p2pcards.games import HandState, bidwhist, controlnut, get_game, nullern, pasur
from p2pcards.games.cards import bits

NAMES = ["ana", "ben", "cy", "dee", "eve"]


def positions(game_name: str, seed: int, *, players: int | None = None, number: int = 0,
              options: dict[str, int] | None = None) -> Iterator[HandState]:
    """Every position of a person to move in seeded random deals (full states)."""
    game = get_game(game_name)
    players = players or game.default_players
    resolved = game.resolve_options(options or {})
    rng = random.Random(seed)
    for _ in range(40):
        deck = game.shuffled_deck(players, resolved, rng)
        if game.is_void_deal(deck, players):
            continue
        state = game.deal(deck, 0, players, resolved, number=number)
        while not state.is_terminal():
            seat = state.current_player()
            if seat >= 0:
                yield state
                actions = state.legal_actions()
                state.apply(actions[rng.randrange(len(actions))])
            else:
                state.apply(state.chance_action(rng))


def first(game_name: str, wanted: Callable[[HandState], bool], seed: int = 1,
          **kwargs: object) -> HandState:
    return next(s for s in positions(game_name, seed, **kwargs) if wanted(s))  # type: ignore[arg-type]


def is_card(state: HandState, word: str) -> bool:
    try:
        state.notation.parse(word)
    except ValueError:
        return False
    return True


def turn_of(state: HandState) -> tuple[moves.Turn, int]:
    """The turn of the seat to move, at a table where that seat is "you"."""
    seat = state.current_player()
    names = ["you" if s == seat else NAMES[s] for s in range(state.players)]
    return moves.Turn.of(state.view(seat), names=names), seat


def read(state: HandState, line: str) -> int | str | tuple[int, ...]:
    turn, seat = turn_of(state)
    return moves.parse_move(turn, seat, line)


@pytest.mark.parametrize(("game", "players", "number"), [
    ("controlnut", 4, 0), ("bidwhist", 4, 0), ("pasur", 3, 0), ("nullern", 4, 6)])
def test_every_listed_move_reads_back_as_listed_upper_case_and_cards_reversed(
        game: str, players: int, number: int) -> None:
    checked = 0
    for k, state in enumerate(positions(game, 7, players=players, number=number)):
        if k % 5 or checked > 300:
            continue
        turn, seat = turn_of(state)
        for text, action in turn.texts.items():
            verb, *words = text.split()
            assert moves.parse_move(turn, seat, text) == action
            assert moves.parse_move(turn, seat, text.upper()) == action
            if len(words) > 1 and all(is_card(state, w.partition(":")[0]) for w in words):
                assert moves.parse_move(turn, seat, " ".join([verb, *words[::-1]])) == action
            checked += 1
    assert checked > 100


def test_give_reads_its_cards_in_any_order_and_seats_by_name_or_number() -> None:
    state = first("controlnut", lambda s: s.phase == controlnut.GIVE_PHASE
                  and s.give_cards.bit_count() == 3)
    turn, seat = turn_of(state)
    names = ["you" if s == seat else NAMES[s] for s in range(4)]
    assert len(turn.legal) == 6
    for action in turn.legal:
        pairs = controlnut.give_pairs(action)
        listed = next(t for t, a in turn.texts.items() if a == action)
        assert all(f"{controlnut.CONTROLNUT.name(c)}:{names[s]}" in listed for c, s in pairs)
        for order in permutations(pairs):
            by_name = " ".join(f"{controlnut.CONTROLNUT.name(c)}:{names[s]}" for c, s in order)
            by_number = " ".join(f"{controlnut.CONTROLNUT.name(c)}:{s}" for c, s in order)
            assert moves.parse_move(turn, seat, f"give {by_name}") == action
            assert moves.parse_move(turn, seat, f"GIVE {by_number.lower()}") == action
    refused = moves.parse_move(turn, seat, "give A1:zed")
    assert isinstance(refused, str) and "'zed' names no seat" in refused
    assert all(name in refused for name in names if name != "you")


def test_trump_reads_suit_words_and_symbols_and_names_the_suits_otherwise() -> None:
    naming = first("controlnut", lambda s: s.phase == controlnut.NAME_TRUMP)
    assert read(naming, "trump hazelnuts") == controlnut.TRUMP + 1
    assert read(naming, "Trump Walnut") == controlnut.TRUMP + 3
    assert read(naming, "trump p") == controlnut.TRUMP + 2
    assert read(naming, "trump") == tuple(controlnut.TRUMP + s for s in range(4))
    for wrong in ("trump hearts", "trump X"):
        refused = read(naming, wrong)
        assert isinstance(refused, str) and "A, H, P or W (acorns, hazelnuts" in refused
        assert "legal: trump A, trump H, trump P, trump W" in refused
        assert "unknown card" not in refused
    declaring = first("bidwhist", lambda s: s.phase == bidwhist.DECLARE and not s.notrump)
    for typed in ("trump hearts", "trump ♥", "TRUMP heart", "trump h"):
        assert read(declaring, typed) == bidwhist.TRUMP + 1
    refused = read(declaring, "trump X")
    assert isinstance(refused, str) and "S, H, D or C (spades, hearts" in refused


def test_a_control_alone_plays_unless_it_is_named_like_a_verb() -> None:
    state = first("controlnut", lambda s: s.phase == controlnut.PLAY
                  and s.ctrl_hand[s.current_player()] >> controlnut.TRICK_C & 1)
    assert read(state, "trick") == controlnut.TRICK_C
    assert read(state, "Play Trick") == controlnut.TRICK_C
    state = first("controlnut", lambda s: s.phase == controlnut.PLAY
                  and s.ctrl_hand[s.current_player()] >> controlnut.TRUMP_C & 1)
    refused = read(state, "trump")
    assert isinstance(refused, str) and "play TRUMP" in refused
    assert read(state, "play trump") == controlnut.TRUMP_C


def test_a_pasur_card_alone_takes_its_only_capture_or_offers_its_captures() -> None:
    single = several = 0
    for state in positions("pasur", 3, players=2):
        turn, seat = turn_of(state)
        uses: dict[int, list[int]] = {}
        for action in turn.legal:
            uses.setdefault(action & 63, []).append(action)
        for card, actions in uses.items():
            name = pasur.STANDARD.name(card)
            found = moves.parse_move(turn, seat, name.lower())
            if len(actions) == 1:
                assert found == actions[0]
                single += actions[0] >> 6 != 0  # a capture, read from the card alone
            else:
                assert isinstance(found, tuple) and sorted(found) == sorted(actions)
                several += 1
            take = actions[0] >> 6
            if take:  # play is understood, the cards taken in any order
                taken = [pasur.STANDARD.name(c) for c in bits(take)][::-1]
                assert moves.parse_move(turn, seat, f"{name} take {' '.join(taken)}") \
                    == actions[0]
        if single > 20 and several > 3:
            break
    assert single > 20 and several > 3


def test_bid_whist_bids_read_the_kind_in_short_and_refusals_name_the_tables_range() -> None:
    bidding = first("bidwhist", lambda s: s.phase == bidwhist.BID and not s.bids)
    assert read(bidding, "bid 4 card") == bidwhist.bid_code(4, bidwhist.CARDS_BID)
    assert read(bidding, "bid 5 nt") == bidwhist.bid_code(5, bidwhist.NOTRUMP_BID)
    assert read(bidding, "bid 4") == tuple(bidwhist.bid_code(4, k) for k in range(3))
    for wrong in ("bid 9 cards", "bid 4 cardz"):
        refused = read(bidding, wrong)
        assert isinstance(refused, str) and "from 4 to 7" in refused and "from 3" not in refused
        assert "legal: bid 4 cards, bid 4 special" in refused
    refused = read(bidding, "bid 3 cards")
    assert isinstance(refused, str) and "bids run from 4 to 7" in refused
    five = first("bidwhist", lambda s: s.phase == bidwhist.BID, options={"kitty": 5})
    refused = read(five, "bid 9 cards")
    assert isinstance(refused, str) and "from 3 to 7" in refused


def test_bid_whist_bids_read_uptown_and_downtown_as_players_say_them() -> None:
    bidding = first("bidwhist", lambda s: s.phase == bidwhist.BID and not s.bids)
    cards, special = (bidwhist.bid_code(4, k) for k in (bidwhist.CARDS_BID, bidwhist.SPECIAL_BID))
    for said in ("bid 4 uptown", "bid 4 up", "BID 4 High"):
        assert read(bidding, said) == cards, said
    for said in ("bid 4 downtown", "bid 4 down", "bid 4 low"):
        assert read(bidding, said) == special, said
    refused = read(bidding, "bid 4 sideways")
    assert isinstance(refused, str) and "'bid 4 sideways'" in refused  # as typed


def test_refusals_list_the_moves_alike_with_the_count_of_all() -> None:
    """One wording ("legal:") and one count of the turn's moves wherever they are
    listed: the moves with the verb typed say how many of all they are."""
    bidding = first("bidwhist", lambda s: s.phase == bidwhist.BID and not s.bids)
    turn, seat = turn_of(bidding)
    total = len(turn.texts)
    bids = [t for t in turn.texts if t.startswith("bid ")]
    assert 0 < len(bids) < total
    refused = moves.parse_move(turn, seat, "bid 9 cards")
    assert isinstance(refused, str)
    assert f"({len(bids)} of the {total} legal moves begin 'bid'; Tab lists them)" in refused
    summary = moves.legal_summary(turn)
    assert total <= moves.LISTED and summary == "legal: " + ", ".join(turn.texts)
    refused = moves.parse_move(turn, seat, "zz")
    assert isinstance(refused, str) and "; legal: " in refused and "legal now" not in refused


def test_a_discard_among_too_many_to_list_reads_in_any_order() -> None:
    state = first("bidwhist", lambda s: s.phase == bidwhist.DISCARD_PHASE and not s.notrump)
    turn, seat = turn_of(state)
    assert not turn.texts  # too many to list
    hand = [bidwhist.STANDARD.name(c) for c in bits(state.may[seat])]
    chosen = hand[:6]
    expected = bidwhist.discard_code(sum(1 << bidwhist.STANDARD.parse(c) for c in chosen))
    assert moves.parse_move(turn, seat, "discard " + " ".join(chosen[::-1])) == expected
    refused = moves.parse_move(turn, seat, "discard " + " ".join(chosen[:5]))
    assert isinstance(refused, str) and "exactly 6 cards" in refused
    assert "legal: discard and 6 of your cards" in refused


def test_refusals_speak_of_you_by_name_and_cards_by_face_and_say_what_is_legal() -> None:
    state = first("bidwhist", lambda s: s.phase == bidwhist.PLAY)
    turn, seat = turn_of(state)
    missing = next(c for c in range(52) if not state.may[seat] >> c & 1)
    face = bidwhist.STANDARD.face(missing)
    for typed in (bidwhist.STANDARD.name(missing), f"play {face}"):
        refused = moves.parse_move(turn, seat, typed)
        assert isinstance(refused, str)
        assert refused.startswith(f"you do not hold {face}; legal: play ")
        assert "seat" not in refused
    for typed in ("bid 4 cards", "zz", "play XX", "discard AS AS"):
        refused = moves.parse_move(turn, seat, typed)
        assert isinstance(refused, str) and "legal" in refused, typed
    night = first("nullern", lambda s: s.phase == nullern.BIDDING, number=4)
    refused = read(night, "bid 9")
    assert isinstance(refused, str) and "from 0 to 5" in refused


def test_listed_moves_show_the_hands_faces_and_complete_from_either_spelling() -> None:
    state = first("bidwhist", lambda s: s.phase == bidwhist.PLAY
                  and any(c % 13 == 8 for c in bits(s.may[s.current_player()])))
    turn, seat = turn_of(state)
    ten = next(c for c in bits(state.may[seat]) if c % 13 == 8)
    listed = f"play {bidwhist.STANDARD.face(ten)}"
    assert listed.startswith("play 10") and listed in turn.texts
    assert not any("T" in t.split()[-1] for t in turn.texts)

    class Holder:
        def __init__(self, turn: moves.Turn) -> None:
            self.turn: moves.Turn | None = turn

    completer = moves.MoveCompleter(Holder(turn), repl.Repl.commands)
    typed = f"play {bidwhist.STANDARD.name(ten).lower()}"  # the hand history's spelling
    offered = [c.text for c in completer.get_completions(Document(typed), CompleteEvent())]
    assert offered == [listed]
    assert moves.parse_move(turn, seat, typed) == ten
