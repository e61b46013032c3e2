"""One peer's seats at a networked table: its sessions, its journal, no sockets.

A peer runs a session for each seat it plays: its own, and the bots it runs
(the roster says which).  Every table message from the network goes to each
of them; every message one of them sends goes to the others here and out to
the network.  Everything is journaled (:mod:`p2pcards.net.journal`) before it
is sent, and :meth:`Peer.restore` rebuilds a peer from its journal after a
crash: the same secrets (a :class:`~p2pcards.protocol.source.KeyedSource` per seat from
the journaled seed), the same messages, the same bytes.

``log`` is every table message in the order this peer took it (from the
network, or made here): the host relays it, and sends a peer that rejoins the
part it missed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.games import HandState
from p2pcards.net.journal import ADVICE, Journal, JournalError, damaged
from p2pcards.protocol.source import KeyedSource
from p2pcards.table.codec import CodecError, private_bytes, read_head, unpack
from p2pcards.table.kinds import Kind
from p2pcards.table.roster import Roster, decode_roster
from p2pcards.table.run import ProofJob
from p2pcards.table.session import Rejection, Session
from p2pcards.table.state import WATCHER, Step

MAX_REFUSALS = 200
"""Refusals a peer remembers (the newest; Peer.refused counts them all): the driver shows
each as it comes, and a peer flooded with refused messages must not keep them all."""


MAX_HELD = 8
"""Messages of one seat that a peer journals and relays while its sessions only hold them
(named on a transcript they have not reached), per transcript position of this peer:
the sessions hold the latest of a seat's, and an honest seat can be at most a few
messages ahead of another; more is a seat inventing transcripts, and what it can make
a peer write grows no faster than the table moves, whatever its rejoins."""


def kept_as_evidence(rejection: Rejection) -> bool:
    """Whether a refused message is kept (journaled, logged, relayed) as evidence: only
    what a session kept as new evidence, so that a cheat's flood of forks and second
    versions costs every peer one copy of each proof at most."""
    return rejection.evidence


@dataclass
class SeatRefusal:
    """A message one of this peer's seats refused."""

    seat: int
    rejection: Rejection


class Peer:
    def __init__(self, roster: Roster, keys: Mapping[int, Ed25519PrivateKey], seed: bytes,
                 journal: Journal | None = None, settings: Mapping[str, Any] | None = None):
        self.roster = roster
        self.keys = dict(keys)
        """The seats' identity keys this peer holds (the next game of the table uses
        them again)."""
        self.seed = seed
        self.settings = dict(settings or {})
        self.journal = journal
        self.replace = str(self.settings.get("table", {}).get("replace", ""))
        self.replayed: dict[int, set[bytes]] = {}
        """Messages a stand-in made in this routing has taken already."""
        self.resend: dict[int, dict[tuple[int, bytes], bytes]] = {}
        """Seat -> its messages sent before a restart, for a stand-in not yet made again."""
        """The bot kind this peer puts in a seat gone silent when it is the runner."""
        self.sessions: dict[int, Session] = {}
        for seat, key in sorted(keys.items()):
            self._add(seat, Session(roster, seat, key, self._source(seat)))
        self.main = self.sessions[min(self.sessions)]
        self.main.machine.tell = True  # (a person there reads its moves as it saw them)
        self.log: list[bytes] = []
        self.known: set[bytes] = set()
        self.mine: list[bytes] = []
        """What this peer's seats sent (sent again to a host after reconnecting)."""
        self.outgoing: list[bytes] = []
        self.refusals: deque[SeatRefusal] = deque(maxlen=MAX_REFUSALS)
        self.refused = 0
        """Refusals so far (more than :attr:`refusals` keeps)."""
        self.held: dict[int, tuple[bytes, int]] = {}
        """Seat -> the transcript hash here when its messages were last held rather than
        taken, and how many have been held since (up to MAX_HELD journaled and relayed)."""
        self.aside: dict[int, bytes] = {}
        """Seat -> its latest message held over MAX_HELD, neither journaled nor relayed
        yet: if a session here takes it after all, it is then (:meth:`_settle_aside`)."""
        if journal is not None and not journal.records:
            journal.append("table", {
                "roster": roster.encode(), "seed": seed, "settings": self.settings,
                "keys": {seat: private_bytes(key) for seat, key in keys.items()}})
        self._route()

    # ============================================================ what it does

    def receive(self, wire: bytes) -> tuple[bool, list[SeatRefusal]]:
        """A table message from the network (each wire once; repeats are ignored):
        whether it was kept (taken or held by a seat here, or kept as new evidence:
        :attr:`~p2pcards.table.state.Rejection.evidence`), and the refusals.  A
        message every seat here refused changed nothing: it is neither journaled nor
        logged (nor relayed, by a host).  Evidence is bounded by the sessions (one
        fork per seat and transcript, one proof per seat until it is punished), so
        what a cheat can make a peer journal and relay is bounded too."""
        if wire in self.known:
            return True, []
        refused = self._feed(wire, None)
        kept = len(refused) < len(self.sessions) or any(kept_as_evidence(r.rejection)
                                                        for r in refused)
        if kept and not any(kept_as_evidence(r.rejection) for r in refused) \
                and not self._hold(wire, {r.seat for r in refused}):
            self._route()  # (held all the same: the sessions keep the latest)
            return False, refused
        if kept:
            if self.journal is not None:
                self.journal.append("in", wire)
            self._took(wire)
        self._route()
        return kept, refused

    def act(self, seat: int, code: int) -> None:
        """Seat ``seat``'s move (it must be this peer's seat and its move)."""
        self.sessions[seat].act(code)
        if self.journal is not None:
            self.journal.append("act", seat, code)
        self._route()

    def propose_void(self, seat: int, reason: str) -> None:
        """Seat ``seat`` proposes, in place of its move, to void the deal."""
        self.sessions[seat].propose_void(reason)
        if self.journal is not None:
            self.journal.append("void", seat, reason)
        self._route()

    def answer(self, seat: int, agree: bool) -> None:
        self.sessions[seat].answer_void(agree)
        if self.journal is not None:
            self.journal.append("answer", seat, agree)
        self._route()

    def claim_silent(self, forked: bool = False) -> list[int]:
        """Every seat here that can claims the seat due silent; the seats that did
        (``forked``: :meth:`~p2pcards.table.session.Session.claim_silent`)."""
        claimed = []
        for seat, session in self.sessions.items():
            try:
                session.claim_silent(forked=forked)
            except ValueError:
                continue
            claimed.append(seat)
            if self.journal is not None:
                self.journal.append("claim", seat, forked)
        self._route()
        return claimed

    def take_late_words(self) -> list[int]:
        """The seats here that take after all the message of the seat due, refused once
        because they had claimed its sender silent, with the claims still incomplete
        (:meth:`~p2pcards.table.session.Session.late_word`)."""
        taken = []
        for seat, session in self.sessions.items():
            wire = session.late_word()
            if wire is None:
                continue
            session.take_late(wire)
            taken.append(seat)
            if self.journal is not None:
                self.journal.append("late", seat, wire)
            if wire not in self.known:
                self._took(wire)
        self._route()
        return taken

    def proof_jobs(self) -> list[ProofJob]:
        """Every seat's next deferred proof, as work for another thread
        (:meth:`Session.proof_jobs`)."""
        return [job for session in self.sessions.values() for job in session.proof_jobs()]

    def check_pending(self, limit: int | None = None) -> bool:
        """Check up to ``limit`` deferred shuffle proofs of this peer's seats (idle
        time: :meth:`Session.check_pending`); whether any is left unchecked.  What a
        seat must send once they are checked goes out like the rest."""
        left = False
        for session in self.sessions.values():
            before = session.machine.unchecked_count()
            left = session.check_pending(limit) or left
            if limit is not None:
                limit = max(0, limit - (before - session.machine.unchecked_count()))
        self._route()
        return left

    def take_outgoing(self) -> list[bytes]:
        """What to send now, journaled first (on disk before it leaves)."""
        if self.journal is not None:
            self.journal.commit()
        out, self.outgoing = self.outgoing, []
        return out

    # ================================================================ queries

    def due(self) -> Step | None:
        return self.main.due()

    def holds(self, seat: int) -> bool:
        """Whether this peer plays ``seat`` now (a stand-in it ran, given back, keeps a
        benched session here that does not)."""
        session = self.sessions.get(seat)
        return session is not None and session.me == seat

    def turn(self, seat: int) -> tuple[bytes, int, int] | None:
        """Which move of ``seat`` is asked for now (:meth:`Session.turn`)."""
        session = self.sessions.get(seat)
        return None if session is None else session.turn()

    def hold_returns(self, hold: bool) -> None:
        """Hold the returns of this peer's benched seats until its person acts (True), or
        say them now (False) (docs/playing.md, "Away and back")."""
        for session in self.sessions.values():
            session.hold_return(hold)
        self._route()

    def decisions(self) -> dict[int, HandState]:
        return {seat: view for seat, s in self.sessions.items()
                if (view := s.decision()) is not None}

    def questions(self) -> dict[int, str]:
        return {seat: q for seat, s in self.sessions.items()
                if (q := s.void_question()) is not None}

    @property
    def over(self) -> bool:
        return all(s.over for s in self.sessions.values())

    @property
    def progress(self) -> bytes:
        """The transcript hash of the main seat: it changes whenever the table moves."""
        return self.main.hash

    @property
    def current(self) -> Roster:
        """The roster as it stands (seats change hands at deal boundaries; ``roster``
        stays the one every seat first signed)."""
        return self.main.roster

    # ================================================================ inside

    def _source(self, seat: int) -> KeyedSource:
        return KeyedSource(self.seed, b"p2pcards/seat/%d" % seat)

    def _add(self, seat: int, session: Session) -> None:
        session.machine.seats.replace = self.replace
        session.transcript.resend = self.resend.pop(seat, {})
        self.sessions[seat] = session

    def _take_over(self) -> bool:
        """Sessions for the stand-ins this peer's runner seat has just put in: each
        replays the transcript as a watcher and takes its seat at the ``seat`` message
        (docs/protocol.md, "Seats that change hands").  True if one was made."""
        made = False
        for session in list(self.sessions.values()):
            for seat, key in session.machine.seats.keys.items():
                held = self.sessions.get(seat)
                if held is not None and held.identity is key:
                    continue  # (a stand-in given back stays, benched, till replaced)
                stand_in = Session(self.roster, WATCHER, key, self._source(seat))
                self._add(seat, stand_in)
                for env in session.transcript:
                    stand_in.receive(env.wire)
                self.replayed[seat] = {env.wire for env in session.transcript}  # (not fed
                # to it again while this routing goes on)
                assert stand_in.me == seat, "the stand-in did not take its seat"
                made = True
        return made

    def _hold(self, wire: bytes, refused: set[int]) -> bool:
        """Whether to journal and relay ``wire``, which the sessions here but ``refused``
        kept: yes if one took it; if they only hold it, yes for its seat's first
        MAX_HELD so held at this peer's transcript position (:data:`MAX_HELD`)."""
        if any(not session.holds(wire) for seat, session in self.sessions.items()
               if seat not in refused):
            return True
        head = read_head(wire)
        if head is None:
            return True
        at = self.main.hash
        anchor, count = self.held.get(head.sender, (at, 0))
        count = count + 1 if anchor == at else 1
        self.held[head.sender] = (at, count)
        if count <= MAX_HELD:
            return True
        self.aside[head.sender] = wire
        return False

    def _settle_aside(self) -> None:
        """A message held over MAX_HELD that a session here has since taken is journaled,
        logged and sent on now, as if it had come just then (an honest seat far ahead);
        one no session holds or took any longer is forgotten."""
        for seat, wire in list(self.aside.items()):
            if any(session.took(wire) for session in self.sessions.values()):
                del self.aside[seat]
                if wire not in self.known:
                    if self.journal is not None:
                        self.journal.append("in", wire)
                    self._took(wire)
                    self.outgoing.append(wire)
            elif not any(session.holds(wire) for session in self.sessions.values()):
                del self.aside[seat]

    def _took(self, wire: bytes) -> None:
        self.known.add(wire)
        self.log.append(wire)

    def _feed(self, wire: bytes, source: int | None) -> list[SeatRefusal]:
        refused = []
        for seat, session in list(self.sessions.items()):
            if seat == source or wire in self.replayed.get(seat, ()):
                continue
            rejection = session.receive(wire)
            if rejection is not None:
                refused.append(SeatRefusal(seat, rejection))
        self.refusals.extend(refused)
        self.refused += len(refused)
        return refused

    def _route(self) -> None:
        """Carry each local session's messages to the others here and to the network."""
        moved = True
        while moved:
            moved = self._take_over()
            for seat, session in list(self.sessions.items()):
                for wire in session.take_outbox():
                    moved = True
                    if wire in self.known:
                        continue  # a claim forwarded again
                    if self.journal is not None:
                        self.journal.append("out", wire)
                    self._took(wire)
                    self.mine.append(wire)
                    self.outgoing.append(wire)
                    self._feed(wire, seat)
        self.replayed = {}
        self._forget_dropped()
        if self.aside:
            self._settle_aside()

    def _forget_dropped(self) -> None:
        """This peer's messages that a session dropped when its transcript was taken back
        (a cheat's point, a forfeit its peer missed) are never sent again: sent after a
        reconnection, they would read as a replay."""
        dropped: set[bytes] = set()
        for session in self.sessions.values():
            dropped.update(session.transcript.dropped)
            session.transcript.dropped.clear()
        if dropped:
            self.mine = [w for w in self.mine if w not in dropped]
            self.outgoing = [w for w in self.outgoing if w not in dropped]

    # ============================================================ restoring

    @classmethod
    def restore(cls, journal: Journal) -> Peer:
        """The peer as it was when its journal was last committed.  A record that does not
        replay (it reads, but it is not what this table made) is a :class:`JournalError`
        naming the journal and the record, whatever its sessions raised."""
        records = journal.records
        if not records:
            raise JournalError(f"{journal.path}: does not begin with its table; {ADVICE}")
        if records[0][0] != "table":
            raise damaged(journal.path, 0, _offset(journal, 0), "is not the table's"
                          f" (its kind {records[0][0]!r}): the journal does not begin with"
                          " its table")
        try:
            setup = records[0][1]
            roster = decode_roster(setup["roster"])
            keys = {int(seat): Ed25519PrivateKey.from_private_bytes(raw)
                    for seat, raw in setup["keys"].items()}
            peer = cls(roster, keys, setup["seed"], None, setup.get("settings"))
        except Exception as exc:  # (anything a record that is not this table's raises)
            raise _unreplayable(journal, 0, exc, "its table") from exc
        for number, record in enumerate(records[1:], 1):
            if record[0] == "out":
                try:
                    sender, seq, prior, kind = _sent(record[1])
                except Exception as exc:  # (not a message at all)
                    raise _unreplayable(journal, number, exc) from exc
                if kind not in (Kind.SILENT, Kind.CHEAT, Kind.BACK):
                    peer.resend.setdefault(sender, {})[seq, prior] = record[1]
        for seat, session in peer.sessions.items():
            session.transcript.resend = peer.resend.pop(seat, {})
        for number, record in enumerate(records[1:], 1):
            kind = record[0]
            if kind not in REPLAYED:
                raise damaged(journal.path, number, _offset(journal, number),
                              f"is of a kind this p2pcards does not journal ({kind!r})")
            try:
                if kind in DECISIONS:  # (the idle time before a decision: the shares a
                    peer.check_pending()  # round's proofs held back, made then, as the
                    # driver did; a decision is only ever taken with none left unchecked)
                if kind == "in":
                    peer.receive(record[1])
                elif kind == "act":
                    peer.act(record[1], record[2])
                elif kind == "answer":
                    peer.answer(record[1], record[2])
                elif kind == "void":
                    peer.propose_void(record[1], str(record[2]))
                elif kind == "claim":
                    peer.sessions[record[1]].claim_silent(forked=bool(record[2]))
                    peer._route()
                elif kind == "late":
                    peer.sessions[record[1]].take_late(bytes(record[2]))
                    peer._route()
            except Exception as exc:  # IllegalAction, ValueError, CodecError, KeyError...
                raise _unreplayable(journal, number, exc) from exc
        peer.outgoing = []
        peer.journal = journal
        return peer


DECISIONS = frozenset({"act", "answer", "void", "claim", "late"})
"""The journal's records of what this peer decided (as against what it received or sent)."""
REPLAYED = DECISIONS | {"in", "out"}
"""The kinds of record after the table's, as :meth:`Peer.restore` replays them (``out``:
what this peer sent, sent again as it was)."""


def _offset(journal: Journal, number: int) -> int | None:
    return journal.offsets[number] if number < len(journal.offsets) else None


def _unreplayable(journal: Journal, number: int, exc: Exception,
                  what: str = "") -> JournalError:
    """Record ``number`` of ``journal`` does not replay: ``exc`` named, and what to do."""
    what = what or f"its kind {journal.records[number][0]!r}"
    return damaged(journal.path, number, _offset(journal, number),
                   f"does not replay ({what}; {type(exc).__name__}: {exc})")


def _sent(wire: bytes) -> tuple[int, int, bytes, str]:
    """(sender, sequence number, prior, kind) of a message this peer sent (its own
    journal's: its signer may be a stand-in the roster does not name yet)."""
    try:
        payload = unpack(unpack(wire, "envelope")[0], "payload")
        return int(payload[3]), int(payload[4]), bytes(payload[5]), str(payload[6])
    except (CodecError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(f"a message this peer sent does not read ({exc})") from exc
