"""Which element types each plugin kernel takes: the ONE table swap-plugin's refusals and lint read.

::

    KERNEL_DTYPES["DynamicTRTResize"]   X (= Y) types the compiled ONNX Runtime library runs
    TENSORRT_PLUGIN_DTYPES              X types a TensorRT DynamicTRTResize plugin is written for

Whoever changes what ``csrc/ort/dynamic_trt_resize.cpp`` registers (its ``ops()`` list of X
types) changes :data:`KERNEL_DTYPES` in the same commit; tests/runtime check the two agree by
running the library on every listed type. swap-plugin refuses a site whose X type is not
listed (:func:`dtype_refusal`, code ``plugin-dtype-unsupported``) before it changes anything,
with or without its check, so it never writes a model ``make_session`` cannot load.

Requires: onnx's TensorProto codes. Ensures: answers from the tables only. Does NOT load the
library (the table is what it was built to take, not a probe).
"""

from __future__ import annotations

from typing import Optional

from onnx import TensorProto

from graphsurgeon_tools.core.dtypes import dtype_name, is_known
from graphsurgeon_tools.refusal import Refusal

__all__ = ["DTYPE_CODE", "KERNEL_DTYPES", "TENSORRT_PLUGIN_DTYPES", "dtype_refusal", "kernel_dtypes",
           "kernel_takes", "names_of"]

#: The refusal code of a site whose X type no kernel of the plugin takes.
DTYPE_CODE = "plugin-dtype-unsupported"

#: X (and output) element types of each plugin op type's compiled ONNX Runtime kernel
#: (csrc/ort/dynamic_trt_resize.cpp, ``ops()``). float16 is computed in float32, rounded once.
KERNEL_DTYPES: dict[str, frozenset[int]] = {
    "DynamicTRTResize": frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16}),
}

#: What a TensorRT plugin must declare in ``supportsFormatCombination`` for a site of each
#: type to build: the plugin the MMDeploy tutorial writes (and the one a deployment ships
#: under this name) takes float32 linear tensors only; float16 needs a plugin that declares
#: ``kHALF``, int8 one that declares ``kINT8`` with the tensor's scale.
TENSORRT_PLUGIN_DTYPES: frozenset[int] = frozenset({TensorProto.FLOAT})


def names_of(types: frozenset[int]) -> list[str]:
    return sorted(dtype_name(t) for t in types if is_known(t))


def kernel_dtypes(op_type: str = "DynamicTRTResize") -> frozenset[int]:
    """The X types the compiled kernel of ``op_type`` takes (empty: no kernel here)."""
    return KERNEL_DTYPES.get(op_type, frozenset())


def kernel_takes(elem_type: int, op_type: str = "DynamicTRTResize") -> bool:
    """Whether the kernel of ``op_type`` runs an X of ``elem_type`` (0, unknown: assumed float32)."""
    return (elem_type or TensorProto.FLOAT) in kernel_dtypes(op_type)


def dtype_refusal(elem_type: int, op_type: str = "DynamicTRTResize", *, what: str = "X") -> Optional[Refusal]:
    """The refusal of a site whose ``what`` tensor is ``elem_type`` when the kernel lacks that type, else None."""
    if kernel_takes(elem_type, op_type):
        return None
    name = dtype_name(elem_type) if is_known(elem_type) else f"element type {elem_type}"
    takes = ", ".join(names_of(kernel_dtypes(op_type))) or "nothing"
    text = (f"{what} is {name}: the {op_type} kernel here takes {takes} only, so a plugin node on this tensor "
            "would not load in ONNX Runtime")
    if name in ("int8", "uint8"):
        text += ("; a quantized Resize keeps its float form between DequantizeLinear and QuantizeLinear "
                 "(qdq_form=\"inside\")")
    return Refusal(DTYPE_CODE, text)
