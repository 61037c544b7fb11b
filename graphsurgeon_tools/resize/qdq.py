"""Quantized Resize sites: ``DequantizeLinear -> Resize -> QuantizeLinear`` (QDQ), as quantizers write them.

``qdq_sites(model) -> {resize output: QdqSite}``::

    Xq --DequantizeLinear(s_in, zp_in[, axis])--> X --Resize--> Y --QuantizeLinear(s_out, zp_out[, axis])--> Yq

onnxruntime.quantization (``QuantFormat.QDQ``; Resize is one of its "direct 8-bit" ops, so
its output Q takes the input DQ's scale and zero point) and NVIDIA ModelOpt (``modelopt.onnx``
INT8) write this form for TensorRT, which fuses it into an INT8 Resize. Per-tensor (scalar
scale) and per-channel (1-D scale with ``axis``) parameters are both recognised; a Resize
whose output also feeds float consumers, or whose input DQ is missing, is "half" QDQ
(``dq`` or ``q`` empty) and still reported.

What ONNX Runtime does with it (onnxruntime 1.32, CPU): from ``ORT_ENABLE_EXTENDED`` on, its
QDQ selector/action transformer drops the DQ/Q pair around a *nearest* Resize whose pair
has equal parameters (the Resize then runs on the int8/uint8 tensor: exact, since nearest
copies values), and fuses DQ -> Conv -> Q into QLinearConv around it; a linear/cubic Resize
stays float between DQ and Q. At ``ORT_ENABLE_BASIC`` and below no QDQ transformer runs:
every node computes its float function (:data:`UNFUSED_LEVEL`).

Requires: a ModelProto (main graph). Ensures: reads only. Does NOT change the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from onnx import ModelProto, NodeProto, numpy_helper

__all__ = ["FUSED_LEVEL", "UNFUSED_LEVEL", "QdqSite", "qdq_sites"]

#: The ORT level at which no QDQ transformer runs (both models compute the same float function).
UNFUSED_LEVEL = "ORT_ENABLE_BASIC"
#: The first ORT level whose QDQ fusions change a quantized model's arithmetic.
FUSED_LEVEL = "ORT_ENABLE_EXTENDED"
_RESIZE = ("Resize", "Upsample", "DynamicTRTResize")  # the plugin inside the pair is the same site


@dataclass(frozen=True)
class QdqSite:
    """One Resize between quantization nodes (names of the nodes and tensors around it)."""

    resize: str  # the Resize node's name (its output name when unnamed)
    output: str  # the Resize output tensor
    dq: str  # the DequantizeLinear node feeding X ("" if X is not dequantized)
    q: tuple[str, ...]  # QuantizeLinear nodes reading Y (empty if none)
    quantized_input: str  # DQ's input (the int8/uint8 tensor), "" without a DQ
    quantized_outputs: tuple[str, ...]  # the Q nodes' outputs
    per_channel: bool  # a 1-D scale with more than one entry on the DQ or a Q
    axis: Optional[int]  # the per-channel axis (DQ's), None per-tensor
    same_parameters: Optional[bool]  # DQ and every Q share scale and zero point (None: not constant)
    only_q_consumers: bool  # Y feeds QuantizeLinear nodes only

    @property
    def full(self) -> bool:
        """DQ -> Resize -> Q on both sides (Y read by Q nodes only)."""
        return bool(self.dq) and bool(self.q) and self.only_q_consumers

    def describe(self) -> str:
        kind = "per-channel" if self.per_channel else "per-tensor"
        if not self.full:
            side = "after a DequantizeLinear" if self.dq else "before a QuantizeLinear"
            return f"half QDQ ({kind}): a float Resize {side}"
        same = {True: "equal", False: "different", None: "non-constant"}[self.same_parameters]
        return f"DequantizeLinear -> Resize -> QuantizeLinear ({kind}, {same} scale/zero point on both sides)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "resize": self.resize,
            "dq": self.dq,
            "q": list(self.q),
            "per_channel": self.per_channel,
            "axis": self.axis,
            "same_parameters": self.same_parameters,
            "full": self.full,
            "description": self.describe(),
        }


def _constants(model: "ModelProto") -> dict[str, np.ndarray]:
    """Initializers and Constant-node values (small tensors: scales and zero points)."""
    values: dict[str, np.ndarray] = {}
    for init in model.graph.initializer:
        if init.data_location != 1 and int(np.prod(list(init.dims), dtype=np.int64)) <= 4096:
            values[init.name] = numpy_helper.to_array(init)
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.HasField("t"):
                    values[node.output[0]] = numpy_helper.to_array(attr.t)
    return values


def _params(node: "NodeProto", constants: dict[str, np.ndarray]) -> tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    scale = constants.get(node.input[1]) if len(node.input) > 1 else None
    zero = constants.get(node.input[2]) if len(node.input) > 2 and node.input[2] else np.zeros((), np.uint8)
    return scale, zero


def _axis(node: "NodeProto") -> int:
    for attr in node.attribute:
        if attr.name == "axis":
            return int(attr.i)
    return 1


def _equal(
    a: tuple[Optional[np.ndarray], Optional[np.ndarray]], b: tuple[Optional[np.ndarray], Optional[np.ndarray]]
) -> Optional[bool]:
    if any(v is None for v in (*a, *b)):
        return None
    return bool(np.array_equal(np.ravel(a[0]), np.ravel(b[0])) and np.array_equal(np.ravel(a[1]), np.ravel(b[1])))


def qdq_sites(model: "ModelProto") -> dict[str, QdqSite]:
    """Every main-graph Resize/Upsample/DynamicTRTResize fed by a DequantizeLinear or read by a
    QuantizeLinear, by output name."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output if out}
    readers: dict[str, list["NodeProto"]] = {}
    for node in graph.node:
        for name in node.input:
            if name:
                readers.setdefault(name, []).append(node)
    constants: Optional[dict[str, np.ndarray]] = None
    found: dict[str, QdqSite] = {}
    for node in graph.node:
        if node.op_type not in _RESIZE or not node.output or not node.input:
            continue
        dq = producer.get(node.input[0])
        dq = dq if dq is not None and dq.op_type == "DequantizeLinear" else None
        users = readers.get(node.output[0], [])
        qs = [u for u in users if u.op_type == "QuantizeLinear" and u.input[0] == node.output[0]]
        if dq is None and not qs:
            continue
        if constants is None:
            constants = _constants(model)
        in_params = _params(dq, constants) if dq is not None else (None, None)
        out_params = [_params(q, constants) for q in qs]
        per_channel = any(p[0] is not None and np.size(p[0]) > 1 for p in (in_params, *out_params))
        same = None
        if dq is not None and qs:
            verdicts = [_equal(in_params, p) for p in out_params]
            same = None if None in verdicts else all(verdicts)
            if per_channel and same and any(_axis(q) != _axis(dq) for q in qs):
                same = False
        found[node.output[0]] = QdqSite(
            resize=node.name or node.output[0],
            output=node.output[0],
            dq=(dq.name or dq.output[0]) if dq else "",
            q=tuple(q.name or q.output[0] for q in qs),
            quantized_input=dq.input[0] if dq is not None else "",
            quantized_outputs=tuple(q.output[0] for q in qs),
            per_channel=per_channel,
            axis=_axis(dq) if dq is not None and per_channel else None,
            same_parameters=same,
            only_q_consumers=bool(qs) and len(qs) == len(users),
        )
    return found
