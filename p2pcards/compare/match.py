"""Our search against OpenSpiel's ISMCTS at equal wall time per move, OpenSpiel refereeing.

    python -m p2pcards.compare.match GAME --think SECONDS --deals N --seed S
        [--opponent python|cpp] [--sampler shipped|correct] [--ours NAME]
        [--uct-c C] [--rollouts random|policy] [--worlds native|pyspiel] [--jobs 1]

Every deal (OpenSpiel's chance outcomes, drawn from the seed) is played twice:
our search in seats 0 and 2 against OpenSpiel's bot in seats 1 and 3, then the
seats swapped -- in spades the two partnerships, in hearts two of each side
sitting alternately, so each seat's cards are played once by each side and each
side always has the other on its left and right.  OpenSpiel applies every move
and scores the deal.  The report gives points per deal and their paired
difference with a 95% interval, spades bids made exactly, and each side's
iterations per second.  Needs the optional extra: ``pip install -e ".[compare]"``.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from p2pcards.ai.endgame import Exact
from p2pcards.ai.ismcts import EXPLORATION, VARIANTS

from .rules import RULES


@dataclass(frozen=True)
class Config:
    game: str
    think: float
    deals: int
    seed: int
    opponent: str
    sampler: str
    ours: str
    uct_c: float
    jobs: int = 1
    no_pass: bool = False
    rollouts: str = "random"
    worlds: str = "native"


def parse(argv: Sequence[str] | None) -> Config:
    parser = argparse.ArgumentParser(
        prog="python -m p2pcards.compare.match",
        description="Our search against OpenSpiel's ISMCTS (duplicate deals, equal time).")
    parser.add_argument("game", choices=tuple(RULES))
    parser.add_argument("--think", type=float, required=True, help="seconds per move, each side")
    parser.add_argument("--deals", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--opponent", choices=("python", "cpp"), default="python")
    parser.add_argument("--sampler", choices=("shipped", "correct"), default="correct",
                        help="the Python bot's worlds: OpenSpiel's resampler or our exact one")
    parser.add_argument("--ours", default="search",
                        help="our search function: search, pimc, or MODULE.FUNCTION of p2pcards.ai;"
                             " :VARIANT picks a variant (search:own, search:multiple), :c=X the"
                             " exploration constant (search:own:c=0.3), :e=N exact endgames at N"
                             " cards left (hearts' native worlds)")
    parser.add_argument("--rollouts", choices=("random", "policy"), default="random",
                        help="our rollouts: uniformly random moves (as OpenSpiel's bots) or a"
                             " player's card sense (p2pcards/compare/policy.py)")
    parser.add_argument("--worlds", choices=("native", "pyspiel"), default="native",
                        help="our hearts worlds without passing: OpenSpiel's rules in pure"
                             " Python (p2pcards/compare/fasthearts.py) or OpenSpiel's own states"
                             " (spades and passing deals always use OpenSpiel's)")
    parser.add_argument("--uct-c", type=float, default=None,
                        help="OpenSpiel's exploration constant (default: ours in its units)")
    parser.add_argument("--no-pass", action="store_true",
                        help="hearts without passing (OpenSpiel's pass_cards=False)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="deals played at once (time budgets are fair only at 1 on an "
                             "idle machine)")
    args = parser.parse_args(argv)
    rules = RULES[args.game]
    if args.think <= 0 or args.deals <= 0 or args.jobs <= 0:
        parser.error("--think, --deals and --jobs must be positive")
    if not rules.resampler and args.opponent == "python" and args.sampler == "shipped":
        parser.error(f"OpenSpiel's {rules.name} has no resampler (ResampleFromInfostate is not "
                     "implemented): run the Python bot with --sampler correct")
    if not rules.resampler and args.opponent == "cpp":
        parser.error(f"OpenSpiel's C++ ISMCTS cannot play {rules.name}: the game has no "
                     "resampler and the bot's Python binding takes none")
    if args.opponent == "cpp" and args.sampler == "correct":
        parser.error("the C++ bot's Python binding has no set_resampler: use --sampler shipped")
    if rules.passing and args.sampler == "shipped" and not args.no_pass:
        parser.error(f"OpenSpiel's {rules.name} resampler breaks its worlds while cards are "
                     "being passed (it replays the cards passed to the searcher, unseen yet, "
                     "from a seat that may not hold them): the Python bot fails and the C++ bot "
                     "crashes; add --no-pass, or use --sampler correct")
    if not rules.passing and args.no_pass:
        passing = " and ".join(r.name for r in RULES.values() if r.passing)
        parser.error(f"--no-pass is for {passing}")
    if any(option.startswith("e=") for option in args.ours.split(":")[1:]) and not (
            args.game == "hearts" and args.no_pass and args.worlds == "native"):
        parser.error(f"--ours {args.ours}: exact endgames solve hearts' native worlds only"
                     " (hearts --no-pass, --worlds native); OpenSpiel's states are not solved")
    uct_c = args.uct_c if args.uct_c is not None else EXPLORATION * rules.exploration_unit
    config = Config(args.game, args.think, args.deals, args.seed, args.opponent, args.sampler,
                    args.ours, uct_c, args.jobs, args.no_pass, args.rollouts, args.worlds)
    try:
        our_search(config.ours)
    except ValueError as error:
        parser.error(str(error))
    return config


def our_search(name: str) -> Callable[..., Any]:
    """Our search function by name: ``search`` and ``pimc`` of ``p2pcards.ai.ismcts``, or
    ``MODULE.FUNCTION`` of ``p2pcards.ai`` (called as ``f(view, rng, seconds=...)``); a
    suffix ``:VARIANT`` passes ``variant=VARIANT`` (``search:own``, ``search:multiple``),
    ``:c=X`` the exploration constant (``search:own:c=0.3``) and ``:e=N`` exact
    endgames: each world solved once at most N cards are left to play, in the worlds
    that can be (hearts' native worlds; :mod:`p2pcards.ai.endgame`)."""
    name, *options = name.split(":")
    settings: dict[str, Any] = {}
    endgame = 0
    for option in options:
        if option.startswith("e="):
            try:
                endgame = int(option[2:])
            except ValueError:
                raise ValueError(f"--ours {name}:{option}: e must be a whole number of cards"
                                 ) from None
            if not 1 <= endgame <= 52:
                raise ValueError(f"--ours {name}:{option}: e must be from 1 to 52")
        elif option.startswith("c="):
            try:
                settings["exploration"] = float(option[2:])
            except ValueError:
                raise ValueError(f"--ours {name}:{option}: c must be a number") from None
            if not 0 <= settings["exploration"] <= 100:
                raise ValueError(f"--ours {name}:{option}: c must be from 0 to 100")
        elif option in VARIANTS:
            settings["variant"] = option
        else:
            raise ValueError(f"--ours {name}:{option}: no search {option!r} (searches:"
                             f" {', '.join(VARIANTS)}; or c=X, e=N)")
    if endgame:
        rest = ":".join([name, *(o for o in options if not o.startswith("e="))])
        return functools.partial(_solving, our_search(rest), endgame)
    if settings:
        return functools.partial(our_search(name), **settings)
    module, _, function = name.rpartition(".")
    module = module or "ismcts"
    try:
        found = getattr(importlib.import_module(f"p2pcards.ai.{module}"), function)
    except (ImportError, AttributeError):
        raise ValueError(f"--ours {name!r}: no function {function!r} in p2pcards.ai.{module}"
                         ) from None
    if not callable(found):
        raise ValueError(f"--ours {name!r} is not a function")
    return found  # type: ignore[no-any-return]


def _solving(search: Callable[..., Any], limit: int, view: Any, rng: random.Random,
             **settings: Any) -> Any:
    """``search`` with exact endgames at ``limit`` cards left (a solver, and its table of
    positions, for each search)."""
    return search(view, rng, policy=Exact(limit), **settings)


class Ours:
    """Our search playing from its own view."""

    def __init__(self, config: Config, rng: random.Random):
        from .adapters import CardTable  # noqa: PLC0415 (open_spiel is optional)
        from .tally import SideStats  # noqa: PLC0415

        self.table = CardTable
        self.search = our_search(config.ours)
        self.think = config.think
        self.rollouts = config.rollouts
        self.worlds = config.worlds
        self.rng = rng
        self.stats = SideStats()

    def step(self, state: Any) -> int:
        view = self.table.view(state, state.current_player(), self.rollouts, self.worlds)
        result = self.search(view, self.rng, seconds=self.think)
        self.stats.iterations += result.iterations
        self.stats.search_seconds += result.seconds
        return int(result.action)


class Theirs:
    """OpenSpiel's bot (Python or C++)."""

    def __init__(self, config: Config, game: Any, seed: int):
        from . import opponents  # noqa: PLC0415
        from .tally import SideStats  # noqa: PLC0415

        observation = not RULES[config.game].information_state
        self.stats = SideStats()
        self.cpp: Any = None
        self.python: Any = None
        if config.opponent == "cpp":
            self.cpp = opponents.CppISMCTS(config.think, config.uct_c, seed, observation)
        else:
            self.python = opponents.TimedPythonISMCTS(game, config.think, config.uct_c, seed,
                                                      observation)
            if config.sampler == "correct":
                self.python.set_resampler(opponents.exact_resampler(random.Random(seed)))

    def step(self, state: Any) -> int:
        if self.cpp is not None:
            return int(self.cpp.step(state))
        return int(self.python.step(state))

    def finish(self) -> None:
        if self.cpp is not None:
            self.stats.iterations = self.cpp.calibrated
            self.stats.search_seconds = self.cpp.calibration_seconds
        else:
            self.stats.iterations = self.python.simulations
            self.stats.search_seconds = self.python.searched


def play_deal(config: Config, index: int) -> Any:
    """Both seatings of deal ``index``."""
    from .adapters import history_of, load, replay  # noqa: PLC0415
    from .rules import CARDS  # noqa: PLC0415
    from .tally import DealResult, GameRecord, tricks_taken  # noqa: PLC0415

    rules = RULES[config.game]
    game = load(config.game, passing=not config.no_pass)
    deal_rng = random.Random(f"deal {config.seed} {index}")
    state = game.new_initial_state()
    while state.is_chance_node():
        outcomes = state.legal_actions()
        state.apply_action(outcomes[deal_rng.randrange(len(outcomes))])
    chance = list(state.history())
    result = DealResult(index, [])
    for lineup, ours_seats in enumerate(((0, 2), (1, 3))):
        seed = random.Random(f"bots {config.seed} {index} {lineup}").randrange(2**31)
        ours = Ours(config, random.Random(seed))
        theirs = Theirs(config, game, seed + 1)
        state = replay(game, chance)
        while not state.is_terminal():
            player = state.current_player()
            side = ours if player in ours_seats else theirs
            if len(state.legal_actions()) == 1:
                state.apply_action(state.legal_actions()[0])
                continue
            start = time.perf_counter()
            action = side.step(state)
            side.stats.wall += time.perf_counter() - start
            side.stats.decisions += 1
            state.apply_action(action)
        theirs.finish()
        moves = history_of(state)[len(chance):]
        plays = [(p, a) for p, a in moves if rules.is_card(a)]
        if rules.bidding:
            bids = [0] * 4
            for p, a in moves:
                if not rules.is_card(a):
                    bids[p] = a - CARDS
        else:
            bids = []
        result.games.append(GameRecord(ours_seats, list(state.returns()), bids,
                                       tricks_taken(rules, plays)))
        result.ours.add(ours.stats)
        result.theirs.add(theirs.stats)
    return result


def header(config: Config, deals: int) -> str:
    """The report's first line: every setting of the run, and how many deals it played."""
    opponent = f"OpenSpiel {config.opponent} ISMCTS ({config.sampler} sampler, " \
        f"uct_c {config.uct_c:g})" + (", no passing" if config.no_pass else "")
    worlds = f", {config.worlds} worlds" if RULES[config.game].native_worlds else ""
    return (f"{config.game}: ours ({config.ours}, {config.rollouts} rollouts{worlds}) vs "
            f"{opponent}, {config.think:g} s per move, {deals} deals x 2 seatings, "
            f"seed {config.seed}")


def report(config: Config, results: list[Any]) -> list[str]:
    from .tally import SideStats, mean_ci, wilson  # noqa: PLC0415

    rules = RULES[config.game]
    unit = "penalty points per seat per deal (lower is better)" if rules.penalties else \
        "team points per deal"
    ours_pts = mean_ci([r.points(rules, True) for r in results])
    theirs_pts = mean_ci([r.points(rules, False) for r in results])
    margin = mean_ci([r.margin(rules) for r in results])
    lines = [
        header(config, len(results)),
        f"  {unit}: ours {ours_pts[0]:.2f} [{ours_pts[1]:.2f}, {ours_pts[2]:.2f}], "
        f"theirs {theirs_pts[0]:.2f} [{theirs_pts[1]:.2f}, {theirs_pts[2]:.2f}]",
        f"  our margin per deal (paired): {margin[0]:+.2f} [{margin[1]:+.2f}, {margin[2]:+.2f}]",
    ]
    if rules.bidding:
        parts = []
        for mine, name in ((True, "ours"), (False, "theirs")):
            hits = n = 0
            for r in results:
                for g in r.games:
                    h, k = g.exact_bids(mine)
                    hits, n = hits + h, n + k
            low, high = wilson(hits, n)
            parts.append(f"{name} {hits}/{n} = {hits / max(n, 1):.2f} [{low:.2f}, {high:.2f}]")
        lines.append("  bids made exactly (tricks == bid): " + ", ".join(parts))
    ours, theirs = SideStats(), SideStats()
    for r in results:
        ours.add(r.ours)
        theirs.add(r.theirs)
    measured = "calibration runs" if config.opponent == "cpp" else "its searches"
    lines.append(
        f"  iterations/s: ours {ours.rate:,.0f}, theirs {theirs.rate:,.0f} ({measured}); "
        f"wall s per searched move: ours {ours.per_move:.3f}, theirs {theirs.per_move:.3f}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    config = parse(argv)
    try:
        import pyspiel  # noqa: F401, PLC0415
    except ImportError:
        print("open_spiel is not installed: pip install -e \".[compare]\"", file=sys.stderr)
        return 2
    rules = RULES[config.game]
    indices = range(config.deals)
    results = []
    played: Iterable[Any]
    if config.jobs > 1:
        with ProcessPoolExecutor(max_workers=config.jobs) as pool:
            played = list(pool.map(play_deal, [config] * config.deals, indices))
    else:
        played = (play_deal(config, i) for i in indices)
    for result in played:
        results.append(result)
        print(f"deal {result.index}: ours {result.points(rules, True):.1f}, theirs "
              f"{result.points(rules, False):.1f}, margin {result.margin(rules):+.1f}",
              flush=True)
    for line in report(config, results):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
