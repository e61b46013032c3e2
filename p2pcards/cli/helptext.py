"""``help [topic]`` at the prompt: the commands, how to type moves, each game in brief.

The games' own summaries (``Game.brief``, ``Game.moves_help``) are short and in
the project's own words; the full rules, with every ruling, are in p2pcards/rules/.
"""

from __future__ import annotations

from p2pcards.games import GAMES, Game

MOVES = """\
Type a move as the legal list shows it, in any case, its cards in any order and
seats by name; a card alone plays it. For example:"""


def help_text(game: Game, topic: str, options: dict[str, int] | None = None) -> str:
    """The text of ``help topic`` at a table of ``game`` with these table options."""
    topic = topic.strip().lower()
    if topic in ("rules", game.name) and options:
        table = ", ".join(f"{k} {v}" for k, v in sorted(options.items()))
        return f"{game.brief}\nThis table: {table}."
    if topic in ("moves", "input", "cards"):
        return f"{MOVES}\n{game.moves_help}"
    if topic in ("rules", game.name):
        return game.brief
    if topic in GAMES:
        return GAMES[topic].brief
    return f"no help on {topic!r}: try help, help rules, help moves"
