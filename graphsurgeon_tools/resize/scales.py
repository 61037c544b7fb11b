"""ONNX Runtime's scale arithmetic, one home: output lengths from scales, exact scales from sizes.

Used by make-dynamic-scale (plans, the integer layouts), swap-plugin's check and validate's
ports, which all need the same numbers ORT computes.

Requires: sites from :func:`graphsurgeon_tools.resize.find_resize_sites`. Ensures: pure
functions. Does NOT change a model.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from graphsurgeon_tools.resize.sanity import KNOWN_SOURCES
from graphsurgeon_tools.resize.sites import ResizeSite

__all__ = ["ort_output_length", "sizes_to_scales"]


def ort_output_length(dim: int, scale: float) -> int:
    """ONNX Runtime's output length for scales: floor(float32(dim) * float32(scale))."""
    return int(math.floor(float(np.float32(dim) * np.float32(scale))))


def sizes_to_scales(site: ResizeSite) -> tuple[Optional[tuple[float, ...]], str]:
    """Exact scales for a sizes-driven site, or (None, reason)."""
    if site.sizes is None or site.sizes_source not in KNOWN_SOURCES:
        return None, f"sizes are {site.sizes_source.value}, not constant"
    if site.keep_aspect_ratio_policy != "stretch":
        return None, f"keep_aspect_ratio_policy={site.keep_aspect_ratio_policy} makes sizes a bound, not a target"
    if site.coordinate_transformation_mode == "tf_crop_and_resize":
        return None, "tf_crop_and_resize scales depend on roi"
    if site.input_shape is None:
        return None, "the input shape is unknown"
    rank = len(site.input_shape)
    axes = [a % rank for a in site.axes] if site.axes is not None else list(range(rank))
    if len(axes) != len(site.sizes):
        return None, f"sizes {list(site.sizes)} do not match the resized axes {axes}"
    scales = []
    for axis, size in zip(axes, site.sizes):
        dim = site.input_shape[axis]
        if not isinstance(dim, int) or dim <= 0:
            return None, f"input dim {axis} is {dim!r}, not static, so no scale reproduces sizes {list(site.sizes)}"
        # ORT turns sizes into float32 size/dim for the coordinate mapping, and gets the
        # output size back as floor(dim * scale): both must give the same numbers.
        scale = np.float32(size) / np.float32(dim)
        if math.floor(float(np.float32(dim) * scale)) != size or math.floor(float(dim) * float(scale)) != size:
            return None, f"sizes {list(site.sizes)} are not reproduced exactly by a float32 scale on dim {axis}"
        scales.append(float(scale))
    return tuple(scales), ""
