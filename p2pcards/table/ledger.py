"""The slot ledger: which slot of the deck lies in which engine place, and who can open it.

Which card a slot holds is known to a seat only where the rules let it see
the card; the ledger (slot -> engine place) and who can open each slot are
public, and say which keys must go to whom when the game moves cards.  The
ledger follows the engine: after every move it compares the engine's counts
with its slots and moves the slots the move named, a whole place, or the next
ones of a stock (docs/protocol.md, "Cards and slots").  It never changes what
is due: each operation returns the steps (key releases, reports, re-mixes) it
needs, and the phase machine queues them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from p2pcards.games import HandState
from p2pcards.games.game import DealSetup
from p2pcards.protocol.messages import Remixed
from p2pcards.protocol.proved.messages import Remix
from p2pcards.protocol.randomness import choice
from p2pcards.table.decks import LOCK, Flavor
from p2pcards.table.kinds import Kind
from p2pcards.table.state import EVERYONE, SHOWN, Place, Recipient, SlotDeck, Step, grant_order


class Ledger:
    """One deal's slots (see the module docstring)."""

    def __init__(self, setup: DealSetup, deck: SlotDeck, ids: Sequence[int],
                 flavor: Flavor = LOCK):
        self.setup = setup
        self.keys = flavor.keys
        """The kind of a step that gives slots to seats (``keys``, ``proved-shares``)."""
        self.remix = flavor.remix
        self.remix_shares = flavor.remix_shares
        self.reports = flavor.reports
        """Whether seats dealt cards report them open (``opened``): not at a rule whose
        every share is proved before it is taken."""
        self.game = setup.game
        self.players = setup.players
        self.dealer = setup.dealer
        self.deck = deck
        self.ids = list(ids)
        self.deck_mask = sum(1 << card for card in ids)
        """The game's cards that are in the deck (Control Nut!'s controls are not)."""
        self.place: dict[int, Place] = {}
        self.knows: dict[int, set[int]] = {}
        """Slot -> the seats that can open it."""
        self.take: tuple[int, int, int] | None = None
        """A card taken face down under way (Control Nut!'s HAND): (source, taker, the
        slot drawn, or -1 before the draw)."""
        self.reshuffling: tuple[int, ...] = ()
        """The slots of a secret reshuffle under way (Pasur's stock after an opening jack)."""
        self.shown_extra = False
        """Whether the cards the deal shows after looking at others (Pasur's replacement
        for an opening jack) have been asked for."""

    # ------------------------------------------------------------------ queries

    def held(self, place: int) -> list[int]:
        """The slots in ``place``, in slot order."""
        return sorted(s for s, p in self.place.items()
                      if p == place and s not in self.deck.retired)

    def shown_to_all(self, slot: int) -> bool:
        return len(self.knows.get(slot, ())) == self.players

    def opened(self, seats: Iterable[int]) -> list[Step]:
        """The reports due from ``seats``, just dealt cards (none where there are none)."""
        return [Step(Kind.OPENED, seat) for seat in seats] if self.reports else []

    # --------------------------------------------------------------- the deal

    def blank_deck(self) -> list[int]:
        """A deck in which no card changes the deal mapping (a rotation of the id order:
        ``Game.cards_change_mapping``): the mapping is read off it, and a record whose
        cards are unknown (a forfeit before the audit) deals it."""
        return self.game.blank_deck(self.players, self.setup.options)

    def plan(self) -> tuple[list[Place], list[set[int]]]:
        """Each deck position's place at the deal (SHOWN: face up) and who sees it.

        The deal mapping is read off a deal of a deck in which no card changes the
        mapping; a game that shows one more card after looking at others (Pasur's
        replacement for a lone opening jack) asks for it by :meth:`shown_after_deal`."""
        ids = self.blank_deck()
        full = self.setup.deal(ids)
        places: list[Place] = []
        for card in ids:  # (slot numbers are positions: the card ids are only a tool here)
            where = full.candidates(card)
            places.append(where[0] if where else SHOWN)
        seen: list[set[int]] = [set() for _ in ids]
        for seat in range(self.players):
            observed = self.setup.observed_deck(ids, seat)
            for i, seen_card in enumerate(observed):
                if seen_card is not None:
                    seen[i].add(seat)
        return places, seen

    def deal_steps(self) -> list[Step]:
        """Put every slot where the deal puts it; the key releases of the deal (each seat
        gives every other the keys of the cards it sees) and every seat's report."""
        places, seen = self.plan()
        everyone = set(range(self.players))
        for slot, (place, seers) in enumerate(zip(places, seen, strict=True)):
            self.place[slot] = place
            self.knows[slot] = set(seers)
        steps = []
        for sender in range(self.players):
            grants: dict[Recipient, list[int]] = {}
            for slot, seers in enumerate(seen):
                if seers == everyone:
                    grants.setdefault(EVERYONE, []).append(slot)
                else:
                    for seat in sorted(seers - {sender}):
                        grants.setdefault(seat, []).append(slot)
            steps.append(Step(self.keys, sender, tuple(
                sorted(((r, tuple(s)) for r, s in grants.items()), key=grant_order))))
        return steps + self.opened(range(self.players))

    def shown_after_deal(self, observed: Sequence[int | None]) -> list[Step]:
        """The keys every seat shows of the positions the deal shows after looking at
        other cards (``Game.shown_after_deal``), once; none when there are none."""
        extra = self.game.shown_after_deal(observed, self.players)
        if not extra or self.shown_extra:
            return []
        self.shown_extra = True
        return [Step(self.keys, locker, ((EVERYONE, tuple(extra)),))
                for locker in range(self.players)]

    def reconcile(self, view: HandState) -> None:
        """Put the cards shown to everyone where the engine put them (Pasur's opening
        jack goes back onto the stock, its replacement into the pool)."""
        knows, everyone = self.knows, self.players
        for slot, card in self.deck.opened.items():
            if len(knows.get(slot, ())) != everyone:  # (shown_to_all, inline)
                continue
            where = view.candidates(self.ids[card])
            place: Place = where[0] if len(where) == 1 else SHOWN
            self.place[slot] = place
            if place is not SHOWN and place < self.players and self.deck.in_play(slot):
                self.deck.assign(slot, place)  # a shown card back in a hand

    # ------------------------------------------------------------ moves

    def moved(self, before: HandState, after: HandState, slots: tuple[int, ...]) -> list[Step]:
        """Follow the engine's face-down moves; the key releases and re-mixes they call for.

        The engine says how many cards each hidden place holds; the ledger says which
        slots are there, shown ones and hidden ones.  Where a place must hold more
        hidden slots than the ledger gives it, hidden cards have moved there: the
        slots the move names, a whole place, or the next ones of a stock."""
        fell, rose = self._hidden_gaps(after)
        if not rose:
            return []
        if len(rose) > 1:
            return self._deal_in_order(before, after, fell[0])
        (src,), (dst,) = fell, rose
        moving = list(slots) if slots else self.held(src)
        for slot in moving:
            self.place[slot] = dst
        steps = []
        for seat in (t for t in range(self.players) if after.visible(dst, t)):
            need = tuple(s for s in moving if seat not in self.knows.get(s, set()))
            if not need:
                continue
            lockers = sorted({p for s in need for p in self.deck.lockers[s]} - {seat})
            steps += [Step(self.keys, locker, ((seat, need),)) for locker in lockers]
            for slot in need:
                self.knows.setdefault(slot, set()).add(seat)
            steps += self.opened((seat,))
            if not slots:  # a whole place picked up: its holder re-mixes what it holds
                steps.append(Step(self.remix, seat, slots=tuple(self.held(dst))))
        return steps

    def _hidden_gaps(self, view: HandState) -> tuple[list[int], list[int]]:
        """(places with more hidden slots in the ledger than the engine's count allows,
        places with fewer)."""
        have = [0] * len(view.count)
        shown = [0] * len(view.count)
        knows, everyone, retired = self.knows, self.players, self.deck.retired
        for slot, place in self.place.items():
            if place is SHOWN or slot in retired:
                continue
            if len(knows.get(slot, ())) == everyone:  # (shown_to_all, inline: a hot loop)
                shown[place] += 1
            else:
                have[place] += 1
        fell, rose = [], []
        for place, count in enumerate(view.count):
            need = count - (view.may[place] & ~self.deck_mask).bit_count() - shown[place]
            if have[place] > need:
                fell.append(place)
            elif have[place] < need:
                rose.append(place)
        return fell, rose

    def _deal_in_order(self, before: HandState, after: HandState, src: int) -> list[Step]:
        """Cards dealt one at a time from ``src`` (Pasur's stock, next card first) from
        the dealer's left: each seat gets its keys from every other, then reports."""
        total = before.count[src] - after.count[src]
        got: dict[int, list[int]] = {}
        for i, slot in enumerate(self.held(src)[:total]):
            seat = (self.dealer + 1 + i) % self.players
            self.place[slot] = seat
            self.knows[slot] = {seat}
            got.setdefault(seat, []).append(slot)
        steps = [Step(self.keys, sender, tuple((seat, tuple(mine))
                                               for seat, mine in sorted(got.items())
                                               if seat != sender))
                 for sender in range(self.players)]
        return steps + self.opened(range(self.players))

    def remixed(self, sender: int, message: Remixed | Remix) -> list[Step]:
        """A re-mix's new slots are where its old ones were, open to their holder only.
        The proved deck opens every slot with every seat's share: the others then give
        the re-mixer theirs of the new slots (it knows their cards already), so that it
        can show one, or give one to another seat, with its own share alone."""
        first = len(self.deck.points) - len(message.slots)
        place = self.place[message.slots[0]]
        new = tuple(range(first, first + len(message.slots)))
        for slot in new:
            self.place[slot] = place
            self.knows[slot] = {sender}
        if not self.remix_shares:
            return []
        return [Step(self.keys, other, ((sender, new),))
                for other in range(self.players) if other != sender]

    # ------------------------------------------------------------ chance

    def begin_reshuffle(self, stock: int) -> None:
        """A secret reshuffle of hidden place ``stock``: the deck's round over its slots."""
        self.reshuffling = tuple(self.held(stock))
        self.deck.begin_reshuffle(list(self.reshuffling))

    def reshuffled(self, stock: int) -> tuple[int, ...]:
        """The reshuffle's round is locked: its new slots are ``stock``, in order."""
        first = len(self.deck.points) - len(self.reshuffling)
        new = tuple(range(first, len(self.deck.points)))
        for slot in new:
            self.place[slot] = stock
            self.knows[slot] = set()
        self.reshuffling = ()
        return new

    def begin_take(self, source: int, taker: int) -> list[Step]:
        """One card of ``source``'s, drawn jointly, is taken face down by ``taker``: the
        source first re-mixes every card it holds (so that nobody knows which is which)."""
        self.take = (source, taker, -1)
        return [Step(self.remix, source, slots=tuple(self.held(source)))]

    def pick_taken(self, seed: bytes) -> list[Step]:
        """The draw picks the slot: the source's key of it goes to the taker, who opens
        it and reports (the proved deck: every other seat's share of it is in already,
        :meth:`remixed`)."""
        assert self.take is not None
        source, taker, _ = self.take
        held = self.held(source)
        slot = held[choice(seed, len(held))]
        self.take = (source, taker, slot)
        self.place[slot] = taker
        self.knows[slot] = {source, taker}
        return [Step(self.keys, source, ((taker, (slot,)),)), *self.opened((taker,))]

    # -------------------------------------------------------- blind play

    @staticmethod
    def blind_play(view: HandState, seat: int) -> bool:
        """Whether ``seat`` must now play a card it does not see (Nullern's blind round)."""
        if seat < 0 or view.visible(seat, seat) or not view.count[seat]:
            return False
        return all(view.shown_cards(code) for code in view.legal_actions())

    def forced(self, view: HandState) -> int | None:
        """The card the table plays for a seat that must play one it does not see,
        once everyone has shown it."""
        seat = view.current_player()
        if not self.blind_play(view, seat):
            return None
        held = self.held(seat)
        if not held or held[0] not in self.deck.opened:
            return None
        return self.ids[self.deck.opened[held[0]]]

    def reveal_blind(self, view: HandState, seat: int) -> list[Step]:
        """A seat to move that does not see its own card: every seat shows its key of the
        card, which the table then plays."""
        if not self.blind_play(view, seat):
            return []
        held = self.held(seat)
        if not held or self.shown_to_all(held[0]):
            return []  # shown already (or being shown)
        return [Step(self.keys, locker, ((EVERYONE, (held[0],)),))
                for locker in self.deck.lockers[held[0]]]
