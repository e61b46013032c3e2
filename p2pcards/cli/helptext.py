"""``help [topic]`` at the prompt: the commands, how to type moves, each game in brief,
and the full rules; ``p2pcards rules GAME`` prints the full rules in the terminal.

The games' own summaries (``Game.brief``, ``Game.moves_help``) are short and in
the project's own words; the full rules, with every ruling, are the Markdown
pages shipped inside the package (``p2pcards/rules/GAME.md``, read through
:mod:`importlib.resources`, so an installed wheel has them too), shown here as
plain text: at the prompt one section at a time (``help rules full`` lists the
sections, ``help rules N`` or ``help rules WORD`` shows one), from the shell
whole, through the pager.
"""

from __future__ import annotations

import re
from importlib import resources

from p2pcards.games import GAMES, Game

MOVES = """\
Type a move as the legal list shows it, in any case, its cards in any order and
seats by name; a card alone plays it. For example:"""

COMMON = "common"
"""The page of the rules the four games share (``p2pcards rules common``)."""


def rules_pages() -> list[str]:
    """What ``p2pcards rules`` can show: each game's rules, and the common ones."""
    return [*sorted(GAMES), COMMON]


def full_rules(page: str) -> str:
    """The Markdown text of a page of the rules (a game's name, or ``common``), from the
    package's own files (``FileNotFoundError`` if the install lacks them)."""
    return resources.files("p2pcards").joinpath("rules", f"{page}.md").read_text("utf-8")


def plain(markdown: str) -> str:
    """The rules' Markdown as terminal text: links become their words, emphasis and code
    marks go, headings are underlined, and a table's columns line up."""
    out: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if table:
            widths = [max(len(row[k]) if k < len(row) else 0 for row in table)
                      for k in range(max(map(len, table)))]
            out.extend("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)
                                 ).rstrip() for row in table)
            table.clear()

    for raw in markdown.splitlines():
        line = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", raw)  # [words](target) -> words
        line = line.replace("**", "").replace("`", "")
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):  # (not the |---| line)
                table.append(cells)
            continue
        flush()
        heading = re.match(r"(#+)\s+(.*)", line)
        if heading:
            title = heading.group(2)
            out += [title, ("=" if len(heading.group(1)) == 1 else "-") * len(title)]
        else:
            out.append(line.rstrip())
    flush()
    return "\n".join(out).strip("\n") + "\n"


def sections(markdown: str) -> list[tuple[str, str]]:
    """The sections of a rules page after its opening, in order: (title, Markdown) of
    each ``##`` section (its ``###`` ones inside it) and of each ``###`` one."""
    found: list[tuple[str, str]] = []
    for part in re.split(r"(?m)^(?=## )", markdown)[1:]:
        subs = re.split(r"(?m)^(?=### )", part)
        found.append((part.splitlines()[0][3:].strip(), part))
        found += [(sub.splitlines()[0][4:].strip(), sub) for sub in subs[1:]]
    return found


def full_rules_help(game: Game, which: str) -> str:
    """``help rules full`` (``which`` empty: the sections, numbered) or ``help rules N`` /
    ``help rules WORD``: one section of the game's full rules, as plain text."""
    try:
        page = full_rules(game.name)
    except OSError:
        return f"the full rules of {game.title} are not installed with this p2pcards"
    parts = sections(page)
    if which:
        titles = [title.lower() for title, _ in parts]
        chosen: list[int] = next((found for found in (
            [k for k in range(len(parts)) if which in (str(k + 1), titles[k])],
            [k for k, title in enumerate(titles) if which in title.split()],
            [k for k, title in enumerate(titles) if title.startswith(which)]) if found), [])
        if len(chosen) == 1:
            k = chosen[0]
            whole = not parts[k][1].startswith("###")  # (its subsections shown with it)
            later = [j for j in range(k + 1, len(parts))
                     if not (whole and parts[j][1].startswith("###"))]
            after = f"\n(next: help rules {later[0] + 1}, {parts[later[0]][0]})" if later else ""
            return plain(parts[k][1]).rstrip("\n") + after
        if not chosen:
            return f"no section {which!r} in the rules of {game.title}: help rules full" \
                " lists them"
    listed = "\n".join(f"  {k:>2}  {'  ' if text.startswith('###') else ''}{title}"
                       for k, (title, text) in enumerate(parts, 1))
    return (f"The full rules of {game.title}, by section:\n{listed}\nType help rules N,"
            " or a word of its title (help rules scoring);\nthe whole rules, from the shell:"
            f" p2pcards rules {game.name}")


def help_text(game: Game, topic: str, options: dict[str, int] | None = None) -> str:
    """The text of ``help topic`` at a table of ``game`` with these table options."""
    topic = " ".join(topic.lower().split())
    first, _, rest = topic.partition(" ")
    if first in ("rules", game.name) and rest:
        return full_rules_help(game, "" if rest in ("full", "all") else rest)
    full = "\nFull rules: help rules full (section by section)."
    if topic in ("rules", game.name) and options:
        table = ", ".join(f"{k} {v}" for k, v in sorted(options.items()))
        return f"{game.brief}\nThis table: {table}.{full}"
    if topic in ("moves", "input", "cards"):
        return f"{MOVES}\n{game.moves_help}"
    if topic in ("rules", game.name):
        return game.brief + full
    if topic in GAMES:
        return GAMES[topic].brief + f"\nFull rules, from the shell: p2pcards rules {topic}"
    return f"no help on {topic!r}: try help, help rules, help rules full, help moves"
