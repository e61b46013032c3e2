"""Secret sources: :mod:`secrets` in play, a seeded generator in tests and benches.

Every secret of the protocol (scalars, permutations, joint-randomness shares)
comes from a source passed in; nothing reads the global ``random``.
"""

from __future__ import annotations

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
