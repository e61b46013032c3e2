"""Invites and the joiner's proof of identity.

An invite is ``p2pcards://HOST:PORT/FINGERPRINT/TOKEN``: where the host
listens, its device id (the fingerprint the joiner pins; left empty, the
joiner trusts on first use and is shown the fingerprint) and the table's
one-time token (only joiners who have it sit).  IPv6 hosts go in brackets.

Inside TLS, the host sends a fresh nonce; the joiner signs, with its identity
key, the nonce, the host's device id and the token (:func:`proof`), so its
signature cannot be replayed to another host or another table.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pcards.net.identity import decode_id, encode_id

SCHEME = "p2pcards://"
TOKEN_BYTES = 16
AUTH_DOMAIN = b"p2pcards/join/v1\x00"


class InviteError(ValueError):
    """An invite string that does not read (the part that is wrong is named)."""


@dataclass(frozen=True)
class Invite:
    host: str
    port: int
    fingerprint: bytes | None
    token: bytes

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        fingerprint = encode_id(self.fingerprint) if self.fingerprint else ""
        token = base64.b32encode(self.token).decode().rstrip("=")
        return f"{SCHEME}{host}:{self.port}/{fingerprint}/{token}"


def parse_invite(text: str) -> Invite:
    text = text.strip()
    if not text.startswith(SCHEME):
        raise InviteError(f"an invite starts with {SCHEME!r}")
    parts = text[len(SCHEME):].split("/")
    if len(parts) != 3:
        raise InviteError("an invite is p2pcards://HOST:PORT/FINGERPRINT/TOKEN")
    address, fingerprint, token = parts
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        port_text = rest.removeprefix(":")
    else:
        host, _, port_text = address.rpartition(":")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InviteError(f"the address {address!r} is not HOST:PORT")
    try:
        pinned = decode_id(fingerprint) if fingerprint else None
    except ValueError as exc:
        raise InviteError(f"the fingerprint: {exc}") from exc
    try:
        raw = base64.b32decode(token.upper() + "=" * (-len(token) % 8))
    except ValueError as exc:
        raise InviteError("the token is not base32") from exc
    if len(raw) != TOKEN_BYTES:
        raise InviteError(f"the token must be {TOKEN_BYTES} bytes")
    return Invite(host, int(port_text), pinned, raw)


def proof_message(nonce: bytes, host_id: bytes, token: bytes) -> bytes:
    return AUTH_DOMAIN + nonce + host_id + token


def proof(key: Ed25519PrivateKey, nonce: bytes, host_id: bytes, token: bytes) -> bytes:
    return key.sign(proof_message(nonce, host_id, token))


def check_proof(public: Ed25519PublicKey, signature: bytes, nonce: bytes, host_id: bytes,
                token: bytes) -> bool:
    try:
        public.verify(signature, proof_message(nonce, host_id, token))
    except InvalidSignature:
        return False
    return True
