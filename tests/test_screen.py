"""What the screen draws: the trick around the table, the hand with its trumps first
and the cards just received marked, each trump shown once."""

from __future__ import annotations

import random
from pathlib import Path

import pexpect
import pytest

from p2pcards.cli import repl, screen
from p2pcards.games import HandState, bidwhist, get_game, nullern
from p2pcards.games.cards import STANDARD
from p2pcards.games.display import Row, Styled, trick_rows
from tests.test_prompt_pty import ANSI, MOVE, spawn, terminal_env
from tests.test_repl import player, seated

NAMES = ["ana", "ben", "you", "dee"]


def text(rows: list[Row]) -> list[str]:
    return ["".join(t for _, t in screen.row_fragments(STANDARD, row)).rstrip("\n")
            for row in rows]


def test_four_seats_sit_around_the_trick_from_the_persons_chair() -> None:
    """You at the bottom, the next to play on your left, your partner opposite: who
    led, each seat's card or a dot, and the card winning so far, bold and named."""
    ks, qs = STANDARD.parse("KS"), STANDARD.parse("QS")
    rows = trick_rows([(3, (ks,)), (0, (qs,))], NAMES, leader=3, winning=3, observer=2,
                      notation=STANDARD)
    lines = text(rows)
    assert lines[0] == "trick: dee led"
    top, middle, bottom = lines[1:4]
    assert top.strip() == "ana Q♠"  # opposite: the partner
    assert middle.split() == ["dee", "K♠", "ben", "·"]  # dee on the left, ben on the right
    assert bottom.strip() == "you ·"
    assert top.index("ana") == bottom.index("you")  # one column
    assert lines[4].strip() == "winning: dee K♠"
    strong = [p for p in rows[2].pieces if isinstance(p, Styled) and p.text == "K♠"]
    assert strong and "title" in strong[0].style.split()


def test_other_numbers_of_players_read_the_trick_in_the_order_of_play() -> None:
    r5 = STANDARD.parse("5H")
    rows = trick_rows([(1, (r5,))], ["ana", "ben", "you"], leader=1, winning=1, observer=2,
                      notation=STANDARD)
    assert text(rows) == ["trick: ben led: ben 5♥, you ·, ana ·; winning: ben"]
    assert text(trick_rows([], NAMES, leader=2, winning=-1, observer=2,
                           notation=STANDARD)) == ["trick: you to lead"]


def test_the_hand_shows_its_trumps_first_and_marks_the_cards_just_received() -> None:
    hand = sum(1 << STANDARD.parse(c) for c in ("AS", "2S", "KH", "3C", "BJ"))
    plain = "".join(t for _, t in screen.hand_fragments(STANDARD, hand))
    assert plain == "A♠ 2♠   K♥   3♣   BJ"
    hearts = (bidwhist.JOKER_GROUP, 1)
    fragments = screen.hand_fragments(STANDARD, hand, hearts, new=1 << STANDARD.parse("2S"))
    assert "".join(t for _, t in fragments) == "BJ   K♥   A♠ 2♠   3♣   (new: 2♠)"
    assert [t for s, t in fragments if "class:new" in s] == ["2♠"]


def playing(game: str, seed: int) -> HandState:
    g = get_game(game)
    options = g.resolve_options({})
    rng = random.Random(seed)
    state = g.deal(g.shuffled_deck(4, options, rng), 0, 4, options, number=5)
    while state.phase_name() != "play":
        actions = state.legal_actions()
        state.apply(actions[rng.randrange(len(actions))])
    return state


def test_nullern_names_its_trump_once_and_its_colours_in_words() -> None:
    view = playing("nullern", 3).view(0)
    shown = "".join(t for _, t in screen.table_fragments(view, NAMES))
    colour = nullern.COLOUR_NAMES[view.trump]
    assert shown.count("trump") == 1 and f"trump {colour} (" in shown
    assert "R red, Y yellow, G green, B blue" in get_game("nullern").moves_help


def test_the_kitty_is_marked_in_the_bidders_hand_until_the_discard() -> None:
    """The bidder's hand at the declaration and the discard names the kitty's cards as
    new; once the discard is made, nothing is marked."""
    hands: list[str] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        view = r.current()
        if message.startswith("your move") and isinstance(view, bidwhist.BidWhistState) \
                and view.level and view.bidder == r.seat:
            hands.append(next(line for line in reversed(r.transcript)
                              if line.startswith("your hand: ")))
        return None

    for seed in range(1, 12):  # until this seat wins a bid
        hands.clear()
        with seated("bidwhist", player(random.Random(seed), extra), options={"target": 1},
                    seed=seed, bots="random") as r:
            repl.play(r)
        if len(hands) > 2:
            break
    declaring, discarding, playing_ = hands[0], hands[1], hands[2]
    for line in (declaring, discarding):
        assert "(new: " in line
        assert len(line.split("(new: ")[1].rstrip(")").split()) == 6
    assert "(new: " not in playing_


class Sure:
    """A hint bot whose choice had ``share`` of its search's visits."""

    def __init__(self, share: float | None) -> None:
        self.share = share

    def choose(self, view: HandState, rng: random.Random) -> tuple[int, float | None]:
        return view.legal_actions()[0], self.share


@pytest.mark.parametrize(("share", "said"), [
    (0.31, " (the search spent 31% of its time on it)"), (0.004, ""), (None, "")])
def test_the_hint_says_what_its_share_is_and_never_zero_percent(share: float | None,
                                                                said: str) -> None:
    asked = [0]

    def extra(r: repl.Repl, message: str) -> str | None:
        if message.startswith("your move") and not asked[0]:
            asked[0] = 1
            r.hint_bot = Sure(share)  # type: ignore[assignment]
            return "hint"
        return None

    with seated("pasur", player(random.Random(1), extra), players=2,
                options={"target": 1}) as r:
        repl.play(r)
    hints = [line for line in r.transcript if line.startswith("hint: ")]
    assert len(hints) == 1 and hints[0].endswith(said) and " 0%" not in hints[0]
    assert said or hints[0].count("(") == 0  # (no share named: none in brackets)


@pytest.mark.slow
def test_the_trick_and_the_hand_in_a_real_terminal(tmp_path: Path) -> None:
    """In a pseudo-terminal, a Bid Whist deal (seed 5, rule-based bots): the trick drawn
    around the table from the person's chair, the card winning it named, the hand with
    its trumps (diamonds) first; Ctrl-D then leaves with the way back said."""
    child, seen = spawn(["play", "bidwhist", "--seed", "5", "--bots", "heuristic",
                         "--pace", "0"], terminal_env(tmp_path), tmp_path)
    try:
        child.expect(MOVE)
        child.sendline("pass")
        child.expect("winning: ")
        child.expect(MOVE)
        screen_now = ANSI.sub("", seen.getvalue()).replace("\r", "")
        drawn = screen_now[screen_now.index("trick: cy led"):].split("\n")
        assert drawn[1].strip() == "cy BJ"  # the partner, opposite
        assert drawn[2].split() == ["ben", "·", "dee", "7♦"]  # the next to play on the left
        assert drawn[3].strip() == "you ·"
        assert drawn[4].strip() == "winning: cy BJ"
        assert drawn[5].startswith("your hand: A♦ K♦ 4♦   A♠ 8♠ 7♠   8♥   A♣")
        child.sendcontrol("d")
        child.expect("left the game; p2pcards play bidwhist resumes it")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close()
    assert child.exitstatus == 0 and "Traceback" not in seen.getvalue()
