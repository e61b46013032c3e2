"""Dialling a host at several addresses at once, in the manner of Happy Eyeballs
(RFC 8305): the first TLS handshake that shows the pinned fingerprint wins.

An invite may name several addresses (a mapped public address, a global IPv6
address, a LAN address, an onion address): which of them works depends on where
the joiner is, and a wrong one may never answer at all.  So they are tried
together, staggered:

- **The order.** IPv6 addresses first, then the families alternate (IPv6, IPv4,
  IPv6, ...), as RFC 8305 sorts the addresses of one name; host names after the
  literal addresses (each is resolved, and its own addresses raced, as Trio's
  ``open_tcp_stream`` does), onion addresses last (they go through tor and take
  seconds).
- **The stagger.** The next attempt starts :data:`ATTEMPT_DELAY` after the one
  before it, or at once when that one fails; every attempt has
  :data:`~p2pcards.net.links.HANDSHAKE_SECONDS` to finish its TLS handshake.
- **The winner.** The first attempt whose handshake completes and whose
  certificate carries the invite's fingerprint (any fingerprint, for an invite
  without one: the person confirms it next) wins; the others are cancelled and
  their streams closed.  A host with another fingerprint at one address (a LAN
  address that is another machine on this network) only loses its race; if
  every address answered and none showed the pinned fingerprint, the mismatch
  is the error (someone may be in between: the joiner does not sit), else the
  errors of every address in one line (an error the joiner may try again
  after, as when the host is restarting).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence

import trio

from p2pcards.net import links, tls
from p2pcards.net.identity import IdentityError
from p2pcards.net.invite import Address, show_address

ATTEMPT_DELAY = 0.25
"""Seconds between the starts of two attempts (RFC 8305's recommended delay)."""
ONION_SECONDS = 60.0
"""Seconds an attempt at an onion address has (tor builds a circuit to the service
first: a first connection takes seconds, sometimes tens of them)."""

Check = Callable[[str, int, bytes], Exception | None]
"""Whether the device id a handshake at ``host:port`` showed is acceptable: None, or
the error to raise if no address does better."""


class NoAnswer(OSError):
    """No address of the invite completed a handshake (each one's error named)."""


def family(host: str) -> int:
    """6 or 4 for a literal address, 0 for a host name, -1 for an onion address."""
    if host.lower().endswith(".onion"):
        return -1
    try:
        return ipaddress.ip_address(host).version
    except ValueError:
        return 0


def ordered(candidates: Sequence[Address]) -> list[Address]:
    """``candidates`` in the order to start them: IPv6 and IPv4 literals interleaved, IPv6
    first (each family in the invite's order), then host names, then onion addresses."""
    six = [c for c in candidates if family(c[0]) == 6]
    four = [c for c in candidates if family(c[0]) == 4]
    mixed: list[Address] = []
    for k in range(max(len(six), len(four))):
        mixed.extend(c[k] for c in (six, four) if k < len(c))
    names = [c for c in candidates if family(c[0]) == 0]
    onions = [c for c in candidates if family(c[0]) == -1]
    unique: list[Address] = []
    for candidate in (*mixed, *names, *onions):
        if candidate not in unique:
            unique.append(candidate)
    return unique


async def race(dial: tls.Dial, candidates: Sequence[Address], check: Check,
               delay: float = ATTEMPT_DELAY) -> tuple[trio.abc.Stream, bytes]:
    """A TLS link to the first of ``candidates`` (at least one) whose handshake completes
    and whose device id ``check`` accepts, and that id.  If none does: when every
    address answered, the first error ``check`` gave (an
    :class:`~p2pcards.net.identity.IdentityError` of a host that shows no identity is
    raised as it is); else :class:`NoAnswer` naming each address's error."""
    order = ordered(candidates)
    won: list[tuple[trio.abc.Stream, bytes]] = []
    refused: list[Exception] = []
    errors: dict[Address, str] = {}

    async def attempt(host: str, port: int, done: trio.Event) -> None:
        try:
            limit = ONION_SECONDS if family(host) == -1 else links.HANDSHAKE_SECONDS
            with trio.fail_after(limit):
                stream, seen = await dial(host, port)
        except IdentityError as exc:
            refused.append(exc)
            errors[host, port] = str(exc)
            done.set()
            return
        except (OSError, ValueError, trio.BrokenResourceError, trio.TooSlowError) as exc:
            errors[host, port] = links.why_lost(exc)  # (ValueError: a name DNS refuses)
            done.set()
            return
        problem = check(host, port, seen)
        if problem is not None or won:
            await trio.aclose_forcefully(stream)
            if problem is not None:
                refused.append(problem)
                errors[host, port] = str(problem)
            done.set()
            return
        won.append((stream, seen))
        nursery.cancel_scope.cancel()

    try:
        async with trio.open_nursery() as nursery:
            for host, port in order:
                if won:
                    break
                done = trio.Event()
                nursery.start_soon(attempt, host, port, done)
                with trio.move_on_after(delay):
                    await done.wait()
    except BaseException:
        for stream, _ in won:  # (cancelled as it won: nobody will close it)
            await trio.aclose_forcefully(stream)
        raise
    if won:
        return won[0]
    if refused and len(refused) == len(order):
        raise refused[0]  # every address answered, none as the host pinned
    if len(order) == 1:
        raise NoAnswer(f"{show_address(*order[0])}: {errors.get(order[0], 'no answer')}")
    raise NoAnswer("no address of the invite answered: " + "; ".join(
        f"{show_address(*c)}: {errors.get(c, 'no answer')}" for c in order))
