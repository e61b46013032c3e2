"""The host's port mapping: PCP (NAT-PMP its fallback) and UPnP at once, the first
public answer taken, renewed at half its lifetime, deleted at the end.

:meth:`PortMapper.attempt` runs the methods side by side for at most
:attr:`PortmapConfig.cap` seconds; the first mapping whose external address is
public wins and the others are cancelled (one that still answers later has its
mapping deleted at once).  An external address in 100.64.0.0/10 is a carrier-grade
NAT, a private one a double NAT (each its own outcome); a mapping on such an address
is deleted, or (NAT-PMP, UPnP: the address is asked first) never made.
:meth:`PortMapper.run` keeps the winner: it asks again at half the lifetime granted
(and on a failure at half of what is left), and deletes the mapping however it ends,
a cancellation included (shielded, for at most :attr:`PortmapConfig.delete_timeout`).

A method whose map request was sent but not yet answered when it is cancelled (another
won, the cap fired, the host quit) has what it asked for deleted the same way, so that
the router does not keep a mapping nobody holds (UPnP: the external port asked for; a
port an IGD picks for AddAnyPortMapping cannot be deleted unless it was told, and a
port the winner holds is never deleted for another method).  Under :meth:`run` these
deletes go on beside the result (the host is not kept waiting); an :meth:`attempt` on
its own waits for them, so it may take up to ``delete_timeout`` longer than the cap.

Any error of a method (an exception, not a cancellation) is that method's failure, in
an attempt and in a renewal alike: a device on the LAN or a network that goes away
never ends the caller.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import trio

from p2pcards.net.portmap import natpmp, pcp
from p2pcards.net.portmap.common import (
    CARRIER_GRADE,
    DOUBLE_NAT,
    NAT_PMP,
    PCP,
    ROUTE_TABLE,
    UPNP,
    MapError,
    Mapping,
    RandomBytes,
    Unsupported,
    default_gateway,
    refusal,
)
from p2pcards.net.portmap.upnp import SSDP_GROUP, UpnpClient

MAPPED, FAILED = "mapped", "failed"


class MethodClient(Protocol):
    asked: Mapping | None
    """The mapping of a map request sent and not yet answered (None: none)."""

    async def map(self, lifetime: int, suggest: Mapping | None = None) -> Mapping: ...

    async def delete(self, mapping: Mapping) -> None: ...


@dataclass(frozen=True)
class PortmapConfig:
    cap: float = 2.0
    """Seconds the whole attempt may take: a silent router never delays hosting more."""
    lifetime: int = 7200
    """Seconds of mapping asked for (RFC 6886's recommendation)."""
    gateway: str | None = None
    """The PCP and NAT-PMP server; None: the default route's gateway (:data:`route_table`)."""
    route_table: Path = ROUTE_TABLE
    pcp_port: int = pcp.PORT
    """The gateway's port for PCP and NAT-PMP (5351; a test's fake elsewhere)."""
    ssdp: tuple[str, int] = SSDP_GROUP
    methods: tuple[str, ...] = (PCP, NAT_PMP, UPNP)
    client: str | None = None
    """The address PCP maps and sends from (None: the one the route to the gateway takes;
    an IPv6 pinhole names the machine's global address, whatever the gateway's)."""
    delete_timeout: float = 1.0
    renew_timeout: float = 10.0
    random: RandomBytes = field(default=secrets.token_bytes)
    """Random bytes: PCP's nonce and retransmission jitter."""


@dataclass(frozen=True)
class PortmapResult:
    """What an attempt came to: the mapping (``method`` is "pcp", "nat-pmp" or "upnp")
    or, in ``failures``, why each method did not give one.  ``outcome`` is
    :data:`MAPPED`, ``"carrier-grade NAT"``, ``"double NAT"`` or :data:`FAILED`."""

    outcome: str
    method: str | None = None
    external_address: str | None = None
    external_port: int | None = None
    lifetime: int | None = None
    failures: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, mapping: Mapping | None, failures: dict[str, str]) -> PortmapResult:
        if mapping is not None:
            return cls(MAPPED, mapping.method, mapping.external_address,
                       mapping.external_port, mapping.lifetime, dict(failures))
        reasons = failures.values()
        outcome = next((kind for kind in (CARRIER_GRADE, DOUBLE_NAT)
                        if any(r.startswith(kind) for r in reasons)), FAILED)
        return cls(outcome, failures=dict(failures))


class PortMapper:
    """The mapping of ``internal_port``: :meth:`attempt` once, or :meth:`run` to keep
    it; ``changed`` hears of a renewal that moved it, or of its loss."""

    def __init__(self, internal_port: int, config: PortmapConfig | None = None, *,
                 changed: Callable[[PortmapResult], None] | None = None):
        self.internal_port = internal_port
        self.config = config or PortmapConfig()
        self.changed = changed or (lambda result: None)
        self.held: tuple[MethodClient, Mapping] | None = None
        self.failures: dict[str, str] = {}
        self.tried: set[str] = set()
        self.cleanup: trio.Nursery | None = None
        """Where :meth:`run` lets the deletes of cancelled requests go on."""

    async def attempt(self) -> PortmapResult:
        """Every method at once for at most the cap; the first public mapping wins."""
        self.failures = {}
        self.tried = set()
        methods = self.config.methods
        with trio.move_on_after(self.config.cap):
            async with trio.open_nursery() as nursery:
                if PCP in methods or NAT_PMP in methods:
                    nursery.start_soon(self._gateway_methods, nursery.cancel_scope)
                if UPNP in methods:
                    client = UpnpClient(self.internal_port, ssdp=self.config.ssdp,
                                        timeout=self.config.cap, gateway=self._gateway())
                    nursery.start_soon(self._take, UPNP, client, nursery.cancel_scope)
        for method in methods:
            if self.held is None and method not in self.failures:
                self.failures[method] = (f"no answer within {self.config.cap:g} s"
                                         if method in self.tried else
                                         "not tried (PCP did not hand over to it)")
        return PortmapResult.of(self.held[1] if self.held else None, self.failures)

    def _gateway(self) -> str | None:
        """The default gateway, whose UPnP IGD is preferred (None: not known)."""
        try:
            return self.config.gateway or default_gateway(self.config.route_table)
        except MapError:
            return None

    async def _gateway_methods(self, done: trio.CancelScope) -> None:
        methods = self.config.methods
        try:
            gateway = self.config.gateway or default_gateway(self.config.route_table)
        except MapError as exc:
            for method in (PCP, NAT_PMP):
                if method in methods:
                    self.failures[method] = str(exc)
            return
        server = (gateway, self.config.pcp_port)
        if PCP in methods:
            try:
                client = pcp.PcpClient(server, self.internal_port, self.config.random,
                                       client=self.config.client)
            except OSError as exc:
                self.failures[PCP] = f"no route to the gateway {gateway} ({exc})"
                return
            if await self._take(PCP, client, done) or NAT_PMP not in methods:
                return
        await self._take(NAT_PMP, natpmp.NatPmpClient(server, self.internal_port), done)

    async def _take(self, method: str, client: MethodClient, done: trio.CancelScope) -> bool:
        """Map by one method; False when the device does not speak it (PCP then hands
        over to NAT-PMP)."""
        self.tried.add(method)
        try:
            if isinstance(client, natpmp.NatPmpClient | UpnpClient):
                why = refusal(method, await client.address())
                if why is not None:
                    self.failures[method] = why
                    return True
            mapping = await client.map(self.config.lifetime)
        except Unsupported as exc:
            self.failures[method] = str(exc)
            return False
        except MapError as exc:
            self.failures[method] = str(exc)
            return True
        except Exception as exc:  # a device's answer the code did not foresee, say
            self.failures[method] = f"{type(exc).__name__}: {exc}"
            return True
        except BaseException:  # cancelled (another won, the cap, the host quits)
            await self._abandon(method, client)
            raise
        why = refusal(method, mapping.external_address)
        if why is not None:
            self.failures[method] = why
            await self._delete(client, mapping)
        elif self.held is None:
            self.held = (client, mapping)
            done.cancel()
        else:
            self.failures[method] = f"answered after {self.held[1].method}: deleted"
            await self._delete(client, mapping)
        return True

    async def _abandon(self, method: str, client: MethodClient) -> None:
        """Delete what ``client`` asked for and was not answered (its request cancelled),
        unless it could be the winner's mapping (UPnP deletes by external port)."""
        asked = client.asked
        if asked is None:
            return
        client.asked = None
        if method == UPNP and self.held is not None \
                and self.held[1].external_port == asked.external_port:
            return
        if self.cleanup is not None:
            self.cleanup.start_soon(self._delete, client, asked)
        else:
            await self._delete(client, asked)

    async def _delete(self, client: MethodClient, mapping: Mapping) -> None:
        with trio.move_on_after(self.config.delete_timeout, shield=True):
            # best effort: the router keeps it at most its lifetime
            with contextlib.suppress(Exception):
                await client.delete(mapping)

    async def close(self) -> None:
        """Delete the mapping held (shielded: a cancelled caller's too)."""
        if self.held is not None:
            client, mapping = self.held
            self.held = None
            await self._delete(client, mapping)

    async def run(self, *, task_status: trio.TaskStatus[PortmapResult] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Attempt, report the result to ``task_status``, then keep the mapping (renewed)
        until cancelled, and delete it."""
        try:
            async with trio.open_nursery() as self.cleanup:
                task_status.started(await self.attempt())
                while self.held is not None:
                    await self._renew()
        finally:
            self.cleanup = None
            await self.close()

    async def _renew(self) -> None:
        """Sleep to half the lifetime, then renew (again at half of what is left while
        the router does not answer); a mapping lost or moved to a refused address is
        attempted anew, and ``changed`` told."""
        assert self.held is not None
        client, mapping = self.held
        if mapping.lifetime == 0:  # permanent (UPnP lease 0): deleted at the end
            await trio.sleep_forever()
        expires = trio.current_time() + mapping.lifetime
        wait = mapping.lifetime / 2
        while True:
            await trio.sleep(wait)
            left = expires - trio.current_time()
            try:
                with trio.fail_after(max(min(self.config.renew_timeout, left), 0.1)):
                    renewed = await client.map(self.config.lifetime, suggest=mapping)
            except Exception as exc:  # MapError, TooSlowError, or any method's error
                left = expires - trio.current_time()
                if left > 2:
                    wait = left / 2
                    continue
                self.held = None
                reason = ("no answer" if isinstance(exc, trio.TooSlowError)
                          else str(exc) or type(exc).__name__)
                result = await self.attempt()
                again = result.failures.get(mapping.method)
                result.failures[mapping.method] = (
                    f"lost: the renewal failed ({reason})" + (f"; again: {again}" if again else ""))
                self.changed(result)
                return
            break
        why = refusal(mapping.method, renewed.external_address)
        if why is not None:
            self.held = None
            await self._delete(client, renewed)
            self.changed(PortmapResult.of(None, {mapping.method: why}))
            return
        self.held = (client, renewed)
        if (renewed.external_address, renewed.external_port) != (
                mapping.external_address, mapping.external_port):
            self.changed(PortmapResult.of(renewed, {}))


async def map_port(internal_port: int, config: PortmapConfig | None = None, *,
                   task_status: trio.TaskStatus[PortmapResult] = trio.TASK_STATUS_IGNORED
                   ) -> None:
    """``await nursery.start(map_port, port)`` gives the :class:`PortmapResult`; the
    mapping is renewed until the nursery is cancelled, then deleted."""
    await PortMapper(internal_port, config).run(task_status=task_status)
