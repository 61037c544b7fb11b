"""Find Resize/Upsample sites and where their scales come from.

``find_resize_sites(model) -> list[ResizeSite]`` walks the main graph in node order
and describes every Resize (opset 10, 11-12, 13+, 18+, 19) and Upsample (7, 9).
It only reads the model; it never changes it.

CONTRACT (shared by every pass, the CLI and the reports; do not rename fields):
see :class:`ResizeSite` and :class:`ValueSource` below.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Optional


class ValueSource(str, Enum):
    """Where a Resize input (scales or sizes) gets its value."""

    ABSENT = "absent"  # input not given (or the empty-string placeholder)
    ATTRIBUTE = "attribute"  # Upsample-7: the `scales` attribute
    INITIALIZER = "initializer"
    CONSTANT = "constant"  # a Constant node
    IDENTITY = "identity"  # Identity (chain) of an initializer or Constant
    FOLDED = "folded"  # a constant subgraph that folds to a value
    GRAPH_INPUT = "graph_input"  # already dynamic
    RUNTIME = "runtime"  # computed from run-time data (e.g. Shape -> ... -> Concat)


@dataclass(frozen=True)
class ResizeSite:
    """One Resize or Upsample node and everything a pass or a report needs to know about it."""

    node_name: str
    node_index: int  # position in graph.node
    op_type: str  # "Resize" or "Upsample"
    opset: int  # the default-domain opset the model imports
    input_name: str  # the X tensor
    output_name: str
    mode: str  # nearest | linear | cubic (Upsample's "bilinear" reported as "linear")
    coordinate_transformation_mode: str
    cubic_coeff_a: float
    nearest_mode: str
    exclude_outside: int
    antialias: int
    extrapolation_value: float
    keep_aspect_ratio_policy: str
    axes: Optional[tuple[int, ...]]
    scales: Optional[tuple[float, ...]]  # the constant value, when known
    scales_source: ValueSource
    scales_tensor: str  # tensor name feeding the scales slot ("" if none / attribute)
    sizes: Optional[tuple[int, ...]]
    sizes_source: ValueSource
    sizes_tensor: str
    roi_tensor: str
    input_rank: Optional[int]  # rank of X when known from shapes
    input_shape: Optional[tuple[Any, ...]] = None  # ints for static dims, strings for symbolic
    notes: tuple[str, ...] = field(default=())

    @property
    def has_constant_scales(self) -> bool:
        return self.scales is not None and self.scales_source not in (
            ValueSource.GRAPH_INPUT,
            ValueSource.RUNTIME,
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["scales_source"] = self.scales_source.value
        data["sizes_source"] = self.sizes_source.value
        return data


def find_resize_sites(model: Any) -> list[ResizeSite]:  # implemented by the core issue
    raise NotImplementedError
