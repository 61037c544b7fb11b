"""The plugin-spec schema: the type and range every value of a spec may take, in one place.

:mod:`.parser` walks the TOML tables and asks these functions about each value; each
returns ``None`` for a good value or the problem as a short phrase (the parser prefixes
the file and the key and raises :class:`~.model.InvalidSpecError`, exit code 3). So a spec
is refused completely when it is parsed, never half-way through a swap (a constant that
does not fit its dtype, a shape its value does not fill, an empty attribute list whose
type no one can tell).

Requires: values as :mod:`tomllib` returns them (bool, int, float, str, list, dict, dates).
Ensures: every bound below is checked by the function that names it; nothing recurses
(:func:`nesting_depth` walks iteratively, so a hostile spec cannot raise RecursionError here).
Does NOT read files, parse TOML or know a model (whether ``order = [7]`` exists on a node is
the swap's question).
"""

from __future__ import annotations

import math
from typing import Any, Optional

__all__ = [
    "MAX_CONSTANT_ELEMENTS",
    "MAX_DEPTH",
    "MAX_DIM",
    "MAX_INPUT_INDEX",
    "MAX_NAME_LENGTH",
    "MAX_RANK",
    "attribute_value_problem",
    "constant_problem",
    "dim_problem",
    "index_problem",
    "is_int",
    "nesting_depth",
]

#: Deepest table/array nesting a spec needs is 4 (``[attributes.values.mode]`` = {k = [..]});
#: anything far deeper is not a spec.
MAX_DEPTH = 8
#: Names (op types, attributes, inputs) longer than this are not names.
MAX_NAME_LENGTH = 256
#: An input index or ``same_as_input:N`` beyond this names no input of any real node.
MAX_INPUT_INDEX = 1 << 16
#: ONNX allows any rank; no runtime onnxtool targets goes past 8 (TensorRT) - 64 is generous.
MAX_RANK = 64
#: ONNX dims are int64.
MAX_DIM = (1 << 63) - 1
#: A constant extra input is written into every swapped node's initializer: keep it small.
MAX_CONSTANT_ELEMENTS = 1 << 16

_INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "uint8": (0, (1 << 8) - 1),
    "uint16": (0, (1 << 16) - 1),
    "uint32": (0, (1 << 32) - 1),
    "uint64": (0, (1 << 64) - 1),
    "bool": (0, 1),
}
_FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
}
# ONNX attribute ints are int64, floats float32.
_ATTR_INT = _INT_RANGES["int64"]
_ATTR_FLOAT_MAX = _FLOAT_MAX["float32"]


def is_int(value: Any) -> bool:
    """An integer that is not a bool (TOML ``true`` is a Python bool, a subclass of int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return is_int(value) or isinstance(value, float)


def nesting_depth(data: Any, stop: int = MAX_DEPTH + 1) -> int:
    """How deep tables and arrays nest in ``data`` (a scalar is 0), counting at most to ``stop``."""
    deepest = 0
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest >= stop:
            return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def index_problem(value: Any) -> Optional[str]:
    """An input index: an int in [0, MAX_INPUT_INDEX)."""
    if not is_int(value):
        return f"an input index must be an integer, got {value!r}"
    if not 0 <= value < MAX_INPUT_INDEX:
        return f"input index must be >= 0 and < {MAX_INPUT_INDEX}, got {value}"
    return None


def dim_problem(value: Any, *, named: bool) -> Optional[str]:
    """One dim of a shape: an int in [0, MAX_DIM], or (``named``) a dim name."""
    if isinstance(value, str) and named:
        return None if 0 < len(value) <= MAX_NAME_LENGTH else f"a dim name must be 1..{MAX_NAME_LENGTH} characters"
    if not is_int(value) or not 0 <= value <= MAX_DIM:
        kind = "non-negative ints or dim names" if named else "non-negative ints"
        return f"a shape is a list of {kind} (at most 2**63-1), got {value!r}"
    return None


def _number_problem(value: Any, dtype: str) -> Optional[str]:
    if not _is_number(value):
        return f"{value!r} is not a number"
    if dtype in _INT_RANGES:
        if isinstance(value, float):
            if not value.is_integer():
                return f"{value!r} is not an integer, and dtype is {dtype}"
            value = int(value)
        low, high = _INT_RANGES[dtype]
        if not low <= value <= high:
            return f"{value} does not fit {dtype} ([{low}, {high}])"
        return None
    as_float = float(value) if abs(value) < 1e308 or isinstance(value, float) else math.inf
    if not math.isfinite(as_float):
        return f"{value!r} is not a finite number"
    if abs(as_float) > _FLOAT_MAX[dtype]:
        return f"{value!r} does not fit {dtype} (|value| <= {_FLOAT_MAX[dtype]:.6g})"
    return None


def constant_problem(value: Any, dtype: str, shape: Optional[tuple[Any, ...]]) -> Optional[str]:
    """A constant's ``value`` (a number or a flat, non-empty list) fits ``dtype`` and fills ``shape``."""
    flat = value if isinstance(value, list) else [value]
    if not flat:
        return "value must not be an empty list"
    if not all(_is_number(v) for v in flat):
        return f"value must be a number or a flat list of numbers, got {value!r}"
    if len(flat) > MAX_CONSTANT_ELEMENTS:
        return f"value has {len(flat)} numbers, more than the {MAX_CONSTANT_ELEMENTS} a spec constant may hold"
    for item in flat:
        problem = _number_problem(item, dtype)
        if problem:
            return f"value {problem}"
    if shape is not None:
        count = math.prod(shape)
        if count != len(flat):
            return f"value has {len(flat)} number(s), shape {list(shape)} needs {count}"
    return None


def attribute_value_problem(value: Any) -> Optional[str]:
    """An ONNX attribute value: int64, finite float32, string, or a non-empty list of numbers."""
    if isinstance(value, bool):
        return None  # written as 0/1
    if is_int(value):
        low, high = _ATTR_INT
        return None if low <= value <= high else f"{value} does not fit an int64 attribute"
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) > _ATTR_FLOAT_MAX:
            return f"{value!r} is not a finite float32 attribute value"
        return None
    if isinstance(value, str):
        return None
    if isinstance(value, list):
        if not value:
            return "an empty list has no attribute type (ints or floats?); leave the attribute out"
        if not all(_is_number(v) for v in value):
            return f"attribute values must be int, float, string or a list of numbers, got {value!r}"
        for item in value:
            problem = attribute_value_problem(item)
            if problem:
                return problem
        return None
    return f"attribute values must be int, float, string or a list of numbers, got {value!r}"
