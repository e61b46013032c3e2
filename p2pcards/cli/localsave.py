"""A local game kept on disk as it goes, so that a slip loses nothing.

``p2pcards play GAME`` writes its game after every move to one file per game
(``local/GAME.json`` in the data directory, beside the networked tables'
journals): which seat the person holds, the bots of the other seats, and the
hand history so far, the deal in progress included.  Ctrl-D, ``quit``, a closed
terminal or a crash leave the file; the same command then offers to resume the
game where it stopped (the deal in progress replayed through the rules); a game
played to its end removes it.  The file holds the cards of the deal in
progress: it is the person's own machine and the bots' game, as an open hand
history would be (docs/playing.md).

A file that cannot be resumed (damaged, another version, another game, a bot
this version lacks, a deal the rules refuse) is said in one line naming the
file and what is wrong, and moved aside (``GAME.json.unreadable``, numbered so
that nothing earlier is overwritten); a new game begins.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p2pcards.bots import make_bot
from p2pcards.games import GAMES
from p2pcards.history import History, HistoryFormatError, ReplayError, from_json, replay
from p2pcards.local import LocalGame
from p2pcards.net.identity import data_dir

KIND = "p2pcards-local-game/1"
MAX_BYTES = 16 * 1024 * 1024
"""A kept game larger than this is not read (Nullern's twenty deals take about 60 KB)."""


class SavedGameError(ValueError):
    """A kept game that cannot be resumed; the message names the file and the fault."""


@dataclass(slots=True)
class SavedGame:
    """An unfinished local game as kept: the person's seat, each seat's bot (None: the
    person's), and the hand history so far."""

    seat: int
    bots: list[str | None]
    history: History

    def table(self, seed: int) -> LocalGame:
        """The table as it stood, the deal in progress replayed through the rules; the
        deals still to come are shuffled from ``seed``."""
        return restore(self.history, seed)

    def describe(self, names: list[str] | None = None) -> str:
        """``Bid Whist, deal 3 under way: team 0 (you & cy) 120, team 1 (ben & dee) 80``."""
        game = GAMES[self.history.game]
        result = replay(self.history)
        names = names or self.history.players
        hands = len(self.history.hands)
        scores = ", ".join(f"{game.unit_name(u, names)} {t}" for u, t in enumerate(result.totals))
        under_way = hands and result.hands and result.hands[-1].points is None \
            and not self.history.hands[-1].void
        where = f"deal {hands} under way" if under_way else f"{hands} deals played"
        return f"{game.title}, {where}: {scores}"


def path_for(game: str) -> Path:
    """Where ``play GAME`` keeps its unfinished game."""
    return data_dir() / "local" / f"{game}.json"


def write(path: Path, table: LocalGame, seat: int, bots: list[str | None]) -> None:
    """Keep ``table`` (atomically: the file is whole, the old one or the new one)."""
    doc = {"kind": KIND, "seat": seat, "bots": bots, "history": table.history.to_json()}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    os.replace(partial, path)


def remove(path: Path) -> None:
    """The game is over (or the person starts afresh): nothing to resume."""
    path.unlink(missing_ok=True)


def read(path: Path) -> SavedGame:
    """The kept game at ``path``; :class:`SavedGameError` names what is wrong."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise SavedGameError(f"{path}: larger than {MAX_BYTES // 2**20} MB")
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SavedGameError(f"{path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise SavedGameError(f"{path}: not a kept game ({type(exc).__name__})") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise SavedGameError(f"{path}: not a kept game of this version ({KIND})")
    try:
        history = from_json(doc.get("history"))
    except HistoryFormatError as exc:
        raise SavedGameError(f"{path}: its hand history: {exc}") from None
    if history.game != path.stem:
        raise SavedGameError(f"{path}: it keeps a game of {history.game}, not {path.stem}")
    players = len(history.players)
    seat, bots = doc.get("seat"), doc.get("bots")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < players:
        raise SavedGameError(f"{path}: 'seat' is not a seat of its {players}")
    if not isinstance(bots, list) or len(bots) != players or not all(
            (b is None) == (s == seat) and (b is None or (isinstance(b, str) and len(b) < 200))
            for s, b in enumerate(bots)):
        raise SavedGameError(f"{path}: 'bots' does not name a bot for each other seat")
    for kind in bots:
        if kind is not None:
            try:
                make_bot(kind)
            except ValueError as exc:
                raise SavedGameError(f"{path}: {exc}") from None
    try:
        result = replay(history)
    except (ReplayError, HistoryFormatError) as exc:
        raise SavedGameError(f"{path}: its deals do not replay: {exc}") from None
    if result.winner is not None:
        raise SavedGameError(f"{path}: its game is over")
    return SavedGame(seat, bots, history)


def restore(history: History, seed: int) -> LocalGame:
    """A :class:`LocalGame` standing where ``history`` stops (replayed: it must replay)."""
    game = GAMES[history.game]
    result = replay(history)
    table = LocalGame(game, len(history.players), history.options, seed, names=history.players)
    table.history = history
    scored = [(k, h.state) for k, h in enumerate(result.hands, 1)
              if h.points is not None and h.state]
    table.numbers = [k for k, _ in scored]
    table.finished = [state for _, state in scored]
    table.totals[:] = result.totals
    table.deals = sum(h.points is not None for h in result.hands)
    table.winner = result.winner
    if not history.hands:
        return table
    last, outcome = history.hands[-1], result.hands[-1]
    if outcome.points is None and not last.void and outcome.state is not None \
            and not outcome.state.is_terminal():
        table.state, table.record, table.dealer = outcome.state, last, last.dealer
    else:
        table.dealer = game.next_dealer(last.dealer, table.players, last.void)
    return table


@dataclass(slots=True)
class Keeper:
    """Keeps one local game as it goes (:func:`write` after every step)."""

    path: Path
    seat: int
    bots: list[str | None]
    broken: str | None = None
    """Why the last write failed (said once; play goes on)."""

    def keep(self, table: LocalGame) -> str | None:
        """Write the game; a line to tell the person when keeping it has just failed
        (a full disk, a directory not writable), else None."""
        try:
            write(self.path, table, self.seat, self.bots)
        except OSError as exc:
            first = self.broken is None
            self.broken = exc.strerror or str(exc)
            return f"cannot keep the game in {self.path}: {self.broken}" if first else None
        self.broken = None
        return None

    def finished(self) -> None:
        """The game is over: nothing to resume."""
        with contextlib.suppress(OSError):
            remove(self.path)


class Unanswered(Exception):
    """Whether to resume was asked where nobody can answer (no terminal, Ctrl-D)."""


def set_aside(path: Path, suffix: str) -> Path:
    """Move a kept game out of the way, deleting nothing: ``GAME.json.SUFFIX``, or
    ``GAME.json.SUFFIX.2`` and on when that is taken."""
    aside = path.with_name(f"{path.name}.{suffix}")
    number = 1
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.{suffix}.{number}")
    os.replace(path, aside)
    return aside


def choose(game: str, ask: Callable[[str], str], *, new: bool = False, resume: bool = False,
           say: Callable[[str], None] = print) -> SavedGame | None:
    """The kept game of ``game`` to resume, or None for a new game.  ``--resume`` takes
    it, ``--new`` sets it aside, else ``ask`` asks (Enter or yes: resume; :class:`EOFError`
    from ``ask``: :class:`Unanswered`).  A kept game that cannot be resumed is set aside,
    said, and a new game begins."""
    path = path_for(game)
    if not path.exists():
        if resume:
            say(f"no unfinished game of {game} is kept ({path}): a new game begins")
        return None
    try:
        saved = read(path)
    except SavedGameError as exc:
        say(f"p2pcards: cannot resume the kept game: {exc}; moved to "
            f"{set_aside(path, 'unreadable')}; a new game begins")
        return None
    if new:
        say(f"the unfinished game ({saved.describe()}) is set aside in {set_aside(path, 'old')}")
        return None
    if not resume:
        try:
            answer = ask(f"an unfinished game: {saved.describe()}. Resume it? [Y/n] ")
        except EOFError:
            raise Unanswered(f"an unfinished game of {game} is kept in {path}: say --resume "
                             "to resume it or --new to begin another") from None
        if answer.strip().lower() not in ("", "y", "yes"):
            say(f"a new game begins; the unfinished one is set aside in "
                f"{set_aside(path, 'old')}")
            return None
    say(f"resuming: {saved.describe()} (its seats, bots and options)")
    return saved
