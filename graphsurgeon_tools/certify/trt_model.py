"""TensorRT's resize arithmetic as onnx-tensorrt's Resize importer sets it up: a MODEL, not a run.

What the parser does with a Resize whose scales are a tensor (onnx-tensorrt 96e78110,
``onnxOpImporters.cpp`` ``DEFINE_BUILTIN_OP_IMPORTER(Resize)``; ``importerUtils.cpp``
``resizeShapeTensor``), and what NVIDIA/TensorRT#823 reports of the layer:

* output size: ``Cast(Shape(X), float) * scales -> Floor -> Cast(int32)``, in float32;
* the IResizeLayer gets that shape (``setInput(1, ...)``), so it resizes by ``out / in``,
  not by the scale the model carries (equal only where ``in * scale`` is whole);
* coordinates: align_corners -> kALIGN_CORNERS; half_pixel -> kHALF_PIXEL; pytorch_half_pixel
  -> kHALF_PIXEL with selector kUPPER (an output length of 1 reads pixel 0); asymmetric ->
  kASYMMETRIC; tf_half_pixel_for_nn -> kHALF_PIXEL with kCEIL rounding; other modes refused;
* nearest rounding: floor -> kFLOOR, ceil -> kCEIL, round_prefer_floor -> kHALF_DOWN,
  round_prefer_ceil -> kHALF_UP; cubic_coeff_a and exclude_outside passed through;
  antialias has no TensorRT equivalent (refused by the parser).

The model computes coordinates in float32 (the GPU kernels' precision) and the per-axis
matrix directly (no probe: there is no engine here). Requires: nothing beyond numpy.
Ensures: the same :class:`~.bands.Band` form as a run. Does NOT claim TensorRT's exact
float rounding: its comparisons carry the linear/cubic weight bound like any float32 engine.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from graphsurgeon_tools.certify.bands import Band
from graphsurgeon_tools.certify.readers import Reader
from graphsurgeon_tools.certify.semantics import SiteSemantics

__all__ = ["PARSER_SNAPSHOT", "TensorRTModel", "trt_output_length"]

PARSER_SNAPSHOT = "onnx/onnx-tensorrt 96e781103cfc4adf4a6bb557e94bac8e693f6f4c (2024-06-17, TensorRT 10.1)"
_MAPPED = ("align_corners", "half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn")


def trt_output_length(length: int, factor: float) -> int:
    """floor(float32(in) * float32(scale)) in float32, as resizeShapeTensor computes it."""
    return int(np.floor(np.float32(length) * np.float32(factor)))


class TensorRTModel(Reader):
    def __init__(self, semantics: SiteSemantics) -> None:
        super().__init__(
            "tensorrt-model",
            semantics,
            kind="model",
            note="a model of TensorRT's arithmetic (" + PARSER_SNAPSHOT + "; NVIDIA/TensorRT#823), not a run",
        )
        self.refused = ""
        if semantics.antialias:
            self.refused = "antialias: the parser refuses it"
        elif semantics.coordinate_transformation_mode not in _MAPPED:
            self.refused = f"{semantics.coordinate_transformation_mode}: the parser refuses it"

    def wants(self, length: int, factor: float) -> bool:
        return not self.refused and trt_output_length(length, factor) >= 1

    def band(self, length: int, factor: float, axis: str) -> Optional[Band]:
        if not self.wants(length, factor):
            return None
        started, cpu = time.perf_counter(), time.thread_time()
        self.calls += 1
        try:
            return self._band(length, factor)
        finally:
            self.seconds += time.perf_counter() - started
            self.cpu_seconds += time.thread_time() - cpu

    def _band(self, length: int, factor: float) -> Band:
        out = trt_output_length(length, factor)
        s = self.semantics
        f32 = np.float32
        i = np.arange(out, dtype=np.float32)
        ratio = f32(length) / f32(out)  # in / out: the layer's own scale
        ctm = s.coordinate_transformation_mode
        if ctm == "align_corners":
            x = i * (f32(length - 1) / f32(out - 1)) if out > 1 else np.zeros(out, np.float32)
        elif ctm == "asymmetric":
            x = i * ratio
        elif ctm == "pytorch_half_pixel" and out == 1:
            x = np.zeros(out, np.float32)  # selector kUPPER
        else:
            x = (i + f32(0.5)) * ratio - f32(0.5)
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        weights: list[np.ndarray] = []
        if s.mode == "nearest":
            rounding = "ceil" if ctm == "tf_half_pixel_for_nn" else s.nearest_mode
            pick = {
                "floor": np.floor(x),
                "ceil": np.ceil(x),
                "round_prefer_floor": np.ceil(x - f32(0.5)),
                "round_prefer_ceil": np.floor(x + f32(0.5)),
            }[rounding]
            rows.append(np.arange(out))
            cols.append(np.clip(pick, 0, length - 1).astype(np.int64))
            weights.append(np.ones(out, np.float32))
        elif s.mode == "linear":
            xc = np.clip(x, f32(0), f32(length - 1))
            x0 = np.floor(xc)
            w1 = (xc - x0).astype(np.float32)
            x0i = x0.astype(np.int64)
            for col, w in ((x0i, f32(1) - w1), (np.minimum(x0i + 1, length - 1), w1)):
                rows.append(np.arange(out))
                cols.append(col)
                weights.append(w.astype(np.float32))
        else:
            a = f32(s.cubic_coeff_a)
            x0 = np.floor(x)
            t = (x - x0).astype(np.float32)
            base = x0.astype(np.int64)
            taps = []
            for offset in (-1, 0, 1, 2):
                d = np.abs(t - f32(offset)).astype(np.float32)
                w = np.where(
                    d <= 1,
                    ((a + 2) * d - (a + 3)) * d * d + 1,
                    np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0),
                ).astype(np.float32)
                taps.append((base + offset, w))
            if s.exclude_outside:
                inside = [((c >= 0) & (c < length)) for c, _ in taps]
                total = sum(np.where(m, w, 0) for (c, w), m in zip(taps, inside))
                taps = [(c, np.where(m, w / total, 0).astype(np.float32)) for (c, w), m in zip(taps, inside)]
            for c, w in taps:
                rows.append(np.arange(out))
                cols.append(np.clip(c, 0, length - 1))
                weights.append(w)
        return _band(length, out, np.concatenate(rows), np.concatenate(cols), np.concatenate(weights))


def _band(length: int, out: int, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray) -> Band:
    """Merge repeated (row, col) entries (clamped taps) and drop zeros."""
    keys = rows.astype(np.int64) * (length + 1) + cols
    unique, inverse = np.unique(keys, return_inverse=True)
    summed = np.zeros(unique.size, dtype=np.float32)
    np.add.at(summed, inverse, weights.astype(np.float32))
    keep = summed != 0
    unique, summed = unique[keep], summed[keep]
    r = unique // (length + 1)
    indptr = np.zeros(out + 1, dtype=np.int64)
    np.add.at(indptr, r + 1, 1)
    return Band(length, out, np.cumsum(indptr), (unique % (length + 1)).astype(np.int32), summed)
