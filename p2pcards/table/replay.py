"""The audit's replay of a deal with full information, shared by the live session and
``p2pcards verify``.

Once every seat has revealed its secrets, every slot's card is known.  The deal
is dealt again from the opened deck and every move is re-applied with the
cards it hid filled in (a move's public text has ``?`` for each hidden card and
names their slots in order).  The first move the rules forbid (a renege, a
card not held) ends the deal with the game's penalty against its seat; the
outcome is a hand-history entry that ``p2pcards replay`` accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from p2pcards.games import HandState
from p2pcards.games.core import CHANCE, IllegalAction
from p2pcards.games.game import DealSetup
from p2pcards.history import RULE_BREACHES, HandRecord
from p2pcards.table.kinds import Act


def full_text(public: str, act: Act, names: Mapping[int, str]) -> str:
    """``public`` with each ``?`` replaced by the card in the matching slot of ``act``."""
    words = public.split()
    hidden = [i for i, w in enumerate(words) if w == "?"]
    if len(hidden) != len(act.slots):
        raise ValueError(f"{len(hidden)} hidden cards but {len(act.slots)} slots named")
    for i, slot in zip(hidden, act.slots, strict=True):
        words[i] = names[slot]
    return " ".join(words)


class Mismatch(ValueError):
    """A move the live sessions took that the full replay cannot take: a move every
    session checks on arrival (its turn, its text, its slots), so only a session that
    skipped those checks lets one through; ``seat`` made it."""

    def __init__(self, seat: int, reason: str):
        super().__init__(reason)
        self.seat = seat


@dataclass
class Outcome:
    """The audited deal: the full state at its end, its hand-history entry, and the
    full state after every move when asked for (the tests compare views with it)."""

    state: HandState
    record: HandRecord
    states: list[HandState] = field(default_factory=list)

    @property
    def void(self) -> bool:
        """Whether the deal does not count: the rules voided it (Pasur's jacks in the
        opening pool), or every seat consented."""
        return self.record.void or self.state.void_reason is not None

    @property
    def points(self) -> list[int]:
        if self.void:
            return [0] * (2 if self.state.team_game else self.state.players)
        return self.state.points()


def replay_deal(setup: DealSetup, deck: Sequence[int], acts: Sequence[tuple[int, Act]],
                slot_cards: Mapping[int, int], *, keep_states: bool = False) -> Outcome:
    """Deal ``deck`` (game card ids by position) and re-apply ``acts``.

    ``slot_cards``: slot -> game card id for every slot of the deal.  Raises
    :class:`Mismatch` only for what a live session refuses on arrival (out of
    turn, unparsable text, a slot that is not the card).
    """
    notation = setup.game.notation
    names = {slot: notation.name(card) for slot, card in slot_cards.items()}
    state = setup.deal(list(deck))
    record = HandRecord(setup.dealer, [notation.name(c) for c in deck])
    outcome = Outcome(state, record)
    if keep_states:
        outcome.states.append(state.clone())
    if state.void_reason is not None:
        record.void = True
        record.reason = state.void_reason
    for index, (seat, act) in enumerate(acts):
        if state.is_terminal():
            raise Mismatch(seat, f"move {index} after the deal was over")
        try:
            text = full_text(act.action, act, names)
            code = state.parse_action(text)
        except ValueError as error:
            raise Mismatch(seat, f"move {index}: {error}") from None
        actor: int | str = "chance" if seat == CHANCE else seat
        try:
            state.check_actor(actor)
        except IllegalAction as error:
            raise Mismatch(seat, f"move {index}: {error}") from None
        for slot, _ in act.shown:
            if names[slot] not in text.split():
                raise Mismatch(seat, f"move {index}: slot {slot} does not hold a card the"
                                     " move shows")
        try:
            state.check(code)
        except IllegalAction as breach:
            if breach.code not in RULE_BREACHES:
                raise Mismatch(seat, f"move {index}: {breach}") from None
            reason = breach.code
            record.actions.append((actor, text))
            record.penalty = {"seat": seat, "index": index, "reason": reason}
            state.penalize(seat, reason)
            break
        record.actions.append((actor, state.format_action(code)))
        state.step(code)
        if keep_states:
            outcome.states.append(state.clone())
    return outcome


def forfeit(setup: DealSetup, deck: Sequence[int], acts: Sequence[tuple[int, Act]],
            slot_cards: Mapping[int, int], *, seat: int, reason: str) -> Outcome:
    """The deal as far as it went, then ``seat``'s forfeit (the game's penalty)."""
    try:
        outcome = replay_deal(setup, deck, acts, slot_cards)
    except Mismatch:  # moves the cards cannot bear: the forfeit from the deal's start
        outcome = replay_deal(setup, deck, [], {})
    if outcome.record.penalty is None:
        outcome.record.forfeit = {"seat": seat, "reason": reason}
        outcome.state.penalize(seat, reason)
    return outcome
