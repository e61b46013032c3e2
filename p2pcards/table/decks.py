"""The two decks a table can deal with, as the session sees them: the message kinds of
each and what differs in how a seat gives keys and shows cards.

The roster names the table's deck (:data:`~p2pcards.table.roster.LOCK_DECK`, today's
commutative-lock deck audited after the deal, or the proved deck, whose every step
carries a proof checked on arrival: docs/proved-deck.md; under its name
:data:`~p2pcards.table.roster.PROVED_DECK` each shuffle's proof too, under
:data:`~p2pcards.table.roster.PIPELINED_DECK` a shuffle's proof by the end of its
round: docs/protocol.md, "Pipelined shuffles").  Both decks share the API the ledger and the
dealing helpers use (``expected``, ``step``, ``remix``, ``begin_reshuffle``,
``in_play``, ``can_open``, ``open``, ``assign``, ``points``, ``opened``,
``retired``, ``lockers``, ``holder``); what differs is kept here, in one
:class:`Flavor` per deck, so that the phase machine and the ledger ask the flavor
rather than test which deck they have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Union

from p2pcards.protocol.constants import PUBLIC
from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.deck import Deck
from p2pcards.protocol.proved.deck import ProvedDeck
from p2pcards.protocol.steps import DeckContext
from p2pcards.table.kinds import Kind, ProvedAct, ProvedShares
from p2pcards.table.roster import LOCK_DECK, PIPELINED_DECK, PROVED_DECK
from p2pcards.table.state import EVERYONE, Grants

TableDeck = Union[Deck, ProvedDeck]  # noqa: UP007 (a runtime alias)
"""Either deck: what a deal's :class:`~p2pcards.table.state.DealRun` holds."""


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
    """Whether every seat reveals its secrets after the deal (today's deck) or none
    (the proved deck: every step was checked on arrival)."""
    remix_shares: bool
    """Whether a re-mix's new slots need every other seat's shares (the proved deck:
    one joint key locks every slot) rather than the re-mixer's key alone."""
    pipelined: bool = False
    """Whether a seat takes another seat's shuffle with its proof unchecked and checks
    it by the end of its round (the verdict of a bad one there), rather than on
    arrival (the verdict at the shuffle): docs/protocol.md, "Pipelined shuffles"."""

    def deck(self, context: DeckContext, me: int, source: SecretSource) -> TableDeck:
        return Deck(context, me, source) if self.name == LOCK_DECK \
            else ProvedDeck(context, me, source)


LOCK = Flavor(LOCK_DECK, {kind.value: kind for kind in (Kind.UNLOCK, Kind.SHUFFLE, Kind.LOCK,
                                                         Kind.REMIX)},
              Kind.KEYS, Kind.REMIX, Kind.ACT, audited=True, remix_shares=False)
PROVED = Flavor(PROVED_DECK, {"key": Kind.PROVED_KEY, "shuffle": Kind.PROVED_SHUFFLE},
                Kind.PROVED_SHARES, Kind.PROVED_REMIX, Kind.PROVED_ACT, audited=False,
                remix_shares=True)
PIPELINED = replace(PROVED, name=PIPELINED_DECK, pipelined=True)
FLAVORS = {flavor.name: flavor for flavor in (LOCK, PROVED, PIPELINED)}
DECK_STEPS = frozenset(kind for flavor in FLAVORS.values() for kind in flavor.steps.values()
                       if kind not in (Kind.REMIX,))
"""Every kind of a broadcast deck step (the deck, not the agenda, says it is due)."""
ACTS = frozenset({Kind.ACT, Kind.PROVED_ACT})


def proved_shares(deck: ProvedDeck, me: int, grants: Grants) -> ProvedShares:
    """This seat's decryption shares for a deal step's grants, one set per recipient."""
    return ProvedShares(party=me, shares=tuple(
        deck.release(list(slots), None if recipient is EVERYONE else recipient)
        for recipient, slots in grants))


def proved_act(deck: ProvedDeck, me: int, action: str, shown: Sequence[int],
               slots: tuple[int, ...]) -> ProvedAct:
    """A move at a proved table: this seat's shares of the slots it shows that are not
    yet open to everyone (its own share is the one every other seat lacks)."""
    need = [s for s in shown if deck.holder.get(s) != PUBLIC]
    return ProvedAct(party=me, action=action, shown=tuple(shown), slots=slots,
                     shares=deck.release(need) if need else None)
