"""``p2pcards host``, ``join``, ``lan`` and ``id``: tables over the network."""

from __future__ import annotations

import argparse
import errno
import getpass
import json
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import trio

from p2pcards.bots import (
    BOT_NAMES,
    SEARCH_SECONDS,
    Bot,
    RootParallel,
    SearchBot,
    default_think,
    default_workers,
    make_bot,
    share_pool,
    unsplit_games,
)
from p2pcards.cli import outputs
from p2pcards.cli.netrepl import NetPrompt
from p2pcards.cli.netrun import (
    EXIT_AWAY,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    SIGNALS,
    ask_yes,
    fail,
    game_outputs,
    leaf,
    positive_seconds,
    run_table,
    show_line,
)
from p2pcards.cli.netshow import PACE, PAUSE
from p2pcards.cli.reachopts import (
    dial_of,
    invite_lines,
    port_number,
    socks_proxy,
    tor_control,
    tor_of,
)
from p2pcards.cli.watchcmd import cmd_watch
from p2pcards.games import GAMES, OptionError
from p2pcards.games.game import Game
from p2pcards.net import lan
from p2pcards.net.driver import Driver, Settings
from p2pcards.net.frames import MAX_WATCHERS
from p2pcards.net.identity import (
    Friends,
    IdentityError,
    data_dir,
    encode_id,
    load_or_create,
    show_id,
    write_private_text,
)
from p2pcards.net.journal import Journal, JournalError
from p2pcards.net.links import socket_reason
from p2pcards.net.lobby import arrived
from p2pcards.net.peer import Peer
from p2pcards.net.portmap.mapper import PortmapConfig
from p2pcards.net.series import (
    GameOver,
    Place,
    Series,
    done_path,
    match_lines,
    move_journal,
    numbered,
    result_of,
    where,
)
from p2pcards.net.tor import TorError
from p2pcards.net.watchers import DEFAULT_WATCHERS
from p2pcards.table.kinds import printable
from p2pcards.table.roster import DEFAULT_DECK, LOCK_DECK, MAX_NAME, PROVED_DECK

DEFAULT_PORT = 45450


def add_parsers(sub: Any, option_pair: Callable[[str], tuple[str, int]]) -> None:
    host = sub.add_parser("host", help="host a table on the network and print its invite",
                          description="Host a table: print an invite (address, fingerprint, "
                          "one-time token) and wait for the players it names. Started again "
                          "with the same command, an unfinished table resumes.")
    host.add_argument("game", choices=sorted(GAMES))
    host.add_argument("--players", type=int, help="seats (default: the game's usual)")
    host.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                      help=f"TCP port to listen on, 1 to 65535 (default {DEFAULT_PORT})")
    host.add_argument("--bind", default=None,
                      help="address to listen on (default every address, IPv4 and IPv6;"
                      " 127.0.0.1: this machine only)")
    host.add_argument("--address", help="the one address the invite names (default: the"
                      " addresses this machine can be reached at, found by itself)")
    host.add_argument("--bots", type=int, default=0, metavar="K", help="bots this peer runs")
    host.add_argument("--bots-kind", default="ismcts", choices=BOT_NAMES, metavar="KIND",
                      help="the kind of the --bots this peer runs (default ismcts;"
                      " ismcts, heuristic, random or pimc; the experimental searches:"
                      " docs/bots.md)")
    host.add_argument("--grace", type=float, default=300.0,
                      help="seconds a seat may keep the table waiting before it forfeits"
                      " the deal (default 300)")
    host.add_argument("--timer", type=positive_seconds, default=0.0, metavar="SECONDS",
                      help="turn timer, more than 0 seconds: a person's move is played for"
                      " them when it runs out (default: none)")
    host.add_argument("--hint", action="store_true", help="allow 'hint' at this table")
    host.add_argument("--replace", default="heuristic", choices=(*BOT_NAMES, "none"),
                      metavar="KIND",
                      help="the bot that takes the seat of a player gone silent, from the next"
                      " deal until the player is back (default heuristic; none: the seat"
                      " forfeits each deal instead)")
    host.add_argument("--deck", default=DEFAULT_DECK, choices=(PROVED_DECK, LOCK_DECK),
                      help="the deck every deal uses: proved (each step proved, a cheat refused"
                      " before any card it touched opens, the cards never played kept secret;"
                      " the default) or lock (the older commit-reveal deck, every card"
                      " revealed and audited after each deal: for players whose p2pcards is"
                      " older and knows only it)")
    host.add_argument("--watchers", type=int, default=DEFAULT_WATCHERS, metavar="N",
                      help="the most people who may watch with no seat (join --watch;"
                      f" default {DEFAULT_WATCHERS}, at most {MAX_WATCHERS}; 0: none)")
    host.add_argument("--watchers-chat", action="store_true",
                      help="let watchers chat (their lines are marked as a watcher's)")
    host.add_argument("--invite-file", metavar="FILE", help="also write the invite to FILE")
    host.add_argument("--new", action="store_true",
                      help="start a new table even if an unfinished one would resume")
    host.add_argument("--lan", action="store_true",
                      help="announce the table on the local network (see --beacon)")
    host.add_argument("--beacon", default=None, metavar="ADDR:PORT",
                      help="where LAN beacons go (default the p2pcards multicast group)")
    host.add_argument("--no-map", action="store_true",
                      help="do not ask the router to map the port (PCP, NAT-PMP, UPnP)")
    host.add_argument("--tor", action="store_true",
                      help="also publish the table as a Tor onion service, for friends whose"
                      " network lets nothing in (needs tor running on this machine)")
    host.add_argument("--tor-control", metavar="HOST:PORT", type=tor_control,
                      help="tor's control port (default 127.0.0.1:9051, then"
                      " /run/tor/control)")
    host.add_argument("-o", "--option", type=option_pair, action="append", default=[],
                      metavar="NAME=N", help="a table option of the game (see its rules)")
    _common(host)
    host.set_defaults(func=cmd_host)

    join = sub.add_parser("join", help="join a table from its invite",
                          description="Join the table of an invite (or, with --lan, one heard"
                          " on the local network). Started again with the same command, an"
                          " unfinished game resumes.")
    join.add_argument("invite", nargs="?", help="p2pcards://HOST:PORT[,HOST:PORT...]/"
                      "FINGERPRINT/TOKEN")
    join.add_argument("--lan", metavar="NAME", help="join the LAN table of this host name")
    join.add_argument("--tor-socks", metavar="HOST:PORT", type=socks_proxy,
                      help="tor's SOCKS port, for an onion address in the invite (default"
                      " 127.0.0.1:9050, then 127.0.0.1:9150)")
    join.add_argument("--listen", default=None, metavar="ADDR:PORT",
                      help="with --lan: where to hear beacons")
    join.add_argument("--bots", type=int, default=0, metavar="K", help="bots this peer runs")
    join.add_argument("--bots-kind", default="ismcts", choices=BOT_NAMES, metavar="KIND",
                      help="the kind of the --bots this peer runs (default ismcts;"
                      " ismcts, heuristic, random or pimc; the experimental searches:"
                      " docs/bots.md)")
    join.add_argument("--wait", type=float, default=10.0,
                      help="with --lan: seconds to wait for the table's beacon (default 10)")
    join.add_argument("--yes", action="store_true",
                      help="trust a host fingerprint not in the invite without asking")
    join.add_argument("--watch", action="store_true",
                      help="watch the table with no seat (before or during the game; read"
                      " only: with no terminal, headless)")
    _common(join)
    join.set_defaults(func=cmd_join)

    lan_p = sub.add_parser("lan", help="list tables announced on the local network",
                           description="Listen for LAN beacons (tables hosted with --lan) and"
                           " list what is heard: game, host name, fingerprint, free seats.")
    lan_p.add_argument("--listen", default=None, metavar="ADDR:PORT",
                       help="where to hear beacons (default the p2pcards multicast group)")
    lan_p.add_argument("--seconds", type=float, default=5.0,
                       help="how long to listen (default 5)")
    lan_p.set_defaults(func=cmd_lan)

    ident = sub.add_parser("id", help="show this install's device id",
                           description="Show this install's device id (created on first run)"
                           " and the friends it knows.")
    ident.set_defaults(func=cmd_id)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", type=seat_name, default=default_name(),
                        help="your name at the table, 1 to 32 printable characters (default:"
                        " this computer's user name, else player)")
    parser.add_argument("--bot", choices=BOT_NAMES, metavar="KIND",
                        help="play this peer's own seat with a bot, without a prompt")
    parser.add_argument("--pace", type=seconds, default=PACE, metavar="SECONDS",
                        help="at the prompt: seconds between two bot moves as they are shown"
                        f" (default {PACE:g}; 0: at once); the table does not wait for it")
    parser.add_argument("--pause", type=seconds, default=PAUSE, metavar="SECONDS",
                        help="at the prompt: seconds the screen stays on a deal's score before"
                        f" the next deal shows (default {PAUSE:g}, at most a quarter of the"
                        " grace period; any key goes on at once; 0: none)")
    parser.add_argument("--think", type=float,
                        help="seconds a searching bot thinks per move (default: one second of"
                        " search shared by two processes where the machine has two cores, so"
                        " 0.5, but one process in " + unsplit_games() + ")")
    parser.add_argument("--save", metavar="FILE",
                        help="write the verified hand history at the end")
    parser.add_argument("--no-bell", action="store_true",
                        help="no terminal bell with the warnings at 60, 30 and 10 s before"
                        " your move is forfeited or played for you")
    parser.add_argument("--transcript", metavar="FILE",
                        help="write the signed transcript at the end (p2pcards verify)")
    parser.add_argument("--seed", type=int, help="seed for the bots' choices (tests)")
    parser.add_argument("--stats", metavar="FILE",
                        help="write timings and traffic as JSON at the end (p2pcards bench"
                        " net)")
    parser.add_argument("--once", action="store_true",
                        help="leave after the game: no other game with the same players"
                        " (without it, a person may type again, and a --bot peer agrees)")


def default_name() -> str:
    """A person's name at a table without ``--name``: the system's user name, made a
    seat's name (printable, one line, at most 32 characters), else "player"."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError, ImportError):  # (no user name: no $USER, no passwd entry)
        user = ""
    name = " ".join("".join(c for c in user if c.isprintable()).split())[:MAX_NAME]
    return name or "player"


def seconds(text: str) -> float:
    """``--pace``, ``--pause``: a number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 seconds or more, not {text}")
    return value


def seat_name(text: str) -> str:
    """``--name``: a seat's name as the roster takes it (1 to 32 printable characters,
    spaces around it dropped), else argparse's error."""
    name = " ".join(text.split())
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise argparse.ArgumentTypeError(f"a name of 1 to {MAX_NAME} printable characters")
    return name


class _BotMaker:
    """Makes the bots this peer runs, the searching ones sharing one pool of processes
    (closed with :meth:`close` when the peer is done); a kind no bot has (a roster from
    another version, or a hostile host's) is played by the heuristic bot."""

    def __init__(self, args: argparse.Namespace):
        self.think: float | None = args.think
        self.pool: RootParallel | None = None

    def __call__(self, kind: str, game: Game) -> Bot:
        workers = default_workers(game)
        bot = make_bot(kind if kind in BOT_NAMES else "heuristic",
                       think=self.think or default_think(workers), workers=workers)
        if self.pool is not None and isinstance(bot, SearchBot) and bot.workers > 1:
            bot.pool = self.pool
        elif self.pool is None:
            self.pool = share_pool([bot])
        return bot

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


async def _hear(listen: tuple[str, int], name: str | None, seconds: float
                ) -> lan.Heard | None:
    """The table of host ``name`` once heard (None: not within ``seconds``; of several,
    one this install has a journal of), or, with ``name`` None, every table heard in
    ``seconds`` printed."""
    listener = lan.Listener(listen)
    async with trio.open_nursery() as nursery:
        await nursery.start(listener.run)
        found = None
        with trio.move_on_after(seconds):
            while name is not None:
                named = [t for t in listener.tables() if t.name == name]
                found = next((t for t in named if _journal_path(t.token).exists()),
                             named[0] if named else None)
                if found is not None:
                    break
                await listener.changed.wait()
            else:
                await trio.sleep_forever()
        nursery.cancel_scope.cancel()
    if name is None:
        tables = listener.tables()
        for t in tables:
            free = f"{t.free} free" if t.free else "full"
            print(f"{printable(t.name, 32):<16} {printable(t.game, 16):<10} {free:<6}"
                  f"  {t.address}:{t.port}"
                  f"  {show_id(t.fingerprint, 4)}")
        if not tables:
            print(f"no tables heard in {seconds:g} s")
    return found


def cmd_lan(args: argparse.Namespace) -> int:
    try:
        listen = lan.parse_address(args.listen)
    except ValueError as exc:
        return fail(f"--listen: {exc}")
    try:
        trio.run(_hear, listen, None, args.seconds)
    except OSError as exc:
        return fail(f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror}")
    return EXIT_OK


def cmd_id(args: argparse.Namespace) -> int:
    try:
        identity = load_or_create()
        friends = Friends.load()
    except IdentityError as exc:
        return fail(str(exc))
    print(f"device id: {show_id(identity.id)}")
    print(f"short:     {show_id(identity.id, 4)}")
    print(f"stored in: {data_dir()}")
    for name, ident in sorted(friends.pinned.items()):
        print(f"friend {name}: {'-'.join(ident[i:i + 4] for i in range(0, 16, 4))}")
    return EXIT_OK


def _stats(args: argparse.Namespace, driver: Driver | None, started: float,
           number: int = 1) -> bool:
    """Write --stats (False: it could not be written, and this was said)."""
    if not args.stats or driver is None:
        return True
    deals: dict[int, dict[str, float]] = {}
    for at, index, mark in driver.timeline:
        deals.setdefault(index, {})[mark] = at
    dealt = [round((d["dealt"] - d["deal"]) * 1000, 1) for d in deals.values()
             if "deal" in d and "dealt" in d]
    return outputs.write("--stats", numbered(args.stats, number), json.dumps({
        "game_seconds": round(time.monotonic() - started, 3), "deal_ms": dealt,
        "messages": len(driver.peer.log), "deals": len(driver.peer.main.finished),
        **driver.moves.stats(), **driver.hands.stats()}))


def _finish(peer: Peer, args: argparse.Namespace, driver: Driver | None, started: float,
            number: int = 1, *, say: Callable[[str], None] = print) -> int:
    """Game ``number`` of the table is over: its verdict, and every output asked for,
    the later games' named with their number (one that cannot be written is said, and
    the others are still written)."""
    ok, written = game_outputs(args, peer.main.export(), number, say)
    if args.stats:
        written = _stats(args, driver, started, number) and written
    return EXIT_FAILED if not ok else EXIT_OK if written else outputs.EXIT_OUTPUT


class Games:
    """What the command keeps of the games a table plays: each game's status, and
    what it does when one is over (its outputs, the match score)."""

    def __init__(self, args: argparse.Namespace, series: Series, prompt: NetPrompt | None,
                 say: Callable[[str], None]):
        self.args = args
        self.series = series
        self.prompt = prompt
        self.say = say
        self.statuses: list[int] = []
        self.reported: set[int] = set()
        self.restored = series.number if series.between else 0
        """A game restored after its end was recorded: its outputs were written."""
        self.started = time.monotonic()

    async def over(self, peer: Peer, driver: Driver, number: int) -> None:
        self.finish(peer, driver, number)
        match = match_lines([*self.series.finished(), result_of(peer)])
        if self.prompt is not None:
            self.prompt.game_over(match, goes_on=not self.args.once)
        else:
            for line in match:
                self.say(line)

    def finish(self, peer: Peer, driver: Driver | None, number: int) -> None:
        if number in self.reported or number == self.restored:
            return
        self.reported.add(number)
        self.statuses.append(_finish(peer, self.args, driver, self.started, number,
                                     say=self.say))
        self.started = time.monotonic()

    def status(self) -> int:
        if EXIT_FAILED in self.statuses:
            return EXIT_FAILED
        return max(self.statuses, default=EXIT_OK)

    def place(self, number: int, first: Path) -> Place:
        on_over: GameOver = self.over
        return Place(self.series, number, first, on_over)


def _open_series(first: Path, new: bool = False) -> tuple[Series, Journal, int]:
    """The record of the table's games beside ``first`` (the first game's journal), and
    the journal to open with its game's number; ``new``: both moved aside first.
    ValueError, JournalError or OSError if they cannot be read."""
    record = first.with_suffix(".series")
    if new:
        for path in (first, record):
            if path.exists():
                path.replace(path.with_name(path.name + ".abandoned"))
    series = Series.open(record)
    path, number = where(first, series)
    return series, Journal.open(path), number


def _check_outputs(args: argparse.Namespace) -> str | None:
    """Why an output of host or join cannot be written (None: all can), before the
    table opens."""
    return outputs.check([("--save", args.save), ("--transcript", args.transcript),
                          ("--stats", args.stats),
                          ("--invite-file", getattr(args, "invite_file", None))])


def _settle_journal(journal: Journal, peer: Peer | None) -> bool:
    """The journal closed, and kept as done if its game is over; whether it was (if not,
    one line says why: what it could not write was not sent either, and a journal whose
    last records are missing is not kept as done)."""
    try:
        journal.close()
        if peer is not None and peer.over and not journal.failed:
            move_journal(journal.path, done_path(journal.path))
    except JournalError as exc:
        print(f"p2pcards: {exc}", file=sys.stderr)
        return False
    return True


def cmd_host(args: argparse.Namespace) -> int:
    from p2pcards.net.host import Host, HostConfig  # noqa: PLC0415

    game = GAMES[args.game]
    players = args.players or game.default_players
    try:
        game.check_players(players)
        options = game.non_default(game.resolve_options(dict(args.option)))
    except (OptionError, ValueError) as exc:
        return fail(str(exc))
    unwritable = _check_outputs(args)
    if unwritable:
        return fail(unwritable)
    if args.think is not None and args.think <= 0:
        return fail("--think must be more than 0 seconds")
    if not 0 <= args.watchers <= MAX_WATCHERS:
        return fail(f"--watchers must be 0 to {MAX_WATCHERS}")
    if args.bots < 0 or args.bots >= players:
        return fail(f"--bots must leave a seat: 0 to {players - 1}")
    if args.grace <= 0 or args.timer < 0 or (args.timer and args.timer >= args.grace):
        return fail("--grace must be positive and longer than --timer")
    if _no_terminal(args):
        return fail(_no_terminal(args))
    settings = Settings(args.grace, args.timer, args.hint,
                        "" if args.replace == "none" else args.replace)
    try:
        identity = load_or_create()
        first = data_dir() / "tables" / f"host-{args.game}-{args.port}.journal"
        series, journal, number = _open_series(first, args.new)
    except (IdentityError, JournalError, OSError, ValueError) as exc:
        return fail(str(exc))
    address = args.address
    if args.tor and args.bind not in (None, "0.0.0.0", "127.0.0.1"):
        return fail("--tor needs the host to listen on 127.0.0.1, where tor's onion service"
                    " leads: leave --bind out (every address), or give --bind 127.0.0.1")
    if args.tor_control and not args.tor:
        return fail("--tor-control goes with --tor")
    if args.beacon and not args.lan:
        return fail("--beacon goes with --lan (without --lan nothing is announced)")
    try:
        beacon = lan.parse_address(args.beacon) if args.lan else None
    except ValueError as exc:
        return fail(f"--beacon: {exc}")
    config = HostConfig(args.game, players, options, args.name, args.bot,
                        [args.bots_kind] * args.bots, settings, args.bind, args.port, address,
                        beacon, args.deck, once=args.once, watchers=args.watchers,
                        watchers_chat=args.watchers_chat,
                        portmap=None if args.no_map else PortmapConfig(),
                        tor=tor_of(args))
    prompt = _prompt(args)
    say = prompt.show if prompt is not None else show_line
    games = Games(args, series, prompt, say)
    bots = _BotMaker(args)
    try:
        host = Host(identity, config, bots, journal, say=say, person=prompt,
                    seed=args.seed, place=games.place(number, first))
    except JournalError as exc:
        journal.abandon()  # (untouched)
        return fail(str(exc))
    if prompt is not None and not args.once:
        prompt.node = host
    if prompt is not None:
        prompt.invite_lines = lambda: invite_lines(host)
        prompt.lobby_line = lambda: arrived(host.lobby.frame())
        prompt.lobby_chat = host.lobby_chat

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            invite = await nursery.start(host.serve)
            # the file first: whoever waits for the line below finds the file written
            if args.invite_file:  # the token in it admits a player: the owner's alone
                try:
                    write_private_text(Path(args.invite_file), f"{invite}\n")
                except OSError as exc:  # (checked at the start: removed meanwhile)
                    say(f"p2pcards: --invite-file {args.invite_file}: could not write it:"
                        f" {exc.strerror or exc}")
            for line in invite_lines(host, invite):
                say(line)

    try:
        return _play(args, serve, prompt, host, games,
                     expected=[(JournalError, "", EXIT_USAGE),
                               (TorError, "cannot host over tor: ", EXIT_USAGE),
                               (OSError, lambda exc: _cannot_listen(exc, args), EXIT_USAGE)],
                     again="hosts a new table, with a new invite")
    finally:
        bots.close()


def cmd_join(args: argparse.Namespace) -> int:
    from p2pcards.net.client import HostLost, JoinError  # noqa: PLC0415
    from p2pcards.net.invite import InviteError, parse_invite  # noqa: PLC0415
    from p2pcards.net.join import Joiner  # noqa: PLC0415

    if (args.invite is None) == (args.lan is None):
        return fail("give an invite, or --lan NAME")
    try:
        invite = parse_invite(args.invite) if args.invite else None
    except InviteError as exc:
        return fail(f"the invite: {exc}")
    unwritable = _check_outputs(args)
    if unwritable:
        return fail(unwritable)
    if args.think is not None and args.think <= 0:
        return fail("--think must be more than 0 seconds")
    table = None
    if invite is None:
        try:
            listen = lan.parse_address(args.listen)
        except ValueError as exc:
            return fail(f"--listen: {exc}")
        table = trio.run(_hear, listen, args.lan, args.wait)
        if table is None:
            print(f"p2pcards: no table of {args.lan!r} heard in {args.wait:g} s",
                  file=sys.stderr)
            return EXIT_AWAY
        print(f"heard {printable(table.name, 32)}'s {printable(table.game, 16)} table at"
              f" {table.address}:{table.port}")
        invite = table.invite()
    if args.watch:
        return cmd_watch(args, invite, table)
    if _no_terminal(args):
        return fail(_no_terminal(args))
    try:
        identity = load_or_create()
        friends = Friends.load()
        first = _journal_path(invite.token)
        series, journal, number = _open_series(first)
    except (IdentityError, JournalError, OSError, ValueError) as exc:
        return fail(str(exc))
    if table is not None:
        refused = _trust_heard(table, journal, args.yes)
        if refused is not None:
            journal.close()
            print(f"p2pcards: {refused}", file=sys.stderr)
            return EXIT_REFUSED

    prompt = _prompt(args)

    async def confirm(question: str) -> bool:
        if args.yes:
            print(question)
            return True
        if prompt is not None:  # (the prompt reads the terminal: it asks)
            return await prompt.yes_or_no(f"{question} Trust it?")
        print(question)
        return await trio.to_thread.run_sync(ask_yes, "type yes to trust it: ",
                                             abandon_on_cancel=True)  # (Ctrl-C meanwhile)

    say = prompt.show if prompt is not None else show_line
    games = Games(args, series, prompt, say)
    bots = _BotMaker(args)
    try:
        joiner = Joiner(identity, invite, args.name, args.bot, [args.bots_kind] * args.bots,
                        bots, journal, friends, confirm, say, prompt,
                        seed=args.seed, place=games.place(number, first), once=args.once,
                        dial=dial_of(args))
    except JournalError as exc:
        journal.abandon()  # (untouched)
        return fail(str(exc))
    if prompt is not None and not args.once:
        prompt.node = joiner
    if prompt is not None:
        prompt.lobby_line = lambda: None if joiner.lobby_seen is None else \
            arrived(joiner.lobby_seen)
        prompt.lobby_chat = joiner.lobby_chat
    try:
        return _play(args, joiner.run, prompt, joiner, games,
                     expected=[(HostLost, "", EXIT_AWAY), (JoinError, "", EXIT_REFUSED),
                               (JournalError, "", EXIT_USAGE)],
                     again="sits at the table again")
    finally:
        bots.close()


def _cannot_listen(exc: BaseException, args: argparse.Namespace) -> str:
    """Why the host cannot listen (or host at all), in one line naming where."""
    where = f"port {args.port} on {args.bind or 'every address'}"
    code = getattr(exc, "errno", None)
    if code == errno.EADDRINUSE:
        return (f"cannot host: {where} is in use (another table, or another program?):"
                " pick another with --port N")
    if code == errno.EADDRNOTAVAIL:
        return (f"cannot host: {args.bind} is not an address of this machine (--bind):"
                " leave --bind out to listen on every address")
    if code in (errno.EACCES, errno.EPERM):
        return f"cannot host: {where} is not allowed here (ports below 1024 need privileges)"
    if isinstance(exc, socket.gaierror):
        return f"cannot host: --bind {args.bind}: no such address or host name"
    reason = socket_reason(exc)
    return f"cannot host on {where}: {reason or exc}"


def _journal_path(token: bytes) -> Path:
    """The journal of a joiner's game at the table of ``token``."""
    return data_dir() / "tables" / f"join-{encode_id(token)}.journal"


def _trust_heard(table: lan.Heard, journal: Journal, yes: bool) -> str | None:
    """Whether to join the table a beacon named: with this install's game at it under
    way, if its host is the one that game was joined at (no question: the person
    confirmed it then, or the invite pinned it); a new seat if one is free and the
    person confirms the fingerprint.  None: join; else why not."""
    from p2pcards.net.join import known_host  # noqa: PLC0415

    known = known_host(journal)
    if known is not None:
        if known != table.fingerprint:
            return (f"the table heard as {printable(table.name, 32)!r} is hosted by"
                    f" {show_id(table.fingerprint, 4)}, not the {show_id(known, 4)} this"
                    " game was joined at: someone may be pretending; not joining")
        print(f"its fingerprint {show_id(table.fingerprint, 4)} is the one this game was"
              " joined at; resuming")
        return None
    if journal.records:  # (a journal from before the host was recorded in it)
        print("this install has a game at this table: confirm the fingerprint to resume")
    elif table.free == 0:
        return (f"{printable(table.name, 32)}'s table is full: its game is under way"
                " (only its players may come back)")
    print(f"its fingerprint is {show_id(table.fingerprint)}; is it the one the host"
          " shows?")
    if not yes and not ask_yes("type yes to join: "):
        return "the fingerprint was not confirmed; not joining"
    return None


class _Seat(Protocol):
    peer: Peer | None
    driver: Driver | None
    journal: Journal
    number: int


def _play(args: argparse.Namespace, play: Callable[[], Awaitable[None]],
          prompt: NetPrompt | None, seat: _Seat, games: Games, *,
          expected: list[tuple[type[Exception], str | Callable[[BaseException], str], int]],
          again: str) -> int:
    """Play the game and the next ones the players agree to (host or joiner alike),
    then settle the journal and report: each of ``expected`` (found in Trio's exception
    groups) is said as its prefix and its text, and ends with its status.  ``again``:
    what the same command does if this one stops before the game begins."""
    try:
        stopped = run_table(play, prompt)
    except Exception as exc:  # Trio wraps what its tasks raise in groups
        for kind, prefix, status in expected:
            found = leaf(exc, kind)
            if found is not None:
                said = prefix(found) if callable(prefix) else f"{prefix}{found}"
                print(f"p2pcards: {printable(said, MAX_ERROR)}",  # (a router's, tor's or a
                      file=sys.stderr)  # host's words may be in it)
                return status
        raise
    finally:
        settled = _settle_journal(seat.journal, seat.peer)
    journal = seat.journal
    peer = seat.peer
    if peer is not None and peer.over:  # (a signal in the farewell: the game is over)
        games.finish(peer, seat.driver, seat.number)
        status = games.status()
        return status if settled or status == EXIT_FAILED else EXIT_USAGE
    if not settled:
        return EXIT_USAGE  # (said: the journal could not be written)
    if stopped in SIGNALS:
        return _interrupted(stopped, journal, peer is not None, again)
    if stopped == "left" or peer is None:
        return _left(journal)
    print(f"p2pcards: the game stopped before its end; the same command resumes it"
          f" (journal {journal.path})", file=sys.stderr)
    return EXIT_AWAY


def _interrupted(name: str, journal: Journal, begun: bool, again: str) -> int:
    """Stopped by signal ``name``: one line, and its status."""
    if begun:
        print(f"p2pcards: stopped by {name}: left the table; the same command resumes the"
              f" game (journal {journal.path})", file=sys.stderr)
    else:
        print(f"p2pcards: stopped by {name} before the game began; nothing is kept (the"
              f" same command {again})", file=sys.stderr)
    return 128 + int(SIGNALS[name])


def _no_terminal(args: argparse.Namespace) -> str:
    """Why this peer cannot seat a person ("": it can): the person's seat is played at
    a prompt, which needs a terminal (input from a file or a pipe has none)."""
    if args.bot is not None or sys.stdin.isatty():
        return ""
    return ("a seat played by a person needs a terminal, and the input is not one: run it"
            " in a terminal, or give --bot KIND to let a bot play the seat (join --watch"
            " watches with no terminal)")


def _prompt(args: argparse.Namespace) -> NetPrompt | None:
    """The prompt for a person at this peer's seat (None: a bot plays it, --bot)."""
    if args.bot is not None:
        return None
    prompt = NetPrompt(args.game if hasattr(args, "game") else "",
                       hint_bot=SearchBot("ismcts", think=SEARCH_SECONDS))
    prompt.save_to = args.save
    prompt.bell = not args.no_bell
    prompt.pace, prompt.pause = args.pace, args.pause
    return prompt


MAX_ERROR = 1000
"""The most characters of an error shown when a command ends on it."""


def _left(journal: Journal) -> int:
    print(f"left the table; the same command resumes it (journal {journal.path})")
    return EXIT_OK
