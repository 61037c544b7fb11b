"""make-dynamic-scale's report types: the common PassResult plus the opset before/after.

Does NOT compute anything: the pass fills these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from graphsurgeon_tools.core.declared_inputs import DeclaredInput, vector_layout
from graphsurgeon_tools.passes.base import PassResult, Skip

__all__ = ["DynamicScaleResult", "NewInput", "RewrittenSite", "SkippedSite", "declare_new_inputs"]

#: make-dynamic-scale's skip type is the common one.
SkippedSite = Skip


@dataclass
class RewrittenSite:
    """A site whose scales now come from a graph input."""

    node: str
    op_type: str
    op_version: int
    mode: str
    coordinate_transformation_mode: str
    source: str  # where the constant came from (initializer, constant, identity, folded, attribute, sizes)
    original_scales: list[float]
    new_input: str
    fed_value: list[float]  # what to feed the new input to get the original behaviour ([]: depends on X's size)
    layout: str = "scales"  # what the new input holds: scales | factor | sizes
    onnxruntime: str = ""  # where this layout equals the original in ONNX Runtime
    tensorrt: str = ""  # where TensorRT's out/in arithmetic equals ONNX Runtime's
    layouts: dict[str, Any] = field(default_factory=dict)  # every layout here: expressible? where equal?
    free: Optional[bool] = None  # factor freedom (resize.freedom): can this site's factor change alone?
    pinned_by: Optional[str] = None  # when not free: the node that breaks and the shapes meeting there


@dataclass
class NewInput:
    name: str
    dtype: str
    shape: list[int]
    default: Optional[list[float]] = None  # set with keep_default
    value: list[float] = field(default_factory=list)  # the original value (what the check fed)


@dataclass
class DynamicScaleResult(PassResult):
    """What :func:`make_dynamic_scale` did. ``model`` is the rewritten model (or the input,
    unchanged, when nothing was rewritten)."""

    opset_before: int = 0
    opset_after: int = 0

    pass_name = "make-dynamic-scale"

    def feeds(self) -> dict[str, np.ndarray]:
        """Inputs that make the rewritten model behave like the original."""
        return {
            inp.name: np.asarray(inp.value, dtype=np.int64 if inp.dtype == "int64" else np.float32)
            for inp in self.new_inputs
            if inp.value
        }

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["opset_before"] = self.opset_before
        data["opset_after"] = self.opset_after
        return data


def declare_new_inputs(new_inputs: list[NewInput], plans: list[Any], layout: str) -> list[DeclaredInput]:
    """Each new input as the pass declares it (validate drives it from the written file): the resize
    nodes that read it, its layout by the one rule (core.declared_inputs.vector_layout) and its value."""
    declared = []
    reading: dict[str, list[Any]] = {}  # input -> the sites reading it, in plan order (one pass: linear)
    for plan in plans:
        reading.setdefault(plan.input_name, []).append(plan.site)
    for new in new_inputs:
        sites = reading.get(new.name, [])
        ranks = {s.input_rank for s in sites if s.input_rank}
        length = new.shape[0] if len(new.shape) == 1 else None
        declared.append(
            DeclaredInput(
                name=new.name,
                drives=tuple(s.node_name or f"#{s.node_index}" for s in sites),
                dtype=new.dtype,
                shape=tuple(new.shape),
                layout=vector_layout(length, ranks.pop() if len(ranks) == 1 else None, sizes=layout == "sizes"),
                original=tuple(new.value) if new.value else None,
                by=DynamicScaleResult.pass_name,
            )
        )
    return declared
