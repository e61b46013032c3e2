"""A deal's cards, written from an observer's point of view: the state tracking
every game's deal state is built on (:class:`Places`).

Every card of a deal is either in a *public* place (a trick on the table, a
won pile, the Pasur pool: kept by each game in plain masks that every seat
sees alike) or in a *hidden* place (each hand, the kitty, the discard, the
stock).  For the hidden places the state keeps, per place,

* ``may[p]``: the cards that may be in ``p`` as far as the observer knows,
* ``count[p]``: how many cards ``p`` holds (counts are always public),
* ``void[p]``: the public claims that ``p`` holds none of these cards
  (a void shown by failing to follow suit, a joker that had to be discarded).

A card's candidate places are the places whose ``may`` contains it.  In a
*full-information* state (``observer == FULL``) every card has exactly one
candidate: ``may`` is the truth.  A *view* (``observer == seat``) is the same
class holding what that seat knows.  Public knowledge that pins a hidden card
down (a Pasur jack put back into the stock, a returned Control Nut bid) is
kept in ``exposed``: card -> bitmask of the places where everyone knows it may
be; what one seat alone knows of a card it saw leave its hand face down (a
HAND victim) is kept in ``private``.

The central property (tested after every action of thousands of random deals)
is that applying the public actions and the seat's own observations to a view
gives exactly :meth:`Places.view` of the full state, which derives the
view from the truth, the claims and the known whereabouts alone:

* a place the seat sees (its own hand, its own discard) is known exactly;
* a card exposed to all, or privately known to the seat, may be only where
  it is known to be;
* a hidden place ``p`` the seat does not see may hold every other card the
  seat has not seen, unless ``p`` is empty or claims not to hold it.

A face-down move the observer does not see (a HAND steal) spreads the known
whereabouts of the source's cards to "source or destination"; per card that
is right, but only ``n`` of them crossed.  ``transfers`` keeps that joint
fact (destination; the cards it can hold only by the transfer: known to be in
the source, or claimed absent from the destination; ``n``; those of them shown
from the destination since), and the determinizer respects it.

Candidate sets are not closed under counting ("these three cards must be
the last three of seat 2"): that search belongs to the determinizer.

Claims are inferences, not facts: a later action that contradicts one is
recorded as a :class:`Proof` (a proven renege) and never raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Self

from p2pcards.games.cards import Notation, bits, mask_of
from p2pcards.games.errors import IllegalAction, KnowledgeError
from p2pcards.games.seats import FULL, Observer, observer_of


@dataclass(frozen=True, slots=True)
class Proof:
    """A contradiction seen by a view: ``seat`` broke a rule at action ``move``
    (the index of the action in the deal, as in a hand history).

    ``code`` is ``renege`` when a card was played (or shown) that the seat
    had claimed not to hold, ``not-held`` when the card could not be there.
    """

    seat: int
    move: int
    code: str
    detail: str


class Places:
    """The cards of one deal as one observer knows them (see the module docstring):
    the hidden places, the claims, the proofs, the moves so far, and the views
    derived from the truth.  :class:`~p2pcards.games.core.HandState` adds the
    rules interface and the hooks (:class:`~p2pcards.games.hooks.DealHooks`)."""

    __slots__ = ("awaiting", "count", "exposed", "may", "moves", "observer", "played_by",
                 "players", "private", "proofs", "transfers", "void")

    notation: ClassVar[Notation]
    other_places: ClassVar[tuple[str, ...]] = ()
    """Names of the hidden places after the hands (the kitty, the stock ...)."""

    players: int
    observer: Observer
    may: list[int]
    count: list[int]
    void: list[int]
    exposed: dict[int, int]
    private: dict[tuple[int, int], int]
    proofs: list[Proof]
    transfers: list[tuple[int, int, int, int, int]]
    awaiting: int
    moves: int
    played_by: list[int]
    """Per seat, the cards it has played face up from its hand this deal (public:
    what every seat saw it play).  Kept by the engines' ``step`` in Bid Whist,
    Nullern and Pasur (the bots' inference reads it: docs/bots.md); the fast
    playouts of the search need not keep it."""

    # ------------------------------------------------------------------ setup

    def _init_core(self, players: int, places: int, observer: int) -> None:
        """A deal of ``players`` seats, ``places`` hidden places, as ``observer`` knows
        it (a seat, FULL or SPECTATOR: ``ValueError`` for anything else)."""
        self.players = players
        self.observer = observer_of(observer, players)
        self.may = [0] * places
        self.count = [0] * places
        self.void = [0] * places
        self.exposed = {}
        self.private = {}
        self.proofs = []
        self.transfers = []
        self.awaiting = 0
        self.moves = 0
        self.played_by = [0] * players

    def _copy_core(self, new: Places) -> None:
        new.players = self.players
        new.observer = self.observer
        new.may = self.may[:]
        new.count = self.count[:]
        new.void = self.void[:]
        new.exposed = self.exposed.copy() if self.exposed else {}
        new.private = self.private.copy() if self.private else {}
        new.proofs = self.proofs[:] if self.proofs else []
        new.transfers = self.transfers[:] if self.transfers else []
        new.awaiting = self.awaiting
        new.moves = self.moves
        new.played_by = self.played_by[:]

    def _place_deck(self, deck: Sequence[int | None], places: Sequence[int], public: int,
                    deck_mask: int) -> None:
        """Put deck position i into hidden place ``places[i]`` (-1: not hidden).

        ``deck[i]`` is None where the observer does not see the card.  The
        unseen positions may hold any card of ``deck_mask`` that is neither
        public (``public``) nor seen.
        """
        may, count = self.may, self.count
        known = public
        unseen_places = 0
        for card, place in zip(deck, places, strict=True):
            if card is not None:
                known |= 1 << card
            if place < 0:
                continue
            count[place] += 1
            if card is None:
                unseen_places |= 1 << place
            else:
                may[place] |= 1 << card
        unknown = deck_mask & ~known
        for place in bits(unseen_places):
            may[place] |= unknown

    # ------------------------------------------------------------ the queries

    @property
    def is_full(self) -> bool:
        return self.observer == FULL

    def visible(self, place: int, seat: int) -> bool:
        """Whether ``seat`` sees the contents of hidden place ``place`` (game rule)."""
        return place == seat

    def _sees(self, place: int) -> bool:
        return self.observer == FULL or self.visible(place, self.observer)

    def candidates(self, card: int) -> list[int]:
        """The hidden places where ``card`` may be, for this observer."""
        bit = 1 << card
        return [p for p, m in enumerate(self.may) if m & bit]

    def knowledge(self) -> tuple[object, ...]:
        """Everything card-related this state knows, for comparing views."""
        return (tuple(self.may), tuple(self.count), tuple(self.void),
                tuple(sorted(self.exposed.items())), self.awaiting, tuple(self.transfers))

    # ---------------------------------------------------------- card movement

    def _take_shown(self, card: int, src: int, seat: int) -> None:
        """``card`` leaves hidden place ``src`` face up (played, shown).

        A view that had ruled the card out of ``src`` records a proof against
        ``seat`` instead of failing: ``renege`` when a claim ruled it out,
        ``not-held`` otherwise.
        """
        bit = 1 << card
        may = self.may
        if self.observer == FULL:
            may[src] &= ~bit
        else:
            if not may[src] & bit:
                code = "renege" if self.void[src] & bit else "not-held"
                self.proofs.append(Proof(seat, self.moves - 1, code,
                                         f"{self.notation.name(card)} could not be there"))
            for p in range(len(may)):
                may[p] &= ~bit
        self.count[src] -= 1
        if self.count[src] == 0:
            may[src] = 0
        if self.exposed:
            self.exposed.pop(card, None)
        if self.private:
            self._forget(card)
        if self.transfers:
            self._shown_after_transfer(card, src)

    def _shown_after_transfer(self, card: int, src: int) -> None:
        """``card`` was shown from ``src``: if it crossed in a transfer into ``src``
        it counts toward that transfer (a card several could have brought: the
        one still open whose source it was known to be in).  When only that
        transfer could have brought the cards that complete the transfer, the other
        cards never crossed: those whose whereabouts everyone knew are then known
        not to be in ``src``."""
        transfers = self.transfers
        # A card in several: the transfer still open whose source it was known to be in.
        likely = sorted(range(len(transfers)),
                        key=lambda i: (transfers[i][3].bit_count() >= transfers[i][2],
                                       not transfers[i][4] >> card & 1))
        for i in likely:
            dst, group, n, shown, from_src = transfers[i]
            if dst != src or not group >> card & 1:
                continue
            shown |= 1 << card
            transfers[i] = (dst, group, n, shown, from_src)
            if shown.bit_count() < n or any(  # unsure which transfer brought one
                    sum(t[0] == src and t[1] >> c & 1 for t in transfers) > 1
                    for c in bits(shown)):
                return
            dst_bit = 1 << dst
            exposed = self.exposed
            elsewhere = 0  # cards another transfer into dst could have brought
            for j, t in enumerate(transfers):
                if j != i and t[0] == dst:
                    elsewhere |= t[1]
            for other in bits(group & ~shown & ~elsewhere):
                where = exposed.get(other, 0)
                if where & dst_bit and where != dst_bit:
                    exposed[other] = where & ~dst_bit
            if self.observer != FULL and not self._sees(dst):
                self.may[dst] = self._derived_may(dst, self._derivation_basis())
            return

    def _forget(self, card: int) -> None:
        """A card became public: nobody's private knowledge of it matters any more."""
        for seat in range(self.players):
            self.private.pop((seat, card), None)

    def place_name(self, place: int) -> str:
        """A hidden place in people's words: a seat's hand, or the game's other places."""
        if place < self.players:
            return f"seat {place}'s hand"
        return self.other_places[place - self.players]

    def _check_unseen(self, seat: int, cards: int, face_up: int) -> None:
        """``seat`` shows ``cards`` from a hand this state does not see: refuse any that
        are face up, in a place the observer sees, or known to everyone to be elsewhere.

        Only public knowledge is used; a card the seat had merely claimed not to
        hold is accepted here and becomes a proof when applied.
        """
        bad, why = cards & face_up, "face up"
        if not bad:
            for place, held in enumerate(self.may):
                if place != seat and self._sees(place) and cards & held:
                    bad, why = cards & held, f"in {self.place_name(place)}"
                    break
        if not bad:
            bad = mask_of(c for c in bits(cards) if self._shown_elsewhere(c, seat))
            why = "known to be elsewhere"
        if bad:
            verb = "it is" if bad.bit_count() == 1 else "they are"
            raise IllegalAction("not-held", f"seat {seat} cannot hold "
                                f"{self.notation.format_mask(bad)}: {verb} {why}", seat)

    def _known_in(self, place: int) -> int:
        """The hidden cards everyone knows to be in ``place``: shown going there (a
        returned bid, a card handed out face up) and not moved face down since."""
        only = 1 << place
        return mask_of(card for card, where in self.exposed.items() if where == only) \
            if self.exposed else 0

    def _shown_elsewhere(self, card: int, place: int) -> bool:
        """Everyone knows ``card`` is not in ``place``: it was shown going elsewhere."""
        where = self.exposed.get(card)
        return where is not None and not where >> place & 1

    def _put_shown(self, card: int, dst: int) -> None:
        """A face-up ``card`` goes into hidden place ``dst`` where all know it lies."""
        bit = 1 << card
        self.may[dst] |= bit
        self.count[dst] += 1
        self.exposed[card] = 1 << dst

    def _move_hidden(self, n: int, src: int, dst: int, cards: int = -1,
                     eligible: int = -1) -> None:
        """``n`` cards go face down from ``src`` to ``dst``; only the count is public.

        ``cards`` are the moved cards when this state knows them (full
        information, or the observer made or saw the move); otherwise -1, and
        a view that sees ``src`` or ``dst`` waits for :meth:`observe`.
        ``eligible`` is the public rule on which cards can move (Control Nut's
        HAND takes nut cards only): others stay known where they are.

        Claims on ``dst`` about eligible cards lapse (it may have received
        them); a seat that sees ``src`` but not ``dst`` privately learns where
        its cards went (``private``: a full state keeps it for every seat, a
        view for its own).
        """
        may, count = self.may, self.count
        count[src] -= n
        count[dst] += n
        if cards >= 0:
            may[src] &= ~cards
            if self.observer != FULL:
                for p in range(len(may)):
                    may[p] &= ~cards
            may[dst] |= cards
            self._learn_moved(cards, src, dst)
        else:
            may[dst] |= may[src] & eligible
            if self._sees(dst):
                self.awaiting |= 1 << dst
            if self._sees(src):
                self.awaiting |= 1 << src
        # Public: the cards dst can hold now only if they crossed (known to be in src,
        # or claimed absent from dst before this or an earlier unseen transfer into
        # it), of which at most n did.
        from_src = 0
        src_only = 1 << src
        for card, where in self.exposed.items():
            if where == src_only and eligible >> card & 1:
                from_src |= 1 << card
        absent = self.void[dst]  # what dst could not hold before any transfer into it
        for t in self.transfers:
            if t[0] == dst:
                absent |= t[1] & ~t[4]
        group = from_src | absent & eligible
        if group.bit_count() > n:
            self.transfers.append((dst, group, n, 0, from_src))
        self.void[dst] &= ~eligible
        if count[src] == 0:
            may[src] = 0
        if self.exposed or self.private:
            self._spread(src, dst, eligible, count[src] == 0)
        if self.observer != FULL and not self._sees(dst):
            # What may have arrived, and the lapsed claims, leave dst with exactly the
            # candidates the definition of a view gives (see view()).
            may[dst] = self._derived_may(dst, self._derivation_basis())

    def _spread(self, src: int, dst: int, eligible: int, emptied: bool) -> None:
        """Known whereabouts at ``src`` become "``src`` or ``dst``" (just ``dst`` once
        ``src`` is empty), for the cards that could have moved."""
        src_bit, dst_bit = 1 << src, 1 << dst

        def moved(card: int, where: int) -> int:
            if not (where & src_bit and eligible >> card & 1):
                return where
            return (where | dst_bit) & ~src_bit if emptied else where | dst_bit

        for card, where in self.exposed.items():
            self.exposed[card] = moved(card, where)
        for key, where in self.private.items():
            self.private[key] = moved(key[1], where)

    def _learn_moved(self, cards: int, src: int, dst: int) -> None:
        """Seats that saw ``cards`` leave ``src`` but do not see ``dst`` know where
        they went (a HAND victim knows what it lost, and to whom).  A full state
        keeps this for every seat, a view for its own."""
        seats = range(self.players) if self.observer == FULL else (self.observer,)
        for seat in seats:
            if self.visible(src, seat) and not self.visible(dst, seat):
                for card in bits(cards):
                    self.private[seat, card] = 1 << dst

    def observe(self, place: int, contents: int) -> None:
        """Private observation: hidden place ``place`` now holds exactly ``contents``.

        Called on a view when it is :attr:`awaiting` the place (cards dealt to
        it, a kitty picked up, a card taken from it).
        """
        may = self.may
        if contents.bit_count() != self.count[place]:
            raise KnowledgeError(
                f"place {place} holds {self.count[place]} cards, observed {contents.bit_count()}")
        if contents & ~may[place]:
            raise KnowledgeError(
                f"observed {self.notation.format_mask(contents & ~may[place])} in place {place},"
                " where they cannot be")
        may[place] = contents
        for p in range(len(may)):
            if p != place:
                may[p] &= ~contents
        self.awaiting &= ~(1 << place)

    def _claim_void(self, place: int, cards: int, seat: int) -> None:
        """Public claim: ``place`` holds none of ``cards``.

        In a view, a card the observer knew to be there (now left with no
        place at all) is a proven renege.
        """
        if self.void[place] & cards == cards:
            return
        self.void[place] |= cards
        if self.observer == FULL:
            return
        may = self.may
        ruled_out = may[place] & cards
        if not ruled_out:
            return
        may[place] &= ~cards
        elsewhere = 0
        for p, m in enumerate(may):
            if p != place:
                elsewhere |= m
        stranded = ruled_out & ~elsewhere
        if stranded:
            self.proofs.append(Proof(seat, self.moves - 1, "renege",
                                     f"claimed not to hold {self.notation.format_mask(stranded)}"))

    # ------------------------------------------------------------- derivation

    def view(self, seat: int) -> Self:
        """What ``seat`` knows, derived from this full-information state (a seat, or
        SPECTATOR: what everyone knows; ``ValueError`` for any other value)."""
        if self.observer != FULL:
            raise ValueError("view() derives from a full-information state")
        if seat == FULL:
            raise ValueError("view() is a seat's, or a spectator's, not FULL's")
        new = self.clone()
        new.observer = observer_of(seat, self.players)
        new.private = {k: w for k, w in self.private.items() if k[0] == seat}
        basis = new._derivation_basis()
        for p in range(len(new.may)):
            if not new.visible(p, seat):
                new.may[p] = new._derived_may(p, basis)
        return new

    def _derivation_basis(self) -> tuple[int, dict[int, int]]:
        """(cards nobody has placed for this observer, card -> places it knows they may be).

        The hidden cards it does not see are either known to lie in certain
        places (exposed to all, or privately known to this observer) or
        unknown.  Only the observer's visible places are read exactly, so a
        view can apply this to itself.
        """
        seat = self.observer
        seen = 0
        hidden = 0
        for p, m in enumerate(self.may):
            hidden |= m
            if self.visible(p, seat) and not self.awaiting >> p & 1:  # else not yet seen
                seen |= m
        known: dict[int, int] = {c: w for c, w in self.exposed.items() if not (seen >> c) & 1}
        for (who, card), where in self.private.items():
            if who == seat and not (seen >> card) & 1:
                known[card] = where
        known_mask = 0
        for card in known:
            known_mask |= 1 << card
        return hidden & ~seen & ~known_mask, known

    def _derived_may(self, place: int, basis: tuple[int, dict[int, int]]) -> int:
        """A hidden place the observer does not see may hold every unknown card and
        every known one placed there, unless it is empty or claims not to hold it."""
        if self.count[place] == 0:
            return 0
        unknown, known = basis
        m = unknown
        for card, where in known.items():
            if where >> place & 1:
                m |= 1 << card
        return m & ~self.void[place]


    def clone(self) -> Self:
        """A copy (each game's: a dozen list copies, no deep copying)."""
        raise NotImplementedError
