"""The implementations a certificate compares, each able to give a site's per-axis band.

A reader answers ``band(length, factor, axis) -> Band | None`` (None: this implementation
cannot take the point, e.g. an output length of 0):

* :class:`OrtResizeReader` ("onnxruntime"): ONNX Runtime's own Resize with the site's
  attributes, one session (symbolic input shape, scales or sizes as an input) reused for
  every length: the original model's semantics, run;
* :class:`SiteReader` ("candidate"): the rewritten model's node as the candidate feeds it --
  a Resize given scales or sizes, or the DynamicTRTResize node run by onnxtool's compiled
  library (:func:`graphsurgeon_tools.runtime.make_session`), with (X, scales), (X, size
  tensor) or (X, sizes); run;
* :class:`OnnxReferenceReader` ("onnx-reference"): ``onnx.reference`` on the same Resize; run,
  but its Resize loops in Python per output element, so it takes the points a time budget
  allows (``covers="sampled"``, the points listed);
* :class:`TensorRTModel` ("tensorrt-model"): TensorRT's resize arithmetic as onnx-tensorrt's
  Resize importer sets it up (a MODEL, not a run: see :mod:`.trt_model`);
* readers the PyTorch side registers (:func:`graphsurgeon_tools.extensions.resize_readers`):
  "torch-routed" (the C++ op with the attributes and scales the router passes) and
  "torch-interpolate" (PyTorch's own ``F.interpolate``).

Requires: the site's :class:`~.semantics.SiteSemantics`. Ensures: every run goes through
:func:`.bands.read_band` (one engine call per (length, factor, axis)). Does NOT compare.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
from onnx import TensorProto, helper

from graphsurgeon_tools.certify.bands import Band, read_band, span_for
from graphsurgeon_tools.certify.semantics import SiteSemantics
from graphsurgeon_tools.runtime import make_session
from graphsurgeon_tools.runtime.kernels import kernel_backend
from graphsurgeon_tools.runtime.session import ort_module

__all__ = ["OnnxReferenceReader", "OrtResizeReader", "Reader", "RegisteredReader", "SiteReader", "output_length"]

_OPSET = 19


def output_length(length: int, factor: float) -> int:
    """floor(length * float32(factor)) in float64: the ONNX spec's output length for a scales input."""
    return int(math.floor(length * float(np.float32(factor))))


@dataclass
class Reader:
    """One implementation. ``kind``: "run" or "model"; ``covers``: "every" or "sampled"."""

    name: str
    semantics: SiteSemantics
    kind: str = "run"
    covers: str = "every"
    note: str = ""
    points: list[tuple[int, float, str]] = field(default_factory=list)  # sampled readers: what ran
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this thread's CPU (an engine's own worker threads not included)
    calls: int = 0

    def run(self, x: np.ndarray, factor: float, axis: str) -> Optional[np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    #: Readers with the same key make the same engine call: one band serves them all.
    key: Any = None

    def wants(self, length: int, factor: float) -> bool:
        return True

    def band(self, length: int, factor: float, axis: str) -> Optional[Band]:
        if not self.wants(length, factor):
            return None
        started, cpu = time.perf_counter(), time.thread_time()
        spacing = span_for(self.semantics.mode, float(np.float32(factor)), bool(self.semantics.antialias))
        result: dict[str, Any] = {}

        def run(x: np.ndarray) -> np.ndarray:
            y = self.run(x, factor, axis)
            if y is None:
                raise _Skip()
            result["y"] = y
            return y

        try:
            band = read_band(run, length, axis, spacing)
        except _Skip:
            band = None
        self.seconds += time.perf_counter() - started
        self.cpu_seconds += time.thread_time() - cpu
        self.calls += 1
        if self.covers == "sampled":
            self.points.append((length, factor, axis))
        return band

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "covers": self.covers,
            "note": self.note,
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "cpu_seconds": round(self.cpu_seconds, 3),
            **({"points": [[p[0], p[1], p[2]] for p in self.points]} if self.covers == "sampled" else {}),
        }


class _Skip(Exception):
    pass


def _axis_vector(factor: float, axis: str) -> list[float]:
    return [1.0, 1.0, factor, 1.0] if axis == "h" else [1.0, 1.0, 1.0, factor]


def _session(model: Any) -> Any:
    """A probe session on one thread: probes are small, and the machines they run on are shared."""
    options = ort_module().SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return make_session(model, sess_options=options)


def _resize_model(semantics: SiteSemantics, param: str) -> Any:
    """A one-node Resize-19 model: X [n, c, h, w] (symbolic) and scales (float) or sizes (int64) as inputs."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", "c", "h", "w"])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    if param == "sizes":
        p = helper.make_tensor_value_info("sizes", TensorProto.INT64, [4])
        node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], **semantics.resize_attributes())
    else:
        p = helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])
        node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], **semantics.resize_attributes())
    graph = helper.make_graph([node], "certify_probe", [x, p], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)], ir_version=9)


def _feed(param: str, x: np.ndarray, factor: float, axis: str) -> Optional[np.ndarray]:
    if param == "sizes":
        shape = list(x.shape)
        index = 2 if axis == "h" else 3
        shape[index] = output_length(shape[index], factor)
        return None if shape[index] < 1 else np.asarray(shape, dtype=np.int64)
    return np.asarray(_axis_vector(factor, axis), dtype=np.float32)


class OrtResizeReader(Reader):
    """ONNX Runtime's Resize with the site's attributes; ``param``: "scales" or "sizes"."""

    def __init__(self, name: str, semantics: SiteSemantics, param: str = "scales", note: str = "") -> None:
        super().__init__(name, semantics, note=note or f"onnxruntime Resize-{_OPSET}, {param} as an input")
        self.param = param
        self.key = ("onnxruntime", semantics, param)
        self.session = _session(_resize_model(semantics, param))

    def wants(self, length: int, factor: float) -> bool:
        return output_length(length, factor) >= 1

    def run(self, x: np.ndarray, factor: float, axis: str) -> Optional[np.ndarray]:
        value = _feed(self.param, x, factor, axis)
        if value is None:
            return None
        return self.session.run(None, {"X": x, self.param: value})[0]


class SiteReader(Reader):
    """The candidate's own node, fed as the candidate's graph feeds it (see :class:`~.semantics.SiteForm`)."""

    def __init__(self, name: str, semantics: SiteSemantics, node: Any, form: str, note: str = "") -> None:
        super().__init__(name, semantics, note=note)

        self.form = form
        if node.op_type == "Resize":
            self.param = "sizes" if form == "sizes" else "scales"
            self.key = ("onnxruntime", semantics, self.param)
            self.session = _session(_resize_model(semantics, self.param))
            self.note = note or (
                f"the candidate's Resize, {self.param} as its graph computes them (ONNX Runtime's "
                "Resize: one run serves every implementation making the same call)"
            )
            self.plugin = False
            return
        self.plugin = True
        second = {
            "scales": ("scales", TensorProto.FLOAT, [4]),
            "sizes": ("sizes", TensorProto.INT64, [4]),
            "size-tensor": ("size_tensor", TensorProto.FLOAT, ["a", "b", "oh", "ow"]),
        }[form]
        self.param = second[0]
        copy = helper.make_node(node.op_type, ["X", self.param], ["Y"], domain=node.domain)
        copy.attribute.extend(node.attribute)
        graph = helper.make_graph(
            [copy],
            "certify_plugin_probe",
            [
                helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", "c", "h", "w"]),
                helper.make_tensor_value_info(self.param, second[1], second[2]),
            ],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", _OPSET), helper.make_opsetid(node.domain, 1)], ir_version=9
        )
        self.session = _session(model)

        self.note = note or f"the candidate's {node.op_type} node ({form}), kernel: {kernel_backend()}"

    def wants(self, length: int, factor: float) -> bool:
        return output_length(length, factor) >= 1

    def run(self, x: np.ndarray, factor: float, axis: str) -> Optional[np.ndarray]:
        if self.form == "size-tensor":
            shape = list(x.shape)
            index = 2 if axis == "h" else 3
            shape[index] = output_length(shape[index], factor)
            value = np.zeros([1, 1, shape[2], shape[3]], dtype=np.float32)
        else:
            value = _feed("sizes" if self.form == "sizes" else "scales", x, factor, axis)
        if value is None:
            return None
        return self.session.run(None, {"X": x, self.param: value})[0]


class OnnxReferenceReader(Reader):
    """``onnx.reference`` on the Resize, within ``budget_s`` seconds (its Resize is per-element Python)."""

    def __init__(self, semantics: SiteSemantics, budget_s: float) -> None:
        super().__init__(
            "onnx-reference",
            semantics,
            covers="sampled",
            note=f"onnx.reference (per-element Python): the points {budget_s:g} s allow",
        )
        from onnx.reference import ReferenceEvaluator  # deferred: onnx.reference (~20 ms); only this reader uses it

        self.evaluator = ReferenceEvaluator(_resize_model(semantics, "scales"))
        self.budget_s = budget_s

    def wants(self, length: int, factor: float) -> bool:
        return output_length(length, factor) >= 1 and self.seconds < self.budget_s

    def run(self, x: np.ndarray, factor: float, axis: str) -> Optional[np.ndarray]:
        scales = np.asarray(_axis_vector(factor, axis), dtype=np.float32)
        return np.asarray(self.evaluator.run(None, {"X": x, "scales": scales})[0], dtype=np.float32)


class RegisteredReader(Reader):
    """A reader the PyTorch side registers: ``fn(x, factor, axis) -> y | None``."""

    def __init__(self, name: str, semantics: SiteSemantics, fn: Callable[..., Any], note: str) -> None:
        super().__init__(name, semantics, note=note)
        self.fn = fn

    def wants(self, length: int, factor: float) -> bool:
        return math.floor(length * factor) >= 1

    def run(self, x: np.ndarray, factor: float, axis: str) -> Optional[np.ndarray]:
        return self.fn(x, factor, axis)
