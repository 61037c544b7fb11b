"""What every command requires of an input model, checked before any work: the user's errors, exit 3.

::

    require_tensor_sizes(model, label)           inline tensors whose bytes fit their shape
    require_valid_model(model, label)            known opset, tensor byte counts, full ONNX checker
    require_sane_sites(model, sites, label)      no nonsense scales/sizes at any Resize/Upsample
    check_input(model, label) -> [ResizeSite]    all of it, and the sites found on the way
    check_resize_inputs(model, label) -> [...]   all but the checker (for ``validate``, whose
                                                 candidates may hold plugin nodes ORT runs)

Nonsense means: scales that are NaN, infinite, zero, negative or above :data:`MAX_SCALE`;
a scales or sizes vector whose length is not the input's rank (or ``len(axes)``); scales
that are not 1-D; sizes that are not positive; scales and sizes both set, or neither.

Every message starts with ``label`` (the file name, for the CLI) and names the node.
The checker runs on a weightless copy, so external weights are never read. Does NOT run
the model, and does NOT judge what a pass can or cannot rewrite: that is the pass's call
(a skipped site with a reason), not an error in the input.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import onnx
from onnx import ModelProto, TensorProto, helper

from graphsurgeon_tools.errors import (
    InvalidModelError,
    InvalidScalesError,
    PreconditionError,
    UnsupportedModelError,
)

__all__ = [
    "MAX_SCALE",
    "check_input",
    "check_resize_inputs",
    "require_sane_sites",
    "require_tensor_sizes",
    "require_valid_model",
]

#: A scale factor above this is not a resize, it is a typo or an attack (a 224x224 image
#: would become 2.24 million pixels a side).
MAX_SCALE = 1.0e4

# 4-bit, string and undefined tensors do not pack one element per itemsize: not checked.
_UNSIZED_TYPES = {TensorProto.STRING, TensorProto.UNDEFINED, 21, 22, 23}


def _tensor_size_error(tensor: TensorProto, what: str) -> Optional[str]:
    """Why an inline tensor's raw bytes cannot fill its shape, or None. The checker lets this through."""
    if tensor.data_location == TensorProto.EXTERNAL or not tensor.HasField("raw_data"):
        return None
    if tensor.data_type in _UNSIZED_TYPES:
        return None
    try:
        itemsize = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except Exception:  # an element type numpy has no dtype for: nothing to compare
        return None
    needed = int(np.prod(list(tensor.dims), dtype=object)) * itemsize
    if len(tensor.raw_data) == needed:
        return None
    return f"{what} {tensor.name!r} holds {len(tensor.raw_data)} bytes, but its shape {list(tensor.dims)} needs {needed}"


def require_tensor_sizes(model: ModelProto, label: str) -> None:
    """Inline initializers and Constant values whose raw bytes fill their shape, else InvalidModelError.

    The checker does not look at byte counts, and a short constant would otherwise surface
    later as a numpy reshape error deep inside a pass. External data is checked by io.
    """
    for init in model.graph.initializer:
        problem = _tensor_size_error(init, "initializer")
        if problem:
            raise InvalidModelError(f"{label}: {problem}")
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                problem = _tensor_size_error(attr.t, f"node {node.name or node.output[0]!r}: constant")
                if problem:
                    raise InvalidModelError(f"{label}: {problem}")


def require_valid_model(model: ModelProto, label: str) -> None:
    """A default-domain opset this onnx knows, tensors whose bytes fit their shape, the full checker.

    Raises :class:`UnsupportedModelError` (opset from the future), :class:`InvalidModelError`
    (short tensor data) or :class:`PreconditionError` (checker).
    """
    from graphsurgeon_tools.passes._graph import check_model_full, default_opset

    opset = default_opset(model)
    known = onnx.defs.onnx_opset_version()
    if opset > known:
        raise UnsupportedModelError(f"{label}: default-domain opset {opset} is newer than this onnx ({known}) knows")
    require_tensor_sizes(model, label)
    try:
        check_model_full(model)
    except Exception as exc:  # onnx's ValidationError / InferenceError, and anything they wrap
        raise PreconditionError(f"{label} fails the ONNX checker: {' '.join(str(exc).split())[:300]}") from None


def require_sane_sites(model: ModelProto, sites: list[Any], label: str) -> None:
    """Refuse nonsense scales or sizes at any of ``sites`` (see the module docstring).

    Only constant values are judged: scales that arrive at run time are validated where
    they are fed (``validate``'s sweep, the plugin kernel).
    """
    from graphsurgeon_tools.resize import ValueSource, trace_value

    for site in sites:
        where = f"{label}: node {site.node_name or site.output_name!r}"
        has_scales = site.scales_source != ValueSource.ABSENT
        has_sizes = site.sizes_source != ValueSource.ABSENT
        if has_scales and has_sizes:
            raise InvalidScalesError(f"{where}: both scales and sizes are set; Resize takes exactly one of them")
        if not has_scales and not has_sizes:
            raise InvalidScalesError(f"{where}: neither scales nor sizes are set")
        expected = len(site.axes) if site.axes is not None else site.input_rank
        if site.scales is not None and site.has_constant_scales:
            if site.scales_tensor:
                value = trace_value(model, site.scales_tensor).value
                if value is not None and np.asarray(value).ndim != 1:
                    raise InvalidScalesError(
                        f"{where}: scales must be a 1-D tensor, got shape {list(np.shape(value))}")
            for scale in site.scales:
                if not np.isfinite(scale) or scale <= 0:
                    raise InvalidScalesError(
                        f"{where}: scales {list(site.scales)} contain {scale}, not a positive finite number")
                if scale > MAX_SCALE:
                    raise InvalidScalesError(
                        f"{where}: scale {scale} in {list(site.scales)} is absurdly large (> {MAX_SCALE:g})")
            if expected is not None and len(site.scales) != expected:
                raise InvalidScalesError(
                    f"{where}: scales {list(site.scales)} have {len(site.scales)} entries, expected {expected}")
        if site.sizes is not None:
            if any(size <= 0 for size in site.sizes):
                raise InvalidScalesError(f"{where}: sizes {list(site.sizes)} must all be positive")
            if expected is not None and len(site.sizes) != expected:
                raise InvalidScalesError(
                    f"{where}: sizes {list(site.sizes)} have {len(site.sizes)} entries, expected {expected}")


def check_input(model: ModelProto, label: str) -> list[Any]:
    """:func:`require_valid_model`, then :func:`require_sane_sites` on every Resize/Upsample site.

    Returns the sites (``find_resize_sites(model)``), so a caller that needs them pays once.
    """
    from graphsurgeon_tools.resize import find_resize_sites

    require_valid_model(model, label)
    sites = find_resize_sites(model)
    require_sane_sites(model, sites, label)
    return sites


def check_resize_inputs(model: ModelProto, label: str) -> list[Any]:
    """:func:`require_tensor_sizes` and :func:`require_sane_sites`, without the ONNX checker.

    For callers that run the model anyway (``validate``): ONNX Runtime is their judge of
    the graph, but nonsense scales must still be named as such rather than surface as an
    ORT load error or a failed comparison.
    """
    from graphsurgeon_tools.resize import find_resize_sites

    require_tensor_sizes(model, label)
    sites = find_resize_sites(model)
    require_sane_sites(model, sites, label)
    return sites
