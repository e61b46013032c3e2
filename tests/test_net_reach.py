"""The host's invite: the addresses it offers (never loopback unless bound to it), the
line that says how the table can be reached, the grammar of an invite of several
addresses (an old one of one address reads as before), and the joiner's race of the
addresses, Happy Eyeballs style (IPv6 first, staggered, the first handshake that pins
the fingerprint wins)."""

from __future__ import annotations

import ipaddress
import random
import socket
from pathlib import Path

import pytest
import trio
import trio.testing

from p2pcards.net import eyeballs
from p2pcards.net.client import JoinError, dial_first
from p2pcards.net.invite import (
    MAX_ADDRESSES,
    Invite,
    InviteError,
    invite_at,
    parse_invite,
)
from p2pcards.net.outreach import Outreach, Reaching
from p2pcards.net.portmap.common import sockaddr
from p2pcards.net.portmap.mapper import PortmapConfig, PortMapper, PortmapResult
from p2pcards.net.reach import (
    Found,
    Mapped,
    Reach,
    interface_ipv6,
    ipv6_gateway,
    kind,
    plan,
)
from tests.portmap_fakes import FakeUdp, pcp_answer

pytestmark = pytest.mark.usefixtures("loopback_only")  # (tests/conftest.py)

FP = bytes(range(32))
TOKEN = b"t" * 16
GLOBAL6 = "2a00:1450:4001::20"
HOME = Found(route4="192.168.1.20", route6="2001:db8:1::20", ipv4=("127.0.0.1", "192.168.1.20"),
             global6=("2a00:1450:4001::20",))
"""A laptop at home: a LAN IPv4 address, loopback, a global IPv6 address (2001:db8::/32
is documentation space, which Python counts as not global: the route's source is
skipped, the interface's global one offered)."""


def test_a_home_machine_offers_its_lan_and_ipv6_addresses_never_loopback() -> None:
    got = plan(45450, HOME)
    assert got.addresses == [("2a00:1450:4001::20", 45450), ("192.168.1.20", 45450)]
    assert got.reach is Reach.INTERNET  # (over IPv6, where the router lets it in)
    assert "over IPv6 at [2a00:1450:4001::20]:45450 where the router lets it in" in got.line
    assert "over IPv4 on this LAN only" in got.line
    lan = plan(45450, Found(route4="10.0.0.5", ipv4=("127.0.0.1", "10.0.0.5")))
    assert lan.addresses == [("10.0.0.5", 45450)] and lan.reach is Reach.LAN
    assert lan.line == ("reachable on this LAN only at 10.0.0.5:45450: friends elsewhere need"
                        " a port mapped on the router, or --tor")
    assert all(kind(a) is not Reach.MACHINE for a, _ in got.addresses + lan.addresses)


def test_a_mapped_port_comes_first_and_says_how() -> None:
    got = plan(45450, HOME, mapped=Mapped("203.0.113.7", 61000, "pcp"))
    assert got.addresses[0] == ("203.0.113.7", 61000)
    assert got.reach is Reach.MAPPED
    assert got.line == ("reachable from the internet, through a port the router mapped (pcp):"
                        " 203.0.113.7:61000")


def test_a_public_ipv4_address_is_reachable_directly() -> None:
    got = plan(7000, Found(route4="8.8.4.4", ipv4=("8.8.4.4",)))
    assert got.addresses == [("8.8.4.4", 7000)] and got.reach is Reach.INTERNET
    assert got.line == "reachable from the internet directly at 8.8.4.4:7000"


def test_loopback_only_when_bound_to_it_or_nothing_else_is_found() -> None:
    bound = plan(7000, HOME, bind="127.0.0.1")
    assert bound.addresses == [("127.0.0.1", 7000)] and bound.reach is Reach.MACHINE
    assert bound.line == "reachable this machine only (listening on 127.0.0.1:7000)"
    alone = plan(7000, Found(ipv4=("127.0.0.1",)))
    assert alone.addresses == [("127.0.0.1", 7000)] and alone.reach is Reach.MACHINE
    assert alone.warnings == ["the invite names loopback: only this machine can use it"]
    assert plan(7000, HOME, bind="0.0.0.0").addresses == [("192.168.1.20", 7000)]  # no IPv6


def test_address_overrides_and_tor_adds_its_onion() -> None:
    onion = ("a" * 56 + ".onion", 45450)
    got = plan(45450, HOME, address="cards.example.org", onion=onion)
    assert got.addresses == [("cards.example.org", 45450), onion]
    assert got.line == ("the invite names cards.example.org:45450 (--address); through tor at"
                        f" {onion[0]}:45450")


def test_carrier_grade_and_link_local_addresses_are_not_offered() -> None:
    got = plan(7000, Found(route4="100.64.3.4", ipv4=("100.64.3.4", "169.254.1.1")))
    assert kind("100.64.3.4") is Reach.LAN and kind("169.254.1.1") is None
    assert got.addresses == [("100.64.3.4", 7000)]


def test_global_ipv6_addresses_are_read_from_the_kernel_table(tmp_path: Path) -> None:
    table = tmp_path / "if_inet6"
    table.write_text("2a001450400100000000000000000020 02 40 00 00 wlan0\n"
                     "fe80000000000000021122fffe334455 02 40 20 80 wlan0\n"
                     "00000000000000000000000000000001 01 80 10 80 lo\n")
    assert interface_ipv6(table) == ["2a00:1450:4001::20"]
    assert interface_ipv6(tmp_path / "missing") == []


def test_an_invite_of_several_addresses_reads_back_and_one_of_one_reads_as_before() -> None:
    several = invite_at([("203.0.113.7", 61000), ("2a00:1450:4001::20", 45450),
                         ("192.168.1.20", 45450)], FP, TOKEN)
    text = str(several)
    assert text.startswith("p2pcards://203.0.113.7:61000,[2a00:1450:4001::20]:45450,"
                           "192.168.1.20:45450/")
    assert parse_invite(text) == several
    one = Invite("192.168.1.20", 45450, FP, TOKEN)
    assert str(one).startswith("p2pcards://192.168.1.20:45450/")  # as an old joiner reads it
    assert parse_invite(str(one)) == one and one.addresses == (("192.168.1.20", 45450),)


@pytest.mark.parametrize(("addresses", "problem"), [
    ("127.0.0.1:99999", "is not HOST:PORT"),
    ("127.0.0.1:0", "is not HOST:PORT"),
    ("::1:7000", "is not HOST:PORT"),
    ("127.0.0.1:7000,", "is not HOST:PORT"),
    (",".join(["127.0.0.1:7000"] * (MAX_ADDRESSES + 1)), "8 addresses at most"),
])
def test_a_bad_address_list_is_named(addresses: str, problem: str) -> None:
    good = str(Invite("h", 1, FP, TOKEN))
    with pytest.raises(InviteError, match=problem):
        parse_invite(good.replace("h:1", addresses, 1))


def test_the_race_order_puts_ipv6_first_and_onions_last() -> None:
    onion = ("b" * 56 + ".onion", 1)
    got = eyeballs.ordered([onion, ("10.0.0.1", 1), ("name.example", 1), ("10.0.0.2", 1),
                            ("2001:db8::1", 1), ("10.0.0.1", 1)])
    assert got == [("2001:db8::1", 1), ("10.0.0.1", 1), ("10.0.0.2", 1), ("name.example", 1),
                   onion]


class FakeHosts:
    """Dials that answer after a delay each, with a device id each (or fail)."""

    def __init__(self, answers: dict[str, tuple[float, bytes | None]]):
        self.answers = answers
        self.started: dict[str, float] = {}
        self.closed: list[str] = []

    async def dial(self, host: str, port: int) -> tuple[trio.abc.Stream, bytes]:
        self.started[host] = trio.current_time()
        delay, seen = self.answers[host]
        await trio.sleep(delay)
        if seen is None:
            raise OSError(f"connection refused by {host}")
        stream = trio.testing.MemorySendStream(
            close_hook=lambda: self.closed.append(host))
        return stream, seen


async def test_attempts_are_staggered_and_the_first_pinned_handshake_wins(
        autojump_clock: trio.testing.MockClock) -> None:
    hosts = FakeHosts({"2001:db8::1": (100.0, FP), "192.168.1.20": (0.1, FP),
                       "203.0.113.7": (0.05, FP)})
    invite = invite_at([("203.0.113.7", 1), ("2001:db8::1", 1), ("192.168.1.20", 1)], FP,
                       TOKEN)
    start = trio.current_time()
    _stream, seen = await dial_first(hosts.dial, invite, "joining")
    assert seen == FP
    started = {h: round(t - start, 3) for h, t in hosts.started.items()}
    assert started == {"2001:db8::1": 0.0, "203.0.113.7": 0.25}  # IPv6 first, then 250 ms
    assert round(trio.current_time() - start, 3) == 0.3  # the IPv4 one won; the rest cancelled


async def test_a_failed_attempt_starts_the_next_at_once(
        autojump_clock: trio.testing.MockClock) -> None:
    hosts = FakeHosts({"2001:db8::1": (0.01, None), "192.168.1.20": (0.02, FP)})
    invite = invite_at([("192.168.1.20", 1), ("2001:db8::1", 1)], FP, TOKEN)
    start = trio.current_time()
    await dial_first(hosts.dial, invite, "joining")
    assert round(hosts.started["192.168.1.20"] - start, 3) == 0.01


async def test_another_fingerprint_at_one_address_loses_its_race_only(
        autojump_clock: trio.testing.MockClock) -> None:
    other = bytes(32)
    hosts = FakeHosts({"192.168.1.20": (0.01, other), "203.0.113.7": (0.4, FP)})
    invite = invite_at([("192.168.1.20", 1), ("203.0.113.7", 1)], FP, TOKEN)
    _stream, seen = await dial_first(hosts.dial, invite, "joining")
    assert seen == FP and "192.168.1.20" in hosts.closed
    impostors = invite_at([("192.168.1.20", 1), ("10.9.9.8", 1)], FP, TOKEN)
    hosts.answers["10.9.9.8"] = (0.02, other)
    with pytest.raises(JoinError, match=r"the host at 192\.168\.1\.20:1 is .* someone may be in"
                                        " between; not joining"):  # every one answered so
        await dial_first(hosts.dial, impostors, "joining")
    hosts.answers["10.9.9.9"] = (0.01, None)  # one did not answer: the host may be on its
    restarting = invite_at([("192.168.1.20", 1), ("10.9.9.9", 1)], FP, TOKEN)  # way back
    with pytest.raises(eyeballs.NoAnswer, match=r"192\.168\.1\.20:1: the host at .* someone"
                                                r" may be in between; not joining; 10\.9"):
        await dial_first(hosts.dial, restarting, "joining")


@pytest.mark.parametrize("address", ["a..b:7", "-x.example:7", "h:\u00b9", "h:007000",
                                     "bad_\u00e9\u0301" * 20 + ".example:7"])
def test_an_address_dns_cannot_carry_is_refused_when_read(address: str) -> None:
    good = str(Invite("h", 1, FP, TOKEN))
    with pytest.raises(InviteError, match="is not HOST:PORT"):
        parse_invite(good.replace("h:1", address, 1))


async def test_a_name_dns_refuses_only_loses_its_race(
        autojump_clock: trio.testing.MockClock) -> None:
    async def dial(host: str, port: int) -> tuple[trio.abc.Stream, bytes]:
        if host == "bad.example":
            raise UnicodeError("label empty or too long")
        return trio.testing.MemorySendStream(), FP  # type: ignore[return-value]
    invite = invite_at([("bad.example", 1), ("192.168.1.20", 1)], FP, TOKEN)
    assert (await dial_first(dial, invite, "joining"))[1] == FP


async def test_when_nothing_answers_each_address_is_named(
        autojump_clock: trio.testing.MockClock) -> None:
    hosts = FakeHosts({"192.168.1.20": (0.01, None), "2001:db8::1": (1000.0, FP)})
    invite = invite_at([("192.168.1.20", 7), ("2001:db8::1", 7)], FP, TOKEN)
    with pytest.raises(eyeballs.NoAnswer) as raised:
        await dial_first(hosts.dial, invite, "joining")
    assert str(raised.value) == ("no address of the invite answered: [2001:db8::1]:7: no"
                                 " answer; 192.168.1.20:7: connection refused by 192.168.1.20")
    one = invite_at([("192.168.1.20", 7)], FP, TOKEN)
    with pytest.raises(OSError,  # (one address: named with its error)
                       match=r"^192\.168\.1\.20:7: connection refused by 192\.168\.1\.20$"):
        await dial_first(hosts.dial, one, "joining")


def test_the_ipv6_gateway_is_read_from_the_kernel_table(tmp_path: Path) -> None:
    table = tmp_path / "ipv6_route"
    zero = "0" * 32
    table.write_text(
        f"fd000000000000000000000000000000 40 {zero} 00 {zero} 00000100 00000001 00000000"
        " 00000001 eth0\n"
        f"{zero} 00 {zero} 00 fe800000000000000000000000000001 00000400 00000003 00000000"
        " 00000003 wlan0\n"
        f"{zero} 00 {zero} 00 fe800000000000000000000000000002 00000100 00000003 00000000"
        " 00000003 eth1\n")
    assert ipv6_gateway(table) == "fe80::2%eth1"  # the lowest metric
    assert ipv6_gateway(tmp_path / "missing") is None


async def test_a_pinhole_is_asked_for_the_given_address_and_sent_from_it() -> None:
    """PCP asked for an IPv6 pinhole (a fake PCP device on ::1): the request names the
    address given, as IPv6 (no IPv4-mapped form), and leaves from it (the router checks
    the two agree); the delete goes the same way.  The whole, through a router's
    link-local address, is tests/test_homenet.py's."""
    device = FakeUdp(lambda data: pcp_answer(data, port=45450, address=GLOBAL6), host="::1")
    async with trio.open_nursery() as devices:
        await devices.start(device.run)
        config = PortmapConfig(gateway="::1", pcp_port=device.port, methods=("pcp",),
                               client="::1", random=random.Random(5).randbytes)
        mapper = PortMapper(45450, config)
        result = await mapper.attempt()
        await mapper.close()
        devices.cancel_scope.cancel()
    assert (result.outcome, result.external_address) == ("mapped", GLOBAL6)
    (_, asked), (_, deleted) = device.requests
    assert asked[8:24] == ipaddress.IPv6Address("::1").packed
    assert asked[4:8] == (7200).to_bytes(4, "big") and deleted[4:8] == bytes(4)


def test_a_link_local_gateway_keeps_its_interface() -> None:
    """``fe80::1%lo``: the socket address carries the interface's index (without it a
    datagram to a link-local address cannot leave: EINVAL)."""
    assert sockaddr(("fe80::1%lo", 5351))[3] == socket.if_nametoindex("lo")
    assert sockaddr(("192.0.2.1", 5351)) == ("192.0.2.1", 5351)


async def test_no_pinhole_is_asked_without_a_global_ipv6_address() -> None:
    outreach = Outreach(Reaching(bind=None, portmap=PortmapConfig()),
                        found=Found(route4="127.0.0.1"))
    assert not outreach.pinholed() and not outreach.mappable()


def test_a_host_on_ipv6_alone_offers_its_lan_ipv6_address() -> None:
    found = Found(route4="192.168.1.20", route6="fd00::2", ipv4=("192.168.1.20",),
                  global6=("fd00::2",))
    got = plan(7000, found, bind="::")
    assert got.addresses == [("fd00::2", 7000)] and got.reach is Reach.LAN
    assert not got.warnings
    assert plan(7000, found).addresses == [("192.168.1.20", 7000)]  # (IPv4 first on a LAN)


def test_tor_with_loopback_offers_the_onion_address_alone() -> None:
    onion = ("c" * 56 + ".onion", 7000)
    got = plan(7000, HOME, bind="127.0.0.1", onion=onion)
    assert got.addresses == [onion]
    assert got.line == (f"reachable through tor only, at {onion[0]}:7000 (this machine's"
                        " addresses are not in the invite)")


async def test_these_tests_cannot_leave_loopback() -> None:
    """The guard these tests run under (tests/conftest.py) stops a send elsewhere, Trio's
    sockets included, before anything leaves."""
    with trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM) as sock:
        with pytest.raises(AssertionError, match=r"a test sent to \('10\.0\.0\.1', 9\)"):
            await sock.sendto(b"x", ("10.0.0.1", 9))
        with pytest.raises(AssertionError, match="a test sent to"):
            await sock.connect(("192.0.2.1", 9))


def test_a_routers_words_reach_the_screen_made_safe() -> None:
    """A device answering for the router (or pretending to) puts a terminal escape and a
    newline in its refusal: the host's note shows them as ``?``, on one line."""
    outreach = Outreach(Reaching(bind=None, portmap=PortmapConfig()),
                        found=Found(route4="192.168.1.20"))
    outreach._take(PortmapResult("failed", failures={
        "upnp": "the router refused AddPortMapping: \x1b]0;pwned\x07\nnote: forged (718)"}))
    (note,) = outreach.plan(7000).warnings
    assert "\x1b" not in note and "\n" not in note and "\x07" not in note
    assert "AddPortMapping: ?]0;pwned??note: forged (718)" in note
