"""How the prompt words what happened for the person reading it.

The person's seat is named "you" in the narration, so its verbs take the
second person ("you win", not "you wins"); a long run of unseen cards (a
reshuffled stock) is shown as a count.
"""

from __future__ import annotations

import re


def second_person(line: str) -> str:
    """The narration names the person "you": "you wins" reads "you win"."""
    return re.sub(r"\byou (wins|takes|clears|adds|bids)\b", lambda m: f"you {m.group(1)[:-1]}",
                  line)


def unseen_runs(line: str) -> str:
    """A long run of unseen cards (a reshuffled stock) as a count: ``stock (40 unseen)``."""
    return re.sub(r"\?( \?){7,}", lambda m: f"({(len(m.group(0)) + 1) // 2} unseen)", line)
