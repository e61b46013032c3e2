"""The games one table plays, one after another, on one invite: a series.

Each game has its own table id, journal, transcript and hand history; what
ties them together is kept here, sans sockets: the record on disk of which
games the series has played and how each ended (:class:`Series`), the match
score across them (:func:`match_lines`), what a watcher that comes in is told of
it (:func:`match_so_far`, :func:`result_told`), and where each game's files go
(:func:`numbered`).

The record is a small JSON file beside the first game's journal
(``host-GAME-PORT.series``, ``join-TOKEN.series``), rewritten whole (a new file
renamed over the old) whenever a game starts or ends and when the series ends.
A peer started again with the same command reads it to find the game to resume,
or, once a game is over and the next not begun, the game after which the table
waits for the players' word (docs/networking.md, "Another game").
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from p2pcards.games import GAMES
from p2pcards.net.frames import (
    MAX_TOLD,
    SPECS,
    FrameError,
    FrameKind,
    MatchSoFar,
    Start,
    Told,
    pack,
)
from p2pcards.net.journal import JournalError

if TYPE_CHECKING:
    from p2pcards.net.driver import Driver
    from p2pcards.net.journal import Journal
    from p2pcards.net.peer import Peer
    from p2pcards.table.roster import Roster
    from p2pcards.table.session import Session

GameOver = Callable[["Peer", "Driver", int], Awaitable[None]]
"""Called when a game of the table is over, with its peer, its driver and its number in
the series (the command writes its outputs and shows the match there)."""

FORMAT = "p2pcards-series/1"
TOLD_BYTES = SPECS[FrameKind.START].most // 2
"""The most bytes of a ``start`` that tells a watcher the match so far (its framing
included): half the cap of its kind, as any frame's honest size is, so that however
long the series, an older watcher (which skips the field) reads it within the cap it
enforces.  The largest roster leaves room for a few results; a usual one for dozens."""


def numbered(path: str, number: int) -> str:
    """Game ``number``'s file of an output option: the first game's is ``path`` itself,
    a later one's has ``-N`` before the extension (``game.json``, ``game-2.json``)."""
    if number <= 1:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{number}{p.suffix}"))


def journal_path(first: Path, number: int) -> Path:
    """Game ``number``'s journal, beside the first game's (``first``)."""
    return first if number <= 1 else first.with_name(f"{first.stem}-{number}{first.suffix}")


def fresh_journal(first: Path, number: int) -> Path:
    """Game ``number``'s journal path, a file left there by an older table moved aside
    (a new game's journal must begin empty; :class:`JournalError` if it cannot be)."""
    path = journal_path(first, number)
    move_journal(path, path.with_suffix(".abandoned"))
    return path


def move_journal(path: Path, to: Path) -> None:
    """The journal at ``path`` renamed ``to``, if it is there (:class:`JournalError` if
    it cannot be: the command says it in one line)."""
    try:
        if path.exists():
            path.replace(to)
    except OSError as exc:
        raise JournalError(f"{path}: cannot rename the journal to {to.name}"
                           f" ({exc.strerror or exc})") from exc


def done_path(journal: Path) -> Path:
    """Where a finished game's journal is kept."""
    return journal.with_suffix(".done")


@dataclass(frozen=True)
class GameResult:
    """How one game of the series ended: its game, the names at its seats, its final
    totals (per team or per seat, as the game scores) and its winner (a unit, a list of
    units for a shared win, or None: it did not finish)."""

    game: str
    names: tuple[str, ...]
    totals: tuple[int, ...]
    winner: int | tuple[int, ...] | None

    def to_json(self) -> dict[str, Any]:
        winner = list(self.winner) if isinstance(self.winner, tuple) else self.winner
        return {"game": self.game, "names": list(self.names), "totals": list(self.totals),
                "winner": winner}

    @classmethod
    def from_json(cls, raw: Any) -> GameResult:
        if not isinstance(raw, dict) or raw.get("game") not in GAMES:
            raise ValueError("a game result needs a known game")
        winner = raw.get("winner")
        names, totals = raw.get("names"), raw.get("totals")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or \
                not isinstance(totals, list) or not all(isinstance(t, int) for t in totals):
            raise ValueError("a game result needs names and totals")
        if isinstance(winner, list):
            winner = tuple(int(w) for w in winner)
        elif winner is not None and not isinstance(winner, int):
            raise ValueError("a game result's winner is a number, a list or null")
        return cls(raw["game"], tuple(names), tuple(totals), winner)

    @property
    def units(self) -> list[int]:
        """The winning units (none if the game did not finish)."""
        if self.winner is None:
            return []
        return list(self.winner) if isinstance(self.winner, tuple) else [self.winner]

    def winners(self) -> list[str]:
        """The names of the players who won (both partners of a winning team)."""
        rules = GAMES[self.game]
        if rules.units == "teams":
            return [self.names[s] for u in self.units for s in (u, u + 2)
                    if s < len(self.names)]
        return [self.names[u] for u in self.units if u < len(self.names)]


def match_lines(results: Sequence[GameResult | None], told: Collection[int] = ()
                ) -> list[str]:
    """The match score: one line per game (its game, its winner, its final scores),
    then the games won, by partnership when every game so far was played in
    partnerships, else by player (a partnership's win counts for both partners, a
    shared win for each).

    ``results[i]`` is game ``i + 1``'s; a watcher's list may hold None for a game it
    does not know (it came in later, and the host did not tell it: the games known are
    then counted alone), and ``told`` numbers the games the host told it of (it did not
    watch them: their lines say so)."""
    if not results:
        return []
    lines = [f"match after {len(results)} game{'s' if len(results) > 1 else ''}:"]
    unknown: list[int] = []
    for number, result in enumerate(results, 1):
        if result is None:
            unknown.append(number)
            continue
        lines += _unknown(unknown)
        unknown = []
        rules = GAMES[result.game]
        names = list(result.names)
        won = ", ".join(rules.unit_name(u, names) for u in result.units) or "nobody"
        shared = " (shared)" if len(result.units) > 1 else ""
        scores = ", ".join(f"{rules.unit_name(u, names)} {t}"
                           for u, t in enumerate(result.totals))
        source = " (as the host told it)" if number in told else ""
        lines.append(f"  game {number}, {rules.title}: won by {won}{shared}; final"
                     f" {scores}{source}")
    lines += _unknown(unknown)
    known = [r for r in results if r is not None]
    if not known:
        return lines
    won = "  games won: " if len(known) == len(results) else \
        f"  games won, of the {len(known)} known here: "
    names = list(known[-1].names)
    if all(GAMES[r.game].units == "teams" for r in known):
        teams = GAMES[known[-1].game]
        tally = [sum(u in r.units for r in known) for u in range(2)]
        lines.append(won + ", ".join(
            f"{teams.unit_name(u, names)} {n}" for u, n in enumerate(tally)))
    else:
        counts = {name: 0 for name in names}
        for result in known:
            for name in result.winners():
                counts[name] = counts.get(name, 0) + 1
        lines.append(won + ", ".join(f"{n} {c}" for n, c in counts.items()))
    return lines


def _unknown(numbers: Sequence[int]) -> list[str]:
    """The line for games a watcher does not know (none, one, or a run of them)."""
    if not numbers:
        return []
    which = f"game {numbers[0]}" if len(numbers) == 1 else \
        f"games {numbers[0]} to {numbers[-1]}"
    return [f"  {which}: not known here (watched by no one here, and not told by the"
            " host)"]


def session_result(session: Session) -> GameResult:
    """How the game of a (watching) session ended, for the match score."""
    winner = session.winner
    return GameResult(session.home.game, tuple(e.name for e in session.home.seats),
                      tuple(session.totals),
                      tuple(winner) if isinstance(winner, list) else winner)


def match_so_far(start: Start, results: Sequence[GameResult | None], number: int) -> Start:
    """``start`` (game ``number``'s) as a watcher that comes in is sent it: with the
    match so far, the game's number and the results of the latest games before it
    (``results[i]``: game ``i + 1``'s), as many as the record holds without a gap, at
    most :data:`~p2pcards.net.frames.MAX_TOLD`, and as keep the frame within
    :data:`TOLD_BYTES` (half the cap of its kind, which an older watcher enforces too,
    and skips the field): the games before are not told."""
    told: list[Told] = []
    for result in reversed(results[:max(number - 1, 0)]):
        if result is None or len(told) == MAX_TOLD:
            break
        told.append(Told(game=result.game, totals=result.totals, winner=result.winner))
    told.reverse()
    while True:
        frame = replace(start, match=MatchSoFar(game=number, results=tuple(told)))
        try:
            size = len(pack(frame))
        except FrameError:  # (over the cap of its kind)
            if not told:
                return start  # (not even the number fits: nothing is told)
            size = SPECS[FrameKind.START].most
        if size <= TOLD_BYTES or not told:
            return frame
        del told[:max(1, (size - TOLD_BYTES) // 64)]  # (the oldest first)


def result_told(told: Told, roster: Roster) -> GameResult:
    """A result the host told, read against the roster of the game now (the same
    players): ValueError if it does not fit them."""
    rules = GAMES.get(told.game)
    if rules is None:
        raise ValueError(f"names a game this build does not know ({told.game[:32]!r})")
    if roster.players not in rules.player_counts:
        raise ValueError(f"{rules.title} is not played by this table's {roster.players}"
                         " seats")
    units = 2 if rules.units == "teams" else roster.players
    if len(told.totals) != units:
        raise ValueError(f"{rules.title} here scores {units} totals, not"
                         f" {len(told.totals)}")
    winner = told.winner
    won = [] if winner is None else list(winner) if isinstance(winner, tuple) else [winner]
    if any(u >= units for u in won) or len(set(won)) != len(won):
        raise ValueError(f"its winner is not one of the {units} units of {rules.title}")
    return GameResult(told.game, tuple(e.name for e in roster.seats), told.totals, winner)


@dataclass
class Series:
    """The record of a series: each game's table id and, once it is over, its result;
    and why the series ended ("" while it goes on)."""

    path: Path
    tables: list[bytes] = field(default_factory=list)
    results: list[GameResult | None] = field(default_factory=list)
    ended: str = ""

    @classmethod
    def open(cls, path: Path) -> Series:
        """The record at ``path`` (an empty one if there is none, or if its series
        ended: a new table starts a new series); ValueError if it does not read."""
        if not path.exists():
            return cls(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(raw, dict) or raw.get("format") != FORMAT:
                raise ValueError(f"not a {FORMAT} record")
            games = raw["games"]
            tables = [bytes.fromhex(g["table"]) for g in games]
            results = [None if g.get("result") is None else GameResult.from_json(g["result"])
                       for g in games]
            ended = str(raw.get("ended", ""))
        except (OSError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: the record of the games played does not read ({exc})"
                             ) from exc
        if ended:
            return cls(path)
        return cls(path, tables, results, ended)

    @property
    def number(self) -> int:
        """The number of the latest game (0: none yet)."""
        return len(self.tables)

    @property
    def between(self) -> bool:
        """Whether the latest game is over (the next not begun)."""
        return bool(self.results) and self.results[-1] is not None

    def finished(self) -> list[GameResult]:
        return [r for r in self.results if r is not None]

    def begin(self, table: bytes) -> int:
        """A new game under table id ``table``: its number."""
        if self.between or not self.tables:
            self.tables.append(table)
            self.results.append(None)
        elif self.tables[-1] != table:  # (the first game's record, made again)
            self.tables[-1] = table
        self.save()
        return self.number

    def finish(self, result: GameResult) -> None:
        if self.results:
            self.results[-1] = result
            self.save()

    def end(self, reason: str) -> None:
        self.ended = reason or "ended"
        self.save()

    def forget_last(self) -> None:
        """The latest game never began here (its journal is missing): the series waits
        after the game before it."""
        if self.tables and self.results[-1] is None:
            self.tables.pop()
            self.results.pop()

    def save(self) -> None:
        data = json.dumps({"format": FORMAT, "ended": self.ended, "games": [
            {"table": t.hex(), "result": None if r is None else r.to_json()}
            for t, r in zip(self.tables, self.results, strict=True)]}, indent=1)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fresh = self.path.with_name(self.path.name + ".new")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(fresh, self.path)


@dataclass
class Place:
    """Where a peer's game stands in its series: the record (None: kept in memory
    only, as in the tests), the game's number, the first game's journal (the others'
    are named after it; None: this game's journal is the first), and what to do when a
    game is over."""

    series: Series | None = None
    number: int = 1
    first: Path | None = None
    on_over: GameOver | None = None


def where(first: Path, series: Series) -> tuple[Path, int]:
    """The journal to open for a peer started with the journal of the first game at
    ``first``, and its game's number: the latest game's live journal (resumed, over or
    not), else its finished one (the table waits between games); a new table's (the
    first game's) when the series has none."""
    while series.number > 0:
        number = series.number
        live = journal_path(first, number)
        if live.exists():
            return live, number
        if done_path(live).exists():
            return done_path(live), number
        if number == 1 or series.results[-1] is not None:
            break  # (its files are gone: a new table)
        series.forget_last()  # (it never began here: the table waits after the one before)
    series.tables, series.results = [], []
    return first, 1


def result_of(peer: Peer) -> GameResult:
    """How the game of ``peer`` ended, for the match score."""
    winner = peer.main.winner
    return GameResult(peer.roster.game, tuple(e.name for e in peer.roster.seats),
                      tuple(peer.main.totals),
                      tuple(winner) if isinstance(winner, list) else winner)


def settle(peer: Peer, journal: Journal) -> None:
    """A game over: its journal closed and kept as done (the same command then waits
    between games, or starts a new table), and no longer written (:class:`JournalError`
    if it cannot be written, or kept)."""
    journal.close()
    peer.journal = None
    if peer.over and journal.path.suffix == ".journal" and not journal.failed:
        move_journal(journal.path, done_path(journal.path))
