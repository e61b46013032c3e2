"""Test-session wiring.  The suite runs on two pytest-xdist workers (``-n 2 --dist
loadgroup`` in pyproject.toml): the tests marked ``slow`` that start real processes or
drive a real terminal form one group, run one after another on one worker, so that two
tables of real processes never compete for the machine's cores (their peers answer
within grace periods of a few seconds), while the other worker runs everything else.
The slow tests that only compute in this process (seven seats, Nullern's twenty deals)
are not in the group."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from p2pcards.net.journal import Journal

IN_PROCESS = frozenset({"test_table.py", "test_deck.py", "test_verify_explain.py",
                        "test_net_watch_match.py"})
"""Test modules whose ``slow`` tests start no process and no terminal."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") is not None \
                and item.path.name not in IN_PROCESS:
            item.add_marker(pytest.mark.xdist_group("processes"))


@pytest.fixture(autouse=True)
def _own_data_directory(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps what the program keeps (its identity, the journals, a local game
    kept to resume) in a directory of its own, never in the home of whoever runs the
    tests: ``play GAME`` would offer a game another test left unfinished."""
    if "P2PCARDS_HOME" not in os.environ:
        monkeypatch.setenv("P2PCARDS_HOME", str(tmp_path_factory.mktemp("home")))


@pytest.fixture(autouse=True)
def _journals_closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every journal a test opens in this process is closed when the test ends, as the
    program closes its own: a file left to the garbage collector warns, and the warning
    (an error in this suite) would fall on whichever test runs at that moment."""
    opened: list[Journal] = []
    open_journal = Journal.open

    def tracked(path: Path) -> Journal:
        journal = open_journal(path)
        opened.append(journal)
        return journal

    monkeypatch.setattr(Journal, "open", tracked)
    yield
    for journal in opened:
        journal.close()


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The views the searching bots searched in this test, in order: a spy on
    ``p2pcards.bots.search.search`` that searches as before."""
    from p2pcards.bots import search as searching  # noqa: PLC0415  (only the tests that ask)

    seen: list[object] = []
    real = searching.search

    def spy(view: Any, rng: Any, **kwargs: Any) -> Any:
        seen.append(view)
        return real(view, rng, **kwargs)

    monkeypatch.setattr(searching, "search", spy)
    return seen


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every datagram sent and every connection made in this process goes to 127.0.0.0/8,
    ::1 or a Unix socket (Trio's sockets call these methods): a test that would reach a
    router, a multicast group or the internet fails here instead.  The network tests
    that run in this process ask for it (``pytestmark``)."""
    sendto, connect = socket.socket.sendto, socket.socket.connect

    def check(address: Any) -> None:
        if isinstance(address, str | bytes):
            return  # a Unix socket's path
        host = str(address[0]).partition("%")[0]
        assert host == "localhost" or ipaddress.ip_address(host).is_loopback, \
            f"a test sent to {address}"

    def checked_sendto(self: socket.socket, data: bytes, *rest: Any) -> int:
        check(rest[-1])
        return sendto(self, data, *rest)

    def checked_connect(self: socket.socket, address: Any) -> None:
        check(address)
        connect(self, address)

    monkeypatch.setattr(socket.socket, "sendto", checked_sendto)
    monkeypatch.setattr(socket.socket, "connect", checked_connect)
