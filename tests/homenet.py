"""A simulated home network in network namespaces of the test's own: a home machine
behind a router that masquerades (nftables) and answers port-mapping requests
(miniupnpd: PCP, NAT-PMP and UPnP IGD), and a machine on the "internet" side.

    home (192.168.77.10) -- lan -- router -- wan (WAN_ROUTER) -- internet (WAN_PEER)

(with ``ipv6``, the LAN has global IPv6 addresses too, HOME6 and ROUTER6, and the
home's IPv6 route goes through the router's link-local address).

Nothing leaves the namespaces: the addresses are the namespaces' own (the "public"
ones are public-looking addresses that exist only here).  The namespaces, their links,
the router's rules and its miniupnpd are all removed at the end.  It needs root (or
the capability to make network namespaces), ``ip``, ``nft`` and ``miniupnpd``:
:func:`missing` says what is missing, and the tests skip with that reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

HOME_ADDRESS = "192.168.77.10"
LAN_ROUTER = "192.168.77.1"
PUBLIC = ("11.22.33.2", "11.22.33.1")
"""The router's WAN address and the internet peer's, when the router has a public one."""
CARRIER = ("100.64.7.2", "100.64.7.1")
"""The same behind carrier-grade NAT (a shared address, RFC 6598)."""
HOME6, ROUTER6 = "2a00:77::10", "2a00:77::1"
"""The home's and the router's global IPv6 addresses, with ``ipv6`` (namespaces' own)."""
TOOLS = ("ip", "nft", "miniupnpd")


def missing() -> str | None:
    """Why the home network cannot be built here (None: it can)."""
    absent = [tool for tool in TOOLS if shutil.which(tool) is None
              and not Path("/usr/sbin", tool).exists()]
    if absent:
        return (f"{', '.join(absent)} not installed (Debian: apt-get install iproute2 nftables"
                " miniupnpd; .ci/run installs them)")
    probe = f"p2pprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True,
                          check=False)
    if made.returncode != 0:
        return f"cannot make a network namespace: {made.stderr.strip()} (needs root)"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return None


class HomeNet:
    """The namespaces, made at :meth:`up` and removed at :meth:`down`."""

    def __init__(self, *, carrier: bool = False, mapping: bool = True, ipv6: bool = False):
        tag = f"{os.getpid() % 100000}"
        self.home, self.router, self.internet = (f"p2ph{tag}", f"p2pr{tag}", f"p2pi{tag}")
        self.wan_router, self.wan_peer = CARRIER if carrier else PUBLIC
        self.carrier = carrier
        self.mapping = mapping
        self.ipv6 = ipv6
        """Whether the LAN also has global IPv6 (HOME6), the home's default route going
        through the router's link-local address, as a home router's does."""
        self.work = Path(tempfile.mkdtemp(prefix="p2p-homenet-"))
        self.miniupnpd: subprocess.Popen[str] | None = None

    def run(self, namespace: str, *args: str, check: bool = True
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ip", "netns", "exec", namespace, *args], capture_output=True,
                              text=True, check=check, timeout=30)

    def command(self, namespace: str, *args: str) -> list[str]:
        """``args`` as a command to run in ``namespace``."""
        return ["ip", "netns", "exec", namespace, *args]

    def up(self) -> HomeNet:
        try:
            self._up()
        except BaseException:
            self.down()
            raise
        return self

    def _up(self) -> None:
        ip = ["ip"]
        for namespace in (self.home, self.router, self.internet):
            subprocess.run([*ip, "netns", "add", namespace], check=True, capture_output=True)
            self.run(namespace, "ip", "link", "set", "lo", "up")
        subprocess.run([*ip, "link", "add", "lan0", "netns", self.home, "type", "veth",
                        "peer", "name", "lan1", "netns", self.router], check=True,
                       capture_output=True)
        subprocess.run([*ip, "link", "add", "wan0", "netns", self.router, "type", "veth",
                        "peer", "name", "wan1", "netns", self.internet], check=True,
                       capture_output=True)
        self.run(self.home, "ip", "addr", "add", f"{HOME_ADDRESS}/24", "dev", "lan0")
        self.run(self.home, "ip", "link", "set", "lan0", "up")
        self.run(self.home, "ip", "route", "add", "default", "via", LAN_ROUTER)
        self.run(self.router, "ip", "addr", "add", f"{LAN_ROUTER}/24", "dev", "lan1")
        self.run(self.router, "ip", "addr", "add", f"{self.wan_router}/24", "dev", "wan0")
        for link in ("lan1", "wan0"):
            self.run(self.router, "ip", "link", "set", link, "up")
        self.run(self.internet, "ip", "addr", "add", f"{self.wan_peer}/24", "dev", "wan1")
        self.run(self.internet, "ip", "link", "set", "wan1", "up")
        self.run(self.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        if self.ipv6:
            self._ipv6()
        rules = self.work / "router.nft"
        rules.write_text(ROUTER_RULES)
        self.run(self.router, "nft", "-f", str(rules))
        if self.mapping:
            self._miniupnpd()

    def _ipv6(self) -> None:
        self.run(self.router, "ip", "-6", "addr", "add", f"{ROUTER6}/64", "dev", "lan1",
                 "nodad")
        self.run(self.home, "ip", "-6", "addr", "add", f"{HOME6}/64", "dev", "lan0", "nodad")
        self.run(self.router, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
        deadline = time.monotonic() + 20  # (the link-local addresses usable: their
        for namespace, link in ((self.router, "lan1"), (self.home, "lan0")):  # duplicate
            while True:  # address detection over, as a router's are long before a host)
                shown = self.run(namespace, "ip", "-6", "addr", "show", "dev", link,
                                 "scope", "link").stdout
                if "fe80::" in shown and "tentative" not in shown:
                    break
                assert time.monotonic() < deadline, shown
                time.sleep(0.1)
            if namespace == self.router:
                link_local = shown.split("inet6 ", 1)[1].split("/", 1)[0]
        self.run(self.home, "ip", "-6", "route", "add", "default", "via", link_local, "dev",
                 "lan0")

    def _miniupnpd(self) -> None:
        conf = self.work / "miniupnpd.conf"
        conf.write_text(MINIUPNPD_CONF.format(
            ext="" if self.carrier else f"ext_ip={self.wan_router}", lan="lan1",
            leases=self.work / "leases"))
        log = (self.work / "miniupnpd.log").open("w")
        self.miniupnpd = subprocess.Popen(
            self.command(self.router, "miniupnpd", "-d", "-f", str(conf), "-P",
                         str(self.work / "miniupnpd.pid")),
            stdout=log, stderr=subprocess.STDOUT, text=True)
        log.close()
        deadline = time.monotonic() + 10
        while "Listening for NAT-PMP/PCP" not in self.log() and "HTTP listening" \
                not in self.log():
            assert self.miniupnpd.poll() is None, self.log()
            assert time.monotonic() < deadline, self.log()
            time.sleep(0.05)
        time.sleep(0.2)

    def log(self) -> str:
        path = self.work / "miniupnpd.log"
        return path.read_text() if path.exists() else ""

    def mappings(self) -> str:
        """The router's NAT rules as they stand (miniupnpd's mappings among them)."""
        return self.run(self.router, "nft", "list", "ruleset", check=False).stdout

    def down(self) -> None:
        if self.miniupnpd is not None and self.miniupnpd.poll() is None:
            self.miniupnpd.terminate()
            try:
                self.miniupnpd.wait(10)
            except subprocess.TimeoutExpired:
                self.miniupnpd.kill()
                self.miniupnpd.wait()
        for namespace in (self.home, self.router, self.internet):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True,
                           check=False)
        shutil.rmtree(self.work, ignore_errors=True)


ROUTER_RULES = """
table inet filter {
    chain forward {
        type filter hook forward priority 0; policy drop;
        ct state established,related accept
        iifname "lan1" oifname "wan0" accept
        jump forwardUPnP
    }
    chain forwardUPnP {
    }
}
table inet nat {
    chain prerouting {
        type nat hook prerouting priority -100; policy accept;
        jump prerouting_miniupnpd
    }
    chain postrouting {
        type nat hook postrouting priority 100; policy accept;
        jump postrouting_miniupnpd
        oifname "wan0" masquerade
    }
    chain prerouting_miniupnpd {
    }
    chain postrouting_miniupnpd {
    }
}
"""
"""The router: forwarding from the LAN out, masquerade on the WAN, and miniupnpd's
chains (the names of its nftables backend's defaults, given in its configuration)."""

MINIUPNPD_CONF = """ext_ifname=wan0
{ext}
listening_ip={lan}
http_port=0
enable_natpmp=yes
enable_upnp=yes
secure_mode=yes
system_uptime=yes
uuid=3c5a1e0e-7d1b-4f55-9b2a-0f9cbf0e7a11
lease_file={leases}
upnp_table_name=filter
upnp_nat_table_name=nat
upnp_forward_chain=forwardUPnP
upnp_nat_chain=prerouting_miniupnpd
upnp_nat_postrouting_chain=postrouting_miniupnpd
min_lifetime=120
max_lifetime=86400
allow 1024-65535 192.168.77.0/24 1024-65535
deny 0-65535 0.0.0.0/0 0-65535
"""
"""miniupnpd as a home router runs it: PCP, NAT-PMP and UPnP IGD on the LAN side."""
