"""``python -m p2pcards.bench wait [options]``: the wait suite with its options
(:mod:`p2pcards.bench.wait`); ``p2pcards bench wait`` runs it at the defaults."""

from __future__ import annotations

import sys

from p2pcards.bench.wait import main

if sys.argv[1:2] != ["wait"]:
    print("usage: python -m p2pcards.bench wait [options] (see --help)", file=sys.stderr)
    sys.exit(2)
sys.exit(main(sys.argv[2:]))
