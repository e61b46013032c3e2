"""Run mypy on the project as it is installed: ``python -m tests.typecheck``.

``protocol/`` and ``ai/`` sit at the top of the source tree but are installed
(and imported) as ``p2pcards.protocol`` and ``p2pcards.ai`` (pyproject's
``package-dir``).  mypy knows modules by their place in the file tree, so plain
``mypy`` would call them ``protocol`` and ``ai`` and find no ``p2pcards.protocol``.
This runs mypy with pyproject's settings on the files pyproject names, each
under the name it is installed as.  Extra arguments go to mypy.
"""

from __future__ import annotations

import sys

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

MAPPED = {"protocol": "p2pcards.protocol", "ai": "p2pcards.ai"}
"""Top-level folder -> the package it is installed as (pyproject ``package-dir``)."""


def installed_name(module: str) -> str:
    top, dot, rest = module.partition(".")
    if top in MAPPED:
        return MAPPED[top] + dot + rest
    return module


def main(argv: list[str]) -> int:
    sources, options = process_options(argv)
    renamed = [BuildSource(s.path, installed_name(s.module), s.text, s.base_dir)
               for s in sources]
    try:
        messages = build.build(renamed, options).errors
    except CompileError as error:
        messages = error.messages
    for line in messages:
        print(line)
    files = len(renamed)
    if any(": error:" in line for line in messages):
        count = sum(": error:" in line for line in messages)
        print(f"Found {count} error{'s' * (count != 1)} (checked {files} source files)")
        return 1
    print(f"Success: no issues found in {files} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
