"""The formulas of the protocol's docs are the code's: every ``python`` block of
docs/protocol.md and docs/mental-poker.md is run, in order, one namespace per file,
with ``vectors`` (tests/data/protocol_vectors.json as stored: bytes as hex) at hand.
Each block recomputes a construction from its written formula with nothing but
the standard library, and asserts that it gives the stored vector; the vectors are
the code's own output (tests/test_table_codec.py), so a doc that drifts from the code
fails here."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOCS = ["docs/protocol.md", "docs/mental-poker.md"]
VECTORS = ROOT / "tests" / "data" / "protocol_vectors.json"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
STANDARD = {"hashlib", "hmac", "struct", "itertools", "functools", "math"}
"""What a block may import: what any implementer has (no project code, no package)."""


def blocks(doc: str) -> list[tuple[int, str]]:
    """The ``python`` blocks of a doc, with the line each begins on."""
    text = (ROOT / doc).read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


def imports(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    return names


@pytest.mark.parametrize("doc", DOCS)
def test_every_formula_block_runs_and_matches_the_vectors(doc: str) -> None:
    found = blocks(doc)
    assert found, f"{doc} has no runnable formula"
    namespace: dict[str, object] = {"vectors": json.loads(VECTORS.read_text())}
    for line, source in found:
        outside = imports(source) - STANDARD
        assert not outside, f"{doc}:{line}: a formula imports {sorted(outside)}"
        assert "assert " in source or "def " in source, \
            f"{doc}:{line}: a block that neither checks a vector nor defines a step"
        try:
            exec(compile(source, f"{doc}:{line}", "exec"), namespace)
        except AssertionError as error:
            raise AssertionError(f"{doc}:{line}: the formula does not give the vector"
                                 f" {error}") from error


@pytest.mark.parametrize("doc", DOCS)
def test_a_formula_that_drifts_fails(doc: str) -> None:
    """The harness catches a doc whose formulas drift from the code: with every domain
    tag's version changed, the blocks no longer give the vectors."""
    namespace: dict[str, object] = {"vectors": json.loads(VECTORS.read_text())}
    with pytest.raises(AssertionError):
        for _, source in blocks(doc):
            exec(source.replace("/v1", "/v2"), namespace)
