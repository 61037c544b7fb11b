"""Which element types each plugin op type's kernel takes, per mode: a view of the one table.

::

    KERNEL_DTYPES["DynamicTRTResize"]   X (= Y) types the compiled ONNX Runtime library runs
                                        (derived from resize.kernel_dtypes.KERNEL_DTYPES)
    TENSORRT_PLUGIN_DTYPES              X types a TensorRT DynamicTRTResize plugin is written for

The dtypes and modes the compiled kernels take have ONE home,
:mod:`graphsurgeon_tools.resize.kernel_dtypes` (the C++ op and the ORT library run the same
kernel). This module only maps plugin op types onto it and turns its answer into swap-plugin's
refusal: a site whose (X type, mode, antialias) the kernel does not run is refused up front
(:func:`dtype_refusal`, code ``plugin-dtype-unsupported``, the reason from
:func:`~graphsurgeon_tools.resize.kernel_dtypes.kernel_dtype_problem`) before anything changes,
with or without the check, so swap-plugin never writes a model ``make_session`` cannot load.

Requires: onnx's TensorProto codes. Ensures: answers from the table only. Does NOT load the
library (the table is what it was built to take, not a probe).
"""

from __future__ import annotations

from typing import Optional

from onnx import TensorProto

from graphsurgeon_tools.core.dtypes import dtype_name, is_known
from graphsurgeon_tools.refusal import Refusal
from graphsurgeon_tools.resize.kernel_dtypes import KERNEL_DTYPES as _KERNEL
from graphsurgeon_tools.resize.kernel_dtypes import kernel_dtype_problem

__all__ = [
    "DTYPE_CODE",
    "KERNEL_DTYPES",
    "TENSORRT_PLUGIN_DTYPES",
    "dtype_refusal",
    "kernel_dtypes",
    "kernel_takes",
    "names_of",
]

#: The refusal code of a site whose X type (or type x mode) no kernel of the plugin takes.
DTYPE_CODE = "plugin-dtype-unsupported"

#: X (and output) element types of each plugin op type's compiled ONNX Runtime kernel, in some mode.
KERNEL_DTYPES: dict[str, frozenset[int]] = {
    "DynamicTRTResize": frozenset(entry.onnx_elem for entry in _KERNEL.values()),
}

#: What a TensorRT plugin must declare in ``supportsFormatCombination`` for a site of each
#: type to build: the plugin the MMDeploy tutorial writes (and the one a deployment ships
#: under this name) takes float32 linear tensors only; float16 needs a plugin that declares
#: ``kHALF``, int8 one that declares ``kINT8`` with the tensor's scale.
TENSORRT_PLUGIN_DTYPES: frozenset[int] = frozenset({TensorProto.FLOAT})


def names_of(types: frozenset[int]) -> list[str]:
    return sorted(dtype_name(t) for t in types if is_known(t))


def kernel_dtypes(op_type: str = "DynamicTRTResize") -> frozenset[int]:
    """The X types the compiled kernel of ``op_type`` takes in some mode (empty: no kernel here)."""
    return KERNEL_DTYPES.get(op_type, frozenset())


def kernel_takes(elem_type: int, op_type: str = "DynamicTRTResize", mode: Optional[str] = None) -> bool:
    """Whether the kernel of ``op_type`` runs an X of ``elem_type`` (0, unknown: assumed float32), in
    ``mode`` when given."""
    elem = elem_type or TensorProto.FLOAT
    if elem not in kernel_dtypes(op_type):
        return False
    return mode is None or kernel_dtype_problem(elem, mode) is None


def dtype_refusal(
    elem_type: int,
    op_type: str = "DynamicTRTResize",
    *,
    mode: str = "nearest",
    antialias: bool = False,
    what: str = "X",
) -> Optional[Refusal]:
    """The refusal of a site whose ``what`` tensor is ``elem_type`` when the kernel of ``op_type`` cannot
    run it in ``mode`` (with ``antialias``), else None. An op type with no kernel here is not judged."""
    if op_type not in KERNEL_DTYPES:
        return None
    elem = elem_type or TensorProto.FLOAT
    problem = kernel_dtype_problem(elem, mode, antialias=antialias, plugin=True)
    if problem is None:
        return None
    name = dtype_name(elem) if is_known(elem) else f"element type {elem}"
    text = f"{what} is {name}: {problem}, so a {op_type} node on this tensor would not load or run in ONNX Runtime"
    return Refusal(DTYPE_CODE, text)
