"""This install's identity: an Ed25519 key, a self-signed certificate, a friends list.

Created on first run in the platform's data directory (``P2PCARDS_HOME``
overrides it), readable by the owner only (0600).  The **device id** is the
SHA-256 of the raw public key; people see it in base32, in groups of four
(:func:`show_id`).  The same key signs this peer's table messages, proves who
it is to a host, and (in the certificate) is what a joiner pins: the TLS
fingerprint of a host *is* its device id, so a regenerated certificate keeps
its id.

The friends list maps a name to the device id first seen with it (trust on
first use, as SSH's ``known_hosts``); a known name arriving with another id is
reported loudly, never silently re-pinned.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.x509.oid import NameOID

KEY_FILE = "identity.key"
CERT_FILE = "identity.crt"
FRIENDS_FILE = "friends.json"
ID_BYTES = 32


class IdentityError(Exception):
    """An identity file that cannot be used (named, with the reason)."""


def data_dir() -> Path:
    """Where this install keeps its identity and journals."""
    override = os.environ.get("P2PCARDS_HOME")
    if override:
        return Path(override)
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "p2pcards"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "p2pcards"
    return Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share") / "p2pcards"


def device_id(public: bytes) -> bytes:
    """The device id of a raw 32-byte Ed25519 public key."""
    return hashlib.sha256(b"p2pcards/device/v1\x00" + public).digest()


def encode_id(ident: bytes) -> str:
    """A device id (or any digest) in unpadded base32, upper case."""
    return base64.b32encode(ident).decode().rstrip("=")


def decode_id(text: str) -> bytes:
    """The device id written by :func:`encode_id` (groups and dashes allowed)."""
    clean = text.replace("-", "").replace(" ", "").upper()
    try:
        raw = base64.b32decode(clean + "=" * (-len(clean) % 8))
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a device id (base32 expected)") from exc
    if len(raw) != ID_BYTES:
        raise ValueError(f"{text!r} is not a device id ({ID_BYTES} bytes expected,"
                         f" {len(raw)} given)")
    return raw


def show_id(ident: bytes, groups: int = 13) -> str:
    """The id for people: groups of four base32 letters (13 groups: all of it)."""
    text = encode_id(ident)
    return "-".join(text[i:i + 4] for i in range(0, min(len(text), 4 * groups), 4))


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@dataclass(frozen=True)
class Identity:
    key: Ed25519PrivateKey
    cert_path: Path
    key_path: Path

    @property
    def public(self) -> bytes:
        return raw_public(self.key.public_key())

    @property
    def id(self) -> bytes:
        return device_id(self.public)


def write_private_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only (mode 0600, whatever the
    umask and whatever the file was), all at once: a reader never sees half of it."""
    part = path.with_name(path.name + ".part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, path)


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def certificate(key: Ed25519PrivateKey) -> bytes:
    """A self-signed certificate (PEM) carrying ``key``, named by its device id."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                         "p2pcards " + encode_id(device_id(
                                             raw_public(key.public_key())))[:16])])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .sign(key, None))
    return cert.public_bytes(serialization.Encoding.PEM)


def load_or_create(directory: Path | None = None) -> Identity:
    """This install's identity, created (key, then certificate) if missing."""
    directory = data_dir() if directory is None else directory
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    key_path, cert_path = directory / KEY_FILE, directory / CERT_FILE
    if not key_path.exists():
        key = Ed25519PrivateKey.generate()
        _write_private(key_path, key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))
    try:
        loaded = serialization.load_pem_private_key(key_path.read_bytes(), None)
    except (OSError, ValueError, TypeError) as exc:
        raise IdentityError(f"{key_path}: not a usable identity key ({exc})") from exc
    if not isinstance(loaded, Ed25519PrivateKey):
        raise IdentityError(f"{key_path}: not an Ed25519 key")
    if _cert_key(cert_path) != raw_public(loaded.public_key()):
        if cert_path.exists():
            cert_path.unlink()
        _write_private(cert_path, certificate(loaded))
    return Identity(loaded, cert_path, key_path)


def _cert_key(path: Path) -> bytes | None:
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None
    key = cert.public_key()
    return raw_public(key) if isinstance(key, Ed25519PublicKey) else None


def cert_identity(der: bytes) -> bytes:
    """The raw Ed25519 key a peer's certificate (DER) carries."""
    try:
        key = x509.load_der_x509_certificate(der).public_key()
    except ValueError as exc:
        raise IdentityError(f"the peer's certificate cannot be read ({exc})") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise IdentityError("the peer's certificate does not carry an Ed25519 key")
    return raw_public(key)


@dataclass
class Friends:
    """Names pinned to device ids (trust on first use)."""

    path: Path
    pinned: dict[str, str]

    @classmethod
    def load(cls, directory: Path | None = None) -> Friends:
        path = (data_dir() if directory is None else directory) / FRIENDS_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raw = {}
        except (OSError, ValueError) as exc:
            raise IdentityError(f"{path}: not a friends list ({exc})") from exc
        if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                for k, v in raw.items()):
            raise IdentityError(f"{path}: expected a map of names to device ids")
        return cls(path, raw)

    def check(self, name: str, ident: bytes) -> str | None:
        """Pin ``name`` to ``ident`` if new; a loud warning if it is pinned to another."""
        text = encode_id(ident)
        known = self.pinned.get(name)
        if known is None:
            self.pinned[name] = text
            self.save()
            return None
        if known == text:
            return None
        return (f"WARNING: {name!r} was known as {show_id(decode_id(known), 4)} but now"
                f" comes as {show_id(ident, 4)}: another device, or someone posing as"
                f" {name}. Compare ids before you play ('p2pcards id' on their machine).")

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.pinned, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(self.path)
