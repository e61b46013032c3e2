"""Hostile participants for the chaos run, as real processes built on the project's
own library (docs/testing.md).

``python -m tests.hostile ITEM INVITE [join options]``

Seated items (:data:`SEATED`) are a joiner (``p2pcards join``, with every option
it takes) whose :class:`~p2pcards.net.join.Joiner` is patched:

- ``chat-flood``: once seated, sends chat lines faster than the host allows; when
  the host closes the link for it, comes back (as a joiner that lost its link
  does) and floods again, for the whole game.  It plays its seat meanwhile.
- ``evidence-flood``: at its second move, signs :data:`FORKS` other versions of it
  (same sequence number, another action) and sends them, a batch at a time, until the
  host closes its link; it plays on.
- ``fork-silent``: at its second move, signs a second version of its first move and
  sends it; at its next move sends instead a message on an invented transcript
  hash, and then falls silent (stays connected, sends nothing more).

Unseated items (:data:`UNSEATED`) connect to the host of the invite but never sit:

- ``preauth-junk``: connections that send junk (before TLS, after TLS, after a
  hello) or stay idle before their hello, a few a second, for ever.
- ``exhaust``: keeps :data:`IDLE` idle connections open (TCP, and TLS with no
  hello), opening new ones as the host drops them.

Whatever they draw from chance comes from a :class:`random.Random` of their own.
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import trio

from p2pcards.net import join as join_module
from p2pcards.net import tls
from p2pcards.net.frames import Error, Frame, HelloFrame
from p2pcards.net.invite import parse_invite
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.codec import open_envelope, seal_envelope
from p2pcards.table.decks import ACTS

SEATED = ("chat-flood", "evidence-flood", "fork-silent")
UNSEATED = ("preauth-junk", "exhaust")
FORKS = 20000
"""Forked versions the evidence flood signs (at most)."""
BATCH = 50
"""Forked versions signed and sent at a time (a few milliseconds of signing)."""
IDLE = 400
"""Idle connections the exhaustion holds open."""
BURST = 30
"""Chat lines in one flood (the host allows 10 in 10 seconds)."""


class HostileJoiner(join_module.Joiner):
    item = ""

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            if self.item == "chat-flood":
                nursery.start_soon(self._chat_flood)
            await super().run()
            nursery.cancel_scope.cancel()

    async def _frame(self, frame: Frame) -> None:
        if isinstance(frame, Error) and self.item == "chat-flood":
            self.say(f"hostile: the host closed the link ({frame.reason}); coming back")
            raise LinkClosed("closed for flooding")
        await super()._frame(frame)

    async def _chat_flood(self) -> None:
        rng = random.Random(f"chat-flood/{self.name}")
        floods = 0
        while True:
            await trio.sleep(rng.uniform(0.5, 3.0))
            if self.link is None or self.peer is None:
                continue
            floods += 1
            self.say(f"hostile: chat flood {floods}")
            for n in range(BURST):
                if self.link is None:
                    break
                await self.chat(f"flood {floods}.{n} " + "x" * rng.randint(0, 200))

    async def _send(self, wires: list[bytes]) -> None:
        if getattr(self, "silent", False):
            return
        await super()._send(wires)
        assert self.peer is not None
        keys = self.peer.roster.keys
        for wire in wires:
            env = open_envelope(wire, keys)
            if env.kind not in ACTS or env.sender not in self.peer.sessions:
                continue
            acts = getattr(self, "acts", [])
            acts.append(wire)
            self.acts = acts
            if self.item == "evidence-flood" and len(acts) == 2:
                await self._flood(wire)
            elif self.item == "fork-silent" and len(acts) == 2:
                await self._send_raw([self._version(acts[0], 1)])
            elif self.item == "fork-silent" and len(acts) == 3:
                await self._send_raw([self._version(wire, 0, invent=True)])
                self.silent = True
                assert self.driver is not None
                self.driver._decide = lambda: None  # type: ignore[method-assign]
                self.say("hostile: sent a message on an invented transcript; silent now")

    def _version(self, wire: bytes, n: int, invent: bool = False) -> bytes:
        """Another signed version of this seat's message ``wire``."""
        assert self.peer is not None
        env = open_envelope(wire, self.peer.roster.keys)
        key = self.peer.sessions[env.sender].identity
        assert key is not None
        prior = os.urandom(32) if invent else env.prior
        body = dict(env.body, action=f"{env.body.get('action', 'pass')} {n}")
        return seal_envelope(key, table=env.table, deal=env.deal, sender=env.sender,
                             seq=env.seq, prior=prior, kind=env.kind, body=body).wire

    async def _flood(self, wire: bytes) -> None:
        """FORKS versions of ``wire``, signed and sent a batch at a time while the link
        lasts (signing them all at once would keep this process from its turn for
        seconds, and the first fork, the evidence, would come only after a claim of
        silence)."""
        self.say(f"hostile: {self.item}: sending up to {FORKS} forged versions")
        link = self.link
        for start in range(0, FORKS, BATCH):
            if self.link is None or self.link is not link:
                self.say(f"hostile: {self.item}: the link closed after {start} of them")
                return
            await super()._send([self._version(wire, n)
                                 for n in range(start, min(start + BATCH, FORKS))])
            await trio.sleep(0)

    async def _send_raw(self, wires: list[bytes]) -> None:
        self.say(f"hostile: {self.item}: sending {len(wires)} forged version(s)")
        await super()._send(wires)


def seated(item: str, argv: list[str]) -> int:
    from p2pcards.cli.main import main  # noqa: PLC0415

    HostileJoiner.item = item
    join_module.Joiner = HostileJoiner  # type: ignore[misc]  # what cmd_join builds
    return int(main(["join", *argv]) or 0)


# ================================================================== unseated


async def _junk_once(address: str, port: int, rng: random.Random) -> None:
    way = rng.choice(["raw", "tls-junk", "hello-junk", "idle", "huge"])
    if way == "raw":
        stream: Any = await _tcp(address, port, rng)
        await stream.send_all(rng.randbytes(rng.randint(1, 4000)))
    else:
        stream = await _tls(address, port, rng)
        if way == "tls-junk":
            await stream.send_all(rng.randbytes(rng.randint(1, 4000)))
        elif way == "huge":  # a length prefix far over the cap, then a trickle
            await stream.send_all(b"\xff\xff\xff\xf0" + rng.randbytes(100))
        elif way == "hello-junk":
            link = Link(stream, "the host")
            await link.send(HelloFrame())
            await link.receive()
            await stream.send_all(rng.randbytes(rng.randint(1, 300)))
        else:
            await trio.sleep(rng.uniform(1.0, 20.0))
    with trio.move_on_after(2):
        await stream.receive_some(4096)
    await trio.aclose_forcefully(stream)


SOURCES = 40
"""The unseated items come from 127.0.0.2 to 127.0.0.41 when the host is on 127.0.0.1
(all loopback): another machine than the players', as an attacker would be, not behind
their address."""


async def _tcp(address: str, port: int, rng: random.Random) -> trio.SocketStream:
    local = f"127.0.0.{rng.randint(2, 1 + SOURCES)}" if address == "127.0.0.1" else None
    return await trio.open_tcp_stream(address, port, local_address=local)


async def _tls(address: str, port: int, rng: random.Random) -> trio.SSLStream[Any]:
    stream = trio.SSLStream(await _tcp(address, port, rng), tls.client_context(),
                            server_hostname=None)
    await stream.do_handshake()
    return stream


async def preauth_junk(address: str, port: int) -> None:
    rng = random.Random(f"preauth-junk/{port}")
    limit = trio.CapacityLimiter(20)

    async def one(seed: int) -> None:
        async with limit:
            try:
                await _junk_once(address, port, random.Random(seed))
            except Exception as exc:  # refused, reset, a frame error: it was junk anyway
                print(f"hostile: junk connection ended: {type(exc).__name__}: {exc}"[:200],
                      flush=True)

    async with trio.open_nursery() as nursery:
        while True:
            nursery.start_soon(one, rng.getrandbits(32))
            await trio.sleep(rng.uniform(0.05, 0.4))


async def exhaust(address: str, port: int) -> None:
    rng = random.Random(f"exhaust/{port}")
    held = [0]

    async def hold(seed: int) -> None:
        local = random.Random(seed)
        while True:
            try:
                if local.random() < 0.5:
                    stream: Any = await _tcp(address, port, local)
                else:
                    stream = await _tls(address, port, local)
                held[0] += 1
                try:
                    await stream.receive_some(4096)  # until the host drops it
                    while await stream.receive_some(4096):
                        pass
                finally:
                    held[0] -= 1
                    await trio.aclose_forcefully(stream)
            except Exception as exc:  # refused, reset: try again
                print(f"hostile: idle connection ended: {type(exc).__name__}: {exc}"[:200],
                      flush=True)
            await trio.sleep(local.uniform(0.1, 1.0))

    async with trio.open_nursery() as nursery:
        for _ in range(IDLE):
            nursery.start_soon(hold, rng.getrandbits(32))
            await trio.sleep(0.01)
        while True:
            print(f"hostile: {held[0]} idle connections held", flush=True)
            await trio.sleep(2)


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in SEATED + UNSEATED:
        print(f"usage: python -m tests.hostile {{{','.join(SEATED + UNSEATED)}}} INVITE"
              " [join options]", file=sys.stderr)
        return 2
    item, rest = argv[0], argv[1:]
    if item in SEATED:
        return seated(item, rest)
    invite = parse_invite(rest[0])
    trio.run(preauth_junk if item == "preauth-junk" else exhaust, invite.host, invite.port)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
