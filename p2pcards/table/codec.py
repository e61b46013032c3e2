"""The table's wire format: signed envelopes, sealed private bodies (docs/protocol.md).

An **envelope** is msgpack ``[payload, signature]``; the payload is msgpack
``[version, table, deal, sender, seq, prior, kind, body]`` and the signature is
the sender's Ed25519 signature of ``ENVELOPE_DOMAIN + payload``.  ``prior`` is
the transcript hash the sender had when it sent the message (the chain of
every accepted payload, :func:`chain`).  The payload must be the canonical
packing of what it decodes to, so that one message has one encoding.

A **sealed** body goes to one recipient: msgpack ``[inner, signature]`` where
``inner`` binds the table, deal, sender and recipient and the signature is
the sender's over ``SEALED_DOMAIN + inner``; that blob is encrypted with HPKE
(RFC 9180 base mode: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
ChaCha20-Poly1305) to the recipient's sealing key of the deal.  The recipient
can show the inner blob to anyone as proof of what it was sent.

Decoding never trusts its input: every failure is a :class:`CodecError` whose
message names what is wrong and where.  An envelope is measured against the cap of
its kind (:data:`KIND_CAPS`) before anything of it is decoded: the kind is read from
the envelope's first bytes (:func:`read_head`), so that a message costs at most what
the largest honest message of its kind, twice over, costs to decode.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Final, NamedTuple

import msgpack
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hpke, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

VERSION = 1
_CAPS = {
    # the opening, and what each deal begins with (under 250 bytes each)
    "sign": 512, "commit": 512, "share": 512, "hello": 512, "pkey": 512,
    # claims of silence, returns, consent (under 200 bytes)
    "silent": 512, "back": 512, "consent": 512,
    # a text of at most 200 characters (up to 4 bytes each, 960 bytes with the rest) and
    # a move's cards (611 bytes at most in the games)
    "opened": 2048, "alarm": 2048, "void": 2048, "agree": 2048, "act": 2048, "pact": 2048,
    # the seats that change hands: seven seats of 32-character names (1,417 bytes at most)
    "seat": 3072,
    # the lock deck: 2,913 (shuffle), 5,645 (lock), 1,599 (unlock), 1,408 (remix),
    # 3,221 (keys), 3,634 (audit) bytes at most in the games
    "shuffle": 6 * 1024, "lock": 12 * 1024, "unlock": 4 * 1024, "remix": 3 * 1024,
    "keys": 8 * 1024, "audit": 8 * 1024,
    # the proved deck: 18,798 (pshuffle), 4,598 (premix), 8,312 (pshares) bytes at most
    "pshuffle": 40 * 1024, "premix": 10 * 1024, "pshares": 18 * 1024,
    # a move that carries a step of the next deal's deck (a shuffle: as ``pshuffle``)
    "pmove": 40 * 1024,
    # an agreement that carries the signer's shares of the next deal (as ``pshares``)
    "pagree": 20 * 1024,
}
MAX_QUOTED = max(_CAPS.values())
"""The most bytes of a message that a proof of equivocation quotes: the largest cap of
any kind but the proof's own."""
KIND_CAPS: Final[Mapping[str, int]] = {**_CAPS, "cheat": 2 * MAX_QUOTED + 1024}
"""The most bytes of an envelope of each kind: about twice the largest message of the
kind in whole games of the four games with each deck (docs/protocol.md, "Envelope",
gives the figures), or twice what its text fields can hold; a proof of equivocation
(``cheat``) quotes two messages of any other kind.  A message over its kind's cap is
refused from its length and first bytes, before its payload is decoded."""
UNKNOWN_CAP = 512
"""The cap of a message whose first bytes name no kind above (or are not as a canonical
envelope has them): it is decoded only to say what is wrong with it."""
MAX_MESSAGE = max(KIND_CAPS.values())
"""The largest envelope accepted, of any kind, in bytes."""
ENVELOPE_DOMAIN = b"p2pcards/envelope/v1\x00"
SEALED_DOMAIN = b"p2pcards/sealed/v1\x00"
SEAL_INFO = b"p2pcards/seal/v1\x00"
TRANSCRIPT_DOMAIN = b"p2pcards/transcript/v1\x00"
TABLE_BYTES = 16
HASH_BYTES = 32
KEY_BYTES = 32
SIGNATURE_BYTES = 64
SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.CHACHA20_POLY1305)


class CodecError(ValueError):
    """Bytes that are not a well-formed, well-signed message; says what and where
    (``sender``: the seat the message claims, once the payload could be read)."""

    def __init__(self, message: str, sender: int | None = None):
        super().__init__(message)
        self.sender = sender


def _sorted(value: Any) -> Any:
    """``value`` with every map's keys in sorted order (the canonical form)."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list | tuple):
        return [_sorted(v) for v in value]
    return value


def pack(value: Any) -> bytes:
    """Canonical msgpack: shortest forms, maps with their keys sorted."""
    packed: bytes = msgpack.packb(_sorted(value), use_bin_type=True)
    return packed


def no_ext(code: int, data: bytes) -> Any:
    raise CodecError(f"msgpack extension type {code} is not allowed")


class _Unsorted(Exception):
    """A map whose keys are not in ascending order (raised inside msgpack's decoding)."""


def _ordered(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A map as decoded, its keys checked to be in strictly ascending order (the
    canonical form; a key twice is refused too)."""
    for (first, _), (second, _) in pairwise(pairs):
        if not first < second:
            raise _Unsorted
    return dict(pairs)


def unpack(data: bytes, what: str, limit: int = MAX_MESSAGE) -> Any:
    """Strict msgpack decoding: one object, no extensions, string map keys, canonical
    (shortest forms, map keys sorted), at most ``limit`` bytes.  The key order is
    checked as each map is decoded, so that the canonical form is checked by encoding
    the value again as it came (msgpack's own code, not a walk of the value)."""
    if not isinstance(data, bytes):
        raise CodecError(f"{what}: expected bytes, not {type(data).__name__}")
    if len(data) > limit:
        raise CodecError(f"{what}: {len(data)} bytes, more than the {limit} allowed")
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=True, ext_hook=no_ext,
                                use_list=True, object_pairs_hook=_ordered)
    except CodecError:
        raise
    except _Unsorted:
        raise CodecError(f"{what}: not in canonical msgpack form") from None
    except Exception as error:  # msgpack raises several types for bad input
        raise CodecError(f"{what}: not msgpack ({type(error).__name__}: {error})") from None
    try:
        canonical: bytes = msgpack.packb(value, use_bin_type=True)
    except Exception as error:
        raise CodecError(f"{what}: cannot be re-encoded ({error})") from None
    if canonical != data:
        raise CodecError(f"{what}: not in canonical msgpack form")
    return value


def chain(prior: bytes, payload: bytes) -> bytes:
    """The transcript hash after accepting ``payload``."""
    return hashlib.sha256(TRANSCRIPT_DOMAIN + prior + payload).digest()


def genesis(table: bytes) -> bytes:
    """The transcript hash of a table before its first message."""
    return hashlib.sha256(TRANSCRIPT_DOMAIN + b"genesis" + table).digest()


def a_or_an(word: str) -> str:
    """``word`` after its indefinite article: ``an audit``, ``a deal``, ``an ismcts``."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def counted(count: int, singular: str, plural: str = "") -> str:
    """``count`` things: ``1 message``, ``3 messages``, ``2 re-mixes``."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


@dataclass(frozen=True, slots=True)
class Envelope:
    """One decoded, signature-checked message (``body`` still the raw map; the
    kinds module turns it into a message dataclass)."""

    version: int
    table: bytes
    deal: int
    sender: int
    seq: int
    prior: bytes
    kind: str
    body: dict[str, Any]
    payload: bytes
    signature: bytes

    @property
    def wire(self) -> bytes:
        return pack([self.payload, self.signature])


def _uint(value: Any, what: str, most: int = 1 << 63) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < most:
        raise CodecError(f"{what} must be an integer from 0 to {most - 1}")
    return value


def _blob(value: Any, size: int, what: str) -> bytes:
    if not isinstance(value, bytes) or len(value) != size:
        raise CodecError(f"{what} must be {size} bytes")
    return value


def cap_of(kind: str | None) -> int:
    """The most bytes an envelope of ``kind`` may have (:data:`KIND_CAPS`)."""
    return KIND_CAPS.get(kind, UNKNOWN_CAP) if kind is not None else UNKNOWN_CAP


def seal_envelope(identity: Ed25519PrivateKey, *, table: bytes, deal: int, sender: int, seq: int,
                  prior: bytes, kind: str, body: dict[str, Any]) -> Envelope:
    """Encode and sign a message."""
    payload = pack([VERSION, table, deal, sender, seq, prior, kind, body])
    size = len(payload) + SIGNATURE_BYTES + 8  # (the envelope's own framing: at most 8)
    if size > cap_of(kind):
        raise CodecError(f"{a_or_an(kind)} message of {size} bytes is too large to send"
                         f" (the cap of its kind is {cap_of(kind)} bytes)")
    signature = _sign(identity, ENVELOPE_DOMAIN + payload)
    return Envelope(VERSION, table, deal, sender, seq, prior, kind, body, payload, signature)


def open_envelope(wire: bytes, keys: list[Ed25519PublicKey]) -> Envelope:
    """Decode ``wire`` and check its signature against the sender's key in ``keys``
    (seat -> identity).  Raises :class:`CodecError` naming the problem."""
    env = read_envelope(wire, len(keys))
    try:
        _verify(keys[env.sender], env.signature, ENVELOPE_DOMAIN + env.payload)
    except InvalidSignature:
        raise CodecError(f"bad signature on {a_or_an(env.kind)} message in seat {env.sender}'s"
                         " name", env.sender) from None
    return env


class Head(NamedTuple):
    """What an envelope's first bytes say, read without decoding the rest (unchecked)."""

    table: bytes
    deal: int
    sender: int
    seq: int
    prior: bytes
    kind: str


_UINT_WIDTH = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}
"""msgpack's unsigned integers after their first byte: the bytes that follow."""


def _read_uint(wire: bytes, at: int) -> tuple[int, int] | None:
    first = wire[at] if at < len(wire) else 0xC1
    if first < 0x80:
        return first, at + 1
    width = _UINT_WIDTH.get(first)
    if width is None or at + 1 + width > len(wire):
        return None
    return int.from_bytes(wire[at + 1:at + 1 + width], "big"), at + 1 + width


def _read_bin(wire: bytes, at: int, size: int) -> tuple[bytes, int] | None:
    if wire[at:at + 2] != bytes((0xC4, size)) or at + 2 + size > len(wire):
        return None
    return wire[at + 2:at + 2 + size], at + 2 + size


def read_head(wire: bytes) -> Head | None:
    """The table, deal, sender, sequence number, prior and kind an envelope names, read
    from its first bytes as the canonical form has them (``[payload, signature]``, the
    payload ``[version, table, deal, sender, seq, prior, kind, body]``); None if they
    are not so.  Nothing is checked (not even the signature): what it is for is the
    cap of the message's kind, and what a message refused says it is."""
    if not isinstance(wire, bytes) or len(wire) < 8 or wire[0] != 0x92:
        return None
    at = {0xC4: 3, 0xC5: 4, 0xC6: 6}.get(wire[1])
    if at is None or at >= len(wire) or wire[at] != 0x98:  # (a payload of 8 items)
        return None
    numbers: list[int] = []
    blobs: list[bytes] = []
    at += 1
    for field in ("version", "table", "deal", "sender", "seq", "prior"):
        if field in ("table", "prior"):
            blob = _read_bin(wire, at, TABLE_BYTES if field == "table" else HASH_BYTES)
            if blob is None:
                return None
            blobs.append(blob[0])
            at = blob[1]
        else:
            number = _read_uint(wire, at)
            if number is None:
                return None
            numbers.append(number[0])
            at = number[1]
    length = wire[at] - 0xA0 if at < len(wire) else -1
    kind = wire[at + 1:at + 1 + length]
    if not 0 < length <= 16 or len(kind) != length or not kind.isascii() \
            or not kind.decode().isidentifier():
        return None
    _, deal, sender, seq = numbers
    return Head(blobs[0], deal, sender, seq, blobs[1], kind.decode())


def check_cap(wire: bytes) -> None:
    """Refuse an envelope over the cap of its kind (:data:`KIND_CAPS`), from its length
    and first bytes alone."""
    if not isinstance(wire, bytes):
        raise CodecError(f"envelope: expected bytes, not {type(wire).__name__}")
    head = read_head(wire) if len(wire) > UNKNOWN_CAP else None
    kind = head.kind if head is not None and head.kind in KIND_CAPS else None
    if len(wire) > cap_of(kind):
        what = f"{a_or_an(kind)} message" if kind is not None else \
            "a message whose first bytes name no kind"
        raise CodecError(f"envelope: {what} of {len(wire)} bytes, over the {cap_of(kind)}"
                         f"-byte cap of {'its kind' if kind is not None else 'such a message'}")


def read_envelope(wire: bytes, players: int) -> Envelope:
    """Decode ``wire`` without checking its signature: only for a message this peer
    checked when it came (kept as held, as evidence or in a proof; its sender's key may
    have changed hands since).  Raises :class:`CodecError` naming the problem."""
    check_cap(wire)
    outer = unpack(wire, "envelope")
    if not isinstance(outer, list) or len(outer) != 2:
        raise CodecError("envelope: expected [payload, signature]")
    payload, signature = outer
    if not isinstance(payload, bytes):
        raise CodecError("envelope: the payload must be bytes")
    _blob(signature, SIGNATURE_BYTES, "envelope signature")
    fields = unpack(payload, "payload")
    if not isinstance(fields, list) or len(fields) != 8:
        raise CodecError("payload: expected [version, table, deal, sender, seq, prior, kind,"
                         " body]")
    version, table, deal, sender, seq, prior, kind, body = fields
    if version != VERSION:
        raise CodecError(f"payload: protocol version {version!r}, this peer speaks {VERSION}")
    _blob(table, TABLE_BYTES, "payload table")
    _uint(deal, "payload deal")
    _uint(sender, "payload sender", players)
    _uint(seq, "payload seq")
    _blob(prior, HASH_BYTES, "payload prior")
    if not isinstance(kind, str) or not 0 < len(kind) <= 16 or not kind.isascii() \
            or not kind.isidentifier():
        raise CodecError("payload kind must be a short word")
    if not isinstance(body, dict):
        raise CodecError(f"{kind} body must be a map")
    return Envelope(version, table, deal, sender, seq, prior, kind, body, payload, signature)


# ------------------------------------------------------------------ sealing


def seal_info(table: bytes, deal: int, recipient: int) -> bytes:
    return SEAL_INFO + table + deal.to_bytes(8, "big") + recipient.to_bytes(1, "big")


def seal(identity: Ed25519PrivateKey, recipient_key: bytes, *, table: bytes, deal: int,
         sender: int, recipient: int, content: Any) -> bytes:
    """Sign ``content`` bound to table, deal, sender and recipient, then encrypt it to
    the recipient's X25519 sealing key (32 raw bytes)."""
    inner = pack([table, deal, sender, recipient, content])
    blob = pack([inner, _sign(identity, SEALED_DOMAIN + inner)])
    key = X25519PublicKey.from_public_bytes(recipient_key)
    return _encrypt(blob, key, seal_info(table, deal, recipient))


def unseal(ciphertext: bytes, private: X25519PrivateKey, sender_key: Ed25519PublicKey, *,
           table: bytes, deal: int, sender: int, recipient: int) -> Any:
    """Decrypt and check a sealed body; returns its content.  :class:`CodecError` if it
    does not decrypt, is not signed by the sender, or is bound to anything else."""
    try:
        blob = _decrypt(ciphertext, private, seal_info(table, deal, recipient))
    except (InvalidTag, ValueError):
        raise CodecError(f"a sealed body from seat {sender} does not decrypt for seat"
                         f" {recipient}") from None
    return check_sealed(blob, sender_key, table=table, deal=deal, sender=sender,
                        recipient=recipient)


def check_sealed(blob: bytes, sender_key: Ed25519PublicKey, *, table: bytes, deal: int,
                 sender: int, recipient: int) -> Any:
    """The content of a decrypted sealed body, its binding and signature checked.  The
    reasons are fixed texts (they end up in verdicts every seat signs)."""
    try:
        outer = unpack(blob, "sealed body")
    except CodecError:
        raise CodecError(f"a sealed body from seat {sender} is not msgpack") from None
    if not isinstance(outer, list) or len(outer) != 2 or not isinstance(outer[0], bytes):
        raise CodecError("sealed body: expected [inner, signature]")
    inner, signature = outer
    _blob(signature, SIGNATURE_BYTES, "sealed body signature")
    try:
        _verify(sender_key, signature, SEALED_DOMAIN + inner)
    except InvalidSignature:
        raise CodecError(f"a sealed body is not signed by seat {sender}") from None
    try:
        fields = unpack(inner, "sealed inner")
    except CodecError:
        raise CodecError(f"a sealed body from seat {sender} is not msgpack") from None
    if not isinstance(fields, list) or len(fields) != 5:
        raise CodecError("sealed inner: expected [table, deal, sender, recipient, content]")
    if fields[:4] != [table, deal, sender, recipient] \
            or any(isinstance(f, bool) for f in fields[1:4]):  # (True == 1 in Python)
        raise CodecError(f"a sealed body from seat {sender} is bound to another table, deal,"
                         " sender or recipient")
    return fields[4]


# The primitives, one call each (``p2pcards bench table`` times them as "crypto").


def _sign(key: Ed25519PrivateKey, data: bytes) -> bytes:
    return key.sign(data)


def _verify(key: Ed25519PublicKey, signature: bytes, data: bytes) -> None:
    key.verify(signature, data)


def _encrypt(blob: bytes, key: X25519PublicKey, info: bytes) -> bytes:
    return SUITE.encrypt(blob, key, info)


def _decrypt(blob: bytes, key: X25519PrivateKey, info: bytes) -> bytes:
    return SUITE.decrypt(blob, key, info)


def usable_seal_key(raw: bytes) -> bool:
    """Whether ``raw`` is an X25519 public key that a sealing can use (not one of the
    low-order points, whose shared secret is all zeros)."""
    try:
        key = X25519PublicKey.from_public_bytes(raw)
        X25519PrivateKey.from_private_bytes(b"\x01" * 32).exchange(key)
    except ValueError:
        return False
    return True


def public_bytes(key: Ed25519PublicKey | X25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def private_bytes(key: X25519PrivateKey | Ed25519PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                             serialization.NoEncryption())


def identity_key(raw: bytes, what: str) -> Ed25519PublicKey:
    try:
        return Ed25519PublicKey.from_public_bytes(_blob(raw, KEY_BYTES, what))
    except ValueError as error:
        raise CodecError(f"{what}: {error}") from None
