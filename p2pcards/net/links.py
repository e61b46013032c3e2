"""What host and joiner share: the opening of a link and the frames after it.

Frames (``t`` names the type; DESIGN.md section 4):

==========  =========  ====================================================
``hello``   both       ``proto``, ``versions`` [lowest, highest]; the host's
                       adds ``nonce``, ``game``, ``name``, ``free`` (seats)
``auth``    joiner     ``key`` (Ed25519), ``name``, ``token``, ``sig`` (the
                       proof, :mod:`p2pcards.net.invite`), ``bots`` [[kind,
                       key], ...] for bots the joiner runs
``welcome`` host       ``seat``: the joiner's seat
``lobby``   host       ``seats`` [[name, id, bot, run_by], ...], ``players``
``start``   host       ``roster`` (bytes), ``settings``
``msg``     both       ``wire``: one table message (relayed by the host)
``chat``    both       ``seat``, ``n`` (rising), ``text``, ``sig`` (the seat's)
``error``   both       ``reason``, then the link closes
==========  =========  ====================================================
"""

from __future__ import annotations

import time
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pcards.net.wire import PROTOCOL, VERSIONS, FrameError, field

CHAT_DOMAIN = b"p2pcards/chat/v1\x00"
MAX_CHAT = 200
HANDSHAKE_SECONDS = 15


def printable(value: object, most: int = 200) -> str:
    """Text from another peer, safe to print: no control characters, no escapes."""
    text = str(value)[:most]
    return "".join(c if c.isprintable() else "?" for c in text)


def hello(**extra: Any) -> dict[str, Any]:
    return {"t": "hello", "proto": PROTOCOL, "versions": list(VERSIONS), **extra}


def check_hello(frame: dict[str, Any]) -> int:
    """The version both ends speak, or :class:`FrameError` naming the mismatch."""
    if frame["t"] != "hello":
        raise FrameError(f"expected hello first, got {frame['t']!r}")
    if frame.get("proto") != PROTOCOL:
        raise FrameError(f"not a {PROTOCOL} peer (protocol {frame.get('proto')!r})")
    versions = field(frame, "versions", list, 2)
    if len(versions) != 2 or not all(isinstance(v, int) for v in versions):
        raise FrameError("hello: versions must be [lowest, highest]")
    low, high = max(versions[0], VERSIONS[0]), min(versions[1], VERSIONS[1])
    if low > high:
        raise FrameError(f"protocol version mismatch: this node speaks {VERSIONS[0]} to"
                         f" {VERSIONS[1]}, the other {versions[0]} to {versions[1]};"
                         " upgrade the older one")
    return int(high)


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

    def frame(self, key: Ed25519PrivateKey, table: bytes, seat: int, text: str
              ) -> dict[str, Any]:
        text = text[:MAX_CHAT]
        self.sent = max(self.sent + 1, time.time_ns())
        return {"t": "chat", "seat": seat, "n": self.sent, "text": text,
                "sig": key.sign(chat_message(table, seat, self.sent, text))}

    def take(self, frame: dict[str, Any], keys: list[Ed25519PublicKey], table: bytes
             ) -> tuple[int, str]:
        """The seat and the (printable) line of a chat frame; :class:`FrameError` for a
        bad signature or a line shown before."""
        seat = field(frame, "seat", int)
        number = field(frame, "n", int)
        text = field(frame, "text", str, MAX_CHAT)
        signature = field(frame, "sig", bytes, 64)
        if not 0 <= seat < len(keys) or not 0 < number < 1 << 63:
            raise FrameError(f"chat from seat {seat}, not at this table")
        try:
            keys[seat].verify(signature, chat_message(table, seat, number, text))
        except InvalidSignature as exc:
            raise FrameError(f"chat in seat {seat}'s name with a bad signature") from exc
        if number <= self.last.get(seat, 0):
            raise FrameError(f"a chat line of seat {seat} shown again")
        self.last[seat] = number
        return seat, printable(text)
