"""swap-plugin's ONE options object: the keywords of :func:`swap_plugin`, frozen.

The public function keeps its typed, documented signature and builds this object from its
own keywords; the CLI builds the same object from its flags; :class:`SwapPlugin` takes it. A
test keeps the function's keywords and these fields equal (names, types, defaults).

Requires: nothing. Ensures: an instance is a consistent request (the usage errors that need
neither the model nor the spec file are raised here, exit 2). Does NOT read the spec file
(the pass does, once).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.passes.swap_plugin.qdq_forms import QDQ_FORMS
from graphsurgeon_tools.plugins import PluginSpec

__all__ = ["SIGNATURES", "SwapPluginOptions"]

SIGNATURES = ("scales", "size-tensor", "sizes")


@dataclass(frozen=True)
class SwapPluginOptions:
    """See :func:`graphsurgeon_tools.passes.swap_plugin.swap_plugin` for each field."""

    plugin: Optional[str] = None
    signature: str = "scales"
    domain: Optional[str] = None
    nodes: Optional[Sequence[str]] = None
    reverse: bool = False
    spec: Union[None, str, Path, PluginSpec] = None
    keep_constant: bool = False
    size_input: Optional[str] = None
    inline_functions: bool = False
    check: bool = True
    check_dims: Optional[dict[str, int]] = None
    qdq_form: str = "inside"
    custom_op_libs: Optional[Sequence[Union[str, Path]]] = None
    optimized_figure: bool = False

    def __post_init__(self) -> None:
        if self.signature not in SIGNATURES:
            raise UsageError(f"unknown signature {self.signature!r} (choose from: {', '.join(SIGNATURES)})")
        if self.size_input is not None and (self.signature != "size-tensor" or self.reverse):
            raise UsageError('size_input= needs signature="size-tensor" (and no reverse=True)')
        if self.keep_constant and self.signature == "sizes":
            raise UsageError(
                'keep_constant=True has no signature="sizes" form: the V3 plugin reads its output '
                "(h, w) from an int64 input"
            )
        if self.size_input is not None and not self.size_input.strip():
            raise UsageError("size_input must not be empty")
        if self.qdq_form not in QDQ_FORMS:
            raise UsageError(f"unknown qdq_form {self.qdq_form!r} (choose from: {', '.join(QDQ_FORMS)})")
