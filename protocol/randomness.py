"""Joint randomness by commit and reveal: a seed no single party can bias.

Each party draws a 32-byte share, broadcasts a hash commitment to it, and
reveals the share only once every commitment is in; the seed is the hash of
all shares in party order.  :func:`choice` and :func:`sample` draw uniform
numbers from the seed by rejection sampling (Control Nut!'s four controls, an
auction's draw, HAND's pick); the table seeds the game's first-dealer rule with it
(docs/protocol.md, "Joint randomness", gives every byte of both).  A party that
has committed can still refuse to reveal; :meth:`JointRandom.missing` names it,
and the table makes it forfeit: withholding never buys a second draw.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .constants import OBSERVER, Party
from .curve import SecretSource
from .errors import LocalProtocolError, RemoteProtocolError
from .source import SystemSource

DOMAIN = b"p2pcards/joint-random/v1"
SHARE_BYTES = 32


def _check(party: object, blob: object, what: str) -> None:
    if not isinstance(party, int) or isinstance(party, bool) or not 0 <= party < 64:
        raise ValueError("party must be a seat number from 0 to 63")
    if not isinstance(blob, bytes) or len(blob) != SHARE_BYTES:
        raise ValueError(f"{what} must be {SHARE_BYTES} bytes")


@dataclass(frozen=True, slots=True, kw_only=True)
class Commit:
    party: int
    digest: bytes

    def __post_init__(self) -> None:
        _check(self.party, self.digest, "digest")


@dataclass(frozen=True, slots=True, kw_only=True)
class Reveal:
    party: int
    share: bytes

    def __post_init__(self) -> None:
        _check(self.party, self.share, "share")




class JointRandom:
    """One party's side of one joint draw; ``label`` names the table, deal and purpose."""

    def __init__(self, label: bytes, parties: int, me: int,
                 source: SecretSource | None = None):
        if not (0 <= me < parties or me == OBSERVER):
            raise LocalProtocolError(f"party {me} is not among {parties}")
        self.label = label
        self.parties = parties
        self.me = Party(me)
        self.commits: dict[int, bytes] = {}
        self._share = b""
        if me != OBSERVER:  # an observer only checks the others' commitments and shares
            self._share = (SystemSource() if source is None else source).token_bytes(
                SHARE_BYTES)
            self.commits[me] = self._digest(me, self._share)
        self.shares: dict[int, bytes] = {}
        self._early: dict[int, bytes] = {}

    def _digest(self, party: int, share: bytes) -> bytes:
        return hashlib.sha256(b"".join([DOMAIN, len(self.label).to_bytes(2, "big"),
                                        self.label, party.to_bytes(1, "big"), share])).digest()

    def commit(self) -> Commit:
        return Commit(party=self.me, digest=self.commits[self.me])

    def reveal(self) -> Reveal:
        """This party's share: only once every commitment is in."""
        if len(self.commits) < self.parties:
            raise LocalProtocolError("a share is revealed only after every commitment")
        self.shares[self.me] = self._share
        return Reveal(party=self.me, share=self._share)

    def receive(self, message: Commit | Reveal) -> None:
        """Another party's commitment or share; RemoteProtocolError (and no change)
        if it breaks the protocol.  A share that comes before every commitment is
        held and checked when the last commitment arrives; a bad one is named then
        (that commitment, and every good share, are kept)."""
        if not isinstance(message, Commit | Reveal):
            raise RemoteProtocolError(None, "commit", f"not a randomness message: {message!r}")
        party = message.party
        step = "commit" if isinstance(message, Commit) else "reveal"
        if party == self.me or party >= self.parties:
            raise RemoteProtocolError(party, step, f"no party {party} may send this")
        if isinstance(message, Commit):
            known = self.commits.get(party)
            if known is not None and known != message.digest:
                raise RemoteProtocolError(party, "commit", "a second, different commitment")
            # (a commitment copied from another party is harmless: the digest binds the
            # party number, so no share of the copier's can ever match it)
            self.commits[party] = message.digest
            if len(self.commits) == self.parties:  # shares that came early: check them now
                early, self._early = self._early, {}
                bad = [sender for sender, share in sorted(early.items())
                       if not self._take_share(sender, share)]
                if bad:  # the commitment stays taken, and the good shares too
                    raise RemoteProtocolError(bad[0], "reveal", "the share does not match its"
                                                                " commitment")
        elif len(self.commits) < self.parties:
            # the sender may have every commitment while this party does not yet: keep
            # the share until they are all in (nobody is at fault)
            if party in self._early and self._early[party] != message.share:
                raise RemoteProtocolError(party, "reveal", "two different shares")
            self._early[party] = message.share
        elif not self._take_share(party, message.share):
            raise RemoteProtocolError(party, "reveal", "the share does not match its"
                                                       " commitment")

    def _take_share(self, party: int, share: bytes) -> bool:
        if self._digest(party, share) != self.commits[party]:
            return False
        self.shares[party] = share
        return True

    def missing(self) -> list[int]:
        """Parties whose share is still missing (after a timeout: the ones who forfeit)."""
        return [p for p in range(self.parties) if p not in self.shares]

    def seed(self) -> bytes:
        """The joint seed: the hash of every share in party order."""
        missing = self.missing()
        if missing:
            raise LocalProtocolError(f"shares still missing from {missing}")
        return hashlib.sha256(b"".join([DOMAIN, b"/seed", self.label,
                                        *(self.shares[p] for p in range(self.parties))])
                              ).digest()

    def choice(self, n: int, index: int = 0) -> int:
        """A uniform number in range(n), the ``index``-th drawn from the seed."""
        return choice(self.seed(), n, index)

    def sample(self, n: int, k: int) -> list[int]:
        """``k`` distinct uniform numbers of range(n), in the order drawn."""
        return sample(self.seed(), n, k)


def choice(seed: bytes, n: int, index: int = 0) -> int:
    """A uniform number in range(n) from ``seed`` (rejection sampling on SHA-256)."""
    if not 0 < n <= 1 << 64:
        raise ValueError("n must be between 1 and 2^64")
    limit = (1 << 256) - (1 << 256) % n
    for counter in range(1 << 16):
        value = int.from_bytes(hashlib.sha256(
            seed + index.to_bytes(4, "big") + counter.to_bytes(2, "big")).digest(), "big")
        if value < limit:
            return value % n
    raise AssertionError("no value in 2^16 tries")  # probability below 2^-(2^16)


def sample(seed: bytes, n: int, k: int) -> list[int]:
    """``k`` distinct uniform numbers of range(n): a partial Fisher-Yates on the seed."""
    if not 0 <= k <= n:
        raise ValueError("k must be between 0 and n")
    pool = list(range(n))
    for i in range(k):
        j = i + choice(seed, n - i, i)
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]
