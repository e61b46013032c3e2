"""A peer's link to its host, the joiner's and the watcher's alike.

:class:`HostLink` is the link a :class:`~p2pcards.net.join.Joiner` and a
:class:`~p2pcards.net.watch.Watch` keep to the host of their invite; what
differs between them (the ``auth`` each sends, the answer each expects, what
each does with the frames, when each stops trying) it asks of them
(:class:`Caller`), and what each says it is given (:class:`Wording`).

- **Dialling.** The host's addresses (:func:`addresses`) are raced, staggered,
  IPv6 first (:mod:`p2pcards.net.eyeballs`): the first whose handshake shows the
  pinned fingerprint is used (:func:`dial_first`).
- **Pinning.** The device id the host's certificate carries must be the
  invite's (:func:`pin_host`); an invite without one has it confirmed by the
  person and pinned, and the link is dialled again, now pinned (a person may
  take longer than the host's door waits for an ``auth``).
- **The handshake.** The hellos (the version both ends speak), the host's
  name checked against the friends list, the caller's ``auth`` (its proof of
  identity over the host's nonce, the host's device id and the invite's
  token) and the host's answer: ``welcome`` to a joiner, ``watching`` to a
  watcher, or a refusal (:class:`JoinError`, "the host refused: ...").
- **Coming back.** A link that breaks is dialled again, after a pause of
  :data:`RETRY_FIRST` seconds that doubles up to :data:`RETRY_MOST`; "lost the
  host (...)" is said once, not at every try.  The caller says when there is
  nothing to come back to: a first link that breaks ends the command at once
  (:class:`HostLost`, "cannot reach the host: ..."), and so does a host gone
  once its game is over (quietly) or for :data:`GIVE_UP` seconds.  A host that
  refuses or sends what it should not ends it too (:class:`JoinError`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Protocol

import trio

from p2pcards.net import eyeballs, links, tls
from p2pcards.net.frames import Auth, Error, Frame, FrameError, FrameKind, HelloFrame
from p2pcards.net.identity import Friends, IdentityError, show_id
from p2pcards.net.invite import Address, Invite, show_address
from p2pcards.net.wire import Link, LinkClosed
from p2pcards.table.roster import MAX_NAME

RETRY_FIRST = 0.2
"""Seconds before the first dial again; the pause doubles at each try after."""
RETRY_MOST = 5.0
"""The longest pause between two dials."""
GIVE_UP = 600.0
"""Seconds without the host after which a client stops trying (a joiner's journal keeps
the game: the same command tries again)."""

class JoinError(Exception):
    """The joiner cannot sit (the host's reason, or what went wrong), said once."""


class HostLost(JoinError):
    """The host cannot be reached (not yet, or no longer): the same command tries again
    later (and resumes the game from the journal, if it has begun)."""


class Connected(Protocol):
    """A person told whether the link to the host is up."""

    def connection(self, up: bool) -> None: ...


class Caller(Protocol):
    """What a :class:`HostLink` asks of the peer that dials (a joiner or a watcher).

    Its invite, dial, confirm, friends and say are read when they are used (and the
    invite is written when its fingerprint is pinned)."""

    invite: Invite

    @property
    def dial(self) -> tls.Dial: ...

    @property
    def confirm(self) -> Callable[[str], Awaitable[bool]] | None: ...

    @property
    def friends(self) -> Friends | None: ...

    @property
    def say(self) -> Callable[[str], None]: ...

    @property
    def person(self) -> Connected | None: ...

    @property
    def ended(self) -> str:
        """Why the host said the table is closed ("" : it has not)."""

    def speaks(self, version: int) -> None:
        """The link version both ends speak: JoinError if this peer cannot go on with
        it."""

    def auth(self, nonce: bytes, host_id: bytes, token: bytes) -> Auth:
        """This peer's ``auth``, its proof signing the host's ``nonce``, the host's device
        id and the invite's ``token``."""

    async def admitted(self, link: Link, answer: Frame, host: str) -> None:
        """The host's answer to the ``auth`` (not a refusal), from the host named
        ``host``: FrameError if it is not the one expected."""

    async def take(self, frame: Frame) -> bool:
        """A frame from the host: whether to read on (False: this peer is done)."""

    def dropped(self, exc: FrameError) -> None:
        """A chat line from the host that does not read (it is not shown)."""

    def linked(self, up: bool) -> None:
        """The link to the host is up (True) or lost (False)."""

    def first_link(self, admitted: bool) -> bool:
        """Whether a link lost now leaves nothing to come back to, so that the command
        stops ("cannot reach the host: ..."); ``admitted``: the host had taken it."""

    def gone_after_game(self, dialled: bool) -> str | None:
        """The line that ends this peer quietly when the host is gone once the game is
        over (None: dial again); ``dialled``: the host answered the latest dial."""

    def last_heard(self, seen: float | None, admitted: bool) -> float | None:
        """When the host was last heard of, from which :data:`GIVE_UP` counts (None: as
        before), its link just lost; ``seen``: when its last frame came, ``admitted``:
        the host had taken this link."""


@dataclass(frozen=True, slots=True)
class Wording:
    """What a client says that differs between a joiner and a watcher."""

    doing: str
    """What it does not do when the host is not the one pinned ("... not joining")."""
    retrying: str = ""
    """Said after "lost the host (...); trying again every few seconds for up to ...
    minutes"."""
    giving_up: str = ""
    """Said after "the host has been unreachable for ... s"."""


def addresses(invite: Invite) -> list[Address]:
    """Where the host of ``invite`` may be reached, in the invite's order (raced:
    :mod:`p2pcards.net.eyeballs` orders them)."""
    return list(invite.addresses)


async def dial_first(dial: tls.Dial, invite: Invite, doing: str
                     ) -> tuple[trio.abc.Stream, bytes]:
    """A link to the host of ``invite``: its addresses raced, the first handshake that
    shows the invite's fingerprint winning (any, for an invite without one), each given
    :data:`~p2pcards.net.links.HANDSHAKE_SECONDS`; and the device id of the host there.
    If none answers, an OSError naming each address's error; JoinError if a host shows
    no identity or, at every address that answered, another fingerprint."""

    def check(host: str, port: int, seen: bytes) -> Exception | None:
        pinned = invite.fingerprint
        if pinned is None or seen == pinned:
            return None
        return JoinError(f"the host at {show_address(host, port)} is {show_id(seen, 4)}, not"
                         f" the {show_id(pinned, 4)} of the invite: someone may be in"
                         f" between; not {doing}")

    try:
        return await eyeballs.race(dial, addresses(invite), check)
    except IdentityError as exc:
        raise JoinError(str(exc)) from exc


async def pin_host(invite: Invite, seen: bytes,
                   confirm: Callable[[str], Awaitable[bool]] | None,
                   doing: str) -> tuple[bool, Invite]:
    """The host's device id ``seen`` against ``invite``'s: (True, invite) if it is the
    one pinned; with none in the invite, confirmed by the person and pinned: (False,
    the invite with it).  JoinError, ending with "not ``doing``", if it differs."""
    if invite.fingerprint is not None:
        if seen != invite.fingerprint:
            raise JoinError(
                f"the host at {show_address(invite.host, invite.port)} is"
                f" {show_id(seen, 4)}, not the {show_id(invite.fingerprint, 4)} of the"
                f" invite: someone may be in between; not {doing}")
        return True, invite
    question = f"the host's fingerprint is {show_id(seen)}; is it the one the host shows?"
    if confirm is None or not await confirm(question):
        raise JoinError(f"the host's fingerprint {show_id(seen, 4)} was not confirmed")
    return False, replace(invite, fingerprint=seen)


class HostLink:
    """One peer's link to the host of its invite: dialled, signed in, read, and dialled
    again when it breaks, until the caller is done or the host is gone."""

    def __init__(self, caller: Caller, wording: Wording,
                 tap: Callable[[bytes], None] | None = None):
        self.caller = caller
        self.wording = wording
        self.tap = tap
        """Sees every frame's bytes as received (tests record them)."""
        self.link: Link | None = None
        """The link while the host has taken it (None: not linked now)."""
        self.dialled = False
        """The host answered the latest dial (its TLS handshake is done)."""
        self.admitted = False
        """The host took the latest link (its ``welcome``, or ``watching``)."""
        self.seen: float | None = None
        """When the last frame came from the host (None: none yet)."""

    async def run(self) -> None:
        """Keep a link to the host until the caller is done with it, or the host ends
        the table.  HostLost when there is nothing to come back to; JoinError when the
        host refuses or sends what it should not."""
        caller = self.caller
        pause = RETRY_FIRST
        reached = trio.current_time()
        lost = False
        while True:
            self.dialled = self.admitted = False
            try:
                if await self._session():
                    return
                continue  # (the fingerprint just confirmed: dialled again, now pinned)
            except JoinError:
                raise
            except (OSError, LinkClosed, trio.BrokenResourceError, trio.TooSlowError) as exc:
                why = links.why_lost(exc)
                if caller.first_link(self.admitted):
                    raise HostLost(f"cannot reach the host: {why}") from exc
                if caller.ended:
                    return  # no more games: the host closing its links is its end
                gone = caller.gone_after_game(self.dialled)
                if gone is not None:
                    caller.say(gone)
                    return
                heard = caller.last_heard(self.seen, self.admitted)
                if heard is not None:
                    if heard != reached:
                        lost = False  # it was back meanwhile
                    reached = heard
                if trio.current_time() - reached > GIVE_UP:
                    raise HostLost(f"the host has been unreachable for {GIVE_UP:g} s"
                                   f"{self.wording.giving_up}") from exc
                if not lost:  # said once, not at every try
                    lost = True
                    caller.say(f"lost the host ({why}); trying again every few seconds for"
                               f" up to {GIVE_UP / 60:g} minutes{self.wording.retrying}")
            except FrameError as exc:
                raise JoinError(f"the host sent what it should not: {links.printable(exc)}"
                                ) from exc
            await trio.sleep(pause)
            pause = min(RETRY_MOST, pause * 2)

    async def _session(self) -> bool:
        """One link, until the caller is done with it (True) or it breaks (raises);
        False: the fingerprint was just confirmed, so dial again (a person may take
        longer than the host's door waits)."""
        caller = self.caller
        stream, seen = await dial_first(caller.dial, caller.invite, self.wording.doing)
        link = Link(stream, "the host")
        link.tap = self.tap
        self.dialled = True
        try:
            pinned, caller.invite = await pin_host(caller.invite, seen, caller.confirm,
                                                   self.wording.doing)
            if not pinned:
                return False
            with trio.fail_after(links.HANDSHAKE_SECONDS):
                await self._handshake(link)
            self.admitted = True
            self.link = link
            caller.linked(True)
            if caller.person is not None:
                caller.person.connection(True)
            while True:
                try:
                    frame = await link.receive()
                except FrameError as exc:
                    if exc.kind not in (FrameKind.CHAT, FrameKind.WCHAT):
                        raise
                    self.seen = trio.current_time()
                    caller.dropped(exc)
                    continue
                self.seen = trio.current_time()
                if not await caller.take(frame):
                    return True
        finally:
            if self.link is not None:
                caller.linked(False)
                if caller.person is not None:
                    caller.person.connection(False)
            self.link = None
            await link.aclose()

    async def _handshake(self, link: Link) -> None:
        """The hellos, the caller's ``auth`` and the host's answer."""
        caller = self.caller
        await link.send(HelloFrame())
        first = await link.receive()
        if isinstance(first, Error):
            raise JoinError(f"the host refused: {links.printable(first.reason)}")
        version = links.negotiate(first)
        assert isinstance(first, HelloFrame)
        caller.speaks(version)
        if first.nonce is None or first.name is None:
            raise FrameError("hello: the host's hello needs a nonce and a name")
        host = links.printable(first.name, MAX_NAME)
        fingerprint = caller.invite.fingerprint
        if caller.friends is not None and fingerprint is not None:
            warning = caller.friends.check(host, fingerprint)
            if warning:
                caller.say(warning)
        assert fingerprint is not None
        await link.send(caller.auth(first.nonce, fingerprint, caller.invite.token))
        answer = await link.receive()
        if isinstance(answer, Error):
            raise JoinError(f"the host refused: {links.printable(answer.reason)}")
        await caller.admitted(link, answer, host)
