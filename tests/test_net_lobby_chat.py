"""Chat in the lobby (link version 8), over memory streams (no sockets): a line said
before every seat is taken reaches everyone already there, named by who said it and
marked as relayed by the host; a link of version 7 hears it in a ``notice`` and may not
send one; a flood cuts its link; what cannot be shown is never shown.  Every host
started is stopped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trio
from prompt_toolkit.output import DummyOutput

from p2pcards.cli.netrepl import QUEUED_CHAT, NetPrompt
from p2pcards.net import links
from p2pcards.net.frames import (
    LOBBY_CHAT_VERSION,
    MAX_CHAT,
    VERSIONS,
    ChatLine,
    FrameError,
    LobbyChat,
    LobbyFrame,
    Notice,
    Welcome,
)
from p2pcards.net.host import Host
from p2pcards.net.identity import load_or_create
from p2pcards.net.join import Joiner
from p2pcards.net.lobbychat import LOBBY_CHATS, LobbyTalk, shown
from p2pcards.net.wire import Link
from tests.net_helpers import make_host, make_joiner, memory_dial
from tests.test_net_relay import admitted, refused_with

CONTROL = "\x1b[2J\x1b]0;owned\x07\r\nrm -rf\u202e\x00"
"""What a hostile peer may put in a line: a screen clear, a title set with a bell, a
carriage return and a newline, a right-to-left override, a NUL."""


def safe(line: str) -> bool:
    return all(c.isprintable() for c in line)


async def until(check: Callable[[], bool]) -> None:
    with trio.fail_after(10):
        while not check():
            await trio.sleep(0.01)


async def joined(host: Host, joiner: Joiner, nursery: trio.Nursery, free: int) -> None:
    nursery.start_soon(joiner.run)
    await until(lambda: host.free == free and joiner.lobby_seen is not None)


async def notice_of(link: Link, beginning: str, most: int = 20) -> Notice:
    """The first notice on a raw link that begins with ``beginning`` (skipping the
    lobby's frames and the notices of joins)."""
    with trio.fail_after(10):
        for _ in range(most):
            frame = await link.receive()
            assert not isinstance(frame, LobbyChat)  # (never sent to a link below 8)
            if isinstance(frame, Notice) and frame.text.startswith(beginning):
                return frame
    raise AssertionError(f"no notice {beginning!r}")


# ------------------------------------------------------------------ sans I/O


def test_a_flood_is_bounded_per_identity_and_the_window_forgets() -> None:
    talk = LobbyTalk()
    for i in range(LOBBY_CHATS):
        assert talk.take(b"joe", f"line {i}", now=float(i)) == f"line {i}"
    with pytest.raises(FrameError, match=f"more than {LOBBY_CHATS} lobby chat lines in 10 s:"
                                         " a flood"):
        talk.take(b"joe", "one too many", now=5.0)
    assert talk.take(b"ann", "another identity counts apart", now=5.0)
    assert talk.take(b"joe", "the window moved on", now=10.5) == "the window moved on"


def test_what_cannot_be_shown_is_not_relayed_nor_shown() -> None:
    talk = LobbyTalk()
    text = talk.take(b"eve", "  hi" + CONTROL + "x" * 300 + "  ", now=0.0)
    assert safe(text) and "\x1b" not in text and "\n" not in text and "\u202e" not in text
    assert len(text) <= MAX_CHAT and text.startswith("hi?[2J?]0;owned?  rm -rf??")
    assert talk.take(b"eve", " \t ", now=1.0) == ""  # (nothing to show: not relayed)
    line, older = LobbyTalk.frames("eve" + CONTROL, b"e" * 32, text)
    assert safe(line.name or "") and safe(older.text) and len(older.text) <= 200
    # a hostile host's line, shown by a joiner: printable, one line, marked as relayed
    said = shown(LobbyChat(text=CONTROL, name="ev\x1be", id=b"e" * 32), host_id=b"h" * 32)
    assert safe(said) and said.startswith("ev?e (via the host): ")
    assert shown(LobbyChat(text="hi", name="hal", id=b"h" * 32), b"h" * 32) == \
        "hal (the host): hi"


def test_the_prompt_says_in_the_lobby_and_holds_lines_for_an_older_host() -> None:
    prompt = NetPrompt("pasur", output=DummyOutput())
    sent: list[str] = []

    async def lobby_chat(text: str) -> bool | None:
        sent.append(text)
        return True

    async def older(text: str) -> bool | None:
        return None

    async def typing() -> None:
        prompt.lobby_chat = lobby_chat
        await prompt.take("say hello all")
        prompt.lobby_chat = older  # (a host below version 8: held, as before)
        for i in range(QUEUED_CHAT + 1):
            await prompt.take(f"say wait {i}")
    trio.run(typing)
    assert sent == ["hello all"]
    assert "you (in the lobby): hello all" in prompt.transcript
    assert prompt.queued == [f"wait {i}" for i in range(QUEUED_CHAT)]
    assert prompt.transcript[-1].endswith("lines wait already: not said")


# ------------------------------------------------------------------ over links


async def test_a_line_said_in_the_lobby_reaches_everyone_there(tmp_path: Path) -> None:
    """Joe and ann sit at a table of four; joe, ann and the host talk before the last
    seat is taken; eve's p2pcards speaks version 7: she hears each line as the host's
    notice, and may not send one."""
    assert VERSIONS[1] == LOBBY_CHAT_VERSION
    host = make_host(tmp_path, players=5)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        joe = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        ann = make_joiner(tmp_path, invite, "ann", dial=memory_dial(host))
        await joined(host, joe, nursery, free=3)
        await joined(host, ann, nursery, free=2)
        eve, answer = await admitted(host, load_or_create(tmp_path / "eve"), name="eve",
                                     versions=(2, 7))
        assert isinstance(answer, Welcome)
        await until(lambda: host.free == 1)

        assert await joe.lobby_chat("hi all" + CONTROL)
        await until(lambda: any("hi all" in line for line in ann.say))
        (line,) = [line for line in ann.say if "hi all" in line]
        assert line.startswith("joe (via the host): hi all") and safe(line)
        assert any(line.startswith("joe: hi all") and safe(line) for line in host.say)
        notice = await notice_of(eve, "joe said in the lobby: hi all")
        assert safe(notice.text)

        assert await host.lobby_chat("welcome, one seat left")
        for joiner in (joe, ann):
            await until(lambda j=joiner: "hosty (the host): welcome, one seat left" in j.say)
        assert not any("hi all" in line for line in joe.say)  # (not sent back to its sayer)

        await eve.send(LobbyChat(text="me too"))  # (version 7 has no lobby chat)
        assert "an 'lchat' frame on a link of version 7" in await refused_with(eve)
        assert not any("me too" in line for line in joe.say + ann.say)
        nursery.cancel_scope.cancel()
    assert host.peer is None  # (the game never began: everything stopped)


async def test_a_flood_in_the_lobby_cuts_its_link_and_frees_its_seat(tmp_path: Path) -> None:
    host = make_host(tmp_path, players=4)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        joe = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        await joined(host, joe, nursery, free=2)
        eve, answer = await admitted(host, load_or_create(tmp_path / "eve"), name="eve")
        assert isinstance(answer, Welcome)
        await until(lambda: host.free == 1)
        for i in range(LOBBY_CHATS + 3):
            await eve.send(LobbyChat(text=f"spam {i}"))
        assert "a flood" in await refused_with(eve)
        await until(lambda: host.free == 2)
        await until(lambda: sum("spam" in line for line in joe.say) >= LOBBY_CHATS)
        await trio.sleep(0.1)
        heard = [line for line in joe.say if "spam" in line]
        assert len(heard) == LOBBY_CHATS  # (no more than the budget reached anyone)
        # a signed chat line before the game still closes the link, as it always did
        ben, _ = await admitted(host, load_or_create(tmp_path / "ben"), name="ben")
        await ben.send(ChatLine(seat=1, n=1, text="hi", sig=b"s" * 64))
        assert "chat before the game began" in await refused_with(ben)
        nursery.cancel_scope.cancel()


async def test_a_fast_typist_is_told_to_wait_and_keeps_the_seat(tmp_path: Path) -> None:
    """Lines typed faster than the host allows are refused at the joiner, said, and never
    sent: the link stays and the seat stays."""
    host = make_host(tmp_path, players=4)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        joe = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        await joined(host, joe, nursery, free=2)
        sent = [await joe.lobby_chat(f"line {i}") for i in range(LOBBY_CHATS + 2)]
        assert sent == [True] * LOBBY_CHATS + [False, False]
        assert sum(line.startswith("not said: at most") for line in joe.say) == 2
        await until(lambda: sum(f"line {i}" in " ".join(host.say)
                                for i in range(LOBBY_CHATS)) == LOBBY_CHATS)
        assert host.free == 2 and joe.link is not None  # (still seated, still linked)
        nursery.cancel_scope.cancel()


async def test_a_joiner_at_an_older_host_holds_its_lines(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    """Host and joiner speak version 7 at most (an older build): the joiner sends no
    lobby chat (the prompt holds the line for the game), and the host sends none."""
    monkeypatch.setattr(links, "VERSIONS", (2, LOBBY_CHAT_VERSION - 1))
    host = make_host(tmp_path, players=4)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        joe = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        ann = make_joiner(tmp_path, invite, "ann", dial=memory_dial(host))
        await joined(host, joe, nursery, free=2)
        await joined(host, ann, nursery, free=1)
        assert joe.version == LOBBY_CHAT_VERSION - 1
        assert await joe.lobby_chat("hello?") is None
        assert await host.lobby_chat("hi, older peers")
        await until(lambda: any("hi, older peers" in line for line in joe.say))
        assert "[host] hosty said in the lobby: hi, older peers" in joe.say
        assert isinstance(joe.lobby_seen, LobbyFrame)
        nursery.cancel_scope.cancel()


def test_a_link_that_reads_nothing_misses_lobby_lines_past_its_backlog() -> None:
    """A seat's queue has no bound (the table waits for its seats), so the lobby's lines
    stop going to a link once LOBBY_BACKLOG frames wait for it; the others get each."""
    from types import SimpleNamespace  # noqa: PLC0415

    from p2pcards.net.lobbychat import LOBBY_BACKLOG  # noqa: PLC0415
    from p2pcards.net.pump import Pump  # noqa: PLC0415
    from p2pcards.net.relay import TableRelay  # noqa: PLC0415

    def seat() -> SimpleNamespace:
        return SimpleNamespace(pump=Pump.open(None), link=SimpleNamespace(  # type: ignore[arg-type]
            version=LOBBY_CHAT_VERSION))

    idle, reading = seat(), seat()
    relay = SimpleNamespace(links=[idle, reading])
    for i in range(LOBBY_BACKLOG + 40):
        TableRelay.lobby_say(relay, "hal", b"h" * 32, f"line {i}")  # type: ignore[arg-type]
        while reading.pump.queued.statistics().current_buffer_used:  # (it reads)
            reading.pump.queued.receive_nowait()
    assert idle.pump.out.statistics().current_buffer_used == LOBBY_BACKLOG
