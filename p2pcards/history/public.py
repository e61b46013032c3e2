"""Public entries (docs/hand-history.md, "Public entries"): a deal as a seat with no
cards saw it, replayed by an observer's engine.

A table that deals with the proved deck reveals nothing after the deal, so its
record keeps what was shown to everyone and nothing else: the deck positions
whose card was shown from the slot it was dealt in (``?`` elsewhere), and every
action in its public form (``discard ? ? ? ? ? ?``, ``steal 1 ?``).  Replaying
one deals the positions face up at the deal to a spectator's view
(``observer=SPECTATOR``), checks every action against what is public, and scores
the deal from the public facts (tricks, piles, bids).

The view keeps failures to follow suit as public claims and records a
:class:`~p2pcards.games.core.Proof` when a seat later shows a card it claimed not
to hold (docs/architecture.md, "Claims and proofs").  At the proved deck every
card shown is proven to come from its mover's slot, so such a proof is a proven
breach: :func:`play_public` names it the way an audit would, the seat and the
action whose claim the card contradicts (:class:`Proven`), and the deal stops
at the action that proved it.  Both the table and ``p2pcards replay`` call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from p2pcards.games import ActionSyntaxError, HandState, IllegalAction
from p2pcards.games.cards import bits, mask_of
from p2pcards.games.core import SPECTATOR, Proof
from p2pcards.games.game import DealSetup
from p2pcards.history.records import HIDDEN, Actor, HandRecord, HistoryFormatError, ReplayError


@dataclass(frozen=True, slots=True)
class Proven:
    """A breach the public actions prove: ``seat`` broke rule ``reason`` at action
    ``index`` (the action whose claim the card shown contradicts, or the claim that
    contradicts what everyone knew), as action ``at`` proved."""

    seat: int
    index: int
    reason: str
    at: int

    def penalty(self) -> dict[str, Any]:
        """The hand-history ``penalty`` entry."""
        return {"seat": self.seat, "index": self.index, "reason": self.reason}


@dataclass(slots=True)
class PublicPlay:
    """A deal replayed as a seat with no cards sees it."""

    state: HandState
    """After the last action."""
    befores: list[HandState]
    """The state before each action (a penalty scores the deal as it stood before the
    offending action, as an audit does)."""
    shown: int
    """Every card shown to everyone: face up at the deal or shown by an action."""
    proven: Proven | None = None


def face_up_at_deal(setup: DealSetup, known: Sequence[int | None]) -> list[int]:
    """The deck positions every seat sees at the deal (the trump card, the pool, Pasur's
    replacement for a lone opening jack), read off the deal mapping as the table reads
    it (``Game.blank_deck``); ``known``: the cards shown, None where unknown."""
    game, players = setup.game, setup.players
    blank = game.blank_deck(players, setup.options)
    seen = set(range(len(blank)))
    for seat in range(players):
        observed = setup.observed_deck(blank, seat)
        seen &= {i for i, card in enumerate(observed) if card is not None}
    observed = [known[i] if i in seen else None for i in range(len(known))]
    return sorted(seen | set(game.shown_after_deal(observed, players)))


def play_public(setup: DealSetup, known: Sequence[int | None],
                actions: Sequence[tuple[Actor, str]], hand: int) -> PublicPlay:
    """Deal ``known`` (None where no card was shown) as everyone saw it at the deal and
    apply ``actions`` as a spectator does.  A proof of a breach ends the deal: it must
    come at the last action.  :class:`HistoryFormatError` for what is malformed (a
    card face up at the deal not named, an action naming a hidden card);
    :class:`ReplayError` for an action the public rules forbid."""
    face_up = face_up_at_deal(setup, known)
    for position in face_up:
        if position < len(known) and known[position] is None:
            raise HistoryFormatError(f"hand {hand}, deck[{position}]: face up at the deal,"
                                     " so every seat saw it: a public entry names it")
    dealt = [known[i] if i in face_up else None for i in range(len(known))]
    try:
        state = setup.deal(dealt, observer=SPECTATOR)
    except ValueError as error:
        raise HistoryFormatError(f"hand {hand}, deck: {error}") from None
    play = PublicPlay(state, [], mask_of(c for c in dealt if c is not None))
    origins: dict[tuple[int, int], int] = {}
    """(place, card) -> the action whose claim that the place does not hold the card
    stands (a claim lapses when cards may have arrived)."""
    for i, (actor, text) in enumerate(actions):
        code = _parse_public(state, text, f"hand {hand}, action {i}")
        try:
            state.check_actor(actor)
            state.check(code)
        except IllegalAction as error:
            raise ReplayError(hand, i, actor, text, error.reason) from None
        before = state.clone()
        play.befores.append(before)
        cards = before.shown_cards(code)
        play.shown |= mask_of(cards)
        state.step(code)
        proofs = state.proofs[len(before.proofs):]
        if proofs:
            play.proven = min((_offence(proof, cards, before, origins, i) for proof in proofs),
                              key=lambda p: p.index)
            if i + 1 < len(actions):
                later = actions[i + 1]
                raise ReplayError(hand, i + 1, later[0], later[1], _stopped(play.proven))
            break
        for place, (old, new) in enumerate(zip(before.void, state.void, strict=True)):
            for card in bits(new & ~old):
                origins[place, card] = i
            for card in bits(old & ~new):
                origins.pop((place, card), None)
    return play


def _parse_public(state: HandState, text: str, where: str) -> int:
    """An action in its public form: a card every seat saw named, one it did not ``?``."""
    try:
        code = state.parse_action(text)
    except ActionSyntaxError as error:
        raise HistoryFormatError(f"{where}: {error}") from None
    hidden = text.split().count(HIDDEN)
    public = state.format_action(code, seat=SPECTATOR).split().count(HIDDEN)
    if hidden < public:
        raise HistoryFormatError(f"{where}: {text!r} names cards a seat with no cards does"
                                 f" not see; a public entry writes them {HIDDEN!r}")
    if hidden > public:
        raise HistoryFormatError(f"{where}: {text!r} hides cards every seat sees")
    return code


def _offence(proof: Proof, cards: list[int], before: HandState,
             origins: dict[tuple[int, int], int], at: int) -> Proven:
    """The breach ``proof`` (found at action ``at``) proves: a card shown that its seat
    had claimed not to hold proves the action that made the claim; a claim that leaves
    a card everyone knew to be there with no place proves itself (so does a card shown
    against what everyone had inferred)."""
    seat = proof.seat
    claims = [origins[seat, card] for card in cards
              if before.void[seat] >> card & 1 and (seat, card) in origins]
    return Proven(seat, min(claims, default=at), proof.code, at)


def _stopped(proven: Proven) -> str:
    return (f"the deal stops at action {proven.at}, which proves that seat {proven.seat}"
            f" broke the rules at action {proven.index} ({proven.reason}); no action"
            " follows it")


def known_deck(record: HandRecord, setup: DealSetup) -> list[int | None]:
    """A public entry's deck as card ids, None for ``?``."""
    parse = setup.game.notation.parse
    return [None if name == HIDDEN else parse(name) for name in record.deck]


def replay_public(setup: DealSetup, record: HandRecord, hand: int) -> HandState:
    """A public entry replayed and scored (see the module docstring): the state at its
    end, the penalty, forfeit or void applied."""
    known = known_deck(record, setup)
    play = play_public(setup, known, record.actions, hand)
    for position, card in enumerate(known):
        if card is not None and not play.shown >> card & 1:
            raise HistoryFormatError(
                f"hand {hand}, deck[{position}]: {record.deck[position]} is never shown in"
                " this deal; a public entry names only cards shown to everyone")
    return score_public(record, play, hand)


def score_public(record: HandRecord, play: PublicPlay, hand: int) -> HandState:
    """The end of a public entry's deal: its rules void it (then it has no action), every
    seat voided it (a reason), a breach proven (the entry's penalty must be exactly
    it: the deal as it stood before the offending action, with the game's penalty), a
    forfeit, or play."""
    state = play.state
    proven = play.proven
    rules_void = state.void_reason
    if rules_void is not None:
        if record.actions:
            raise ReplayError(hand, 0, *record.actions[0], "this deal is void: no action is"
                              " played")
        if not record.void:
            raise ReplayError(hand, None, None, None, f"the rules void this deal"
                              f' ({rules_void}); it must say "void": true')
        return state
    penalty = record.penalty
    if proven is not None and penalty != proven.penalty():
        actor, text = record.actions[proven.at]
        what = f"; the entry's penalty is {penalty}" if penalty is not None else ""
        raise ReplayError(hand, proven.at, actor, text,
                          f"this action proves that seat {proven.seat} broke the rules at"
                          f" action {proven.index} ({proven.reason}): the entry must end"
                          f" with that penalty{what}")
    if record.void:
        if record.reason is None:
            raise ReplayError(hand, None, None, None,
                              "a void deal needs a reason unless the rules void it")
        return state
    if proven is not None:
        scored = play.befores[proven.index].clone()
        scored.penalize(proven.seat, proven.reason)
        return scored
    if penalty is not None:
        actor, text = record.actions[penalty["index"]]
        raise ReplayError(hand, penalty["index"], actor, text,
                          f"no card shown in this deal proves the penalty ({penalty['reason']}"
                          f" by seat {penalty['seat']}); a public entry's penalty is proven"
                          " by its last action")
    if record.forfeit is not None:  # (after the last action too: a seat silent, or
        state = state.clone()       # refused, while a card was still being opened)
        state.penalize(record.forfeit["seat"], record.forfeit["reason"])
    return state
