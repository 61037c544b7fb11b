"""What a Resize site resizes, as far as the model states it (shared by the rules).

Requires: a :class:`~graphsurgeon_tools.resize.ResizeSite`.
Ensures: every answer is ``None`` where the model does not say (run-time factors,
unknown input dims); callers treat ``None`` as "cannot tell offline", never as "fine".
Does NOT: fold constants (the site already did) or run the model.
"""

from __future__ import annotations

import math
from typing import Optional

from graphsurgeon_tools.resize import ResizeSite, ValueSource


def _weights_sources() -> tuple:
    # What onnx-tensorrt's importer sees as weights (is_weights()): initializers and
    # Constant outputs. An Identity or a constant subgraph arrives as an ITensor
    # (the Identity importer calls convertToTensor), so it takes the tensor path.
    return (ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.ATTRIBUTE)


def uses_sizes(site: "ResizeSite") -> bool:
    # an empty scales tensor (the exporters' placeholder) is reported as ABSENT
    return (
        bool(site.sizes_tensor)
        and site.sizes_source != ValueSource.ABSENT
        and (site.scales_source == ValueSource.ABSENT)
    )


def scales_are_tensor(site: "ResizeSite") -> bool:
    """True when TensorRT imports the scales as an ITensor (resizeShapeTensor path)."""
    if uses_sizes(site) or site.scales_source == ValueSource.ABSENT:
        return False
    return site.scales_source not in _weights_sources()


def parameter_tensor(site: "ResizeSite") -> str:
    """The tensor carrying the resize parameter in use (sizes or scales); "" for attributes."""
    return site.sizes_tensor if uses_sizes(site) else site.scales_tensor


def normalized_axes(site: "ResizeSite") -> Optional[tuple[int, ...]]:
    if site.axes is None:
        return None
    rank = site.input_rank
    if any(a < 0 for a in site.axes) and rank is None:
        return None
    return tuple(a + rank if a < 0 else a for a in site.axes) if rank is not None else tuple(site.axes)


def is_iota(site: "ResizeSite") -> bool:
    """``axes`` absent, or exactly 0..rank-1 (what TensorRT calls a complete iota)."""
    if site.axes is None:
        return True
    axes = normalized_axes(site)
    return axes is not None and site.input_rank is not None and axes == tuple(range(site.input_rank))


def full_scales(site: "ResizeSite") -> Optional[tuple[float, ...]]:
    """Constant scales over every axis of X (axes filled in with 1), or None."""
    if site.scales is None or not site.has_constant_scales:
        return None
    if site.axes is None:
        return tuple(site.scales)
    axes = normalized_axes(site)
    if axes is None or site.input_rank is None or len(axes) != len(site.scales):
        return None
    full = [1.0] * site.input_rank
    for axis, value in zip(axes, site.scales):
        if 0 <= axis < site.input_rank:
            full[axis] = float(value)
    return tuple(full)


def _input_dims(site: "ResizeSite") -> Optional[tuple[Optional[int], ...]]:
    if site.input_shape is None:
        return None
    return tuple(d if isinstance(d, int) else None for d in site.input_shape)


def full_sizes(site: "ResizeSite") -> Optional[tuple[Optional[int], ...]]:
    """Constant output sizes over every axis (axes filled with the input dim, None if unknown)."""
    if site.sizes is None:
        return None
    if site.axes is None:
        return tuple(site.sizes)
    axes = normalized_axes(site)
    dims = _input_dims(site)
    if axes is None or site.input_rank is None or len(axes) != len(site.sizes):
        return None
    full: list[Optional[int]] = list(dims) if dims is not None else [None] * site.input_rank
    for axis, value in zip(axes, site.sizes):
        full[axis] = int(value)
    return tuple(full)


def resized_axes(site: "ResizeSite") -> Optional[frozenset[int]]:
    """Axes whose length may change; None when the model does not say."""
    scales = full_scales(site)
    if scales is not None:
        return frozenset(i for i, s in enumerate(scales) if s != 1.0)
    sizes = full_sizes(site)
    dims = _input_dims(site)
    if sizes is not None and dims is not None and None not in sizes and None not in dims:
        return frozenset(i for i, (o, d) in enumerate(zip(sizes, dims)) if o != d)
    axes = normalized_axes(site)
    if axes is not None:  # run-time values, but only these axes can change
        return frozenset(axes)
    return None


def ratios(site: "ResizeSite") -> Optional[tuple[float, ...]]:
    """Per-axis output/input ratio where the model states it: the scales, or sizes/dims."""
    scales = full_scales(site)
    if scales is not None:
        return scales
    sizes = full_sizes(site)
    dims = _input_dims(site)
    if sizes is not None and dims is not None and None not in sizes and None not in dims:
        return tuple(o / d for o, d in zip(sizes, dims) if d)  # type: ignore[operator]
    return None


def output_lengths(site: "ResizeSite") -> Optional[tuple[Optional[int], ...]]:
    """Output length per axis where known (floor(d * s), the spec's rule for scales)."""
    sizes = full_sizes(site)
    if sizes is not None:
        return sizes
    scales = full_scales(site)
    dims = _input_dims(site)
    if scales is None or dims is None or len(scales) != len(dims):
        return None
    return tuple(None if d is None else int(math.floor(d * s)) for d, s in zip(dims, scales))


def is_whole(value: float) -> bool:
    return math.isfinite(value) and float(value).is_integer()
