"""The one nonsense-scales gate: what makes a Resize site's constant scales/sizes nonsense.

Rules: the spec's (exactly one of scales and sizes; one entry per axis; axes distinct and
in range; 1-D) plus sanity (scales positive, finite and at most :data:`MAX_SCALE`; sizes
positive). Every pass, check and report judges sites with :func:`scales_problems` (which
:func:`~graphsurgeon_tools.resize.sites.find_resize_sites` stores in
``ResizeSite.problems``) and refuses with :func:`raise_if_nonsense`.

Requires: values already traced (see graphsurgeon_tools.core.constants). Ensures: pure;
problems in a stable order, each a sentence naming the values. Does NOT trace values,
and judges only constant values (a graph input or run-time value is not nonsense here).
"""

from __future__ import annotations

import math
from typing import Any, Optional

from graphsurgeon_tools.core.constants import ValueSource
from graphsurgeon_tools.errors import InvalidScalesError

__all__ = ["KNOWN_SOURCES", "MAX_SCALE", "raise_if_nonsense", "scales_problems"]

#: A scale above this is a typo or an attack, not a resize (it would ask for terabytes).
MAX_SCALE = 1.0e4
#: Sources whose value is known before running the model.
KNOWN_SOURCES = (
    ValueSource.INITIALIZER,
    ValueSource.CONSTANT,
    ValueSource.IDENTITY,
    ValueSource.FOLDED,
    ValueSource.ATTRIBUTE,
)


def scales_problems(
    scales: Optional[tuple[float, ...]],
    scales_source: ValueSource,
    sizes: Optional[tuple[int, ...]],
    sizes_source: ValueSource,
    sizes_tensor: str,
    rank: Optional[int],
    axes: Optional[tuple[int, ...]],
) -> list[str]:
    """What makes a site's constant scales/sizes nonsense (empty: fine).

    Args:
        scales: the constant scales (None when unknown or absent).
        scales_source: where the scales come from.
        sizes: the constant sizes (None when unknown or absent).
        sizes_source: where the sizes come from.
        sizes_tensor: the tensor in the sizes slot ("" when none).
        rank: rank of the resized input, when known.
        axes: the ``axes`` attribute, when set.
    """
    found: list[str] = []
    has_scales = scales_source != ValueSource.ABSENT
    has_sizes = (
        bool(sizes_tensor)
        and sizes_source != ValueSource.ABSENT
        and (sizes is not None or sizes_source not in KNOWN_SOURCES)
    )
    if has_scales and has_sizes:
        found.append("both scales and sizes are given; Resize takes exactly one of them")
    if not has_scales and not has_sizes:
        found.append("neither scales nor sizes is given (an empty scales tensor and no sizes)")
    if axes is not None:
        if len(set(axes)) != len(axes):
            found.append(f"axes {list(axes)} repeat an axis")
        if rank is not None and any(not -rank <= a < rank for a in axes):
            found.append(f"axes {list(axes)} are out of range for a rank-{rank} input")
    expected = len(axes) if axes is not None else rank
    what = f"len(axes)={expected}" if axes is not None else f"a rank-{expected} input"
    if scales is not None and scales_source in KNOWN_SOURCES:
        bad = [v for v in scales if not math.isfinite(v) or v <= 0]
        if bad:
            found.append(f"scales {list(scales)} contain {bad[0]}, not a positive finite number")
        elif max(scales) > MAX_SCALE:
            found.append(f"scale {max(scales):g} in {list(scales)} is absurdly large (> {MAX_SCALE:g})")
        if expected is not None and len(scales) != expected:
            found.append(f"scales {list(scales)} have {len(scales)} entries for {what}")
    if sizes is not None and sizes_source in KNOWN_SOURCES:
        if any(v <= 0 for v in sizes):
            found.append(f"sizes {list(sizes)} must all be positive")
        if expected is not None and len(sizes) != expected:
            found.append(f"sizes {list(sizes)} have {len(sizes)} entries for {what}")
    return found


def raise_if_nonsense(site: Any, where: Optional[str] = None) -> None:
    """Raise InvalidScalesError (exit 3) naming ``where``, the site and its first problem, if any.

    The one raise for nonsense scales (every pass, inspect, validate). ``site`` is a
    :class:`~graphsurgeon_tools.resize.sites.ResizeSite`; ``where`` says which model and pass
    ("model.onnx: make_dynamic_scale"), or None when the caller names the file itself."""
    if site.problems:
        label = site.node_name or site.output_name
        scope = "" if getattr(site, "in_main_graph", True) else f" (inside {site.scope})"
        prefix = f"{where}: " if where else ""
        raise InvalidScalesError(f"{prefix}node {label!r}{scope}: {site.problems[0]}")
