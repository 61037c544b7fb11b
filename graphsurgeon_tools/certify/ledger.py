"""What the comparisons of one site found, kept compact: ranges of lengths, first counterexamples.

A :class:`PairLedger` records, for one pair of implementations, each (axis, factor, length)
as ``identical`` (every band entry bit-equal), ``within`` (equal up to the stated weight
bound; the largest difference is kept), ``differs`` (a counterexample: the first differing
output row, both rows' entries, and its known cause) or ``not-run`` (one side has no band
there: a sampled implementation outside its budget, an output length of 0, a mode an engine
refuses). Lengths are grouped into maximal ranges of consecutive profile lengths.

Requires: the bands of one point at a time. Ensures: memory O(ranges + counterexamples
kept), never the bands themselves. Does NOT decide what is gating (the certificate does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from graphsurgeon_tools.certify.bands import Band, compare_bands, first_row_text
from graphsurgeon_tools.certify.causes import Cause, explain
from graphsurgeon_tools.certify.semantics import SiteSemantics

__all__ = ["Counterexample", "PairLedger", "compact_ranges", "weight_bound"]


def weight_bound(mode: str, length: int) -> float:
    """The weight difference allowed between two float32 implementations (0 for nearest: bit equality).

    8 float32 ulps of the largest input coordinate (2^-20 * 2^ceil(log2 L)): coordinates of
    magnitude up to L computed in float32 in one engine and float64 in another differ by a
    few ulps, and a linear/cubic weight moves at most ~1.5x its coordinate."""
    if mode == "nearest":
        return 0.0
    return 2.0**-20 * 2.0 ** math.ceil(math.log2(max(length, 16)))


def compact_ranges(values: list[int]) -> list[list[int]]:
    """Sorted ints -> [[a, b], ...] maximal runs of consecutive integers."""
    ranges: list[list[int]] = []
    for v in sorted(set(values)):
        if ranges and v == ranges[-1][1] + 1:
            ranges[-1][1] = v
        else:
            ranges.append([v, v])
    return ranges


@dataclass
class Counterexample:
    axis: str
    length: int
    factor: float
    out: tuple[int, int]
    row: int
    a: list[list[float]]
    b: list[list[float]]
    rows_differing: int
    cause: Optional[Cause]

    def to_dict(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "length": self.length,
            "factor": self.factor,
            "out": list(self.out),
            "row": self.row,
            "a": self.a,
            "b": self.b,
            "rows_differing": self.rows_differing,
            "cause": self.cause.id if self.cause else None,
        }


@dataclass
class PairLedger:
    a: str
    b: str
    semantics: SiteSemantics
    candidate_is_ort: bool = True
    candidate_form: str = "scales"
    outcomes: dict[tuple[str, float, str], list[int]] = field(default_factory=dict)  # (axis, factor, kind) -> lengths
    # (axis, factor, cause id) -> (its first counterexample, every length of the group)
    counterexamples: dict[tuple[str, float, Optional[str]], tuple[Counterexample, list[int]]] = field(
        default_factory=dict
    )
    largest_within: float = 0.0
    compared: int = 0

    def _note(self, axis: str, factor: float, kind: str, length: int) -> None:
        self.outcomes.setdefault((axis, factor, kind), []).append(length)

    def record(
        self,
        axis: str,
        factor: float,
        length: int,
        band_a: Optional[Band],
        band_b: Optional[Band],
        memo: Optional[dict[Any, Any]] = None,
    ) -> None:
        """Record one point. ``memo``: comparisons already made at this point, by band identity (readers
        sharing a run hand the same band to several pairs)."""
        if band_a is None and band_b is None:
            return self._note(axis, factor, "not-run", length)
        if band_a is None or band_b is None:
            return self._note(axis, factor, "not-run", length)
        self.compared += 1
        if band_a.out != band_b.out:
            return self._differs(axis, factor, length, band_a, band_b, 0, 1)
        if band_a is band_b:  # one engine call serves both (same attributes, same feeds): identical
            return self._note(axis, factor, "identical", length)
        key = (id(band_a), id(band_b))
        if memo is not None and key in memo:
            rows, largest = memo[key]
        else:
            rows, largest = compare_bands(band_a, band_b, weight_bound(self.semantics.mode, length))
            if memo is not None:
                memo[key] = (rows, largest)
        if rows.size:
            return self._differs(axis, factor, length, band_a, band_b, int(rows[0]), int(rows.size))
        if largest == 0.0:
            return self._note(axis, factor, "identical", length)
        self.largest_within = max(self.largest_within, largest)
        self._note(axis, factor, "within", length)

    def _differs(self, axis: str, factor: float, length: int, a: Band, b: Band, row: int, count: int) -> None:
        cause = explain(
            self.a, self.b, self.semantics, length, factor, a.out, b.out, self.candidate_is_ort, self.candidate_form
        )
        key = (axis, factor, cause.id if cause else None)
        if key in self.counterexamples:
            self.counterexamples[key][1].append(length)
        else:
            example = Counterexample(
                axis, length, factor, (a.out, b.out), row, first_row_text(a, row), first_row_text(b, row), count, cause
            )
            self.counterexamples[key] = (example, [length])
        self._note(axis, factor, "differs", length)

    @property
    def differs(self) -> bool:
        return bool(self.counterexamples)

    def first(self) -> Optional[Counterexample]:
        found = [first for first, _ in self.counterexamples.values()]
        return min(found, key=lambda c: (c.length, c.factor, c.axis)) if found else None

    def to_dict(self) -> dict[str, Any]:
        def group(kind: str) -> list[dict[str, Any]]:
            return [
                {"axis": axis, "factor": factor, "lengths": compact_ranges(lengths)}
                for (axis, factor, k), lengths in sorted(self.outcomes.items())
                if k == kind
            ]

        groups = []
        for (axis, factor, cause), (first, lengths) in sorted(
            self.counterexamples.items(), key=lambda i: (i[0][0], i[0][1], i[0][2] or "")
        ):
            groups.append(
                {
                    "axis": axis,
                    "factor": factor,
                    "cause": cause,
                    "source": first.cause.source if first.cause else None,
                    "lint_rule": first.cause.lint_rule if first.cause else None,
                    "lengths": compact_ranges(lengths),
                    "count": len(lengths),
                    "first": first.to_dict(),
                }
            )
        verdict = "differs" if groups else ("identical" if not self.largest_within else "within-bound")
        if not self.compared:
            verdict = "not-compared"
        return {
            "a": self.a,
            "b": self.b,
            "verdict": verdict,
            "compared": self.compared,
            "identical": group("identical"),
            "within_bound": group("within"),
            "largest_weight_difference": self.largest_within,
            "not_run": group("not-run"),
            "counterexamples": groups,
        }
