"""Which element types onnxtool's compiled Resize kernels take, per mode: the one table.

The compiled kernels are the C++ op ``torch.ops.onnxtool.resize`` and the ONNX Runtime
custom-op library (DynamicTRTResize in ``trt.plugins``); both run the same C++ kernel
(csrc/resize_kernel.h), so they take the same dtypes. A pass that would hand a node of
another dtype (or an unsupported dtype x mode) to a plugin node refuses it up front with
:func:`kernel_dtype_problem`'s reason; it never learns it from a failed check.

``KERNEL_DTYPES[name]`` (numpy-style names) -> :class:`KernelDtype`:

========  ======================  =========  ==================  =====================================
dtype     modes                   antialias  ORT's own Resize    arithmetic (what "equal" means)
========  ======================  =========  ==================  =====================================
float32   nearest, linear, cubic  op only    yes                 nearest exact; linear/cubic float32
                                                                 within a few ulps of ORT
float16   nearest, linear, cubic  op only    yes                 computed in float32, rounded once
                                                                 (as ORT); nearest and linear exact
bfloat16  nearest, linear, cubic  op only    no (NOT_IMPLEMENTED) as float16, against ORT float32
                                                                 rounded to bfloat16
float64   nearest, linear, cubic  op only    no (NOT_IMPLEMENTED) computed in double; no ORT reference
uint8     nearest, linear         no         yes                 ORT's: float32 blend, truncated
int8      nearest, linear         no         yes                 ORT's: float32 blend, truncated
int32     nearest, linear         no         yes                 ORT's: float32 blend, truncated
========  ======================  =========  ==================  =====================================

"op only": the torch op takes ``antialias``; the plugin node (and so the ORT library) has
no antialias attribute at all. Integer cubic is refused because ONNX Runtime itself cannot
run it (its CPU kernel fails at run time without antialias), so there is no arithmetic to
match. int64, bool and the other ONNX types are not taken (ORT's Resize has no kernel
for them either).

Requires: nothing (pure constants). Ensures: :func:`kernel_dtype_problem` returns None
exactly for the combinations the compiled kernels run. Does NOT say anything about
TensorRT's own plugin (lint does) or build a Refusal (the pass picks the code).
"""

from __future__ import annotations

from dataclasses import dataclass

from graphsurgeon_tools.core.dtypes import elem_type

__all__ = ["KERNEL_DTYPES", "ONNX_ELEM_DTYPES", "KernelDtype", "kernel_dtype_problem"]


@dataclass(frozen=True)
class KernelDtype:
    """One element type: the modes the compiled kernels run on it and how they compute."""

    onnx_elem: int  # onnx.TensorProto.DataType value (from core.dtypes, the one table)
    modes: tuple[str, ...]
    antialias: bool  # the torch op takes antialias=True on it (the plugin node never does)
    ort_resize: bool  # ONNX Runtime's own CPU Resize runs it (the reference exists)
    arithmetic: str


_ALL = ("nearest", "linear", "cubic")
_INT = ("nearest", "linear")

KERNEL_DTYPES: dict[str, KernelDtype] = {
    "float32": KernelDtype(
        elem_type("float32"), _ALL, True, True, "float32; nearest exact, linear/cubic within a few ulps of ORT"
    ),
    "float16": KernelDtype(elem_type("float16"), _ALL, True, True, "float32 rounded once to float16, as ORT"),
    "bfloat16": KernelDtype(elem_type("bfloat16"), _ALL, True, False, "float32 rounded once to bfloat16"),
    "float64": KernelDtype(elem_type("float64"), _ALL, True, False, "double"),
    "uint8": KernelDtype(elem_type("uint8"), _INT, False, True, "ORT's: float32 blend truncated to the integer type"),
    "int8": KernelDtype(elem_type("int8"), _INT, False, True, "ORT's: float32 blend truncated to the integer type"),
    "int32": KernelDtype(elem_type("int32"), _INT, False, True, "ORT's: float32 blend truncated to the integer type"),
}

#: onnx.TensorProto element type -> the name in KERNEL_DTYPES.
ONNX_ELEM_DTYPES: dict[int, str] = {v.onnx_elem: k for k, v in KERNEL_DTYPES.items()}


def kernel_dtype_problem(
    dtype: str | int, mode: str = "nearest", *, antialias: bool = False, plugin: bool = True
) -> str | None:
    """Why the compiled kernels cannot run Resize on ``dtype`` with ``mode``, or None if they can.

    ``dtype`` is a numpy-style name (``"uint8"``) or an onnx.TensorProto element type.
    ``plugin`` asks for the plugin node (ORT library), which never takes antialias.
    """
    name = ONNX_ELEM_DTYPES.get(dtype, f"element type {dtype}") if isinstance(dtype, int) else str(dtype)
    entry = KERNEL_DTYPES.get(name)
    if entry is None:
        return (
            f"the compiled Resize kernels take {', '.join(KERNEL_DTYPES)}, not {name} "
            "(ONNX Runtime's own Resize has no kernel for it either)"
        )
    if mode not in entry.modes:
        return (
            f"mode '{mode}' on {name} is not supported: ONNX Runtime's CPU Resize cannot run it "
            f"(no arithmetic to match); {name} takes {', '.join(entry.modes)}"
        )
    if antialias and (plugin or not entry.antialias):
        where = "the DynamicTRTResize plugin has no antialias" if plugin else f"antialias on {name} is not supported"
        return f"antialias=1 cannot be kept: {where}"
    return None
