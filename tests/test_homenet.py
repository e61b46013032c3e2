"""A host behind a simulated home router (network namespaces of this test's own,
nftables masquerade, miniupnpd answering PCP, NAT-PMP and UPnP: tests/homenet.py) and a
friend on the "internet" side who joins with the invite the host printed: the port is
mapped by itself, the game is played and verified, and the mapping is gone once the
host has left.  Then the router that maps nothing and the router behind carrier-grade
NAT: the host says so in its reach line and points to ``--tor``, and the friend outside
cannot reach it.

These need root (to make network namespaces), ``ip``, ``nft`` and ``miniupnpd``
(``.ci/run`` installs the packages); where something is missing they skip saying what.
Run them alone with ``python -m pytest -m homenet``.  Nothing is sent outside the
namespaces they make, and everything they make is removed."""

from __future__ import annotations

import ipaddress
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.homenet import HOME6, HOME_ADDRESS, HomeNet, missing

pytestmark = [pytest.mark.slow, pytest.mark.homenet]

RUN = [sys.executable, "-m", "p2pcards"]


class Players:
    """The host at home and the friend outside, each a process in its namespace."""

    def __init__(self, net: HomeNet, tmp: Path):
        self.net = net
        self.tmp = tmp
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def start(self, name: str, namespace: str, args: list[str]) -> None:
        env = dict(os.environ, P2PCARDS_HOME=str(self.tmp / name))
        with (self.tmp / f"{name}.log").open("w") as log:
            self.procs[name] = subprocess.Popen(
                self.net.command(namespace, *RUN, *args), env=env, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, text=True)

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text()

    def wait_for(self, name: str, text: str, seconds: float = 60) -> str:
        deadline = time.monotonic() + seconds
        while text not in self.log(name):
            assert self.procs[name].poll() is None or text in self.log(name), self.log(name)
            assert time.monotonic() < deadline, f"{name} never said {text!r}:\n{self.log(name)}"
            time.sleep(0.1)
        return self.log(name)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.fixture
def home(request: pytest.FixtureRequest) -> Iterator[HomeNet]:
    why = missing()  # (asked here, not when the tests are collected: it makes a namespace)
    if why is not None:
        pytest.skip(f"no simulated home network: {why}")
    net = HomeNet(**getattr(request, "param", {})).up()
    try:
        yield net
    finally:
        net.down()


def host_args(tmp: Path, *more: str) -> list[str]:
    return ["host", "pasur", "--players", "2", "--bot", "heuristic", "--seed", "7", "--name", "ana",
            "--invite-file", str(tmp / "invite"), "--save", str(tmp / "host.json"), *more]


def test_a_friend_outside_joins_through_the_mapped_port(home: HomeNet, tmp_path: Path) -> None:
    players = Players(home, tmp_path)
    try:
        players.start("host", home.home, host_args(tmp_path))
        said = players.wait_for("host", "for a friend on this LAN")  # (the invite's last line)
        mapped = re.search(r"reachable from the internet, through a port the router mapped"
                           r" \((pcp|nat-pmp|upnp)\): ([\d.]+):(\d+)", said)
        assert mapped is not None, said
        assert mapped.group(2) == home.wan_router
        invite = (tmp_path / "invite").read_text().strip()
        assert invite.startswith(f"p2pcards://{home.wan_router}:{mapped.group(3)},"
                                 f"{HOME_ADDRESS}:45450/")
        assert f"dnat ip to {HOME_ADDRESS}:45450" in home.mappings()
        assert f"for a friend on this LAN whose p2pcards is older: p2pcards://{HOME_ADDRESS}:" \
               "45450/" in said
        players.start("friend", home.internet, ["join", invite, "--bot", "heuristic",
                                                 "--name", "ben", "--yes", "--save",
                                                 str(tmp_path / "friend.json")])
        assert players.procs["friend"].wait(240) == 0, players.log("friend")
        assert players.procs["host"].wait(60) == 0, players.log("host")
    finally:
        players.stop()
    assert (tmp_path / "host.json").read_bytes() == (tmp_path / "friend.json").read_bytes()
    assert "dnat ip to" not in home.mappings()  # deleted when the host left
    for name in ("host", "friend"):
        assert "Traceback" not in players.log(name)


@pytest.mark.parametrize("home", [{"mapping": False}, {"carrier": True}],
                         ids=["no-mapping", "carrier-grade"], indirect=True)
def test_a_router_that_maps_nothing_is_said_and_tor_offered(home: HomeNet,
                                                            tmp_path: Path) -> None:
    players = Players(home, tmp_path)
    try:
        started = time.monotonic()
        players.start("host", home.home, host_args(tmp_path))
        said = players.wait_for("host", "note: no port mapped")
        waited = time.monotonic() - started
        assert f"reachable on this LAN only at {HOME_ADDRESS}:45450" in said
        assert "host with --tor to be reached from anywhere" in said
        invite = (tmp_path / "invite").read_text().strip()
        assert invite.startswith(f"p2pcards://{HOME_ADDRESS}:45450/")
        players.start("friend", home.internet, ["join", invite, "--bot", "heuristic",
                                                 "--name", "ben", "--yes"])
        assert players.procs["friend"].wait(60) != 0
        assert "cannot reach the host" in players.log("friend")
        print(f"the invite came {waited:.1f} s after the host started")
    finally:
        players.stop()
    for name in ("host", "friend"):
        assert "Traceback" not in players.log(name)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_the_mapping_is_deleted_when_the_host_is_stopped(home: HomeNet, tmp_path: Path,
                                                        how: str) -> None:
    """A host stopped in its lobby (SIGTERM, as a shutdown does; SIGINT, as Ctrl-C does;
    SIGHUP, as a terminal closed does) deletes its mapping on its way out."""
    players = Players(home, tmp_path)
    try:
        players.start("host", home.home, host_args(tmp_path))
        players.wait_for("host", "through a port the router mapped")
        assert f"dnat ip to {HOME_ADDRESS}:45450" in home.mappings()
        players.procs["host"].send_signal(getattr(signal, how))  # (ip netns exec execs it)
        stop = getattr(signal, how)
        assert players.procs["host"].wait(30) == 128 + stop, players.log("host")
    finally:
        players.stop()
    assert "dnat ip to" not in home.mappings()
    assert "Traceback" not in players.log("host")


@pytest.mark.parametrize("home", [{"ipv6": True}], ids=["ipv6"], indirect=True)
def test_the_router_opens_an_ipv6_pinhole_through_its_link_local_address(
        home: HomeNet, tmp_path: Path) -> None:
    """A home with global IPv6 whose default route is the router's link-local address (as
    home routers announce it): the host asks the router, by PCP, to open its port for its
    global IPv6 address, besides the IPv4 mapping; the line says so, the router's rules
    hold the pinhole, and it is deleted when the host is stopped."""
    players = Players(home, tmp_path)
    pinhole = ""
    try:
        players.start("host", home.home, host_args(tmp_path))
        said = players.wait_for("host", "for a friend on this LAN")
        assert f"; over IPv6 at [{HOME6}]:45450 (the router opened it: pcp)" in said, said
        invite = (tmp_path / "invite").read_text().strip()
        assert f",[{HOME6}]:45450," in invite
        pinhole = f"th dport 45450 @nh,192,128 {hex(int(ipaddress.IPv6Address(HOME6)))}"
        assert pinhole in home.mappings()  # (miniupnpd's rule matches the address's bytes)
        players.procs["host"].send_signal(signal.SIGTERM)
        assert players.procs["host"].wait(30) == 128 + signal.SIGTERM, players.log("host")
    finally:
        players.stop()
    assert pinhole not in home.mappings()
    assert "Traceback" not in players.log("host")
