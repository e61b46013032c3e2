"""The one record type every benchmark reports, and the table ``p2pcards bench`` prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class Record:
    """One measurement: a dotted, stable ``name`` (``engines.bidwhist.plays``), its
    ``value`` and its ``unit`` (``per_s``, ``ms``, ``s``, ``x``, ``KiB`` ...)."""

    name: str
    value: float
    unit: str

    def as_json(self) -> dict[str, object]:
        """``{"name": ..., "value": ..., "unit": ...}`` (``bench --json``)."""
        return asdict(self)


def format_table(records: list[Record]) -> str:
    """``records`` as an aligned table, one line each (``bench`` without ``--json``)."""
    width = max(len(r.name) for r in records)
    lines = [f"{'measurement':<{width}}  {'value':>12}  unit"]
    for r in records:
        shown = f"{r.value:>12,.1f}" if abs(r.value) >= 10 or r.value == int(r.value) \
            else f"{r.value:>12.3f}"  # a share or a log-likelihood: its decimals matter
        lines.append(f"{r.name:<{width}}  {shown}  {r.unit}")
    return "\n".join(lines)
