"""Hand histories (``p2pcards-history/1``, docs/hand-history.md): read, write, replay.

Reading validates the whole document and raises :class:`HistoryFormatError`
(a malformed file: exit status 2) naming what is wrong and where.  Replaying
re-runs every action through the rules engine with full information (a public
entry: as a seat with no cards) and raises :class:`ReplayError` (an illegal
action: exit status 1) with the hand, the action index, the actor, the text and
the rule broken.

``records`` holds the records and errors, ``reading`` the reader, ``replaying``
the replay, ``public`` the public entries of the proved deck's tables.
"""

from p2pcards.history.public import (
    Proven,
    PublicPlay,
    face_up_at_deal,
    known_deck,
    play_public,
    replay_public,
    score_public,
)
from p2pcards.history.reading import from_json, load, loads
from p2pcards.history.records import (
    FORFEITS,
    FORMAT,
    HIDDEN,
    RULE_BREACHES,
    Actor,
    HandRecord,
    History,
    HistoryFormatError,
    ReplayError,
    canonical_json,
)
from p2pcards.history.replaying import HandResult, ReplayResult, replay

__all__ = ["FORFEITS", "FORMAT", "HIDDEN", "RULE_BREACHES", "Actor", "HandRecord",
           "HandResult", "History", "HistoryFormatError", "Proven", "PublicPlay",
           "ReplayError", "ReplayResult", "canonical_json", "face_up_at_deal", "from_json",
           "known_deck", "load", "loads", "play_public", "replay", "replay_public",
           "score_public"]
