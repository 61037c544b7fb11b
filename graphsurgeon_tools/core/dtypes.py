"""The one dtype table: ONNX element type <-> numpy dtype <-> name.

Names are numpy's (``"float32"``, ``"int64"``, ``"bool"``): the names plugin specs and
reports use. :func:`onnx_name` gives ONNX's own lower-case spelling (``"float"``,
``"double"``), which kernel names and ONNX docs use.

Every element-type question in graphsurgeon_tools is answered here (io/ excepted: it sits
below core/): names, numpy dtypes, float-ness, item sizes.

Requires: onnx. Ensures: every function answers from :data:`DTYPES`, so a type is known
everywhere or nowhere; only :func:`itemsize` also sizes a type outside the table (onnx's own
mapping), because size limits and checks must count any tensor. Does NOT cover the 8-bit
float / 4-bit types or strings otherwise: no pass, check or spec here handles them, and
callers that must refuse them get a ``KeyError``-free answer via :func:`is_known`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from onnx import TensorProto, helper

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = [
    "DTYPES",
    "DType",
    "dtype_name",
    "elem_type",
    "is_float",
    "is_known",
    "itemsize",
    "names",
    "np_dtype",
    "onnx_name",
]


class DType(NamedTuple):
    elem_type: int  # onnx.TensorProto.DataType value
    name: str  # numpy's name
    itemsize: int  # bytes per element


DTYPES: tuple[DType, ...] = (
    DType(TensorProto.FLOAT, "float32", 4),
    DType(TensorProto.FLOAT16, "float16", 2),
    DType(TensorProto.BFLOAT16, "bfloat16", 2),
    DType(TensorProto.DOUBLE, "float64", 8),
    DType(TensorProto.INT8, "int8", 1),
    DType(TensorProto.INT16, "int16", 2),
    DType(TensorProto.INT32, "int32", 4),
    DType(TensorProto.INT64, "int64", 8),
    DType(TensorProto.UINT8, "uint8", 1),
    DType(TensorProto.UINT16, "uint16", 2),
    DType(TensorProto.UINT32, "uint32", 4),
    DType(TensorProto.UINT64, "uint64", 8),
    DType(TensorProto.BOOL, "bool", 1),
)
_BY_ELEM = {d.elem_type: d for d in DTYPES}
_BY_NAME = {d.name: d for d in DTYPES}
_OTHER_SIZES: dict[int, int] = {}  # itemsize of element types outside the table (0: numpy has none)


def names() -> tuple[str, ...]:
    """Every dtype name in the table, in table order."""
    return tuple(d.name for d in DTYPES)


def is_known(elem: int) -> bool:
    """Whether ONNX element type ``elem`` is in the table."""
    return elem in _BY_ELEM


def is_float(elem: int) -> bool:
    """Whether ONNX element type ``elem`` is one of the table's floating types (float16/32/64, bfloat16)."""
    entry = _BY_ELEM.get(elem)
    return entry is not None and entry.name.startswith(("float", "bfloat"))


def dtype_name(elem: int) -> str:
    """ONNX element type -> numpy name (``TensorProto.FLOAT`` -> ``"float32"``). KeyError if unknown."""
    return _BY_ELEM[elem].name


def onnx_name(elem: int) -> str:
    """ONNX element type -> ONNX's lower-case name (``TensorProto.DOUBLE`` -> ``"double"``)."""
    return TensorProto.DataType.Name(elem).lower()


def elem_type(dtype: Any) -> int:
    """A numpy name, a numpy dtype/type or an ONNX element type -> the ONNX element type.
    KeyError for a type the table does not hold."""
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return _BY_ELEM[dtype].elem_type
    name = dtype if isinstance(dtype, str) else _numpy_name(dtype)
    return _BY_NAME[name].elem_type


def np_dtype(elem: int) -> "np.dtype":
    """ONNX element type -> numpy dtype (bfloat16 through ml_dtypes, as onnx does). KeyError if unknown."""
    import numpy as np

    entry = _BY_ELEM[elem]
    if entry.name == "bfloat16":
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    return np.dtype(entry.name)


def itemsize(elem: int, default: int = 8) -> int:
    """Bytes per element of ONNX element type ``elem``: the table's, else what onnx's own mapping says
    (8-bit floats, 4-bit types: at least 1), else ``default`` (a type numpy cannot hold). Memoised."""
    entry = _BY_ELEM.get(elem)
    if entry is not None:
        return entry.itemsize
    size = _OTHER_SIZES.get(elem)
    if size is None:
        try:
            size = max(int(helper.tensor_dtype_to_np_dtype(elem).itemsize), 1)
        except (KeyError, ValueError, TypeError):
            size = 0
        _OTHER_SIZES[elem] = size
    return size or default


def _numpy_name(dtype: Any) -> str:
    import numpy as np

    return np.dtype(dtype).name
