"""Watchers at the host's relay, over memory streams: who is refused, what a hostile or
slow watcher can do (it is cut off or dropped, and the game goes on), and a watcher
that follows a whole game ends with the players' hand history.
tests/test_net_watch_procs.py watches real processes over TLS."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
import trio
import trio.testing
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pcards.cli.watchrepl import WatchPrompt
from p2pcards.net import watchers
from p2pcards.net.client import JoinError
from p2pcards.net.frames import Auth, Error, Frame, HelloFrame, Msg, WatchChat, Watching
from p2pcards.net.host import Host
from p2pcards.net.identity import Identity, load_or_create
from p2pcards.net.invite import proof
from p2pcards.net.settings import Settings
from p2pcards.net.watch import Watch
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.roster import AGREED_DECK, LOCK_DECK, PROVED_DECK
from p2pcards.table.session import WATCHER, Session
from p2pcards.table.verify import verify
from tests.net_helpers import (
    Lines,
    Relay,
    Valve,
    held_dial,
    histories,
    make_host,
    make_joiner,
    memory_dial,
    memory_stream,
)


async def watching(host: Host, identity: Identity, name: str = "eve",
                   link: Link | None = None, versions: tuple[int, int] | None = None
                   ) -> tuple[Link, Frame]:
    """A link that asks to watch, as ``identity`` (offering ``versions``: this build's
    unless told); the host's answer."""
    invite = host.invite()
    link = link or Link(memory_stream(host), "test")
    await link.send(HelloFrame() if versions is None else HelloFrame(versions=versions))
    first = await link.receive()
    assert isinstance(first, HelloFrame) and first.nonce is not None
    await link.send(Auth(key=identity.public, name=name, token=invite.token, bot="",
                         sig=proof(identity.key, first.nonce, invite.fingerprint or b"",
                                   invite.token), watch=True))
    return link, await link.receive()


async def reason(link: Link) -> str:
    """Why the host closes ``link`` (what it sends before is skipped)."""
    with trio.fail_after(10):
        try:
            while True:
                frame = await link.receive()
                if isinstance(frame, Error):
                    return frame.reason
        except LinkClosed:
            return "closed without a reason"


def watch(tmp_path: Path, host: Host, name: str) -> Watch:
    return Watch(load_or_create(tmp_path / name), host.invite(), name, say=Lines(name),
                 dial=memory_dial(host))


def said_count(host: Host, text: str) -> int:
    return sum(text in line and "watches the table" in line
               for line in host.say)  # type: ignore[attr-defined]


@pytest.mark.parametrize("cut", [8, 40, 60])
async def test_a_seat_and_one_over_the_limit_are_refused_and_a_watcher_comes_back(
        tmp_path: Path, cut: int) -> None:
    """``cut``: the messages the watcher holds when its link breaks (a game here has
    some 70 or more: a deal of Pasur at two seats, its shares on the agreements and no
    ``opened`` reports)."""
    host = make_host(tmp_path)
    host.watchers.most = 1
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        _link, answer = await watching(host, host.identity)  # seated: the host's own seat
        assert isinstance(answer, Error)
        assert "has a seat at this table: it plays, it does not watch" in answer.reason
        first = watch(tmp_path, host, "wendy")
        done = trio.Event()

        async def follow() -> None:
            await first.run()
            done.set()
        nursery.start_soon(follow)
        with trio.fail_after(10):
            while not host.watchers.links:
                await trio.sleep(0.01)
        with pytest.raises(JoinError, match="the table has 1 watchers already, the most"):
            await watch(tmp_path, host, "walt").run()
        # The watcher's link breaks in the game, and it comes back.  Joe's moves are
        # held meanwhile, so that the game cannot end before it is back, however fast
        # the bots play (a watcher away when the table closes retries for minutes).
        valve = Valve()
        joiner = make_joiner(tmp_path, invite, "joe", dial=held_dial(host, valve))
        nursery.start_soon(joiner.run)
        with trio.fail_after(30):
            while host.peer is None or len(host.peer.log) < cut + 4:
                await trio.sleep(0.01)
            valve.shut()
            while first.session is None or len(first.session.transcript) < cut:
                await trio.sleep(0.01)
        await host.watchers.links[0].link.stream.aclose()
        with trio.fail_after(30):
            while said_count(host, "wendy (") < 2:
                await trio.sleep(0.01)
        assert not host.peer.over  # type: ignore[union-attr]
        valve.open()
        with trio.fail_after(180):  # (the rest of the game: a safety net, not a measure)
            await done.wait()
    assert any("lost the host" in line for line in first.say)  # type: ignore[attr-defined]
    assert said_count(host, "wendy (") == 2  # (it watched twice: before and after)
    assert first.session is not None and first.session.over
    report = verify(first.session.export())
    assert report.ok and report.history is not None
    assert histories(host.peer, joiner.peer) == {report.history.dumps()}
    assert first.refused == 0
    said = "\n".join(host.say)  # type: ignore[arg-type]
    assert "wendy (" in said and "watches the table" in said


async def test_no_watchers_where_the_host_takes_none(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.watchers.most = 0
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        _link, answer = await watching(host, load_or_create(tmp_path / "eve"))
        assert isinstance(answer, Error) and "takes no watchers" in answer.reason
        nursery.cancel_scope.cancel()


async def test_a_watcher_of_version_6_is_let_go_when_the_table_sends_shares_on_agreeing(
        tmp_path: Path) -> None:
    """A watcher of the lobby whose link speaks version 6 could not follow a roster
    naming ``proved-ahead-2``: when every seat's peer speaks 7 and the table begins so,
    it is told why and let go, and a watcher of version 7 follows the game."""
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        old, answer = await watching(host, load_or_create(tmp_path / "old"), "old",
                                     versions=(2, 6))
        assert isinstance(answer, Watching)
        new, answer = await watching(host, load_or_create(tmp_path / "new"), "new")
        assert isinstance(answer, Watching)
        joiner = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        nursery.start_soon(joiner.run)
        assert await reason(old) == (
            "protocol version mismatch: this table's roster names the proved deck with"
            " the next deal shuffled ahead and its shares sent on the agreement"
            " (proved-ahead-2), which needs version 7; upgrade p2pcards to take a seat at"
            " it or watch it")
        with trio.fail_after(10):
            while True:
                frame = await new.receive()
                if isinstance(frame, Msg):
                    break
        assert host.peer is not None and host.peer.roster.deck == AGREED_DECK
        assert [w.name for w in host.watchers.links] == ["new"]
        nursery.cancel_scope.cancel()


async def test_a_hostile_watcher_is_cut_off_and_the_game_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table message, a flood of chat, a frame over the cap: each cuts the watcher off;
    a watcher that stops reading is dropped when its queue is full.  The game finishes
    as if none had come."""
    monkeypatch.setattr(watchers, "WATCH_QUEUE", 8)  # (a short game fills it)
    host = make_host(tmp_path)
    host.watchers.chat = True
    eve = load_or_create(tmp_path / "eve")
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.run)
        link, answer = await watching(host, eve)
        assert answer == Watching(chat=True, most=watchers.DEFAULT_WATCHERS)
        await link.send(Msg(wire=b"\x01" * 100))
        assert "a watcher sends no 'msg' frame" in await reason(link)
        link, answer = await watching(host, eve)  # (it may come back: a watcher again)
        assert isinstance(answer, Watching)
        for i in range(watchers.WATCH_CHATS + 1):
            await link.send(WatchChat(text=f"spam {i}"))
        assert "chat lines in" in await reason(link)
        link, answer = await watching(host, eve)
        assert isinstance(answer, Watching)
        await link.send_map({"t": "wchat", "text": "x" * 5000})  # over the cap: not read
        assert "cap" in await reason(link)
        # a watcher that stops reading (a stream that blocks until read)
        ours, theirs = trio.testing.lockstep_stream_pair()
        host.accept(theirs)
        _slow, answer = await watching(host, load_or_create(tmp_path / "slow"), "slow",
                                       Link(ours, "test"))
        assert isinstance(answer, Watching)
        joiner = make_joiner(tmp_path, invite, "joe", dial=memory_dial(host))
        nursery.start_soon(joiner.run)
    assert host.peer is not None and host.peer.over and joiner.peer is not None
    assert len(histories(host.peer, joiner.peer)) == 1
    said = "\n".join(host.say)  # type: ignore[arg-type]
    assert "cut off the watcher eve: a watcher sends no 'msg' frame" in said
    assert f"dropped the watcher slow: its queue of {watchers.WATCH_QUEUE} frames is full" \
        in said
    assert host.watchers.dropped == 1
    assert "eve (watching): spam 0" in said  # (what it said before the flood went out)


async def chatting(host: Host, who: Identity, address: str, lines: int) -> str | None:
    """A watcher from ``address`` says ``lines`` lines (while it may) and leaves: why it
    was cut off (None: it was not)."""
    said: list[str] = host.say  # type: ignore[assignment]
    before = len(said)
    ours, theirs = trio.testing.memory_stream_pair()
    host.accept(theirs, address)
    link, answer = await watching(host, who, "w", Link(ours, "test"))
    assert isinstance(answer, Watching)
    with contextlib.suppress(LinkClosed):
        for i in range(lines):
            await link.send(WatchChat(text=f"line {i}"))
            await trio.testing.wait_all_tasks_blocked()
    await link.aclose()
    await trio.testing.wait_all_tasks_blocked()
    return next((line for line in said[before:] if "cut off the watcher" in line), None)


@pytest.mark.parametrize("weakened", [True, False])
async def test_watchers_chat_is_limited_per_identity_and_address_across_arrivals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_clock: trio.testing.MockClock,
        weakened: bool) -> None:
    """Watchers chat at a table that lets them, Trio's clock standing still: one identity
    that comes back has no more lines than it had; fresh identities from one address have
    WATCH_ADDRESS_CHATS lines between them, and then each is cut off at its first; a
    watcher from another address still chats.  Under the weakened rule (counted per
    link, as before) every arrival says its lines and the seats see them all."""
    if weakened:
        play = watchers.Watchers.play

        async def per_link(self: watchers.Watchers, *args: object) -> None:
            self.budget = watchers.ChatBudget()
            await play(self, *args)  # type: ignore[arg-type]
        monkeypatch.setattr(watchers.Watchers, "play", per_link)
    host = make_host(tmp_path)
    host.watchers.chat = True
    host.door.rejoins.burst = 100  # (the arrivals' pace is another limit)
    most = watchers.WATCH_CHATS
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        eve = load_or_create(tmp_path / "eve")
        cuts = [await chatting(host, eve, "10.0.0.1", most),  # all its lines
                await chatting(host, eve, "10.0.0.1", 1)]  # back: none left
        arrivals = watchers.WATCH_ADDRESS_CHATS // most + 2
        cuts += [await chatting(host, load_or_create(tmp_path / f"fresh{n}"), "10.0.0.2",
                                most) for n in range(arrivals)]
        cuts.append(await chatting(host, load_or_create(tmp_path / "far"), "10.0.0.3", 1))
        nursery.cancel_scope.cancel()
    shown = sum("(watching): line" in line for line in host.say)  # type: ignore[attr-defined]
    sent = most + 1 + arrivals * most + 1
    if weakened:
        assert shown == sent and cuts == [None] * len(cuts)
        return
    assert shown == most + watchers.WATCH_ADDRESS_CHATS + 1
    assert cuts[0] is None and cuts[1] is not None and "from its identity" in cuts[1]
    fresh = cuts[2:-1]
    assert fresh[:-2] == [None] * (arrivals - 2)
    assert all(cut is not None and "from its address" in cut for cut in fresh[-2:])
    assert cuts[-1] is None  # (another address)


async def no_chat(text: str) -> None:
    raise AssertionError("nothing is said here")


@pytest.mark.parametrize("deck", [LOCK_DECK, PROVED_DECK])
async def test_hand_seat_after_a_deal_shows_what_the_deck_revealed(
        tmp_path: Path, deck: str) -> None:
    """At the watcher's prompt, ``hand SEAT`` after a deal: the hand as dealt where the
    lock deck's audit revealed it, and a secret with the proved deck; a move is refused."""
    relay = Relay(tmp_path, "pasur", 2, seed=3, options={"target": 1}, deck=deck)
    assert not relay.play()
    session = Session(relay.roster, WATCHER, None)
    session.machine.tell = True
    for wire in relay.log:
        assert session.receive(wire) is None
    assert session.over and session.finished
    with create_pipe_input() as pipe:
        prompt = WatchPrompt("pasur", input=pipe, output=DummyOutput())
        prompt.seated(relay.roster, WATCHER, Settings(), no_chat)
        prompt.report(session, session.events)
        await prompt.take("hand 1")
        await prompt.take("play 7D")
        await prompt.take("hand nobody")
    said = "\n".join(prompt.transcript)
    name = relay.roster.seats[1].name
    if deck == LOCK_DECK:
        assert re.search(rf"{name} held, as dealt in deal \d+: \S", said), said
    else:
        assert f"{name}'s cards in deal" in said and "stay secret" in said, said
    assert "you are watching: the moves are the players'" in said
    assert "hand: no seat 'nobody' at this table" in said
