"""swap-plugin's report types: the common PassResult plus plugin, domain, signature, spec.

Does NOT compute anything: the rewrites fill these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from graphsurgeon_tools.passes.base import PassResult, Skip

__all__ = ["SkippedNode", "SwapPluginResult", "SwappedNode"]

#: swap-plugin's skip type is the common one.
SkippedNode = Skip


@dataclass(frozen=True)
class SwappedNode:
    """One node that was rewritten."""

    node: str
    op_type_before: str
    op_type_after: str
    domain_after: str
    signature: str  # "scales" | "size-tensor" | "generic"
    inputs: tuple[str, ...]
    attributes: dict[str, Any]
    scales_before: Optional[tuple[float, ...]] = None
    notes: tuple[str, ...] = ()
    free: Optional[bool] = None  # factor freedom (resize.freedom): can this site's factor change alone?
    pinned_by: Optional[str] = None  # when not free: the node that breaks and the shapes meeting there

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "op_type_before": self.op_type_before,
            "op_type_after": self.op_type_after,
            "domain_after": self.domain_after,
            "signature": self.signature,
            "inputs": list(self.inputs),
            "attributes": dict(self.attributes),
            "scales_before": list(self.scales_before) if self.scales_before is not None else None,
            "notes": list(self.notes),
            "free": self.free,
            "pinned_by": self.pinned_by,
        }


@dataclass
class SwapPluginResult(PassResult):
    """What :func:`swap_plugin` did. ``model`` is a new ModelProto; the input is untouched.

    ``swapped`` is ``rewritten`` under the name this pass's reports have always used.
    """

    plugin: str = ""
    domain: str = ""
    signature: str = "scales"
    reverse: bool = False
    spec_source: str = ""
    # signature="sizes" inputs whose original (h, w) depends on symbolic dims (make-dynamic-scale's
    # layouts.pending_sizes): the check computes them at its input shapes. Not reported.
    pending_sizes: list[Any] = field(default_factory=list, repr=False)

    pass_name = "swap-plugin"

    @property
    def swapped(self) -> list[SwappedNode]:
        return self.rewritten

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data.update(
            {
                "plugin": self.plugin,
                "domain": self.domain,
                "signature": self.signature,
                "reverse": self.reverse,
                "spec": self.spec_source,
                "swapped": data["rewritten"],
            }
        )
        return data
