"""What an exported ModelProto holds, and whether ONNX Runtime agrees with the module that made it.

``describe_values(value_infos) -> [{name, dtype, shape}]`` and ``op_types(model) -> {op: count}``
(the :class:`~exporters.onnx_export.ExportResult` fields); ``compare_in_ort(model_proto, module,
cases, input_names, rtol, atol, use_plugin_runtime, label) -> max |diff|``.

Requires: torch and onnxruntime (graphsurgeon_tools.runtime for plugin ops). Ensures: the
comparison feeds each case to both sides and raises CheckFailedError at the first case whose
shapes differ or whose values miss ``np.allclose(rtol, atol)``. Does NOT run onnx.checker or
write anything (:func:`exporters.onnx_export.export` does both).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np
import onnx
import torch

from graphsurgeon_tools.errors import CheckFailedError
from graphsurgeon_tools.runtime import make_session
from graphsurgeon_tools.runtime.session import ort_module

__all__ = ["STANDARD_DOMAINS", "compare_in_ort", "describe_values", "op_types"]

STANDARD_DOMAINS = ("", "ai.onnx")


def describe_values(values) -> list[dict]:
    """name, dtype (numpy's name) and shape (dim names for symbolic axes, None when unknown) of each value info."""
    described = []
    for value in values:
        tensor_type = value.type.tensor_type
        shape = (
            [
                dim.dim_param if dim.HasField("dim_param") else (dim.dim_value if dim.HasField("dim_value") else None)
                for dim in tensor_type.shape.dim
            ]
            if tensor_type.HasField("shape")
            else None
        )
        described.append(
            {
                "name": value.name,
                "dtype": onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type).name
                if tensor_type.elem_type
                else None,
                "shape": shape,
            }
        )
    return described


def op_types(model) -> dict[str, int]:
    """Node count per op type; a custom-domain op is ``"domain::Op"``."""
    counts = Counter(
        node.op_type if node.domain in STANDARD_DOMAINS else f"{node.domain}::{node.op_type}"
        for node in model.graph.node
    )
    return dict(counts)


def compare_in_ort(
    model_proto,
    module: torch.nn.Module,
    cases: Sequence[Sequence[torch.Tensor]],
    input_names: Sequence[str],
    rtol: float,
    atol: float,
    use_plugin_runtime: bool,
    label: str,
) -> float:
    """The largest absolute difference between ONNX Runtime's outputs and the module's eager ones over
    ``cases``; CheckFailedError (naming ``label`` and the input shapes) on a shape or allclose miss.
    ``use_plugin_runtime``: the session comes from graphsurgeon_tools.runtime.make_session (plugin ops)."""
    if use_plugin_runtime:
        session = make_session(model_proto)
    else:
        session = ort_module().InferenceSession(model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
    graph_inputs = [i.name for i in session.get_inputs()]
    worst = 0.0
    for case in cases:
        with torch.no_grad():
            expected = module(*case)
        expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
        feeds = {name: value.detach().cpu().numpy() for name, value in zip(input_names, case) if name in graph_inputs}
        got = session.run(None, feeds)
        for want, have in zip(expected, got):
            want = want.detach().cpu().numpy()
            if want.shape != have.shape:
                raise CheckFailedError(
                    f"{label}: ONNX Runtime output shape {have.shape} differs from PyTorch's {want.shape} "
                    f"for input shapes {[tuple(t.shape) for t in case]}"
                )
            diff = float(np.max(np.abs(want.astype(np.float64) - have.astype(np.float64)))) if want.size else 0.0
            worst = max(worst, diff)
            if not np.allclose(have, want, rtol=rtol, atol=atol):
                raise CheckFailedError(
                    f"{label}: ONNX Runtime differs from PyTorch by up to {diff:.3g} (rtol {rtol:g}, atol {atol:g}) "
                    f"for input shapes {[tuple(t.shape) for t in case]}"
                )
    return worst
