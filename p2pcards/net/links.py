"""What host and joiner share on a link: the opening (protocol versions), chat, and
how text from another peer is printed.  The frames themselves are in
:mod:`p2pcards.net.frames`.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable

import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pcards.net.frames import (
    AGREED_VERSION,
    AHEAD_VERSION,
    MAX_CHAT,
    PIPELINED_VERSION,
    PROTOCOL,
    PROVED_VERSION,
    VERSIONS,
    ChatLine,
    Frame,
    FrameError,
    HelloFrame,
    kind_of,
)
from p2pcards.table import kinds
from p2pcards.table.roster import AGREED_DECK, AHEAD_DECK, PIPELINED_DECK, PROVED_DECKS

CHAT_DOMAIN = b"p2pcards/chat/v1\x00"
HANDSHAKE_SECONDS = 15


def printable(value: object, most: int = 200) -> str:
    """Text from another peer, safe to print (:func:`p2pcards.table.kinds.printable`)."""
    return kinds.printable(value, most)


def why_lost(exc: BaseException) -> str:
    """Why the link to the host failed, for "cannot reach the host: ..." and "lost the
    host (...)": the error in one line, in words (:func:`socket_reason`), without the
    link's own name before it (a link to the host is named "the host"), or "no
    answer"."""
    reason = socket_reason(exc)
    if reason is not None:
        return reason
    return printable(str(exc).removeprefix("the host: ") or "no answer")


def socket_reason(exc: BaseException) -> str | None:
    """What a failed dial or lookup means, in words, not ``[Errno N]`` (None: not a
    failure of the system's: its own text says it).  Trio's "all attempts to connect
    ... failed" is read through the attempts' own errors."""
    if isinstance(exc, BaseExceptionGroup):
        reasons = [socket_reason(inner) for inner in exc.exceptions]
        return next((r for r in reasons if r is not None), None)
    if isinstance(exc, socket.gaierror):
        return "no such host name (its lookup failed: is the invite's address right?)"
    if isinstance(exc, ConnectionRefusedError):
        return "nothing listens there (connection refused: is the table still hosted?)"
    if isinstance(exc, (TimeoutError, trio.TooSlowError)):
        return "no answer"
    if isinstance(exc, OSError) and exc.errno is None and exc.__cause__ is not None:
        return socket_reason(exc.__cause__)  # (Trio's "all attempts to connect")
    if isinstance(exc, OSError) and exc.strerror:
        return printable(exc.strerror[:1].lower() + exc.strerror[1:])
    return None


def negotiate(frame: Frame) -> int:
    """The version both ends speak, from the other end's first frame (its hello), or
    :class:`FrameError` naming the mismatch."""
    if not isinstance(frame, HelloFrame):
        raise FrameError(f"expected hello first, got {kind_of(frame)!r}")
    if frame.proto != PROTOCOL:
        raise FrameError(f"not a {PROTOCOL} peer (protocol {frame.proto!r})")
    lowest, highest = frame.versions
    low, high = max(lowest, VERSIONS[0]), min(highest, VERSIONS[1])
    if low > high:
        raise FrameError(f"protocol version mismatch: this node speaks {VERSIONS[0]} to"
                         f" {VERSIONS[1]}, the other {lowest} to {highest};"
                         " upgrade the older one")
    return high


def admits(frame: HelloFrame, version: int, deck: str) -> None:
    """Refuses (:class:`FrameError`) a link of ``version``, negotiated from the joiner's
    ``frame``, to a table dealing with ``deck`` whose peers must know it (a table
    still in its lobby names the deck asked for: ``proved`` admits a peer that does
    not know the pipelined rule, and the roster then names plain ``proved``)."""
    lowest, highest = frame.versions
    if deck in PROVED_DECKS and version < PROVED_VERSION:
        raise FrameError(f"protocol version mismatch: this table deals with the proved deck,"
                         f" which needs version {PROVED_VERSION}; the other speaks {lowest} to"
                         f" {highest}; upgrade p2pcards, or ask the host for a table with"
                         " --deck lock")
    needs = RULE_VERSIONS.get(deck)
    if needs is not None and version < needs:
        raise FrameError(rule_refusal(deck, f"the other speaks {lowest} to {highest}"))


RULE_VERSIONS = {PIPELINED_DECK: PIPELINED_VERSION, AHEAD_DECK: AHEAD_VERSION,
                 AGREED_DECK: AGREED_VERSION}
"""The lowest link version whose peers know each later rule of the proved deck."""
_RULE_WORDS = {PIPELINED_DECK: "pipelined shuffles", AHEAD_DECK: "the next deal shuffled ahead",
               AGREED_DECK: "the next deal shuffled ahead and its shares sent on the agreement"}


def known_rules(versions: Iterable[int]) -> frozenset[str]:
    """The later rules of the proved deck that peers speaking ``versions`` all know."""
    lowest = min(versions, default=VERSIONS[1])
    return frozenset(rule for rule, needs in RULE_VERSIONS.items() if lowest >= needs)


def rule_refusal(deck: str, other: str = "") -> str:
    """Why a peer below the version :data:`RULE_VERSIONS` gives ``deck`` may not sit at
    or watch a table whose roster names it (``other``: what it speaks, where known)."""
    speaks = f"; {other}" if other else ""
    return (f"protocol version mismatch: this table's roster names the proved deck with"
            f" {_RULE_WORDS[deck]} ({deck}), which needs version"
            f" {RULE_VERSIONS[deck]}{speaks}; upgrade p2pcards to take a seat at it or watch"
            " it")


def chat_message(table: bytes, seat: int, number: int, text: str) -> bytes:
    return CHAT_DOMAIN + table + seat.to_bytes(2, "big") + number.to_bytes(8, "big") + \
        text.encode()


class Chat:
    """One peer's chat: the lines it signs, numbered by the clock (so that a restarted
    peer goes on numbering upwards), and the last number taken from each seat (so that
    a relay cannot show a line again)."""

    def __init__(self) -> None:
        self.sent = 0
        self.last: dict[int, int] = {}

    def frame(self, key: Ed25519PrivateKey, table: bytes, seat: int, text: str) -> ChatLine:
        text = text[:MAX_CHAT]
        self.sent = max(self.sent + 1, time.time_ns())
        return ChatLine(seat=seat, n=self.sent, text=text,
                        sig=key.sign(chat_message(table, seat, self.sent, text)))

    def take(self, line: ChatLine, keys: list[Ed25519PublicKey], table: bytes
             ) -> tuple[int, str]:
        """The seat and the (printable) text of a chat line; :class:`FrameError` for a
        seat not at the table, a bad signature or a line shown before."""
        seat = line.seat
        if not seat < len(keys):
            raise FrameError(f"chat from seat {seat}, not at this table")
        try:
            keys[seat].verify(line.sig, chat_message(table, seat, line.n, line.text))
        except InvalidSignature as exc:
            raise FrameError(f"chat in seat {seat}'s name with a bad signature") from exc
        if line.n <= self.last.get(seat, 0):
            raise FrameError(f"a chat line of seat {seat} shown again")
        self.last[seat] = line.n
        return seat, printable(line.text)
