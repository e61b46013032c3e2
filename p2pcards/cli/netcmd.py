"""``p2pcards host``, ``join``, ``lan`` and ``id``: tables over the network."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import trio
from prompt_toolkit.patch_stdout import patch_stdout

from p2pcards.bots import BOT_NAMES, Bot, make_bot
from p2pcards.cli import guest
from p2pcards.cli.netrepl import Left, NetPrompt
from p2pcards.games import GAMES, OptionError
from p2pcards.net import lan
from p2pcards.net.driver import Driver, Settings
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
from p2pcards.net.peer import Peer
from p2pcards.table.kinds import printable

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_PORT = 45450


def add_parsers(sub: Any, option_pair: Callable[[str], tuple[str, int]]) -> None:
    host = sub.add_parser("host", help="host a table on the network and print its invite",
                          description="Host a table: print an invite (address, fingerprint, "
                          "one-time token) and wait for the players it names. Started again "
                          "with the same command, an unfinished table resumes.")
    host.add_argument("game", choices=sorted(GAMES))
    host.add_argument("--players", type=int, help="seats (default: the game's usual)")
    host.add_argument("--port", type=int, default=DEFAULT_PORT,
                      help=f"TCP port to listen on (default {DEFAULT_PORT})")
    host.add_argument("--bind", default="0.0.0.0",
                      help="address to listen on (default all; 127.0.0.1: this machine only)")
    host.add_argument("--address", help="the address the invite gives (default: --bind, or"
                      " this machine's name)")
    host.add_argument("--bots", type=int, default=0, metavar="K", help="bots this peer runs")
    host.add_argument("--bots-kind", default="ismcts", choices=BOT_NAMES, metavar="KIND",
                      help="the kind of the --bots this peer runs (default ismcts;"
                      f" {', '.join(BOT_NAMES)})")
    host.add_argument("--grace", type=float, default=300.0,
                      help="seconds a seat may keep the table waiting before it forfeits"
                      " the deal (default 300)")
    host.add_argument("--timer", type=float, default=0.0,
                      help="turn timer in seconds: a person's move is played for them when"
                      " it runs out (default: none)")
    host.add_argument("--hint", action="store_true", help="allow 'hint' at this table")
    host.add_argument("--replace", default="heuristic", choices=(*BOT_NAMES, "none"),
                      metavar="KIND",
                      help="the bot that takes the seat of a player gone silent, from the next"
                      " deal until the player is back (default heuristic; none: the seat"
                      " forfeits each deal instead)")
    host.add_argument("--invite-file", metavar="FILE", help="also write the invite to FILE")
    host.add_argument("--new", action="store_true",
                      help="start a new table even if an unfinished one would resume")
    host.add_argument("--lan", action="store_true",
                      help="announce the table on the local network (see --beacon)")
    host.add_argument("--beacon", default=None, metavar="ADDR:PORT",
                      help="where LAN beacons go (default the p2pcards multicast group)")
    host.add_argument("-o", "--option", type=option_pair, action="append", default=[],
                      metavar="NAME=N", help="a table option of the game (see its rules)")
    _common(host)
    host.set_defaults(func=cmd_host)

    join = sub.add_parser("join", help="join a table from its invite",
                          description="Join the table of an invite (or, with --lan, one heard"
                          " on the local network). Started again with the same command, an"
                          " unfinished game resumes.")
    join.add_argument("invite", nargs="?", help="p2pcards://HOST:PORT/FINGERPRINT/TOKEN")
    join.add_argument("--lan", metavar="NAME", help="join the LAN table of this host name")
    join.add_argument("--listen", default=None, metavar="ADDR:PORT",
                      help="with --lan: where to hear beacons")
    join.add_argument("--bots", type=int, default=0, metavar="K", help="bots this peer runs")
    join.add_argument("--bots-kind", default="ismcts", choices=BOT_NAMES, metavar="KIND",
                      help="the kind of the --bots this peer runs (default ismcts;"
                      f" {', '.join(BOT_NAMES)})")
    join.add_argument("--wait", type=float, default=10.0,
                      help="with --lan: seconds to wait for the table's beacon (default 10)")
    join.add_argument("--yes", action="store_true",
                      help="trust a host fingerprint not in the invite without asking")
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
    parser.add_argument("--name", default=os.environ.get("USER", "player")[:32] or "player",
                        help="your name at the table")
    parser.add_argument("--bot", choices=BOT_NAMES, metavar="KIND",
                        help="play this peer's own seat with a bot, without a prompt")
    parser.add_argument("--think", type=float, default=1.0,
                        help="seconds a searching bot thinks per move (default 1)")
    parser.add_argument("--save", metavar="FILE",
                        help="write the audited hand history at the end")
    parser.add_argument("--transcript", metavar="FILE",
                        help="write the signed transcript at the end (p2pcards verify)")
    parser.add_argument("--seed", type=int, help="seed for the bots' choices (tests)")
    parser.add_argument("--stats", metavar="FILE",
                        help="write timings and traffic as JSON at the end (p2pcards bench"
                        " net)")


def _bot_maker(args: argparse.Namespace) -> Callable[[str], Bot]:
    return lambda kind: make_bot(kind, think=args.think)


def _fail(message: str) -> int:
    print(f"p2pcards: {message}", file=sys.stderr)
    return EXIT_USAGE


async def _hear(listen: tuple[str, int], name: str | None, seconds: float
                ) -> lan.Heard | None:
    """The table of host ``name`` once heard (None: not within ``seconds``), or, with
    ``name`` None, every table heard in ``seconds`` printed."""
    listener = lan.Listener(listen)
    async with trio.open_nursery() as nursery:
        await nursery.start(listener.run)
        found = None
        with trio.move_on_after(seconds):
            while name is not None:
                found = next((t for t in listener.tables() if t.name == name), None)
                if found is not None:
                    break
                await listener.changed.wait()
            else:
                await trio.sleep_forever()
        nursery.cancel_scope.cancel()
    if name is None:
        tables = listener.tables()
        for t in tables:
            print(f"{printable(t.name, 32):<16} {printable(t.game, 16):<10} {t.free} free"
                  f"  {t.address}:{t.port}"
                  f"  {show_id(t.fingerprint, 4)}")
        if not tables:
            print(f"no tables heard in {seconds:g} s")
    return found


def cmd_lan(args: argparse.Namespace) -> int:
    try:
        listen = lan.parse_address(args.listen)
    except ValueError as exc:
        return _fail(f"--listen: {exc}")
    try:
        trio.run(_hear, listen, None, args.seconds)
    except OSError as exc:
        return _fail(f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror}")
    return EXIT_OK


def cmd_id(args: argparse.Namespace) -> int:
    try:
        identity = load_or_create()
        friends = Friends.load()
    except IdentityError as exc:
        return _fail(str(exc))
    print(f"device id: {show_id(identity.id)}")
    print(f"short:     {show_id(identity.id, 4)}")
    print(f"stored in: {data_dir()}")
    for name, ident in sorted(friends.pinned.items()):
        print(f"friend {name}: {'-'.join(ident[i:i + 4] for i in range(0, 16, 4))}")
    return EXIT_OK


def _stats(args: argparse.Namespace, driver: Driver | None, started: float) -> None:
    if not args.stats or driver is None:
        return
    deals: dict[int, dict[str, float]] = {}
    for at, index, mark in driver.timeline:
        deals.setdefault(index, {})[mark] = at
    dealt = [round((d["dealt"] - d["deal"]) * 1000, 1) for d in deals.values()
             if "deal" in d and "dealt" in d]
    Path(args.stats).write_text(json.dumps({
        "game_seconds": round(time.monotonic() - started, 3), "deal_ms": dealt,
        "messages": len(driver.peer.log), "deals": len(driver.peer.main.finished)}),
        encoding="utf-8")


def _finish(peer: Peer, args: argparse.Namespace) -> int:
    from p2pcards.table.verify import format_report, verify  # noqa: PLC0415

    transcript = peer.main.export()
    report = verify(transcript)
    print(format_report(report))
    if args.transcript:
        Path(args.transcript).write_bytes(transcript)
        print(f"transcript written to {args.transcript}")
    if args.save and report.history is not None:
        Path(args.save).write_text(report.history.dumps(), encoding="utf-8")
        print(f"hand history saved to {args.save}")
    return EXIT_OK if report.ok else EXIT_FAILED


def _settle_journal(journal: Journal, peer: Peer | None) -> None:
    journal.close()
    if peer is not None and peer.over and journal.path.exists():
        journal.path.replace(journal.path.with_suffix(".done"))


def cmd_host(args: argparse.Namespace) -> int:
    from p2pcards.net.host import Host, HostConfig  # noqa: PLC0415

    game = GAMES[args.game]
    players = args.players or game.default_players
    try:
        game.check_players(players)
        options = game.non_default(game.resolve_options(dict(args.option)))
    except (OptionError, ValueError) as exc:
        return _fail(str(exc))
    if args.bots < 0 or args.bots >= players:
        return _fail(f"--bots must leave a seat: 0 to {players - 1}")
    if args.grace <= 0 or args.timer < 0 or (args.timer and args.timer >= args.grace):
        return _fail("--grace must be positive and longer than --timer")
    settings = Settings(args.grace, args.timer, args.hint,
                        "" if args.replace == "none" else args.replace)
    try:
        identity = load_or_create()
        path = data_dir() / "tables" / f"host-{args.game}-{args.port}.journal"
        if args.new and path.exists():
            path.replace(path.with_suffix(".abandoned"))
        journal = Journal.open(path)
    except (IdentityError, JournalError, OSError) as exc:
        return _fail(str(exc))
    address = args.address or (args.bind if args.bind not in ("0.0.0.0", "::") else
                               _this_machine())
    if args.beacon and not args.lan:
        return _fail("--beacon goes with --lan (without --lan nothing is announced)")
    try:
        beacon = lan.parse_address(args.beacon) if args.lan else None
    except ValueError as exc:
        return _fail(f"--beacon: {exc}")
    config = HostConfig(args.game, players, options, args.name, args.bot,
                        [args.bots_kind] * args.bots, settings, args.bind, args.port, address,
                        beacon)
    prompt = _prompt(args)
    say = prompt.show if prompt is not None else _say
    try:
        host = Host(identity, config, _bot_maker(args), journal, say=say, person=prompt,
                    seed=args.seed)
    except JournalError as exc:
        return _fail(str(exc))

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            invite = await nursery.start(host.serve)
            say(f"invite: {invite}")
            say(f"host fingerprint: {show_id(identity.id)}")
            if args.invite_file:  # the token in it admits a player: the owner's alone
                write_private_text(Path(args.invite_file), f"{invite}\n")

    return _play(args, serve, prompt, journal, host, expected=OSError, prefix="cannot host: ",
                 status=EXIT_USAGE)


def cmd_join(args: argparse.Namespace) -> int:
    from p2pcards.net.invite import InviteError, parse_invite  # noqa: PLC0415
    from p2pcards.net.join import Joiner, JoinError  # noqa: PLC0415

    if (args.invite is None) == (args.lan is None):
        return _fail("give an invite, or --lan NAME")
    try:
        invite = parse_invite(args.invite) if args.invite else None
    except InviteError as exc:
        return _fail(f"the invite: {exc}")
    if invite is None:
        try:
            listen = lan.parse_address(args.listen)
        except ValueError as exc:
            return _fail(f"--listen: {exc}")
        table = trio.run(_hear, listen, args.lan, args.wait)
        if table is None:
            print(f"p2pcards: no table of {args.lan!r} heard in {args.wait:g} s",
                  file=sys.stderr)
            return EXIT_FAILED
        print(f"heard {printable(table.name, 32)}'s {printable(table.game, 16)} table at"
              f" {table.address}:{table.port}")
        print(f"its fingerprint is {show_id(table.fingerprint)}; is it the one the host"
              " shows?")
        if not args.yes and input("type yes to join: ").strip().lower() != "yes":
            return _fail("the fingerprint was not confirmed; not joining")
        invite = table.invite()
    try:
        identity = load_or_create()
        friends = Friends.load()
        path = data_dir() / "tables" / f"join-{encode_id(invite.token)}.journal"
        journal = Journal.open(path)
    except (IdentityError, JournalError, OSError) as exc:
        return _fail(str(exc))

    async def confirm(question: str) -> bool:
        print(question)
        if args.yes:
            return True
        answer = await trio.to_thread.run_sync(input, "type yes to trust it: ")
        return answer.strip().lower() == "yes"

    prompt = _prompt(args)
    say = prompt.show if prompt is not None else _say
    try:
        joiner = Joiner(identity, invite, args.name, args.bot, [args.bots_kind] * args.bots,
                        _bot_maker(args), journal, friends, confirm, say, prompt,
                        seed=args.seed)
    except JournalError as exc:
        return _fail(str(exc))
    return _play(args, joiner.run, prompt, journal, joiner, expected=JoinError, prefix="",
                 status=EXIT_FAILED)


class _Seat(Protocol):
    peer: Peer | None
    driver: Driver | None


def _play(args: argparse.Namespace, play: Callable[[], Awaitable[None]],
          prompt: NetPrompt | None, journal: Journal, seat: _Seat, *,
          expected: type[Exception], prefix: str, status: int) -> int:
    """Play the game (host or joiner alike), then settle the journal and report:
    ``expected`` (found in Trio's exception groups) is said as ``prefix`` + its text."""
    started = time.monotonic()
    try:
        left = _run(play, prompt)
    except Exception as exc:  # Trio wraps what its tasks raise in groups
        found = _leaf(exc, expected)
        if found is None:
            raise
        print(f"p2pcards: {prefix}{found}", file=sys.stderr)
        return status
    finally:
        _settle_journal(journal, seat.peer)
    if left or seat.peer is None or (seat.driver is not None and seat.driver.adjourned):
        return _left(journal)
    _stats(args, seat.driver, started)
    return _finish(seat.peer, args)


def _prompt(args: argparse.Namespace) -> NetPrompt | None:
    """The prompt for a person at this peer's seat (None: a bot plays it, --bot)."""
    if args.bot is not None:
        return None
    return NetPrompt(args.game if hasattr(args, "game") else "",
                     hint_bot=make_bot("ismcts", think=1.0))


def _run(play: Callable[[], Awaitable[None]], prompt: NetPrompt | None) -> bool:
    """Play to the end of the game; with a person, under the prompt.  True if the
    person left before the end."""
    if prompt is None:
        trio.run(play)
        return False
    left = False

    async def seated() -> None:
        nonlocal left
        async with trio.open_nursery() as nursery:

            async def the_prompt() -> None:
                nonlocal left
                try:
                    await prompt.run()
                except Left:
                    left = True
                    nursery.cancel_scope.cancel()

            nursery.start_soon(the_prompt)
            await play()
            nursery.cancel_scope.cancel()

    with patch_stdout(raw=True):
        guest.run(seated)
    return left


def _left(journal: Journal) -> int:
    print(f"left the table; the same command resumes it (journal {journal.path})")
    return EXIT_OK


def _leaf(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first ``kind`` in ``error`` or the exception groups around it."""
    if isinstance(error, kind):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _leaf(inner, kind)
            if found is not None:
                return found
    return None


def _say(line: str) -> None:
    print(line, flush=True)


def _this_machine() -> str:
    import socket  # noqa: PLC0415

    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"
