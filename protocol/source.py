"""Secret sources: :mod:`secrets` in play, a seeded generator in tests and benches.

Every secret of the protocol (scalars, permutations, joint-randomness shares)
comes from a source passed in; nothing reads the global ``random``.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets


class SystemSource:
    """The operating system's randomness, through :mod:`secrets` (play)."""

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)

    def token_bytes(self, n: int) -> bytes:
        return secrets.token_bytes(n)


class SeededSource:
    """A reproducible source for tests and benches: never for real secrets."""

    def __init__(self, seed: int | str | bytes):
        self._rng = random.Random(seed)

    def randbelow(self, n: int) -> int:
        return self._rng.randrange(n)

    def token_bytes(self, n: int) -> bytes:
        return self._rng.randbytes(n)


class KeyedSource:
    """A deterministic generator keyed by a secret seed from :mod:`secrets` (play).

    Output block ``i`` is HMAC-SHA256(seed, label || i): a PRF in counter mode,
    so without the seed the output cannot be told from random.  A peer keeps
    the seed in its journal (owner-only) and, restarted after a crash, draws
    exactly the secrets it drew before, so it never sends a second, different
    version of a message it already sent.
    """

    def __init__(self, seed: bytes, label: bytes = b""):
        if len(seed) < 32:
            raise ValueError("a keyed source needs a seed of at least 32 bytes")
        self._seed = seed
        self._label = label
        self._counter = 0
        self._pool = b""

    def token_bytes(self, n: int) -> bytes:
        while len(self._pool) < n:
            block = hmac.new(self._seed, self._label + self._counter.to_bytes(8, "big"),
                             hashlib.sha256).digest()
            self._counter += 1
            self._pool += block
        out, self._pool = self._pool[:n], self._pool[n:]
        return out

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError("randbelow needs a positive bound")
        bits = n.bit_length()
        size = (bits + 7) // 8 + 8  # extra bytes make rejection rare
        limit = (1 << (8 * size)) // n * n
        while True:
            value = int.from_bytes(self.token_bytes(size), "big")
            if value < limit:
                return value % n
