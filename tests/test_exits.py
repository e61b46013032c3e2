"""How commands end (docs/networking.md, "Exit statuses"): every output path checked
before any work starts, a write that fails at the end said in one line, and headless
peers on loopback stopped by SIGINT and SIGTERM, losing their host, or refused, each
with one clear line, no traceback and its documented status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p2pcards.cli import outputs
from p2pcards.cli.main import main
from tests.test_net_procs import free_port

P2PCARDS = [sys.executable, "-m", "p2pcards"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_output_paths_are_checked_before_any_work(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing" / "x"
    code, out, err = run(capsys, "table", "pasur", "--players", "2", "--transcript",
                         str(missing))
    assert code == 2 and out == ""  # not played
    assert f"--transcript {missing}: cannot write there: the directory" in err
    transcript = tmp_path / "t.bin"
    assert run(capsys, "table", "pasur", "--players", "2", "--transcript",
               str(transcript))[0] == 0
    code, out, err = run(capsys, "verify", str(transcript), "--history", str(missing))
    assert code == 2 and "verified" not in out and f"--history {missing}" in err
    code, out, err = run(capsys, "verify", str(transcript), "--history", str(tmp_path))
    assert code == 2 and "it is a directory" in err
    code, out, err = run(capsys, "play", "pasur", "--seed", "1", "--save",
                         str(transcript / "x"))  # (at the prompt too, before it opens)
    assert code == 2 and f"{transcript} is not a directory" in err and out == ""
    code, out, err = run(capsys, "arena", "pasur", "--players", "heuristic,heuristic",
                         "--games", "1", "--save", str(transcript))
    assert code == 2 and "it exists and is not a directory" in err and "wins" not in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.bin"]  # nothing left behind


def test_host_and_join_check_their_outputs_before_the_table(tmp_path: Path) -> None:
    env = {**os.environ, "P2PCARDS_HOME": str(tmp_path / "home")}
    missing = str(tmp_path / "missing" / "x")
    common = ["--bot", "heuristic", "--save", str(tmp_path / "s.json")]
    for option in ("--save", "--transcript", "--stats", "--invite-file"):
        host = subprocess.run(
            [*P2PCARDS, "host", "pasur", "--players", "2", "--bind", "127.0.0.1", "--port",
             str(free_port()), *common, option, missing],
            env=env, capture_output=True, text=True, timeout=30, check=False)
        assert host.returncode == 2, host.stderr
        assert host.stderr == f"p2pcards: {option} {missing}: cannot write there: the" \
            f" directory {tmp_path / 'missing'} does not exist\n"
        assert "invite" not in host.stdout
    invite = "p2pcards://127.0.0.1:9/" + "A" * 52 + "/" + "A" * 26
    same = subprocess.run([*P2PCARDS, "join", invite, *common, "--transcript",
                           str(tmp_path / "s.json")], env=env, capture_output=True, text=True,
                          timeout=30, check=False)
    assert same.returncode == 2
    assert "--save and --transcript name the same file" in same.stderr
    assert not (tmp_path / "home" / "tables").exists()  # no table was opened


def test_a_write_that_fails_at_the_end_is_one_line(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert not outputs.write("--save", str(tmp_path / "gone" / "x"), "text")
    err = capsys.readouterr().err
    assert err == f"p2pcards: --save {tmp_path / 'gone' / 'x'}: could not write it: No such" \
        " file or directory\n"


# ------------------------------------------------------------------ real processes


class Peers:
    """Headless peers of one Bid Whist table of four on loopback: the host (its seat and
    two bots) and one joiner, each with its own data directory.  The game goes to 15
    points: a deal scores at most 14 (all thirteen books made in notrump, a set or a
    renege at seven in notrump), so a second deal always comes, and the game is a few
    deals long."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.port = free_port()
        self.procs: dict[str, subprocess.Popen[str]] = {}
        self.invite_file = tmp / "invite"
        (tmp / "out").mkdir()  # the host's --transcript goes there

    def command(self, name: str) -> list[str]:
        common = ["--bot", "heuristic", "--name", name, "--seed", "3",
                  "--save", str(self.tmp / f"{name}.json")]
        if name == "host":
            return [*P2PCARDS, "host", "bidwhist", "-o", "target=15", "--bind",
                    "127.0.0.1", "--port", str(self.port), "--players", "4", "--bots", "2",
                    "--bots-kind", "heuristic", "--invite-file", str(self.invite_file),
                    "--transcript", str(self.tmp / "out" / "host.transcript"), *common]
        return [*P2PCARDS, "join", self.invite_file.read_text().strip(), *common]

    def start(self, name: str) -> None:
        env = {**os.environ, "P2PCARDS_HOME": str(self.tmp / name)}
        with (self.tmp / f"{name}.out").open("a") as out, \
                (self.tmp / f"{name}.err").open("a") as err:  # (the process has its own)
            self.procs[name] = subprocess.Popen(self.command(name), env=env, stdout=out,
                                                stderr=err, text=True)
        if name == "host":
            self.wait_for("host", "invite:")

    def join(self, invite: str, name: str = "stranger") -> subprocess.CompletedProcess[str]:
        """Another identity's join, to its end."""
        return subprocess.run(
            [*P2PCARDS, "join", invite, "--bot", "heuristic", "--name", name],
            env={**os.environ, "P2PCARDS_HOME": str(self.tmp / name)}, capture_output=True,
            text=True, timeout=60, check=False)

    def out(self, name: str) -> str:
        return (self.tmp / f"{name}.out").read_text()

    def err(self, name: str) -> str:
        return (self.tmp / f"{name}.err").read_text()

    def wait_for(self, name: str, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.out(name):
            assert self.procs[name].poll() is None, self.err(name)
            assert time.monotonic() < deadline, self.out(name)[-2000:]
            time.sleep(0.05)

    def stop(self, name: str, number: int) -> int:
        """Send signal ``number`` to peer ``name`` mid-game; its exit status."""
        self.procs[name].send_signal(number)
        return self.procs[name].wait(60)

    def kill_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_headless_peers_leave_on_signals_and_come_back(tmp_path: Path) -> None:
    """SIGTERM to the host mid-game (143), its joiner losing it (one line, and it keeps
    trying), SIGINT to the joiner (130): each says in one line how it resumes, and the
    same commands finish the game with one hand history.  Joins that cannot sit say why
    with their status: no host (4), a stranger at a game under way, a wrong token, a
    wrong fingerprint (3).  An output whose directory is removed during the game is
    said at the end in one line (2), and the other outputs are still written."""
    peers = Peers(tmp_path)
    try:
        peers.start("host")
        invite = peers.invite_file.read_text().strip()
        peers.start("j")
        peers.wait_for("j", "deal 2,")
        assert peers.stop("host", signal.SIGTERM) == 143
        journal = tmp_path / "host" / "tables" / f"host-bidwhist-{peers.port}.journal"
        assert peers.err("host") == "p2pcards: stopped by SIGTERM: left the table; the same" \
            f" command resumes the game (journal {journal})\n"
        peers.wait_for("j", "lost the host (")
        unreachable = peers.join(invite)
        assert unreachable.returncode == 4, unreachable.stderr
        assert unreachable.stderr.startswith("p2pcards: cannot reach the host: ")

        peers.start("host")  # the same command: the table resumes, the joiner comes back
        peers.wait_for("host", "j is back")
        assert peers.stop("j", signal.SIGINT) == 130
        assert peers.err("j").startswith("p2pcards: stopped by SIGINT: left the table; the"
                                         " same command resumes the game (journal ")
        assert peers.out("j").count("lost the host") == 1  # said once, not at every try
        stranger = peers.join(invite)
        assert stranger.returncode == 3
        assert stranger.stderr == "p2pcards: the host refused: the game has begun, and this" \
            " install (its identity) has no seat at it: join --watch to watch it\n"
        address, _, token = invite.rpartition("/")
        wrong = peers.join(f"{address}/{'A' * len(token)}")
        assert wrong.returncode == 3 and "not invited" in wrong.stderr
        fingerprint = address.rpartition("/")[2]
        impostor = peers.join(invite.replace(fingerprint, "A" * len(fingerprint)))
        assert impostor.returncode == 3 and "someone may be in between" in impostor.stderr

        os.rmdir(tmp_path / "out")  # the host's --transcript directory, gone meanwhile
        peers.start("j")
        assert peers.procs["j"].wait(240) == 0, peers.err("j")
        assert peers.procs["host"].wait(60) == 2, peers.err("host")
        assert peers.err("host").endswith(
            f"p2pcards: --transcript {tmp_path / 'out' / 'host.transcript'}: could not write"
            " it: No such file or directory\n")
        assert "hand history saved to" in peers.out("host")
        assert (tmp_path / "host.json").read_bytes() == (tmp_path / "j.json").read_bytes()
        for name in ("host", "j"):
            assert "Traceback" not in peers.err(name) + peers.out(name)
        for run in (unreachable, stranger, wrong, impostor):
            assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1
    finally:
        peers.kill_all()


@pytest.mark.slow
def test_a_host_stopped_before_the_game_keeps_nothing(tmp_path: Path) -> None:
    peers = Peers(tmp_path)
    try:
        peers.start("host")
        assert peers.stop("host", signal.SIGINT) == 130
        assert peers.err("host") == "p2pcards: stopped by SIGINT before the game began;" \
            " nothing is kept (the same command hosts a new table, with a new invite)\n"
        assert not list((tmp_path / "host" / "tables").glob("*.journal"))
    finally:
        peers.kill_all()


_INTERRUPTED_AT = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a shell leaves it

class Interrupt:  # Ctrl-C as the program first imports {module!r}
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv[1:] = ["bench", "engines"]
import runpy
{start}
"""


@pytest.mark.slow
def test_ctrl_c_while_the_program_loads_is_quiet() -> None:
    """Ctrl-C as the program loads one module or another, started as ``python -m
    p2pcards`` and as the installed command: status 130 and no traceback."""
    starts = ["runpy.run_module('p2pcards', run_name='__main__')"]
    script = Path(sys.executable).parent / "p2pcards"
    if script.exists():
        starts.append(f"runpy.run_path({str(script)!r}, run_name='__main__')")
    for start in starts:
        for module in ("p2pcards.cli.main", "trio", "msgpack", "p2pcards.games",
                       "p2pcards.bots", "argparse"):
            launch = [sys.executable, "-c", _INTERRUPTED_AT.format(module=module, start=start)]
            done = subprocess.run(launch, check=False, capture_output=True, text=True,
                                  timeout=60)
            assert (done.returncode, done.stderr) == (130, ""), (start, module)
