"""Invites and the joiner's proof of identity.

An invite is ``p2pcards://ADDRESSES/FINGERPRINT/TOKEN``: where the host may be
reached, its device id (the fingerprint the joiner pins; left empty, the joiner
trusts on first use and is shown the fingerprint) and the table's one-time
token (only joiners who have it sit).  ADDRESSES is one ``HOST:PORT`` or
several joined by commas (a mapped public address, a global IPv6 address, a
LAN address, an onion address: the joiner dials them all, the first handshake
that pins the fingerprint wins, :mod:`p2pcards.net.client`); an IPv6 address
goes in brackets.  An invite of one address reads as it always did.

Inside TLS, the host sends a fresh nonce; the joiner signs, with its identity
key, the nonce, the host's device id and the token (:func:`proof`), so its
signature cannot be replayed to another host or another table.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2pcards.net.identity import decode_id, encode_id
from p2pcards.net.tor import check_onion

SCHEME = "p2pcards://"
TOKEN_BYTES = 16
MAX_ADDRESSES = 8
"""Addresses an invite may name (a host offers four at most)."""
MAX_HOST = 253
"""The longest host name (DNS's limit; an onion address is 62)."""

Address = tuple[str, int]
"""Where a host may be reached: a host name or address, and a port."""
AUTH_DOMAIN = b"p2pcards/join/v1\x00"


class InviteError(ValueError):
    """An invite string that does not read (the part that is wrong is named)."""


def show_address(host: str, port: int) -> str:
    """``HOST:PORT``, an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(frozen=True)
class Invite:
    host: str
    port: int
    fingerprint: bytes | None
    token: bytes
    more: tuple[Address, ...] = ()
    """The other addresses the host may be reached at, after ``host:port``."""

    @property
    def addresses(self) -> tuple[Address, ...]:
        """Every address the invite names, in its order."""
        return ((self.host, self.port), *self.more)

    def __str__(self) -> str:
        addresses = ",".join(show_address(h, p) for h, p in self.addresses)
        fingerprint = encode_id(self.fingerprint) if self.fingerprint else ""
        token = base64.b32encode(self.token).decode().rstrip("=")
        return f"{SCHEME}{addresses}/{fingerprint}/{token}"


def invite_at(addresses: list[Address], fingerprint: bytes | None, token: bytes) -> Invite:
    """An invite naming ``addresses`` (at least one), in that order."""
    (host, port), *more = addresses
    return Invite(host, port, fingerprint, token, tuple(more))


PORT = re.compile(r"[0-9]{1,5}")


def _a_host(host: str) -> bool:
    """Whether ``host`` is an IP address or a host name DNS can carry (labels of 1 to 63
    letters, digits and hyphens, in IDNA for other scripts)."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    try:
        ascii_name = host.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    return all(LABEL.fullmatch(label) for label in ascii_name.removesuffix(".").split("."))


LABEL = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")


def parse_address(address: str) -> Address:
    """``HOST:PORT`` (an IPv6 address in brackets) read; InviteError naming it if not."""
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        port_text = rest.removeprefix(":") if rest.startswith(":") else ""
        if ":" not in host:
            host = ""
    else:
        host, _, port_text = address.rpartition(":")
        if ":" in host:
            host = ""  # (an IPv6 address without its brackets)
    if not host or len(host) > MAX_HOST or not PORT.fullmatch(port_text) \
            or not 0 < int(port_text) < 65536 or not _a_host(host):
        raise InviteError(f"the address {address[:80]!r} is not HOST:PORT (a port from 1 to"
                          " 65535; an IPv6 address in brackets)")
    if host.lower().endswith(".onion"):
        try:
            host = check_onion(host)
        except ValueError as exc:
            raise InviteError(f"the address {address[:80]!r}: {exc}") from exc
    return host, int(port_text)


def parse_invite(text: str) -> Invite:
    text = text.strip()
    if not text.startswith(SCHEME):
        raise InviteError(f"an invite starts with {SCHEME!r}")
    parts = text[len(SCHEME):].split("/")
    if len(parts) != 3:
        raise InviteError("an invite is p2pcards://HOST:PORT[,HOST:PORT...]/FINGERPRINT/TOKEN")
    listed, fingerprint, token = parts
    named = listed.split(",")
    if len(named) > MAX_ADDRESSES:
        raise InviteError(f"an invite names {MAX_ADDRESSES} addresses at most, not"
                          f" {len(named)}")
    addresses = [parse_address(address) for address in named]
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
    return invite_at(addresses, pinned, raw)


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
