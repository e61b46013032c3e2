"""The REPL of ``p2pcards play``, driven through prompt-toolkit's pipe input.

Each test types into a real PromptSession (pipe input, dummy output) from a
hook that runs as every prompt opens, so whole games go through the same
key handling, parsing, refusals and commands as at a terminal.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import ColorDepth, DummyOutput

from p2pcards.bots import SearchBot, heuristic_bot, make_bot
from p2pcards.cli import localsave, moves, repl, screen
from p2pcards.cli.main import main
from p2pcards.games import bidwhist, controlnut, get_game
from p2pcards.history import load, loads, replay
from p2pcards.local import LocalGame

Answer = Callable[[repl.Repl, str], str | None]


@contextmanager
def seated(game_name: str, answer: Answer, *, players: int | None = None, seat: int = 0,
           options: dict[str, int] | None = None, seed: int = 1, bots: str = "heuristic",
           autoplay: bool = False) -> Iterator[repl.Repl]:
    """A REPL at a local table whose prompts are answered by ``answer``."""
    game = get_game(game_name)
    players = players or game.default_players
    names = ["you" if s == seat else f"bot{s}" for s in range(players)]
    table = LocalGame(game, players, options or {}, seed, names=names)
    with create_pipe_input() as pipe:
        session = repl.Repl(table, seat, [None if s == seat else make_bot(bots)
                                          for s in range(players)],
                            hint_bot=SearchBot("ismcts", 30),
                            manner=repl.Manner(pace=0, autoplay=autoplay, seed=seed),
                            input=pipe, output=DummyOutput())

        def typed(r: repl.Repl, message: str) -> None:
            line = answer(r, message)
            if line is not None:  # None: the answer typed its own keys
                pipe.send_text(line + "\n")

        session.before_prompt = typed
        yield session


def legal_move(r: repl.Repl, rng: random.Random) -> str:
    turn = r.turn
    assert turn is not None, "a move prompt without a turn"
    if turn.texts:
        return rng.choice(sorted(turn.texts))
    return turn.view.format_action(heuristic_bot(turn.view, rng), seat=r.seat)


def player(rng: random.Random, extra: Callable[[repl.Repl, str], str | None] | None = None
           ) -> Answer:
    """Plays legal moves (in mixed case), deals on, and declines to save."""

    def answer(r: repl.Repl, message: str) -> str:
        if extra is not None:
            line = extra(r, message)
            if line is not None:
                return line
        if message.startswith("your move"):
            move = legal_move(r, rng)
            return move.upper() if rng.random() < 0.3 else move
        return ""  # next deal / no save

    return answer


@pytest.mark.parametrize(("game", "players", "options"), [
    ("bidwhist", 4, {"target": 3}),
    ("pasur", 3, {"target": 20}),
    ("nullern", 3, {}),
    ("controlnut", 4, {"target": 60}),
])
def test_whole_games_through_the_prompt(game, players, options, tmp_path):
    rng = random.Random(f"repl:{game}")
    with seated(game, player(rng), players=players, options=options, seat=1) as r:
        assert repl.play(r) == 0
    table = r.table
    assert table.winner is not None
    assert any(line.startswith(("winner:", "shared win:")) for line in r.transcript)
    lines = "\n".join(r.transcript).splitlines()
    assert any(re.match(r"\s+1\s+[+-]\d+ =-?\d+", line) for line in lines)  # score table
    path = tmp_path / "game.json"
    path.write_text(table.history.dumps())
    result = replay(load(str(path)))
    assert result.complete and result.winner == table.winner


def test_illegal_and_malformed_entries_are_refused_with_the_reason_and_the_choices():
    bad = iter(["play XX", "bid 99", "take", "zz zz", "play 2", "discard AS"])
    refusals: list[str] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        if message.startswith("your move"):
            return next(bad, None)
        return None

    rng = random.Random(2)
    with seated("bidwhist", player(rng, extra), options={"target": 1}) as r:
        repl.play(r)
    refusals = [line for line in r.transcript if line.startswith("not accepted")]
    assert len(refusals) == 6
    assert "unknown card 'XX'" in refusals[0]
    lists = [line for line in r.transcript if line.startswith("legal: ")]
    assert len(lists) >= 6 and all(len(line.partition(": ")[2]) > 0 for line in lists)
    assert r.table.winner is not None  # and the game went on to its end


def test_tab_completes_only_legal_moves_and_the_commands():
    """Tab on an empty line offers the legal moves alone (never a command, which a
    first Tab would insert); a word begun offers the commands it begins too."""
    seen: list[tuple[set[str], set[str]]] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        if message.startswith("your move") and len(seen) < 5:
            turn = r.turn
            assert turn is not None
            completer = moves.MoveCompleter(r, r.commands)
            offered = {c.text for c in completer.get_completions(Document(""), CompleteEvent())}
            seen.append((offered, set(turn.texts)))
            plays = {c.text for c in completer.get_completions(Document("PLAY "),
                                                               CompleteEvent())}
            assert plays == {t for t in turn.texts if t.startswith("play ")}
            begun = {c.text for c in completer.get_completions(Document("h"), CompleteEvent())}
            assert begun == {"help", "hint", "hand", "history"}
        return None

    rng = random.Random(3)
    with seated("pasur", player(rng, extra), players=2, options={"target": 1}) as r:
        repl.play(r)
    assert len(seen) == 5
    for offered, legal in seen:
        assert offered == legal


def test_tab_key_in_the_prompt_completes_a_legal_move():
    """A real Tab keypress: the move typed but its last letter completes, and Enter
    (sent once the completion has been applied) plays it."""
    completed: list[str] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        turn = r.turn
        if not message.startswith("your move") or turn is None or len(completed) >= 3:
            return None
        for text in sorted(turn.texts):
            if sum(t.startswith(text[:-1]) for t in turn.texts) == 1:
                completed.append(text)
                asyncio.get_running_loop().call_later(0.3, r.session.app.input.send_text,
                                                      "\n")
                return text[:-1].lower() + "\t"
        return None

    def answer(r: repl.Repl, message: str) -> str | None:
        line = extra(r, message)
        if line is not None:
            r.session.app.input.send_text(line)
            return None
        return player(random.Random(4))(r, message)

    with seated("pasur", answer, players=2, options={"target": 1}) as r:
        repl.play(r)
    assert len(completed) == 3
    for text in completed:
        assert f"  you: {text}" in r.transcript
    assert not any("not accepted" in line for line in r.transcript)


def test_the_discard_completes_card_by_card_from_the_hand():
    checked: list[bool] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        turn = r.turn
        if message.startswith("your move") and turn is not None and not turn.texts:
            completer = moves.MoveCompleter(r, r.commands)
            hand = turn.view.may[r.seat]
            first = next(iter(sorted(turn.view.notation.name(c) for c in screen.bits(hand))))
            offered = [c.text for c in completer.get_completions(
                Document(f"discard {first} "), CompleteEvent())]
            notation = turn.view.notation
            faces = {notation.face(c) for c in screen.bits(hand)}  # as the hand shows them
            assert offered and set(offered) == faces - {notation.face(notation.parse(first))}
            checked.append(True)
        return None

    for seed in range(1, 12):  # until this seat wins a bid
        rng = random.Random(seed)
        with seated("bidwhist", player(rng, extra), options={"target": 1}, seed=seed,
                    bots="random") as r:
            repl.play(r)
        if checked:
            break
    assert checked


def test_commands_help_hand_table_score_last_history_save(tmp_path):
    script = iter(["help", "help rules", "help moves", "hand", "table", "last", "score",
                   "history", "hint", f"save {tmp_path / 'mid.json'}", "help nonsense",
                   f"save {tmp_path / 'no' / 'such' / 'dir.json'}"])

    toolbars: list[str] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        state = r.table.state
        if message.startswith("your move") and isinstance(state, bidwhist.BidWhistState) \
                and state.tricks_played >= 1:
            toolbars.append("".join(text for _, text in r.toolbar()))
            return next(script, None)
        return None

    rng = random.Random(5)
    with seated("bidwhist", player(rng, extra), options={"target": 1}) as r:
        repl.play(r)
    text = "\n".join(r.transcript)
    assert "Tab completes the legal moves only" in text
    assert "Bid Whist: two partnerships" in text
    assert "Type a move as the legal list shows it" in text
    assert "your hand: " in text and "table: " in text
    assert "last trick: " in text  # asked after the first trick
    assert any(line.startswith("hint: ") for line in r.transcript)
    assert "no help on 'nonsense'" in text
    assert "cannot write" in text
    saved = json.loads((tmp_path / "mid.json").read_text())
    assert saved["game"] == "bidwhist" and saved["hands"] == []  # the deal is still secret
    assert any(line.endswith("the one in progress is still secret)") for line in r.transcript)
    assert toolbars[0].strip() == "Bid Whist | deal 1 | play | your turn | team 0 (you & bot2) " \
        "0, team 1 (bot1 & bot3) 0"
    logs = [e for e in r.transcript if e.startswith(("you: ", "bot")) and "\nbot" in e]
    assert logs and "trick 1: " in logs[0]  # history: the deal so far, as this seat saw it


def test_history_shows_unseen_cards_as_question_marks():
    logs: list[list[str]] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        if message.startswith("your move") and r.table.state is not None \
                and r.table.state.phase == bidwhist.PLAY and not logs:
            logs.append(list(r.log))
            return "history"
        return None

    for seed in range(1, 10):
        rng = random.Random(seed)
        logs.clear()
        with seated("bidwhist", player(rng, extra), options={"target": 1}, seed=seed) as r:
            repl.play(r)
        discards = [line for line in (logs[0] if logs else []) if ": discard" in line]
        if discards and not discards[0].startswith("you"):
            assert discards[0].endswith("discard ? ? ? ? ? ?")
            return
    pytest.fail("no deal in which a bot won the bid")


def test_undo_takes_back_the_persons_move_and_the_bots_replies(tmp_path):
    positions: list[object] = []
    script = iter(["__move__", "undo", "undo"])

    def extra(r: repl.Repl, message: str) -> str | None:
        if not message.startswith("your move"):
            return None
        state = r.table.state
        assert state is not None
        step = next(script, None)
        if step == "__move__":
            positions.append(state.knowledge())
            return None  # the player's legal move
        if step == "undo":
            positions.append(state.knowledge())
        return step

    def between(r: repl.Repl, message: str) -> str | None:
        if message.startswith("Enter for the next deal") and not asked_between:
            asked_between.append(message)
            return "undo"
        return extra(r, message)

    asked_between: list[str] = []
    rng = random.Random(6)
    with seated("pasur", player(rng, between), players=2, options={"target": 30}) as r:
        repl.play(r)
    assert asked_between
    assert "undo: the deal is over; moves are taken back only during a deal" in r.transcript
    saved = tmp_path / "game.json"
    saved.write_text(r.table.history.dumps())
    assert replay(load(str(saved))).complete
    assert "took back your last move" in r.transcript
    assert positions[0] == positions[2]  # after undo: the position before the move
    assert "undo: nothing of yours to take back in this deal" in r.transcript


@pytest.mark.parametrize(("answer", "stays"), [("n", True), ("y", False)])
def test_quit_asks_first(answer, stays):
    asked: list[str] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        if message.startswith("Leave"):
            asked.append(message)
            return answer
        if message.startswith("your move") and not asked:
            return "quit"
        return None

    rng = random.Random(7)
    with seated("pasur", player(rng, extra), players=2, options={"target": 1}) as r:
        repl.play(r)
    assert asked
    assert (r.table.winner is not None) is stays
    assert ("left the game" in r.transcript) is not stays


def test_autoplay_plays_the_only_legal_move():
    rng = random.Random(8)
    with seated("nullern", player(rng), players=3, autoplay=True) as r:
        repl.play(r)
    # the one-card rounds' plays (a single legal card) were never asked for
    asked = sum(1 for line in r.transcript if line.startswith("your hand: "))
    played = sum(1 for line in r.transcript if line.strip().startswith("you: play"))
    assert played > asked
    assert any("1 card you cannot see (blind round)" in line for line in r.transcript)


def test_no_color_turns_colour_off(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    assert screen.color_depth() == ColorDepth.DEPTH_1_BIT
    monkeypatch.delenv("NO_COLOR")
    assert screen.color_depth() is None


def test_the_screen_shows_only_the_seats_view():
    game = bidwhist.GAME
    options = game.resolve_options({})
    state = game.deal(game.shuffled_deck(4, options, random.Random(9)), 0, 4, options)
    view = state.view(2)
    shown = "".join(t for _, t in screen.hand_fragments(game.notation, screen.own_hand(view)))
    assert len(shown.split()) == 12
    for card in screen.bits(state.may[2]):
        assert screen.card_text(game.notation, card) in shown
    table = "".join(t for _, t in screen.table_fragments(view, ["a", "b", "c", "d"]))
    assert "bids: " in table
    for other in (0, 1, 3):  # nobody else's cards appear
        for card in screen.bits(state.may[other]):
            assert f" {screen.card_text(game.notation, card)} " not in f" {shown} "


def test_score_table_has_points_and_running_totals():
    text = screen.score_table(get_game("pasur"), ["you", "ben"], [(1, [5, 15]), (3, [20, 2])])
    lines = text.splitlines()
    assert "you" in lines[0] and "ben" in lines[0]
    assert re.fullmatch(r"\s+1\s+\+5 =5\s+\+15 =15", lines[1])
    assert re.fullmatch(r"\s+3\s+\+20 =25\s+\+2 =17", lines[2])  # (deal 2 void)


def told_deals(transcript: list[str]) -> tuple[list[int], list[int]]:
    """The deals "deal N, dealer ..." told, and those the rules voided at once."""
    told, void = [], []
    for k, line in enumerate(transcript):
        if m := re.match(r"deal (\d+), dealer ", line):
            told.append(int(m.group(1)))
            if "the same dealer deals again" in transcript[k + 1]:
                void.append(told[-1])
    return told, void


def test_a_deal_the_rules_void_is_numbered_but_scores_no_row():
    """A Pasur game whose first deal the rules void (jacks in the opening pool): each row
    of the score table is numbered as its deal was told, the first one 2, and so in the
    same game restored from its history part way through a later deal (as ``play``
    resumes a kept game)."""
    game = get_game("pasur")

    def void_first(seed: int) -> bool:
        table = LocalGame(game, 2, {"target": 20}, seed)
        table.start_deal()
        return table.record is not None and table.record.void

    seed = next(s for s in range(1, 500) if void_first(s))
    with seated("pasur", player(random.Random("void")), players=2, options={"target": 20},
                seed=seed) as r:
        assert repl.play(r) == 0
    told, void = told_deals(r.transcript)
    assert told == list(range(1, len(told) + 1)) and void[0] == 1
    assert [k for k, _ in r.rows] == [k for k in told if k not in void]
    first = screen.score_table(game, r.names, r.rows).splitlines()[1]
    assert re.match(r"\s+2\s+[+-]\d+ =", first), first

    history = loads(r.table.history.dumps())
    last = max(told)  # cut part way through the last deal: rows for the deals before it
    del history.hands[last:]
    del history.hands[-1].actions[len(history.hands[-1].actions) // 2:]
    restored = localsave.restore(history, seed)
    assert restored.state is not None and not restored.state.is_terminal()
    with create_pipe_input() as pipe:
        again = repl.Repl(restored, 0, [None, make_bot("heuristic")], input=pipe,
                          hint_bot=SearchBot("ismcts", 30), output=DummyOutput())
    assert again.rows == [row for row in r.rows if row[0] < last]
    assert again.rows[0][0] == 2


def test_play_refuses_a_seat_outside_the_table(capsys):
    assert main(["play", "pasur", "--players", "2", "--seat", "2"]) == 2
    assert "--seat must be a seat of the table: 0 to 1" in capsys.readouterr().err


def test_the_final_offer_to_save_takes_no_for_an_answer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def extra(r: repl.Repl, message: str) -> str | None:
        return "n" if message.startswith("save the hand history") else None

    with seated("pasur", player(random.Random(10), extra), players=2,
                options={"target": 1}) as r:
        repl.play(r)
    assert list(tmp_path.iterdir()) == []
    assert not any("saved to" in line for line in r.transcript)


def test_a_control_card_alone_is_played_unless_its_name_is_a_verb():
    """TRICK alone plays TRICK; TRUMP, STAR, BONUS and ORDER alone are verbs of their
    own (trump H, star bank ...), so the card needs play: never played by accident."""
    rng = random.Random(13)
    game = get_game("controlnut")
    table = LocalGame(game, 4, {}, 13, names=["you", "b1", "b2", "b3"])
    table.start_deal()
    state = table.state
    assert state is not None
    seen: set[str] = set()
    while len(seen) < 2:
        if state.is_terminal():
            table.end_deal()
            table.start_deal()
            state = table.state
            assert state is not None
            continue
        mover = state.current_player()
        if mover == 0 and state.phase == controlnut.PLAY and state.ctrl_hand[0]:
            with create_pipe_input() as pipe:
                r = repl.Repl(table, 0, [None] * 4, hint_bot=SearchBot("ismcts", 5),
                              manner=repl.Manner(pace=0), input=pipe, output=DummyOutput())
                turn = moves.Turn.of(r.view())
                for control in screen.bits(state.ctrl_hand[0]):
                    name = game.notation.name(control)
                    verb = name.lower() in controlnut.VERB_CONTROLS
                    alone = control in turn.legal and not verb
                    seen.add("verb" if verb else "alone" if alone else "other")
                    own = turn.texts.get(name.lower())  # the verb's own move (order)
                    expected = control if alone else own
                    assert _parse(r, turn, name.lower()) == expected
                    if expected is None:
                        assert r.transcript[-2].startswith("not accepted")
                    if control in turn.legal:
                        assert _parse(r, turn, f"play {name.lower()}") == control
        if mover < 0:
            table.act_chance()
        else:
            table.act(mover, heuristic_bot(state.view(mover), rng))
    assert {"verb", "alone"} <= seen


def test_ctrl_c_while_a_bot_thinks_asks_before_leaving():
    sent: list[bool] = []
    asked: list[str] = []

    def slow_bot(view, rng):
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
        return heuristic_bot(view, rng)

    def extra(r: repl.Repl, message: str) -> str | None:
        if message.startswith("Leave"):
            asked.append(message)
            return "n"
        return None

    with seated("pasur", player(random.Random(14), extra), players=2,
                options={"target": 1}) as r:
        r.bots = [None, slow_bot]
        repl.play(r)
    assert sent and asked == ["Leave the game? [y/N] "]
    assert r.table.winner is not None  # the game went on after "n"


def _parse(r: repl.Repl, turn: moves.Turn, text: str) -> int | None:
    """What the prompt makes of ``text`` typed at ``turn`` (None: refused or asked)."""
    r.turn, r.choices = turn, None
    return r.take_move(text)


def test_leaving_with_save_writes_the_finished_deals(tmp_path):
    saved = tmp_path / "left.json"
    dealt: list[str] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        if message.startswith("Enter for the next deal"):
            dealt.append(message)
            return "quit"
        if message.startswith("Leave"):
            return "y"
        return None

    rng = random.Random(21)
    with seated("pasur", player(rng, extra), players=2, options={"target": 60}) as r:
        r.save_to = str(saved)
        assert repl.play(r) == 0
    assert dealt and "left the game" in r.transcript
    assert f"hand history saved to {saved}" in r.transcript
    assert len(json.loads(saved.read_text())["hands"]) == 1  # the one finished deal


def test_a_pasur_card_with_several_captures_asks_which():
    asked: list[str] = []

    def extra(r: repl.Repl, message: str) -> str | None:
        turn = r.turn
        if message.startswith("which one") and asked:
            return "2"
        if not message.startswith("your move") or turn is None or asked:
            return None
        by_card: dict[str, list[int]] = {}
        for text, action in turn.texts.items():
            by_card.setdefault(text.split()[1], []).append(action)
        several = next((c for c, actions in by_card.items() if len(actions) > 1), None)
        if several is None:
            return None
        asked.append(several)
        return several  # the card alone
    rng = random.Random(5)
    with seated("pasur", player(rng, extra), players=2, options={"target": 1}) as r:
        repl.play(r)
    assert asked, "no card with two captures came up"
    which = [line for line in r.transcript if line.startswith("which one? ")]
    second = re.search(r"2: (.*?)(?:, 3: | \(type)", which[0])
    assert second is not None and "1: " in which[0]
    assert f"  you: {second[1]}" in r.transcript  # "2" played the second


def test_control_nut_gifts_are_told_with_the_seats_names() -> None:
    """A hand-out names its receivers as they are typed and completed (``A9:bot1``),
    never by seat number, in the lines told and in ``history``."""
    rng = random.Random(5)
    with seated("controlnut", player(rng), options={"target": 1}) as r:
        repl.play(r)
    gifts = [line for line in r.transcript if ": give " in line]
    assert gifts, "no hand-out was told"
    for line in gifts:
        for word in line.split(": give ", 1)[1].split():
            card, _, seat = word.partition(":")
            assert seat in ("you", "bot1", "bot2", "bot3") or card == "?", line
