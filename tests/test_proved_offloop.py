"""A deferred shuffle proof checked in a worker thread (the node's driver does so, its
loop free meanwhile: docs/protocol.md, "Pipelined shuffles"): the check is a pure
computation on the statement the deck gives, a proof found to hold is vouched for and
its turn then costs no multiplication, and one found not to hold is never vouched for:
the deck checks it again and names it."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading

import pytest

from p2pcards.net.driver import in_the_background
from p2pcards.protocol.proved.counting import Multiplications, counted
from p2pcards.protocol.proved.deck import ProvedDeck, Refused
from p2pcards.protocol.proved.messages import Shuffle
from p2pcards.protocol.proved.shuffle import shuffle_holds
from p2pcards.protocol.source import KeyedSource
from p2pcards.protocol.steps import DeckContext

CONTEXT = DeckContext(b"off-loop-table!!", 3, 2, 12)


def pending(forge: bool = False) -> tuple[ProvedDeck, Shuffle]:
    """Party 0's deck holding party 1's shuffle of round 0 with its proof unchecked
    (``forge``: two outputs swapped, so that the proof no longer holds)."""
    decks = [ProvedDeck(CONTEXT, p, KeyedSource(bytes([p]) * 32, b"off-loop")) for p in (0, 1)]
    for party in (0, 1):
        decks[1 - party].receive(decks[party].step())
    assert decks[1].expected() == ("shuffle", 1)
    shuffle = decks[1].step()
    assert isinstance(shuffle, Shuffle)
    if forge:
        deck = list(shuffle.deck)
        deck[0], deck[1] = deck[1], deck[0]
        shuffle = dataclasses.replace(shuffle, deck=tuple(deck))
    decks[0].receive(shuffle, defer=True)
    return decks[0], shuffle


def in_thread(deck: ProvedDeck) -> bool:
    head = deck.unchecked_head()
    assert head is not None
    statement, message = head
    out: list[bool] = []
    worker = threading.Thread(target=lambda: out.append(shuffle_holds(statement,
                                                                      message.proof)))
    worker.start()
    worker.join()
    return out[0]


def test_a_proof_checked_in_a_thread_costs_nothing_in_its_turn() -> None:
    deck, shuffle = pending()
    assert in_thread(deck)
    deck.vouch(shuffle)
    assert deck.unchecked_head() is None  # (nothing left to hand a thread)
    tally = Multiplications()
    with counted(tally.point, tally.generator):
        deck.check_pending(1)
    assert tally.total == 0 and not deck.pending
    # the same proof checked on the loop costs its multiplications
    again, _ = pending()
    tally = Multiplications()
    with counted(tally.point, tally.generator):
        again.check_pending(1)
    assert tally.total > 100 and not again.pending


def test_a_proof_that_does_not_hold_is_never_vouched_for_and_is_named() -> None:
    deck, _ = pending(forge=True)
    assert not in_thread(deck)  # (the driver then does not vouch for it)
    with pytest.raises(Refused, match="its shuffle proof: t1 does not hold"):
        deck.check_pending(1)
    assert deck.pending  # (it stays pending: the deal cannot go on)


def test_only_a_pending_message_is_vouched_for() -> None:
    deck, shuffle = pending()
    other, theirs = pending()
    deck.vouch(theirs)  # another deck's message (an equal one) is not this one's
    assert deck.unchecked_head() is not None
    deck.check_pending(1)
    deck.vouch(shuffle)  # no longer pending: nothing
    assert not deck.pending and other.unchecked_head() is not None


def test_a_step_made_in_a_thread_is_the_one_made_on_the_loop() -> None:
    """A seat's own step of a deck prepared ahead made in a worker thread (idle time) is
    byte for byte the one it makes when its move needs it; a move that needs it while
    the thread is still drawing waits for it, rather than draw it a second time."""
    def two() -> list[ProvedDeck]:
        decks = [ProvedDeck(CONTEXT, p, KeyedSource(bytes([p]) * 32, b"off-loop"))
                 for p in (0, 1)]
        for party in (0, 1):
            decks[1 - party].receive(decks[party].step())
        return decks

    on_loop = two()[1].step()
    threaded = two()[1]
    worker = threading.Thread(target=threaded.prepare)
    worker.start()
    made = threaded.step()  # (at once: it waits for the worker if it is drawing)
    worker.join()
    assert made == on_loop and threaded.prepared is None
    assert threaded.prepare() is False  # (nothing due any more: the step was taken)


def test_the_node_s_idle_work_runs_on_a_thread_of_its_own_at_the_lowest_priority() -> None:
    """The driver's idle work (a proof's check, the seat's own step) runs on one thread
    of its own whose nice value is 19 on Linux, so that every process's loop, which
    applies the moves, comes first; the calling thread keeps its priority."""
    seen: list[tuple[str, int]] = []

    def work() -> bool:
        seen.append((threading.current_thread().name,
                     os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        return True

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert in_the_background(work) and in_the_background(work)
    (name, nice), again = seen
    assert name.startswith("p2pcards-idle") and again == (name, nice)  # (one thread)
    assert nice == 19 or sys.platform != "linux"
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
