"""Run two models in ONNX Runtime and compare every tensor they share, bit for bit.

"Shared" means: a tensor of the same name produced by a node in both graphs (or a graph output of
both), with a float element type. A rewrite that is exact at the original factors leaves every one
of them identical; the first that differs names the node responsible.

Requires: onnx, onnxruntime, numpy; models as paths (external data beside them) or ModelProtos.
Ensures: inputs are seeded random data, the same for both models; both run with the same ORT
optimization level (default ORT_ENABLE_EXTENDED: the level the issue reports as exact).
Does NOT: run plugin nodes (DynamicTRTResize needs a custom-op library; compare reversed models)
or judge tolerances (that is validate's job): it reports max |a - b| per tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import onnx

_FLOAT = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16}


@dataclass
class SharedDiff:
    compared: int = 0  # how many shared tensors were compared
    differing: list[tuple[str, float]] = field(default_factory=list)  # (tensor, max |a - b|), graph order

    @property
    def exact(self) -> bool:
        return self.compared > 0 and not self.differing


def _load(model: onnx.ModelProto | Path | str) -> onnx.ModelProto:
    # onnx.load reads external data too: the copies below run from memory.
    return model if isinstance(model, onnx.ModelProto) else onnx.load(str(model))


def random_feeds(
    model: onnx.ModelProto, dims: Mapping[str, int] | None = None, seed: int = 0, spatial: int = 64
) -> dict[str, np.ndarray]:
    """Seeded inputs for the graph's data inputs: symbolic or non-positive dims get 1 (first) or ``spatial``."""
    rng = np.random.default_rng(seed)
    initializers = {init.name for init in model.graph.initializer}
    feeds: dict[str, np.ndarray] = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        shape = []
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                shape.append(dim.dim_value)
            else:
                shape.append((dims or {}).get(dim.dim_param, 1 if axis == 0 else spatial))
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        feeds[value.name] = rng.uniform(0.0, 1.0, size=shape).astype(dtype)
    return feeds


def _float_tensors(model: onnx.ModelProto) -> dict[str, None]:
    """Names of float tensors produced by nodes or given as outputs, in graph order (dict as ordered set)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {
        v.name: v.type.tensor_type.elem_type
        for v in (*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input)
    }
    names: dict[str, None] = {}
    for node in model.graph.node:
        for name in node.output:
            if name and types.get(name) in _FLOAT:
                names[name] = None
    for value in model.graph.output:
        names[value.name] = None
    return names


def _session(model: onnx.ModelProto, outputs: list[str], level: Any) -> Any:
    import onnxruntime as ort

    exposed = onnx.ModelProto()
    exposed.CopyFrom(model)
    present = {o.name for o in exposed.graph.output}
    for name in outputs:
        if name not in present:
            exposed.graph.output.append(onnx.ValueInfoProto(name=name))
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.log_severity_level = 3
    return ort.InferenceSession(exposed.SerializeToString(), options, providers=["CPUExecutionProvider"])


def compare_shared(
    original: onnx.ModelProto | Path | str,
    rewritten: onnx.ModelProto | Path | str,
    extra_feeds: Mapping[str, np.ndarray],
    *,
    dims: Mapping[str, int] | None = None,
    level: Any = None,
    seed: int = 0,
) -> SharedDiff:
    """Run both models on the same seeded inputs (``extra_feeds`` only to ``rewritten``) and diff shared tensors."""
    import onnxruntime as ort

    level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED if level is None else level
    a, b = _load(original), _load(rewritten)
    in_b = _float_tensors(b)
    shared = [name for name in _float_tensors(a) if name in in_b]
    feeds = random_feeds(a, dims, seed)
    got_a = _session(a, shared, level).run(shared, feeds)
    got_b = _session(b, shared, level).run(shared, {**feeds, **extra_feeds})
    diff = SharedDiff(compared=len(shared))
    for name, x, y in zip(shared, got_a, got_b):
        if x.shape != y.shape:
            diff.differing.append((name, float("inf")))
        elif not np.array_equal(x, y, equal_nan=True):
            diff.differing.append((name, float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))))
    return diff
