"""``p2pcards bench net``: real processes on loopback TLS.

For each game, a host and three joiners (four processes, heuristic bots in
every seat, each with its own identity in a temporary directory) play a
whole game over TLS on 127.0.0.1.  Reported: the time of each deal's
shuffle, lock and deal (from the deal's first ``hello`` to its first move, as
the host sees it: for Bid Whist, 54 cards among 4 processes; median and best), and the whole
game's wall time from the host's start (process start-up included).  Each game is played
with each deck: ``net.GAME.*`` with the lock deck (``--deck lock``), whose figures these
records have always been, and ``net.proved.GAME.*`` with the proved deck.  Every
peer's ``--stats`` are read side by side (:mod:`p2pcards.bench.peers`): a move's
time to every seat, the next hand's after a deal's last message, and with the
proved deck the multiplications of points that took (every peer counts them:
:data:`~p2pcards.protocol.proved.counting.COUNT_VARIABLE`).
With ``--rtt``, the same games are played with every joiner behind a delaying
proxy, a process of its own (:mod:`p2pcards.bench.rtt`).
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from p2pcards.bench.peers import wait_records
from p2pcards.bench.record import Record
from p2pcards.games import GAMES
from p2pcards.protocol.proved.counting import COUNT_VARIABLE


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def play_game(game: str, directory: Path, players: int | None = None,
              deck: str = "lock") -> dict[str, Any]:
    """One whole game among ``players`` processes (the game's usual number) with ``deck``;
    the host's stats."""
    return play_peers(game, directory, players, deck)[0]


def play_peers(game: str, directory: Path, players: int | None = None,
               deck: str | None = "lock", *, rtt_ms: float = 0,
               options: Sequence[str] = ()) -> list[dict[str, Any]]:
    """As :func:`play_game` (``deck`` None: the host's default; ``options``: the game's,
    ``NAME=N``), every joiner dialling the host through a proxy of round trip ``rtt_ms``
    (0: directly); every peer's stats, the host's first (each peer counts its
    multiplications of points)."""
    if players is None:
        players = GAMES[game].default_players
    port = _free_port()
    invite = directory / "invite"
    run = [sys.executable, "-m", "p2pcards"]
    common = ["--bot", "heuristic", "--bots-kind", "heuristic"]
    procs = []
    proxies: list[subprocess.Popen[bytes]] = []
    decks = [] if deck is None else ["--deck", deck]
    decks += [arg for option in options for arg in ("-o", option)]

    def spawn(name: str, args: list[str]) -> subprocess.Popen[bytes]:
        env = dict(os.environ, P2PCARDS_HOME=str(directory / name), **{COUNT_VARIABLE: "1"})
        return subprocess.Popen([*run, *args, "--stats", str(directory / f"{name}.json")],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    try:
        procs.append(spawn("host", ["host", game, "--name", "host", "--bind", "127.0.0.1",
                                    "--port", str(port),
                                    "--players", str(players), "--invite-file", str(invite),
                                    "--grace", "60", *decks, *common]))
        deadline = time.monotonic() + 30
        while not invite.exists():
            if time.monotonic() > deadline or procs[0].poll() is not None:
                raise RuntimeError(f"the {game} host did not start")
            time.sleep(0.02)
        text = invite.read_text().strip()
        if rtt_ms:  # (the invite names 127.0.0.1:PORT, --bind's address and --port)
            proxy = subprocess.Popen(
                [sys.executable, "-m", "p2pcards.net.proxy", f"127.0.0.1:{port}",
                 "--rtt", str(rtt_ms)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            proxies.append(proxy)
            assert proxy.stdout is not None
            near = proxy.stdout.readline().decode().strip()
            if not near.startswith("127.0.0.1:") or f"127.0.0.1:{port}/" not in text:
                raise RuntimeError("the delaying proxy did not start")
            text = text.replace(f"127.0.0.1:{port}/", f"{near}/", 1)
        procs.extend(spawn(f"p{i}", ["join", text, "--name", f"p{i}", *common])
                     for i in range(1, players))
        deadline = time.monotonic() + 600 + 2 * rtt_ms  # (a hop or so a move: ~1000 a game)
        while any(proc.poll() is None for proc in procs):  # a peer that fails stops it all
            failed = next((p for p in procs if p.poll() not in (None, 0)), None)
            if failed is not None or time.monotonic() > deadline:
                reason = "did not end in time" if failed is None else \
                    failed.stderr.read().decode() if failed.stderr else "failed"
                raise RuntimeError(f"a {game} peer failed: {reason}")
            time.sleep(0.05)
        failed = next((p for p in procs if p.returncode != 0), None)
        if failed is not None:
            assert failed.stderr is not None
            raise RuntimeError(f"a {game} peer failed: {failed.stderr.read().decode()}")
    finally:
        for proc in procs + proxies:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
    names = ["host", *(f"p{i}" for i in range(1, players))]
    return [json.loads((directory / f"{name}.json").read_text()) for name in names]


def bench_net(seconds: float = 2.0, games: Sequence[str] | None = None, *,
              players: int | None = None, options: Sequence[str] = ()) -> list[Record]:
    """Every game of ``games`` (default: all) with each deck, at ``players`` seats (the
    game's usual number) with the game's ``options``; ``seconds`` is not used (a game
    takes as long as it takes)."""
    records: list[Record] = []
    for game in games or list(GAMES):
        for deck, prefix in (("lock", "net"), ("proved", "net.proved")):
            with tempfile.TemporaryDirectory(prefix="p2pcards-bench-") as tmp:
                peers = play_peers(game, Path(tmp), players, deck, options=options)
            stats = peers[0]
            deals = stats["deal_ms"]
            name = f"{prefix}.{game}"
            records += [Record(f"{name}.deal_median", statistics.median(deals), "ms"),
                        Record(f"{name}.deal_best", min(deals), "ms"),
                        Record(f"{name}.whole_game", stats["game_seconds"], "s"),
                        Record(f"{name}.deals", stats["deals"], "deals"),
                        Record(f"{name}.messages", stats["messages"], "messages"),
                        *wait_records(name, peers, mults=deck == "proved")]
    return records
