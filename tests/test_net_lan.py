"""LAN discovery, on loopback only: beacons to 127.0.0.1, a listener on 127.0.0.1
(tests never send to a multicast, broadcast or LAN address)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from p2pcards.net import lan
from p2pcards.net.driver import Settings
from p2pcards.net.host import Host, HostConfig
from p2pcards.net.identity import device_id, load_or_create
from p2pcards.net.journal import Journal
from tests.net_helpers import Lines, make_joiner, maker
from tests.test_net_procs import free_port


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_beacons_round_trip_and_junk_is_ignored() -> None:
    fp = device_id(b"h" * 32)
    heard = lan.read_beacon(lan.beacon("pasur", "hosty", 4000, fp, b"t" * 16, free=1), "10.1.2.3")
    assert heard.invite().host == "10.1.2.3" and heard.fingerprint == fp and heard.free == 1
    for junk in (b"", b"\xc1", b"x" * 600, lan.beacon("pasur", "h", 0, fp, b"t" * 16, free=1),
                 lan.beacon("pasur", "h", 1, b"short", b"t" * 16, free=1)):
        with pytest.raises(lan.BeaconError):
            lan.read_beacon(junk, "127.0.0.1")
    assert lan.parse_address(None) == lan.DEFAULT_GROUP
    assert lan.parse_address("[::1]:9") == ("::1", 9)
    for bad in ("nohost", "a.b:1", "127.0.0.1:0"):
        with pytest.raises(ValueError):
            lan.parse_address(bad)


async def test_a_table_is_heard_joined_and_then_dropped(tmp_path: Path) -> None:
    target = ("127.0.0.1", free_udp_port())
    config = HostConfig("pasur", 2, {"target": 20}, "hosty", "heuristic", [],
                        Settings(grace=60), beacon=target, watchers=0)  # (a table that takes
    # watchers is announced during its game too: test_net_watch_procs.py)
    host = Host(load_or_create(tmp_path / "host"), config, maker,
                Journal.open(tmp_path / "host.journal"), say=Lines())
    listener = lan.Listener(target, interval=0.2)
    async with trio.open_nursery() as nursery:
        await nursery.start(listener.run)
        invite = await nursery.start(host.serve)
        with trio.fail_after(10):
            while not listener.tables():
                await listener.changed.wait()
        (table,) = listener.tables()
        assert (table.name, table.game, table.free, table.port) == ("hosty", "pasur", 1,
                                                                    invite.port)
        assert table.invite() == invite
        joiner = make_joiner(tmp_path, table.invite(), "joe")
        nursery.start_soon(joiner.run)
        with trio.fail_after(30):
            await host.started.wait()
        await trio.sleep(1)  # no beacon once the seats are taken: dropped after 3 intervals
        assert listener.tables() == []
        with trio.fail_after(60):
            while not (joiner.peer and joiner.peer.over):
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()


@pytest.mark.slow  # real processes
def test_lan_and_join_lan_commands(tmp_path: Path) -> None:
    udp, tcp = free_udp_port(), free_port()
    beacon = f"127.0.0.1:{udp}"
    run = [sys.executable, "-m", "p2pcards"]
    host = subprocess.Popen(
        [*run, "host", "pasur", "--players", "2", "--bind", "127.0.0.1", "--port", str(tcp),
         "--lan", "--beacon", beacon, "--bot", "heuristic", "--name", "hosty",
         "-o", "target=20", "--save", str(tmp_path / "h.json")],
        env=_env(tmp_path / "h"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        listed = subprocess.run([*run, "lan", "--listen", beacon, "--seconds", "3"],
                                env=_env(tmp_path / "l"), capture_output=True, text=True,
                                timeout=60, check=False)
        assert listed.returncode == 0, listed.stderr
        assert "hosty" in listed.stdout and "pasur" in listed.stdout and \
            f"127.0.0.1:{tcp}" in listed.stdout and "1 free" in listed.stdout
        joined = subprocess.run([*run, "join", "--lan", "hosty", "--listen", beacon, "--yes",
                                 "--bot", "heuristic", "--save", str(tmp_path / "j.json")],
                                env=_env(tmp_path / "j"), capture_output=True, text=True,
                                timeout=120, check=False)
        assert joined.returncode == 0, joined.stdout + joined.stderr
        assert "its fingerprint is" in joined.stdout
        # the deck, learnt from the roster the joiner checked and signed
        assert "deck: proved (cheating refused at once; unplayed cards stay secret)" in \
            joined.stdout
        assert host.wait(60) == 0
    finally:
        if host.poll() is None:
            host.kill()
        host.wait()
        assert host.stdout is not None
        host.stdout.close()
    assert (tmp_path / "h.json").read_bytes() == (tmp_path / "j.json").read_bytes()


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "P2PCARDS_HOME": str(home)}
