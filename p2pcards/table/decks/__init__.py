"""The two decks a table can deal with, as the session sees them.

The roster names the table's deck (:data:`~p2pcards.table.roster.LOCK_DECK`, the lock
commutative-lock deck audited after the deal, or the proved deck, whose every step
carries a proof checked on arrival: docs/proved-deck.md; under its name
:data:`~p2pcards.table.roster.PROVED_DECK` each shuffle's proof too, under
:data:`~p2pcards.table.roster.PIPELINED_DECK` a shuffle's proof by the end of its
round: docs/protocol.md, "Pipelined shuffles"; under
:data:`~p2pcards.table.roster.AHEAD_DECK` the next deal's deck shuffled during this
one: "Shuffle ahead"; under :data:`~p2pcards.table.roster.AGREED_DECK` its shares sent
on the agreement too: "Shares on the agreement").  What a deck decides of the
table's messages is data, one :class:`Flavor` per deck name (its message kinds,
whether it is audited); what a deck does differently is the deck's own
(:class:`~p2pcards.table.run.TableDeck`, satisfied by :mod:`.lock` and :mod:`.proved`):
nothing else in the table asks which deck it has.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from p2pcards.table.kinds import Kind
from p2pcards.table.roster import AGREED_DECK, AHEAD_DECK, LOCK_DECK, PIPELINED_DECK, PROVED_DECK


@dataclass(frozen=True, slots=True)
class Flavor:
    """What a table's deck decides about its messages."""

    name: str
    steps: dict[str, Kind]
    """The deck's broadcast step names (``expected()``) as message kinds."""
    keys: Kind
    """The kind of a deal step that gives slots to seats or to everyone."""
    remix: Kind
    act: Kind
    """The kind of a move."""
    audited: bool
    """Whether every seat reveals its secrets after the deal (the lock deck) or none
    (the proved deck: every step was checked on arrival)."""
    remix_shares: bool
    """Whether a re-mix's new slots need every other seat's shares (the proved deck:
    one joint key locks every slot) rather than the re-mixer's key alone."""
    pipelined: bool = False
    """Whether a seat takes another seat's shuffle with its proof unchecked and checks
    it by the end of its round (the verdict of a bad one there), rather than on
    arrival (the verdict at the shuffle): docs/protocol.md, "Pipelined shuffles"."""
    hellos: bool = True
    """Whether each deal begins with every seat's ``hello`` (its sealing key: the lock deck
    seals the keys it deals; the proved deck seals nothing, and its shuffle-ahead rule
    leaves the hellos out)."""
    ahead: bool = False
    """Whether the next deal's deck is keyed and shuffled during this deal, each seat's
    step of it carried on its moves (``act`` is then ``pmove``): docs/protocol.md,
    "Shuffle ahead"."""
    agree: Kind = Kind.AGREE
    """The kind of a signature of a deal's result (``pagree`` where it may carry the
    signer's shares of the next deal: docs/protocol.md, "Shares on the agreement")."""
    reports: bool = True
    """Whether every seat dealt cards reports them open (``opened``, or the problem: an
    alarm).  A rule whose every share is proved before it is taken leaves them out: a
    share taken always opens its card."""


LOCK = Flavor(LOCK_DECK, {kind.value: kind for kind in (Kind.UNLOCK, Kind.SHUFFLE, Kind.LOCK,
                                                         Kind.REMIX)},
              Kind.KEYS, Kind.REMIX, Kind.ACT, audited=True, remix_shares=False)
PROVED = Flavor(PROVED_DECK, {"key": Kind.PROVED_KEY, "shuffle": Kind.PROVED_SHUFFLE},
                Kind.PROVED_SHARES, Kind.PROVED_REMIX, Kind.PROVED_ACT, audited=False,
                remix_shares=True)
PIPELINED = replace(PROVED, name=PIPELINED_DECK, pipelined=True)
AHEAD = replace(PIPELINED, name=AHEAD_DECK, act=Kind.PROVED_MOVE, hellos=False, ahead=True)
AGREED = replace(AHEAD, name=AGREED_DECK, agree=Kind.PROVED_AGREE, reports=False)
FLAVORS = {flavor.name: flavor for flavor in (LOCK, PROVED, PIPELINED, AHEAD, AGREED)}
DECK_STEPS = frozenset(kind for flavor in FLAVORS.values() for kind in flavor.steps.values()
                       if kind not in (Kind.REMIX,))
"""Every kind of a broadcast deck step (the deck, not the agenda, says it is due)."""
ACTS = frozenset({Kind.ACT, Kind.PROVED_ACT, Kind.PROVED_MOVE})
