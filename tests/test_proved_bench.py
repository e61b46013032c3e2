"""``p2pcards bench proved``: the proved deck's measurements, as a person runs them."""

from __future__ import annotations

import json

import pytest

from p2pcards.cli.main import main


def test_bench_proved_reports_every_record(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "proved", "--json", "--seconds", "0.05"]) == 0
    records = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    names = {f"proved.{kind}.{size}" for kind in ("shuffle", "shuffle_prove", "shuffle_verify")
             for size in (52, 54, 80)}
    names |= {f"proved.group.{op}" for op in ("multiply", "base_multiply", "add")}
    names |= {f"proved.{op}" for op in ("share_prove", "share_verify", "key_prove",
                                        "key_verify")}
    assert set(records) == names
    assert all(r["value"] > 0 and r["unit"] in ("ms", "us") for r in records.values())
