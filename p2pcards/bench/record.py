"""The one record type every benchmark reports."""

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
