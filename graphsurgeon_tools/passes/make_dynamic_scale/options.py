"""make-dynamic-scale's ONE options object: the keywords of :func:`make_dynamic_scale`, frozen.

The public function keeps its typed, documented signature and builds this object from its
own keywords; the CLI builds the same object from its flags; :class:`MakeDynamicScale` takes
it. A test keeps the function's keywords and these fields equal (names, types, defaults).

Requires: nothing. Ensures: an instance is a consistent request (the usage errors that need
no model are raised here, exit 2). Does NOT read the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

from graphsurgeon_tools.errors import UsageError

__all__ = ["LAYOUTS", "DynamicScaleOptions"]

#: What the new input holds (see :mod:`.layouts`).
LAYOUTS = ("scales", "factor", "sizes")


@dataclass(frozen=True)
class DynamicScaleOptions:
    """See :func:`graphsurgeon_tools.passes.make_dynamic_scale.make_dynamic_scale` for each field."""

    nodes: Optional[Sequence[str]] = None
    shared: bool = False
    input_name: Optional[str] = None
    factor: bool = False
    keep_default: bool = False
    from_sizes: bool = False
    simplify: bool = False
    check: bool = True
    inplace: bool = False
    check_dims: Optional[dict[str, int]] = None
    inline_functions: bool = False
    only_free: bool = False
    freedom: bool = True
    layout: str = "scales"
    custom_op_libs: Optional[Sequence[Union[str, Path]]] = None
    atol: float = 0.0
    rtol: float = 0.0
    optimized_figure: bool = False

    def __post_init__(self) -> None:
        if self.only_free and not self.freedom:
            raise UsageError("only_free=True needs the freedom analysis; it does not combine with freedom=False")
        if self.layout not in LAYOUTS:
            raise UsageError(f"layout={self.layout!r} is not a layout (choose from: {', '.join(LAYOUTS)})")
        if self.factor and self.layout != "scales":
            raise UsageError(
                f'factor=True is the float form of the factor; it does not combine with layout="{self.layout}"'
            )
        if not (self.atol >= 0 and self.rtol >= 0):  # NaN fails too
            raise UsageError(f"atol={self.atol} and rtol={self.rtol} must be >= 0")
        if self.input_name is not None and not self.input_name.strip():
            raise UsageError("input_name must not be empty")
