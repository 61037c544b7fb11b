"""Resource limits for the checks that run a model: refuse before allocating, not after.

A Resize scale factor is a multiplier on every spatial dimension, so a typo
(``factors=[300]`` instead of ``[3]``) or a hostile model (scales ``[1, 1, 1e6, 1e6]``)
asks ONNX Runtime for terabytes. ORT would try, and the process would be killed
by the OOM killer with no message at all. The checks that run models (the built-in
check of ``make-dynamic-scale``, ``validate``'s sweep) call :func:`check_output_size`
with the shape they are about to produce, and get a :class:`ResourceLimitError`
(exit code 3, one line) instead.

The limit, in bytes per tensor, is, in order of precedence:

1. the ``limit=`` keyword (the API keyword ``max_output_bytes=`` of the callers),
2. the environment variable ``ONNXTOOL_MAX_OUTPUT_BYTES`` (an integer, optionally with a
   binary suffix: ``512M``, ``2G``, ``2GiB``; ``0`` turns the limit off),
3. :data:`DEFAULT_MAX_OUTPUT_BYTES` (1 GiB).

Requires: concrete shapes (the caller substitutes the sizes it will feed for symbolic dims).
Ensures: a tensor above the limit is refused with one line naming it, its size and the limit.
Does NOT allocate, import onnxruntime, or know how much memory is free: it only does
arithmetic, one tensor at a time (a model that makes many large intermediates can still use
several times the limit).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Iterable, Optional, Sequence

from graphsurgeon_tools.core import dtypes
from graphsurgeon_tools.errors import InvalidScalesError, ResourceLimitError, UsageError

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "ENV_VAR",
    "check_output_size",
    "format_bytes",
    "max_output_bytes",
    "resized_shape",
    "tensor_nbytes",
]

DEFAULT_MAX_OUTPUT_BYTES = 1 << 30
ENV_VAR = "ONNXTOOL_MAX_OUTPUT_BYTES"

_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def _parse_size(text: str) -> int:
    match = _SIZE_RE.match(text)
    if match is None:
        raise UsageError(
            f"{ENV_VAR}={text!r} is not a size: use a number of bytes, optionally with K, M, G or T "
            "(binary units), e.g. 2G; 0 turns the limit off"
        )
    return int(match.group(1)) * _SUFFIXES[match.group(2).upper()]


def max_output_bytes(limit: Optional[int] = None) -> Optional[int]:
    """The per-tensor limit in bytes that is in effect, or ``None`` when it is turned off.

    ``limit`` wins when given (``0`` or a negative value turns the limit off); otherwise
    ``ONNXTOOL_MAX_OUTPUT_BYTES`` is read on every call (so tests and long-lived
    processes see changes); otherwise 1 GiB. A malformed environment value raises
    :class:`UsageError` naming the variable rather than silently falling back.
    """
    if limit is None:
        raw = os.environ.get(ENV_VAR, "").strip()
        limit = _parse_size(raw) if raw else DEFAULT_MAX_OUTPUT_BYTES
    limit = int(limit)
    return limit if limit > 0 else None


def _as_float(value: float) -> float:
    try:
        return float(value)
    except OverflowError:  # an exact Python int beyond float range
        return math.inf


def format_bytes(nbytes: float) -> str:
    """``1610612736`` -> ``"1.5 GiB"``: binary units, three significant digits."""
    nbytes = _as_float(nbytes)
    if not math.isfinite(nbytes):
        return "more than 1e308 bytes"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(nbytes) < 1024 or unit == "PiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.3g} {unit}"
        nbytes /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _itemsize(dtype: Any) -> int:
    """Bytes per element of a numpy dtype (or anything numpy accepts) or an ONNX elem_type int."""
    import numpy as np

    if isinstance(dtype, int) and not isinstance(dtype, bool):
        size = dtypes.itemsize(dtype, default=0)
        if not size:
            raise ValueError(f"unknown ONNX element type {dtype}")
        return size
    return int(np.dtype(dtype).itemsize)


def tensor_nbytes(shape: Iterable[Any], dtype: Any = "float32") -> float:
    """The size in bytes of a dense tensor of ``shape``; ``math.inf`` if a dim is infinite.

    Every dim must be a non-negative integer (or a float that is one, or ``inf``);
    symbolic dims are the caller's business: it must substitute the value it will feed.
    Python integers do not overflow, so absurd shapes give an exact (absurd) figure.
    """
    total: float = _itemsize(dtype)  # stays an exact int unless a dim is infinite
    for dim in shape:
        if isinstance(dim, float) and math.isinf(dim) and dim > 0:
            return math.inf
        if isinstance(dim, float) and dim.is_integer():
            dim = int(dim)
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 0:
            raise ValueError(f"shape {tuple(shape)} has a dim that is not a non-negative integer: {dim!r}")
        total *= dim
    return total


def resized_shape(shape: Sequence[int], scales: Sequence[float]) -> tuple[float, ...]:
    """The output shape ONNX Resize gives ``shape`` at ``scales``: ``floor(dim * scale)`` per axis.

    Dims too large to represent come back as ``math.inf`` (never an OverflowError), so
    :func:`check_output_size` can refuse them. Raises :class:`InvalidScalesError` for a
    scale that is NaN, infinite, zero or negative, or a length that differs from the rank.
    It does not model ``axes`` or ``keep_aspect_ratio_policy``: expand scales to full rank first.
    """
    if len(scales) != len(shape):
        raise InvalidScalesError(f"scales {tuple(scales)} have {len(scales)} entries for a rank-{len(shape)} input")
    out: list[float] = []
    for dim, scale in zip(shape, scales):
        scale = float(scale)
        if not math.isfinite(scale) or scale <= 0:
            raise InvalidScalesError(f"scale {scale} in {tuple(scales)} is not a positive finite number")
        product = dim * scale
        out.append(math.floor(product) if math.isfinite(product) else math.inf)
    return tuple(out)


def _format_dim(dim: Any) -> str:
    value = _as_float(dim)
    if not math.isfinite(value):
        return "inf"
    return str(int(dim)) if value < 1e12 else f"{value:.3g}"


def check_output_size(
    shape: Iterable[Any],
    dtype: Any = "float32",
    *,
    limit: Optional[int] = None,
    what: str = "output",
) -> float:
    """Refuse a tensor that would be larger than the limit; return its size in bytes otherwise.

    ``what`` names the tensor for the message and should name the file too, e.g.
    ``"model.onnx: Resize 'up' at factor 300"``. ``limit`` overrides the environment
    and the default (see :func:`max_output_bytes`). Raises :class:`ResourceLimitError`
    (exit code 3). Does not allocate anything, and says nothing about the total memory
    a run will use.
    """
    shape = tuple(shape)
    nbytes = tensor_nbytes(shape, dtype)
    cap = max_output_bytes(limit)
    if cap is not None and nbytes > cap:
        dims = "x".join(_format_dim(d) for d in shape)
        raise ResourceLimitError(
            f"{what} would be a {dims} tensor of {format_bytes(nbytes)}, above the output size limit "
            f"of {format_bytes(cap)} (raise it with {ENV_VAR} or max_output_bytes=)"
        )
    return nbytes
