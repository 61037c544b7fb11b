"""Per-axis resize matrices read from a real engine with comb probes, stored as bands.

A separable Resize maps one axis of length ``L`` to ``out`` with a matrix ``W`` (``out x L``)
whose rows have few nonzero entries: 1 (nearest), 2 (linear), 4 (cubic), about ``4 / scale``
(antialiased downscaling). :func:`read_band` reads ``W`` from any implementation ``run(x)``
that resizes a ``1 x 1 x K x L`` (axis "w"; ``1 x 1 x L x K`` for axis "h") float32 tensor along
that axis, in ONE run. The other axis has scale 1 (the identity; the check channel would see
any mixing) and carries ``K = S + 2`` probe rows -- one plane, not K channels, because engines
set up a resize once per plane (ONNX Runtime's cubic: half the time):

* channel ``k < S``: a comb of ones at the columns ``j = k (mod S)``: row ``i`` of the output
  is the weight of the one column of residue ``k`` inside the row's band (``S`` >= the band's
  span, so each residue holds at most one nonzero column of the row);
* channel ``S``: the ramp ``j + 1``: divided by the row's weight sum it is the row's centroid,
  and each residue's column is the one of that residue nearest the centroid (unique while the
  band spans fewer than ``S`` columns);
* the last channel: seeded values in [0.5, 1.5): the band predicts its output; a mismatch
  means a band wider than ``S`` (read again with ``2 S``; at ``S >= L`` every residue is one
  column, so the read is exact whatever the band) or a non-linear implementation.

Requires: ``run`` maps float32 arrays to float32 arrays of the same rank and leaves the other
axis alone. Ensures: a :class:`Band` holds only the nonzero entries (CSR rows: ``indptr``,
``cols``, ``weights``), never a dense ``out x L`` matrix; the band's prediction of the check
channel agrees with the engine (float32 rounding of the sum allowed), else
:class:`BandReadError`. Does NOT know what the implementation is; it only runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

__all__ = ["AXES", "Band", "BandReadError", "compare_bands", "probe_input", "read_band", "span_for"]

#: The axes a probe resizes: "w" (the last) and "h" (the one before it).
AXES = ("h", "w")
_MAX_SPACING = 4096


class BandReadError(RuntimeError):
    """The engine's output is not explained by a band of the spacing tried."""


@dataclass(frozen=True)
class Band:
    """Rows of one per-axis matrix: row ``i`` has ``cols[indptr[i]:indptr[i+1]]`` (ascending)
    with ``weights`` at the same positions; ``length`` the input length, ``out`` the output's."""

    length: int
    out: int
    indptr: np.ndarray  # int64, out + 1
    cols: np.ndarray  # int32
    weights: np.ndarray  # float32

    def row(self, i: int) -> list[tuple[int, float]]:
        lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
        return [(int(c), float(w)) for c, w in zip(self.cols[lo:hi], self.weights[lo:hi])]

    def apply(self, vector: np.ndarray) -> np.ndarray:
        """``W @ vector`` in float64 (the prediction of a check channel)."""
        products = self.weights.astype(np.float64) * vector[self.cols].astype(np.float64)
        sums = np.zeros(self.out, dtype=np.float64)
        rows = np.repeat(np.arange(self.out), np.diff(self.indptr))
        np.add.at(sums, rows, products)
        return sums

    @property
    def nbytes(self) -> int:
        return int(self.indptr.nbytes + self.cols.nbytes + self.weights.nbytes)


def span_for(mode: str, scale: float, antialias: bool) -> int:
    """Comb spacing for a mode: the widest band a correct implementation has.

    A band of ``S`` columns around its centroid has every column within ``S / 2`` of it; the
    one tie (a column exactly ``S / 2`` away) has weight 0 in linear and cubic kernels, so it
    is never read. A wider band fails the check row and is read again at ``2 S``."""
    taps = {"nearest": 1, "linear": 2, "cubic": 4}.get(mode, 4)
    if antialias and 0 < scale < 1:
        taps = int(np.ceil(taps / scale)) + 2
    return taps


def probe_input(length: int, spacing: int, axis: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``1 x 1 x (S+2) x L`` (axis "w") or ``1 x 1 x L x (S+2)`` (axis "h") probe, and its check row."""
    cols = np.arange(length)
    probe = np.zeros((spacing + 2, length), dtype=np.float32)
    probe[cols % spacing, cols] = 1.0
    probe[spacing] = cols + 1
    check = np.random.default_rng(length).uniform(0.5, 1.5, length).astype(np.float32)
    probe[-1] = check
    shaped = probe[None, None] if axis == "w" else probe.T[None, None]
    return np.ascontiguousarray(shaped), check


def _decode(y: np.ndarray, length: int, spacing: int) -> Band:
    unit, ramp = y[:spacing], y[spacing].astype(np.float64)  # (S, out), (out,)
    out = unit.shape[1]
    total = unit.astype(np.float64).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        centroid = np.where(total != 0, ramp / total - 1.0, 0.0)
    k, i = np.nonzero(unit)
    w = unit[k, i]
    # the column of residue k nearest the row's centroid
    if spacing >= length:
        col = k.astype(np.int64)  # one column per residue: exact
    else:
        col = k + spacing * np.rint((centroid[i] - k) / spacing).astype(np.int64)
    if col.size and (col.min() < 0 or col.max() >= length):
        raise BandReadError(f"a band column outside 0..{length - 1}")
    order = np.lexsort((col, i))
    i, col, w = i[order], col[order], w[order]
    indptr = np.zeros(out + 1, dtype=np.int64)
    np.add.at(indptr, i + 1, 1)
    return Band(length, out, np.cumsum(indptr), col.astype(np.int32), w.astype(np.float32))


def read_band(run: Callable[[np.ndarray], np.ndarray], length: int, axis: str, spacing: int) -> Band:
    """Read one per-axis matrix from ``run`` (see the module docstring); widens the comb on failure."""
    while True:
        x, check = probe_input(length, spacing, axis)
        y = np.asarray(run(x))
        other = 2 if axis == "w" else 3
        if y.ndim != 4 or y.shape[:2] != (1, 1) or y.shape[other] != x.shape[other]:
            raise BandReadError(f"the probe's other axis changed: {list(x.shape)} -> {list(y.shape)}")
        flat = y[0, 0] if axis == "w" else y[0, 0].T
        try:
            band = _decode(flat, length, spacing)
            predicted = band.apply(check)
            got = flat[-1].astype(np.float64)
            if band.out != flat.shape[1]:
                raise BandReadError("output length")
            # float32 products and sums: a few ulps of the row's absolute sum
            scale = np.zeros(band.out)
            rows = np.repeat(np.arange(band.out), np.diff(band.indptr))
            np.add.at(scale, rows, np.abs(band.weights.astype(np.float64)) * 1.5)
            if band.out and np.any(np.abs(predicted - got) > 1e-5 * (scale + 1.0)):
                raise BandReadError(f"the check channel disagrees with the band read at spacing {spacing}")
            return band
        except BandReadError:
            if spacing >= min(length, _MAX_SPACING):
                raise
            spacing = min(spacing * 2, max(length, 1))


def compare_bands(a: Band, b: Band, tolerance: float) -> tuple[np.ndarray, float]:
    """Rows where ``a`` and ``b`` differ (by more than ``tolerance`` in a weight; 0: any bit), and the
    largest weight difference seen. Both must have the same ``out``."""
    if a.out != b.out:
        raise ValueError("output lengths differ")
    if np.array_equal(a.indptr, b.indptr) and np.array_equal(a.cols, b.cols):  # same entries: compare weights
        diff = np.abs(a.weights.astype(np.float64) - b.weights.astype(np.float64))
        bad = diff > tolerance if tolerance > 0 else (a.weights != b.weights)
        rows = np.repeat(np.arange(a.out, dtype=np.int64), np.diff(a.indptr))
        return np.unique(rows[bad]), float(diff.max()) if diff.size else 0.0
    span = max(a.length, b.length) + 1
    rows_a = np.repeat(np.arange(a.out, dtype=np.int64), np.diff(a.indptr))
    rows_b = np.repeat(np.arange(b.out, dtype=np.int64), np.diff(b.indptr))
    keys_a = rows_a * span + a.cols
    keys_b = rows_b * span + b.cols
    keys = np.union1d(keys_a, keys_b)
    wa = np.zeros(keys.size, dtype=np.float64)
    wb = np.zeros(keys.size, dtype=np.float64)
    wa[np.searchsorted(keys, keys_a)] = a.weights
    wb[np.searchsorted(keys, keys_b)] = b.weights
    diff = np.abs(wa - wb)
    largest = float(diff.max()) if diff.size else 0.0
    bad = diff > tolerance if tolerance > 0 else (wa != wb)
    return np.unique(keys[bad] // span), largest


def first_row_text(band: Optional[Band], row: int) -> list[list[float]]:
    """``[[col, weight], ...]`` of one row (JSON-ready)."""
    if band is None or row >= band.out:
        return []
    return [[c, w] for c, w in band.row(row)]
