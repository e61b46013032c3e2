"""Peers of a networked table wired together in memory (no sockets): the tests'
stand-in for the host's relay, with a way to kill a peer and bring it back; and a
host and its joiners as the tests make them, linked by TLS on loopback or by
memory streams."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
import trio.testing

from p2pcards.bots import Bot, heuristic_bot, make_bot
from p2pcards.games.game import Game
from p2pcards.net.driver import Settings
from p2pcards.net.host import Host, HostConfig
from p2pcards.net.identity import load_or_create
from p2pcards.net.invite import Invite
from p2pcards.net.join import Joiner
from p2pcards.net.journal import Journal
from p2pcards.net.peer import Peer
from p2pcards.net.tls import Dial
from p2pcards.table.codec import public_bytes, unpack
from p2pcards.table.memory import seat_identity
from p2pcards.table.roster import DEFAULT_DECK, PIPELINED_DECK, make_roster
from p2pcards.table.verify import verify


def peer_seed(seed: object, seat: int) -> bytes:
    return hashlib.sha256(f"p2pcards/test-peer/{seed}/{seat}".encode()).digest()


class Relay:
    """One peer per seat; every message goes to every other live peer."""

    def __init__(self, directory: Path, game: str, players: int, seed: object,
                 options: dict[str, int] | None = None, *, replace: str = "",
                 run_by: dict[int, int] | None = None, deck: str = PIPELINED_DECK):
        """``run_by``: bot seat -> the seat whose peer runs it (that peer holds both);
        ``deck``: the table's deck as its roster names it (the proved one, pipelined,
        unless told: what a host of peers of this build records)."""
        self.directory = directory
        self.seed = seed
        keys = [seat_identity(seed, s) for s in range(players)]
        table = hashlib.sha256(f"p2pcards/test-table/{seed}".encode()).digest()[:16]
        run_by = run_by or {}
        self.roster = make_roster(table, game, [public_bytes(k.public_key()) for k in keys],
                                  options=options, run_by=run_by,
                                  bots=["heuristic" if s in run_by else ""
                                        for s in range(players)], deck=deck)
        self.peers: list[Peer | None] = [
            None if s in run_by else
            Peer(self.roster, {t: keys[t] for t in range(players) if run_by.get(t, t) == s},
                 peer_seed(seed, s), Journal.open(self.path(s)),
                 {"table": {"replace": replace}})
            for s in range(players)]
        self.log: list[bytes] = []

    def path(self, seat: int) -> Path:
        return self.directory / f"seat{seat}.journal"

    def live(self) -> list[Peer]:
        return [p for p in self.peers if p is not None]

    def deliver(self, after: Callable[[int, str], bool] | None = None) -> bool:
        """Carry every message; ``after(seat, kind)`` True kills that seat's peer right
        after it sent that message (the ones before it were sent).  True if a peer
        was killed."""
        moved = True
        while moved:
            moved = False
            for seat, peer in enumerate(self.peers):
                if peer is None:
                    continue
                for wire in peer.take_outgoing():
                    moved = True
                    self.log.append(wire)
                    for other in self.live():
                        if other is not peer:
                            other.receive(wire)
                    kind = unpack(unpack(wire, "envelope")[0], "payload")[6]  # (a stand-in's
                    # key is not in the first roster)
                    if after is not None and after(seat, kind):
                        assert peer.journal is not None
                        peer.journal.abandon()  # killed: its open files go with it
                        self.peers[seat] = None
                        return True
            if not moved:  # idle: the deferred shuffle proofs (the drivers do it too)
                for peer in self.live():
                    peer.check_pending()
                    moved = moved or bool(peer.outgoing)
        return False

    def step(self, after: Callable[[int, str], bool] | None = None) -> bool | None:
        """Deliver, then one decision; None when nothing can happen, True on a kill."""
        if self.deliver(after):
            return True
        for peer in self.live():
            for seat, view in peer.decisions().items():
                rng = random.Random(f"{self.seed}:{seat}:{len(peer.main.transcript)}")
                peer.act(seat, heuristic_bot(view.clone(), rng))
                return False
        return None

    def play(self, after: Callable[[int, str], bool] | None = None) -> bool:
        """Play until the game is over or stuck (False), or a peer is killed (True)."""
        while True:
            result = self.step(after)
            if result is None:
                return False
            if result:
                return True

    def restart(self, seat: int) -> Peer:
        """Bring a killed peer back from its journal, as a rejoin does: it is sent every
        message the table has seen, and sends again everything it sent."""
        peer = Peer.restore(Journal.open(self.path(seat)))
        self.rejoin(seat, peer)
        return peer

    def rejoin(self, seat: int, peer: Peer) -> None:
        """Seat ``peer`` (restored from ``seat``'s journal) and exchange what a rejoin
        exchanges: the table's messages to it, its own to the others."""
        self.peers[seat] = peer
        for wire in self.log:
            peer.receive(wire)
        for wire in peer.mine:
            for other in self.live():
                if other is not peer:
                    other.receive(wire)

    def history(self, seat: int = 0) -> str:
        peer = self.peers[seat]
        assert peer is not None
        report = verify(peer.main.export())
        assert report.ok, report.problem
        assert report.history is not None
        return report.history.dumps()


# ------------------------------------------------------------------ hosts and joiners


def maker(kind: str, game: Game) -> Bot:
    """Fifty iterations a move, whatever the game (a test's bots answer at once)."""
    return make_bot(kind, iterations=50)


class Lines(list[str]):
    """What a peer says, kept for the test's asserts and echoed to the test's captured
    output (shown with a failure: what each peer saw before, say, a game stalled)."""

    def __init__(self, who: str = "") -> None:
        super().__init__()
        self.who = who

    def __call__(self, line: str) -> None:
        self.append(line)
        print(f"[{self.who or 'peer'}] {line}")


def make_host(tmp_path: Path, game: str = "pasur", *, players: int = 2, bots: int = 0,
              options: dict[str, int] | None = None, grace: float = 60,
              deck: str = DEFAULT_DECK) -> Host:
    config = HostConfig(game, players, options or {"target": 20}, "hosty", "heuristic",
                        ["heuristic"] * bots, Settings(grace=grace), deck=deck)
    return Host(load_or_create(tmp_path / "host"), config, maker,
                Journal.open(tmp_path / "host.journal"), say=Lines("host"), seed=1)


def make_joiner(tmp_path: Path, invite: Invite, name: str, bots: int = 0,
                dial: Dial | None = None) -> Joiner:
    joiner = Joiner(load_or_create(tmp_path / name), invite, name, "heuristic",
                    ["heuristic"] * bots, maker, Journal.open(tmp_path / f"{name}.journal"),
                    say=Lines(name), seed=2)
    if dial is not None:
        joiner.dial = dial
    return joiner


def memory_stream(host: Host) -> trio.abc.Stream:
    """A new link to ``host`` over a memory stream (the host must be running)."""
    ours, theirs = trio.testing.memory_stream_pair()
    host.accept(theirs)
    return ours


def memory_dial(host: Host) -> Dial:
    """Dials ``host`` over memory streams, wherever an invite says it is."""
    async def dial(_address: str, _port: int) -> tuple[trio.abc.Stream, bytes]:
        try:
            return memory_stream(host), host.identity.id
        except trio.ClosedResourceError as exc:  # as a closed port refuses
            raise ConnectionRefusedError(str(exc)) from exc
    return dial


class Valve:
    """Holds what peers send over the streams it wraps while it is shut (a peer that
    waits on them waits too: the tests stop a game at a point of their choosing)."""

    def __init__(self) -> None:
        self._open = trio.Event()
        self._open.set()

    def shut(self) -> None:
        if self._open.is_set():
            self._open = trio.Event()

    def open(self) -> None:
        self._open.set()

    def wrap(self, stream: trio.abc.Stream) -> trio.abc.Stream:
        return _Held(stream, self)

    async def wait(self) -> None:
        await self._open.wait()


class _Held(trio.abc.Stream):
    def __init__(self, inner: trio.abc.Stream, valve: Valve):
        self.inner = inner
        self.valve = valve

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.valve.wait()
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


def held_dial(host: Host, valve: Valve) -> Dial:
    """As :func:`memory_dial`, with what the dialler sends held while ``valve`` is
    shut."""
    dial = memory_dial(host)

    async def held(address: str, port: int) -> tuple[trio.abc.Stream, bytes]:
        stream, seen = await dial(address, port)
        return valve.wrap(stream), seen
    return held


def histories(*peers: Any) -> set[str]:
    """The hand histories the peers' transcripts verify to, each transcript verified
    (and found clean); peers whose transcripts are the same bytes are verified once."""
    out = set()
    for data in {peer.main.export() for peer in peers}:
        report = verify(data)
        assert report.ok, report.problem
        assert report.history is not None
        out.add(report.history.dumps())
    return out
