"""The options of ``host`` and ``join`` that say how a table is reached: the port, tor's
control and SOCKS ports, and the lines that show the host's invite."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING

from p2pcards.net import tls
from p2pcards.net.identity import show_id
from p2pcards.net.reach import Reach, kind
from p2pcards.net.tor import DEFAULT_CONTROL, ControlAddress, parse_control

if TYPE_CHECKING:
    from p2pcards.net.host import Host
    from p2pcards.net.invite import Invite


def invite_lines(host: Host, invite: Invite | None = None) -> list[str]:
    """The invite, the host's fingerprint and how the table can be reached (said when
    the table is hosted, and by ``invite`` at the host's prompt)."""
    plan = host.plan()
    invite = invite or host.invite()
    lines = [f"invite: {invite}", f"host fingerprint: {show_id(host.identity.id)}", plan.line,
             *(f"note: {warning}" for warning in plan.warnings)]
    lan = [a for a in invite.addresses if kind(a[0]) is Reach.LAN]
    if len(invite.addresses) > 1 and lan:  # (an older joiner reads one address only)
        one = replace(invite, host=lan[0][0], port=lan[0][1], more=())
        lines.append(f"for a friend on this LAN whose p2pcards is older: {one}")
    return lines


def tor_control(text: str) -> ControlAddress:
    """``--tor-control``: HOST:PORT, PORT or a socket's path."""
    try:
        return parse_control(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def socks_proxy(text: str) -> tuple[str, int]:
    """``--tor-socks``: HOST:PORT."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (a port from 1 to 65535)")
    return host, int(port)


def tor_of(args: argparse.Namespace) -> tuple[ControlAddress, ...] | None:
    """Where ``host --tor`` asks tor for its onion service (None: no --tor)."""
    if not args.tor:
        return None
    return (args.tor_control,) if args.tor_control else DEFAULT_CONTROL


def dial_of(args: argparse.Namespace) -> tls.Dial:
    """How a joiner or watcher dials: an onion address through tor's SOCKS port
    (``--tor-socks``), any other directly."""
    return tls.routed((args.tor_socks,)) if getattr(args, "tor_socks", None) else tls.routed()


def port_number(text: str) -> int:
    """A ``--port`` given: a TCP port, 1 to 65535 (argparse names the option)."""
    if not text.strip().isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: 1 to 65535")
    return int(text)
