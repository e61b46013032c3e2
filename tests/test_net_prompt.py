"""A person at a networked table: the prompt (pipe input, dummy output, Trio as
prompt-toolkit's guest, as at a terminal) plays a whole game against a joiner's
bot over TLS, chats both ways, shows the roster and safety number, and refuses
an illegal move."""

from __future__ import annotations

import random
from pathlib import Path

import trio
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pcards.bots import heuristic_bot
from p2pcards.cli import guest
from p2pcards.cli.netrepl import NetPrompt
from p2pcards.net.driver import Settings
from p2pcards.net.host import Host, HostConfig
from p2pcards.net.identity import device_id, load_or_create, show_id
from p2pcards.net.journal import Journal
from tests.net_helpers import Lines, make_joiner, maker


def seated_host(tmp_path: Path, pipe: PipeInput, settings: Settings) -> tuple[NetPrompt, Host]:
    """Hosty's two-seat Pasur table, with a person at the host's prompt (pipe input)."""
    prompt = NetPrompt("pasur", input=pipe, output=DummyOutput())
    config = HostConfig("pasur", 2, {"target": 20}, "hosty", None, [], settings)
    host = Host(load_or_create(tmp_path / "host"), config, maker,
                Journal.open(tmp_path / "host.journal"), say=prompt.show, person=prompt)
    return prompt, host


def test_a_person_plays_chats_and_sees_the_roster(tmp_path: Path) -> None:
    rng = random.Random(3)
    with create_pipe_input() as pipe:
        prompt, host = seated_host(tmp_path, pipe, Settings(grace=60, hint=True))
        joiner_lines = Lines()

        async def game() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(prompt.run)
                invite = await nursery.start(host.serve)
                joiner = make_joiner(tmp_path, invite, "joe")
                joiner.say = joiner_lines
                nursery.start_soon(joiner.run)
                await host.started.wait()
                pipe.send_text("who\nsay hello from the host\n")
                while joiner.link is None or joiner.peer is None:
                    await trio.sleep(0.01)
                await joiner.chat("hi, joe here")
                typed_wrong = False
                while not (host.peer and host.peer.over):
                    turn = prompt.turn
                    if turn is not None and prompt.chosen is not None:
                        if not typed_wrong:
                            pipe.send_text("play ZZ\n")  # not a card: refused, asked again
                            typed_wrong = True
                        move = turn.view.format_action(heuristic_bot(turn.view.clone(), rng),
                                                       seat=prompt.seat)
                        pipe.send_text(move + "\n")
                        while prompt.turn is turn:
                            await trio.sleep(0.005)
                    await trio.sleep(0.005)
                nursery.cancel_scope.cancel()

        guest.run(game)
    shown = "\n".join(prompt.transcript)
    assert host.peer is not None and host.peer.over
    assert f"safety number: {host.peer.roster.safety_number()}" in shown
    # the deck, on the screen the table is seated on and in ``who``, and at the joiner
    deck = "deck: proved (cheating refused at once; unplayed cards stay secret)"
    assert shown.count(deck) >= 2 and deck in joiner_lines
    joe = show_id(device_id(host.peer.roster.seats[1].identity), 4)
    assert f"1: joe [{joe}] (heuristic bot run by seat 1)" in shown  # a short id by each name
    assert "\n  joe: play " in shown and "\n  you: play " in shown  # moves by name
    assert "joe: hi, joe here" in shown
    assert "hosty: hello from the host" in joiner_lines
    assert "not accepted:" in shown and "legal:" in shown
    assert "your hand:" in shown
    assert "joe (" in shown and "sits at seat 1" in shown


def test_the_turn_timer_plays_for_a_person_who_does_not_move(tmp_path: Path) -> None:
    with create_pipe_input() as pipe:
        prompt, host = seated_host(tmp_path, pipe, Settings(grace=60, timer=0.05))

        async def game() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(prompt.run)
                invite = await nursery.start(host.serve)
                nursery.start_soon(make_joiner(tmp_path, invite, "joe").run)
                with trio.fail_after(120):
                    while not (host.peer and host.peer.over):
                        await trio.sleep(0.05)
                nursery.cancel_scope.cancel()

        guest.run(game)
    assert host.peer is not None and host.peer.over
    assert any(line.startswith("time is up: ") for line in prompt.transcript)


def test_a_person_proposes_to_void_and_chats_before_the_table_fills(tmp_path: Path) -> None:
    with create_pipe_input() as pipe:
        prompt, host = seated_host(tmp_path, pipe, Settings(grace=60))
        joiner_lines = Lines()

        async def game() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(prompt.run)
                invite = await nursery.start(host.serve)
                pipe.send_text("say early bird\n")  # before anyone else is seated
                while not any("not seated yet" in line for line in prompt.transcript):
                    await trio.sleep(0.01)
                joiner = make_joiner(tmp_path, invite, "joe")
                joiner.say = joiner_lines
                nursery.start_soon(joiner.run)
                with trio.fail_after(60):
                    while prompt.turn is None:
                        await trio.sleep(0.01)
                    pipe.send_text("void a misdeal\n")
                    while not any("does not consent" in line for line in prompt.transcript):
                        await trio.sleep(0.01)
                nursery.cancel_scope.cancel()

        guest.run(game)
    shown = "\n".join(prompt.transcript)
    assert "you propose to void the deal: a misdeal" in shown
    assert "joe does not consent: the deal goes on" in shown  # (a bot keeps playing)
    assert any("hosty: early bird" in line for line in joiner_lines)


def test_the_prompt_asks_yes_or_no_without_a_second_reader() -> None:
    """A question asked while the prompt is open (a joiner trusting a host fingerprint
    not in its invite) is answered at the prompt itself."""
    answers: list[bool] = []
    with create_pipe_input() as pipe:
        prompt = NetPrompt("pasur", input=pipe, output=DummyOutput())

        async def ask() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(prompt.run)
                for typed in ("maybe\nyes\n", "n\n"):

                    async def answer(typed: str = typed) -> None:
                        while prompt.question is None:
                            await trio.sleep(0.01)
                        pipe.send_text(typed)  # ("maybe" is neither: asked on)

                    nursery.start_soon(answer)
                    answers.append(await prompt.yes_or_no("Host ABCD. Trust it?"))
                nursery.cancel_scope.cancel()

        guest.run(ask)
    assert answers == [True, False]
    assert prompt.transcript.count("Host ABCD. Trust it? answer yes or no") == 3  # (maybe)
