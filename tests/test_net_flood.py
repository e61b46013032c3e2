"""A real host process on loopback under a flood of connections that never
authenticate: its open files stay bounded far below its limit, and an honest joiner
sits and plays the game while the flood goes on (tests/test_net_door.py has the
door's rules over memory streams)."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections import deque
from pathlib import Path

import pytest

from p2pcards.net.frames import MAX_SEATS
from p2pcards.net.gate import MAX_UNAUTHENTICATED
from tests.test_net_procs import Table

pytestmark = pytest.mark.slow  # real processes

FILES = 1024
"""The host's limit of open files, as a desktop's usual one."""
ADDRESSES = 40
"""Flood sources, 127.0.0.2 to 127.0.0.41 (all loopback): more than the door's share
of any one address, together more than its slots."""


class Flood:
    """Connections from many loopback addresses, opened without pause and held idle, the
    newest ``hold`` of them at once (more than the host's file limit)."""

    def __init__(self, port: int, hold: int):
        self.port = port
        self.hold = hold
        self.open: deque[socket.socket] = deque()
        self.opened = 0
        self.most_held = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            sock = socket.socket()
            sock.settimeout(1)
            try:
                sock.bind((f"127.0.0.{2 + self.opened % ADDRESSES}", 0))
                sock.connect(("127.0.0.1", self.port))
            except OSError:
                sock.close()
                continue
            self.opened += 1
            self.open.append(sock)
            self.most_held = max(self.most_held, len(self.open))
            if len(self.open) > self.hold:
                self.open.popleft().close()
            if self.opened > self.hold:
                time.sleep(0.005)  # then on, about 200 a second

    def __enter__(self) -> Flood:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()
        while self.open:
            self.open.popleft().close()


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_a_flood_of_idle_connections_neither_exhausts_the_host_nor_keeps_a_joiner_out(
        tmp_path: Path) -> None:
    table = Table(tmp_path, "pasur", players=2)
    try:
        table.start("host", files=FILES)
        host = table.procs["host"].pid
        before = open_files(host)
        with Flood(table.port, hold=FILES + 100) as flood:
            deadline = time.monotonic() + 60
            while flood.opened < FILES + 100:
                assert time.monotonic() < deadline, f"the flood opened {flood.opened}"
                time.sleep(0.1)
            most = open_files(host)
            table.start("p1")  # the honest joiner, while the flood goes on
            while table.procs["p1"].poll() is None:
                most = max(most, open_files(host))
                assert time.monotonic() < deadline + 120, table.log("p1")[-3000:]
                time.sleep(0.05)
        assert flood.most_held > FILES  # held at once: each a file, to a host without a door
        assert table.wait("p1") == 0, table.log("p1")[-3000:]
        assert table.wait("host") == 0, table.log("host")[-3000:]
        # the door's slots, the joiner's link, and a few being closed at any moment
        assert most - before <= MAX_UNAUTHENTICATED + MAX_SEATS + 16, (before, most)
        log = table.log("host")
        assert "EMFILE" not in log and "Traceback" not in log
        assert "1000 links closed before they authenticated; the last:" in log
        assert len(table.histories()) == 1
    finally:
        table.stop()
