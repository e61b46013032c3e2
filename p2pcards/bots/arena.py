"""``p2pcards arena``: bots against bots, over duplicate deals or whole games.

Every bot sees only its own seat's view.  With ``deals`` each deal is played
twice with the line-up moved round by one seat (duplicate play: in the
partnership games the two partnerships swap cards), so the luck of the deal
cancels out, and a set is won by the bot that scored most over its plays (as a
duplicate board is won against the other table's score on the same cards);
otherwise whole games are played with the line-up rotated by one seat from
game to game.  The report gives, per bot, wins, points and (in
Nullern) how often its bids were met, with 95% confidence intervals.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from p2pcards.ai.parallel import sigint_ignored, stop_pools, worker_signals
from p2pcards.bots import Bot, SearchBot, make_bot, parse_options
from p2pcards.bots.arenalog import ResultsFile, SetResult, Setup, Tally
from p2pcards.games import CHANCE, GAMES, Game, HandState, get_game
from p2pcards.games.game import DealSetup
from p2pcards.history import HandRecord, History
from p2pcards.local import LocalGame

__all__ = ["SetSpec", "Setup",  # (Setup: arenalog.py, which records it)
           "check_lineup", "format_report", "plan", "play_deal", "play_set", "play_set_kept",
           "progress_bar",
           "report", "rotations", "run"]


def play_deal(setup: DealSetup, deck: Sequence[int], bots: Sequence[Bot],
              chance: random.Random, rng: random.Random) -> tuple[HandState, HandRecord]:
    """One deal with ``bots[seat]`` in each seat, every bot deciding from its own view.

    Chance draws from ``chance`` alone, so the two plays of a duplicate deal see
    the same controls, steals and reshuffles; the bots draw from ``rng``.
    """
    state = setup.deal(deck)
    record = HandRecord(setup.dealer, [setup.game.notation.name(c) for c in deck])
    while not state.is_terminal():
        seat = state.current_player()
        if seat == CHANCE:
            action = state.chance_action(chance)
            record.actions.append(("chance", state.format_action(action)))
        else:
            forced = state.forced_action()
            action = forced if forced is not None else bots[seat](state.view(seat), rng)
            record.actions.append((seat, state.format_action(action)))
        state.apply(action)
    return state, record


def check_lineup(game: Game, lineup: Sequence[str]) -> None:
    """Partners play the same bot: a bot on both sides of a partnership game has no score."""
    if game.units == "teams":
        for seat in range(2):
            if lineup[seat] != lineup[seat + 2]:
                raise ValueError(f"partners play the same bot: seats {seat} and {seat + 2} have "
                                 f"{lineup[seat]} and {lineup[seat + 2]}")
        if lineup[0] == lineup[1]:
            raise ValueError("the two partnerships play the same bot: nothing to compare")


def rotations(game: Game, players: int) -> tuple[int, ...]:
    """Seat shifts of a duplicate deal: the partnerships swap, or every seat takes every
    hand (each deal is then played once per seat)."""
    return (0, 1) if game.units == "teams" or players == 2 else tuple(range(players))


@dataclass(frozen=True)
class SetSpec:
    """One observation of the arena: a duplicate deal set, or one whole game."""

    n: int
    deck: tuple[int, ...] = ()
    dealer: int = 0
    number: int = 0
    shifts: tuple[int, ...] = (0,)


_BOTS: dict[tuple[str, int | None, float | None], Bot] = {}
"""The bots of this process, kept across sets (a search bot counts its iterations)."""


def _bot(kind: str, iterations: int | None, think: float | None) -> Bot:
    key = (kind, iterations, think)
    if key not in _BOTS:
        _BOTS[key] = make_bot(kind, iterations, think)
    return _BOTS[key]


def _counters(setup: Setup) -> dict[str, tuple[int, float]]:
    counts = {}
    for kind in set(setup.lineup):
        bot = _bot(kind, setup.iterations, setup.think)
        if isinstance(bot, SearchBot):
            counts[kind] = (bot.done, bot.seconds)
    return counts


def play_set(setup: Setup, spec: SetSpec) -> SetResult:
    """Play one set; return each bot's tally and the iterations and seconds it searched
    (its hand histories written into ``setup.save``, if given).

    Everything random in a set follows from the arena's seed and the set's number,
    so a set's result does not depend on which process plays it.
    """
    result, histories = play_set_kept(setup, spec)
    for name, text in histories:
        assert setup.save is not None
        with open(os.path.join(setup.save, name), "w", encoding="utf-8") as f:
            f.write(text)
    return result


def play_set_kept(setup: Setup, spec: SetSpec) -> tuple[SetResult, list[tuple[str, str]]]:
    """:func:`play_set`, its hand histories returned (file name, text) rather than
    written, where ``setup.save`` asks for them: for a process on another machine,
    whose caller keeps them (``arena --cluster``)."""
    game = GAMES[setup.game]
    histories = []
    lineup, players = setup.lineup, len(setup.lineup)
    options = game.resolve_options({})
    before = _counters(setup)
    pair = {kind: Tally() for kind in sorted(set(lineup))}
    for shift in spec.shifts:
        seated = [lineup[(seat - shift) % players] for seat in range(players)]
        seat_bots = [_bot(k, setup.iterations, setup.think) for k in seated]
        if setup.deals:
            state, record = play_deal(
                DealSetup(game, players, options, spec.dealer, spec.number), spec.deck,
                seat_bots, random.Random(f"arena:{setup.seed}:{spec.n}:chance"),
                random.Random(f"arena:{setup.seed}:{spec.n}:{shift}"))
            _score_deal(game, state, seated, pair)
            history = History(game.name, seated, game.non_default(options), [record])
        else:
            table = LocalGame(game, players, options, setup.seed * 100_003 + spec.n, names=seated)
            history = table.play(seat_bots)
            _score_game(game, table, seated, pair)
        if setup.save:
            histories.append((f"{game.name}-{spec.n:04d}-{shift}.json", history.dumps()))
    after = _counters(setup)
    searched = {kind: (done - before[kind][0], secs - before[kind][1])
                for kind, (done, secs) in after.items()}
    return (pair, searched), histories


def plan(game: Game, count: int, seed: int, deals: bool, players: int) -> list[SetSpec]:
    """The sets of an arena run, drawn in order from the seed."""
    if not deals:
        return [SetSpec(n, shifts=(n % players,)) for n in range(count)]
    options = game.resolve_options({})
    rng = random.Random(f"arena:{seed}")
    specs = []
    for n in range(count):
        deck = game.shuffled_deck(players, options, rng)
        while game.is_void_deal(deck, players):  # a deal that counts
            deck = game.shuffled_deck(players, options, rng)
        dealer = rng.randrange(players)
        number = rng.randrange(game.numbered_deals) if game.numbered_deals > 1 else 0
        specs.append(SetSpec(n, tuple(deck), dealer, number, rotations(game, players)))
    return specs


def run(setup: Setup, count: int, *, jobs: int = 1, results: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        say: Callable[[str], None] | None = None, cluster: str | None = None
        ) -> dict[str, Any]:
    """Play ``count`` sets of the arena ``setup`` and return its report (see
    :func:`report`).

    ``jobs`` processes play the sets side by side; with an iteration budget the
    report is the same for any number of jobs.  ``cluster``: the address of a Dask
    scheduler whose workers play them instead (:mod:`p2pcards.bots.cluster`: the same
    sets, results and report).  ``results``: a results file
    (:mod:`p2pcards.bots.arenalog`) that keeps each set as it ends; the sets it
    already holds are not played again, and the report is the same as a run's
    in one sitting.  ``say`` hears how many sets the file already held.
    """
    game = get_game(setup.game)
    lineup, seed, deals, save = setup.lineup, setup.seed, setup.deals, setup.save
    players = len(lineup)
    game.check_players(players)
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, not {jobs}")
    check_lineup(game, lineup)
    if deals and save and game.numbered_deals > 1:
        raise ValueError(f"a {game.title} hand history holds whole games (a deal depends on "
                         "its place in the game): use whole games to keep histories")
    for kind in set(lineup):
        make_bot(kind, setup.iterations, setup.think)  # an unknown bot fails here, first
    specs = plan(game, count, seed, deals, players)
    if save:
        os.makedirs(save, exist_ok=True)
    store = ResultsFile(results, setup) if results else None
    kept = store.load() if store else {}
    played: list[SetResult | None] = [kept.get(n) for n in range(count)]
    todo = [spec for spec in specs if played[spec.n] is None]
    done = count - len(todo)
    if store and kept and say:
        say(f"arena: {done} of the {count} sets are in {results}; {len(todo)} to play")

    def finished(n: int, result: SetResult) -> None:
        nonlocal done
        played[n] = result
        done += 1
        if store:
            store.append(n, result)
        if progress:
            progress(done, count)

    if cluster is not None:
        if todo:
            from p2pcards.bots.cluster import play_on  # noqa: PLC0415 (an optional extra)

            play_on(cluster, setup, todo, play=play_set_kept, finished=finished, say=say)
    elif jobs == 1:
        for spec in todo:
            finished(spec.n, play_set(setup, spec))
    elif todo:
        # Ctrl-C is the arena's alone: its workers ignore it (from their start), and
        # stop at once when it comes (or anything else ends the run); the sets kept
        # in ``results`` are the ones that ended.
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=worker_signals)
        try:
            with sigint_ignored():  # each submission may start a worker
                futures = {pool.submit(play_set, setup, spec): spec.n for spec in todo}
            for future in as_completed(futures):
                finished(futures[future], future.result())
        except BaseException:
            stop_pools([pool])
            raise
        pool.shutdown()
    kinds = sorted(set(lineup))
    tallies = {kind: Tally() for kind in kinds}
    searched: dict[str, list[float]] = {}
    for result in played:
        assert result is not None
        pair, spent = result
        means = {kind: statistics.fmean(tally.points) for kind, tally in pair.items()}
        leaders = [kind for kind, mean in means.items() if mean == max(means.values())]
        for kind, tally in pair.items():  # a duplicate set is one observation
            total = tallies[kind]
            total.seats |= tally.seats
            if deals:  # duplicate: won by the best score on the same cards
                total.wins.append(1.0 / len(leaders) if kind in leaders else 0.0)
            else:
                total.wins.append(statistics.fmean(tally.wins))
            total.points.append(means[kind])
            total.bids += tally.bids
            total.exact += tally.exact
        for kind, (done, secs) in spent.items():
            acc = searched.setdefault(kind, [0.0, 0.0])
            acc[0] += done
            acc[1] += secs
    rates = {kind: round(done / secs, 1) for kind, (done, secs) in searched.items() if secs}
    return report(game, count, tallies, rates, deals)


def _units_of(game: Game, seated: Sequence[str], kind: str, players: int) -> list[int]:
    units = {seat % 2 if game.units == "teams" else seat
             for seat in range(players) if seated[seat] == kind}
    return sorted(units)


def _score_deal(game: Game, state: HandState, seated: Sequence[str],
                tallies: dict[str, Tally]) -> None:
    points = state.points()
    players = len(seated)
    means = {kind: statistics.fmean(points[u] for u in _units_of(game, seated, kind, players))
             for kind in tallies if kind in seated}
    for kind, tally in tallies.items():  # the set's winner is decided over all its plays
        if kind not in means:
            continue
        tally.seats.update(s for s in range(players) if seated[s] == kind)
        tally.points.append(means[kind])
        _count_bids(game, [state], seated, kind, tally)


def _score_game(game: Game, table: LocalGame, seated: Sequence[str],
                tallies: dict[str, Tally]) -> None:
    players = len(seated)
    winners = table.winner if isinstance(table.winner, list) else (
        [] if table.winner is None else [table.winner])
    for kind, tally in tallies.items():
        units = _units_of(game, seated, kind, players)
        if not units:
            continue
        tally.seats.update(s for s in range(players) if seated[s] == kind)
        tally.points.append(statistics.fmean(table.totals[u] for u in units))
        shared = [u for u in winners if u in units]
        tally.wins.append(len(shared) / len(winners) if winners else 0.0)
        _count_bids(game, table.finished, seated, kind, tally)


def _count_bids(game: Game, states: Sequence[HandState], seated: Sequence[str], kind: str,
                tally: Tally) -> None:
    """In a game of exact bids (Nullern, ``Capabilities.exact_bids``): how many of this
    bot's bids were met exactly."""
    if not game.capabilities.exact_bids:
        return
    for state in states:
        exact = state.exact_bids()
        for seat, bot in enumerate(seated):
            if bot == kind:
                tally.bids += 1
                tally.exact += exact[seat]


def _mean_ci(values: Sequence[float]) -> tuple[float, list[float]]:
    if not values:
        return 0.0, [0.0, 0.0]
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, [mean, mean]
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return mean, [round(mean - half, 4), round(mean + half, 4)]


def _wilson(rate: float, n: int) -> list[float]:
    """95% Wilson interval of a rate over ``n`` trials (stays inside [0, 1])."""
    if not n:
        return [0.0, 0.0]
    z = 1.96
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def report(game: Game, count: int, tallies: dict[str, Tally], rates: dict[str, float],
           deals: bool) -> dict[str, Any]:
    """``{"game", "games", "per", "entries": [...], "difference"}`` as ``--json`` prints it.

    With two bots, ``difference`` is the first bot's points minus the second's, set
    by set (paired: both played the same cards), with its 95% interval, and how
    many sets the first scored more, the same, less.
    """
    entries = []
    for kind, tally in tallies.items():
        win_rate = statistics.fmean(tally.wins) if tally.wins else 0.0
        win_ci = _wilson(win_rate, len(tally.wins))
        points, points_ci = _mean_ci(tally.points)
        entries.append({
            "bot": kind, "seats": sorted(tally.seats), "wins": sum(tally.wins),
            "win_rate": round(win_rate, 4), "win_rate_ci95": win_ci,
            "points_per_game": round(points, 4), "points_ci95": points_ci,
            "exact_bid_rate": round(tally.exact / tally.bids, 4) if tally.bids else None,
            "iterations_per_s": rates.get(kind),
        })
    difference = None
    if len(tallies) == 2:
        (first, a), (second, b) = sorted(tallies.items(), key=_search_first)
        diffs = [x - y for x, y in zip(a.points, b.points, strict=True)]
        mean, ci = _mean_ci(diffs)
        difference = {"bots": [first, second], "points": round(mean, 4), "points_ci95": ci,
                      "won": sum(d > 0 for d in diffs), "tied": sum(d == 0 for d in diffs),
                      "lost": sum(d < 0 for d in diffs)}
    return {"game": game.name, "games": count, "per": "deal" if deals else "game",
            "entries": entries, "difference": difference}


def _search_first(item: tuple[str, Tally]) -> tuple[int, int, str]:
    """The order of a difference: the stronger kind of bot first (the searches modelling
    each player, ismcts, pimc, heuristic, random; a bot named with ``i=`` or ``e=``
    before the same bot without: the candidate minus the game's default; a bot with
    its own ``:c=`` after the same bot without)."""
    order = ("ismcts-backoff", "ismcts-own", "ismcts-mo", "ismcts", "ismcts-full", "pimc",
             "heuristic", "random")
    options = parse_options(item[0])
    name = options.name
    added = 0 if options.infer is not None or options.endgame else 1
    return (order.index(name) if name in order else len(order), added, item[0])


def format_report(result: dict[str, Any]) -> str:
    per = result["per"]
    lines = [f"{result['game']}: {result['games']} {per}{'s' if result['games'] != 1 else ''}"
             + (" (each played twice, seats swapped)" if per == "deal" else "")]
    for e in result["entries"]:
        lo, hi = e["points_ci95"]
        wlo, whi = e["win_rate_ci95"]
        line = (f"  {e['bot']:<10} seats {','.join(map(str, e['seats']))}: wins {e['wins']:g} "
                f"({e['win_rate']:.1%}, 95% CI {wlo:.1%} to {whi:.1%}), points per {per} "
                f"{e['points_per_game']:.2f} (95% CI {lo:.2f} to {hi:.2f})")
        if e["exact_bid_rate"] is not None:
            line += f", exact bids {e['exact_bid_rate']:.1%}"
        if e["iterations_per_s"]:
            line += f", {e['iterations_per_s']:,.0f} iterations/s"
        lines.append(line)
    diff = result.get("difference")
    if diff:
        lo, hi = diff["points_ci95"]
        lines.append(f"  {diff['bots'][0]} - {diff['bots'][1]}: {diff['points']:+.2f} points per "
                     f"{per} (95% CI {lo:+.2f} to {hi:+.2f}); {diff['bots'][0]} scored more in "
                     f"{diff['won']}, the same in {diff['tied']}, less in {diff['lost']}")
    return "\n".join(lines)


def progress_bar(done: int, total: int) -> None:
    """A bar on a terminal; elsewhere (a log file) a line at each tenth of the sets."""
    if sys.stderr.isatty():
        width = 30
        filled = width * done // total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
    elif done * 10 // total > (done - 1) * 10 // total:
        sys.stderr.write(f"arena: {done}/{total} sets played\n")
    sys.stderr.flush()
