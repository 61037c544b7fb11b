"""The kernel behind plugin nodes (DynamicTRTResize): ONNX Resize semantics on numpy arrays.

``resize_kernel(x, second, **attrs) -> np.ndarray`` is what ONNX Runtime calls for the
plugin node (see :mod:`graphsurgeon_tools.runtime.session` for the bridge).

Backends, picked once per process on first use:

* a registered fast backend (``graphsurgeon_tools.extensions.register_kernel``; the PyTorch
  side registers the C++ resize op as ``"cpp"``), when one is registered and loads;
* otherwise the ONNX reference implementation (``onnx.reference``, pure numpy/Python:
  exact but slow) with ONE warning. ``ONNXTOOL_RUNTIME_FALLBACK=1`` forces it.

Requires: ``x`` a numeric array; ``second`` scales (1-D float, one per axis of ``x``) or a
size tensor (rank >= 2, only its shape is read).
Ensures: the output ONNX Runtime's own Resize would give for scales (see
:func:`_op_scales`) and for sizes (a size tensor); the dtypes of
:mod:`graphsurgeon_tools.resize.kernel_dtypes`, others refused with the reason.
Does NOT import torch or ``exporters``, and does not make TensorRT plugins.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from onnx import TensorProto, helper

from graphsurgeon_tools.extensions import kernel_loaders
from graphsurgeon_tools.resize.kernel_dtypes import kernel_dtype_problem
from graphsurgeon_tools.resize.semantics import PLUGIN_SEMANTICS, RESIZE_DEFAULTS
from graphsurgeon_tools.runtime.provenance import note_kernel, recording_open, torch_op

__all__ = ["KERNEL_OP_TYPES", "RESIZE_ATTR_DEFAULTS", "kernel_backend", "resize_kernel"]

# The plugin op types this package can run, whatever domain the model gives them
# (TensorRT ignores the domain too, so any domain is accepted).
KERNEL_OP_TYPES = ("DynamicTRTResize",)

# DynamicTRTResize attributes the kernel reads, with ONNX Resize's defaults.
RESIZE_ATTR_DEFAULTS: dict[str, Any] = {name: RESIZE_DEFAULTS[name] for name in PLUGIN_SEMANTICS}

# A fast backend: (x, float64 per-axis scales, output sizes, attributes) -> output array.
FastKernel = Callable[[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]], np.ndarray]

_lock = threading.Lock()
_fallback_warned = False
_fast: FastKernel | None = None
_backend: str | None = None
_fallback_reason = ""
_backend_facts: dict[str, Any] = {}  # what the evidence record says about the backend chosen


def kernel_backend() -> str:
    """The backend's registered name (``"cpp"`` for the C++ op), or ``"reference"`` for the numpy fallback."""
    _load_backend()
    assert _backend is not None
    return _backend


#: The settings the backend choice depends on: a choice made under other values is made again
#: (a long-lived process, or a test, that sets ONNXTOOL_RUNTIME_FALLBACK or moves the build folder
#: must not keep a fallback, or a fast kernel, chosen before).
_BACKEND_SETTINGS = ("ONNXTOOL_RUNTIME_FALLBACK", "ONNXTOOL_BUILD_DIR", "CXX")
_backend_key: tuple[str, ...] = ()


def _load_backend() -> None:
    global _backend, _fast, _fallback_reason, _backend_key
    with _lock:
        key = tuple(os.environ.get(name, "") for name in _BACKEND_SETTINGS)
        if _backend is not None and key == _backend_key:
            return
        _backend, _fast, _fallback_reason, _backend_key = None, None, "", key
        _backend_facts.clear()
        if os.environ.get("ONNXTOOL_RUNTIME_FALLBACK", "") not in ("", "0"):
            _backend = "reference"  # forced, e.g. to test the fallback on a machine with the op
            return

        loaders = kernel_loaders()
        if not loaders:
            _backend = "reference"
            _fallback_reason = "no fast kernel is registered; the PyTorch side adds one: pip install 'onnxtool[torch]'"
            return
        name, loader = next(iter(loaders.items()))
        try:
            _fast = loader()
            _backend = name
        except (ImportError, OSError, RuntimeError) as exc:  # not built, torch missing, library refused
            _backend = "reference"
            _fallback_reason = f"{type(exc).__name__}: {exc}"


def _note_backend() -> None:
    if not recording_open():
        return
    if not _backend_facts:
        if _fast is None:
            _backend_facts.update(
                backend="onnx.reference", slow=True, reason=_fallback_reason or "forced by ONNXTOOL_RUNTIME_FALLBACK=1"
            )
        else:
            op = torch_op() or {}
            _backend_facts.update(backend=_backend, path=op.get("path"), sha256=op.get("sha256"))
    note_kernel("onnxruntime-extensions", **_backend_facts)


def _warn_fallback() -> None:
    global _fallback_warned
    if not _fallback_warned:
        _fallback_warned = True
        reason = f" ({_fallback_reason})" if _fallback_reason else ""
        warnings.warn(
            "onnxtool: the C++ resize op is not available, DynamicTRTResize runs on the slow "
            f"ONNX reference implementation{reason}; `onnxtool doctor` says why and what provides the fast kernels",
            RuntimeWarning,
            stacklevel=3,
        )


def _reference_resize(
    x: np.ndarray, *, scales: np.ndarray | None, sizes: np.ndarray | None, attrs: dict[str, Any]
) -> np.ndarray:
    # onnx's reference Resize does the real work; a one-node evaluator per attribute set is cached.
    evaluator = _reference_evaluator(
        "sizes" if sizes is not None else "scales",
        tuple(sorted(attrs.items())),
    )
    feed = {"X": x, "S": scales if sizes is None else sizes.astype(np.int64)}
    return evaluator.run(None, feed)[0]


_evaluators: dict[Any, Any] = {}


def _reference_evaluator(slot: str, attrs: tuple[tuple[str, Any], ...]) -> Any:
    key = (slot, attrs)
    if key not in _evaluators:
        from onnx.reference import ReferenceEvaluator  # deferred: onnx.reference, this backend only

        inputs = ["X", "", "S"] if slot == "scales" else ["X", "", "", "S"]
        node = helper.make_node("Resize", inputs, ["Y"], **dict(attrs))
        s_type = TensorProto.FLOAT if slot == "scales" else TensorProto.INT64
        graph = helper.make_graph(
            [node],
            "resize",
            [
                helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
                helper.make_tensor_value_info("S", s_type, [None]),
            ],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        _evaluators[key] = ReferenceEvaluator(model)
    return _evaluators[key]


def resize_kernel(x: np.ndarray, second: np.ndarray, **attrs: Any) -> np.ndarray:
    """Run DynamicTRTResize on numpy arrays: the function ORT calls for the plugin node.

    ``second`` is told apart by shape and type: a 1-D float tensor with one entry per axis of
    ``x`` is ``scales``; a 1-D integer tensor is TensorRT V3's ``sizes`` (2 entries: the output
    H, W; rank(x) entries: the whole output shape); any tensor of rank >= 2 is MMDeploy's
    ``size_tensor``, whose LAST TWO DIMS are the output H, W (its values are ignored). Both
    size forms resize with ONNX ``sizes`` semantics (scale = out / in).

    With ``scales`` the result is what ONNX Runtime's own Resize gives, which is where ORT
    (and PyTorch, and MMDeploy's plugin) differ from the ONNX reference: the output size is
    floor(float32(in) * scale), and align_corners / pytorch_half_pixel look at that INTEGER
    output length where the reference uses the fractional in * scale. See
    :func:`_op_scales`. Refuses (ValueError) the dtypes and dtype x mode pairs the compiled
    kernels do not take (graphsurgeon_tools.resize.kernel_dtypes). Does not validate
    attribute values beyond what the backend does.
    """
    params = dict(RESIZE_ATTR_DEFAULTS)
    params.update(attrs)
    problem = kernel_dtype_problem(np.dtype(x.dtype).name, str(params["mode"]))
    if problem:
        raise ValueError(f"DynamicTRTResize: {problem}")
    params["exclude_outside"] = int(params["exclude_outside"])
    params["cubic_coeff_a"] = float(params["cubic_coeff_a"])
    # ORT may hand over non-contiguous or read-only views; the kernels want plain arrays.
    x = np.ascontiguousarray(x)
    in_shape = np.array(x.shape, dtype=np.int64)
    if second.ndim == 1 and second.dtype.kind in "iu":  # TensorRT V3 form: output sizes as values
        if second.shape[0] not in (2, x.ndim) or x.ndim < 2:
            raise ValueError(
                f"DynamicTRTResize: sizes must have 2 or rank(X) = {x.ndim} entries, got {second.shape[0]}"
            )
        tail = [int(v) for v in second]
        sizes = np.array(list(x.shape[: x.ndim - len(tail)]) + tail, dtype=np.int64)
        if np.any(sizes <= 0):
            raise ValueError(f"DynamicTRTResize: sizes {tail} ask for an empty output")
        scales = _op_scales(in_shape, _ort_size_scales(in_shape, sizes), sizes)
        reference_sizes = sizes
    elif second.ndim == 1:
        if second.dtype.kind != "f":
            raise ValueError(
                f"DynamicTRTResize: a 1-D second input is scales (float) or sizes (int), got {second.dtype}"
            )
        if second.shape[0] != x.ndim:
            raise ValueError(
                f"DynamicTRTResize: scales must have one entry per input dimension ({x.ndim}), got {second.shape[0]}"
            )
        scales32 = np.asarray(second, dtype=np.float32)
        # ORT's output dims: float32 product, truncated
        sizes = np.floor(in_shape.astype(np.float32) * scales32).astype(np.int64)
        if np.any(sizes <= 0):
            raise ValueError(f"DynamicTRTResize: scales {scales32.tolist()} give an empty output for input {x.shape}")
        scales = _op_scales(in_shape, scales32, sizes)
        reference_sizes = sizes if params["coordinate_transformation_mode"] == "align_corners" else None
    elif second.ndim >= 2 and x.ndim >= 2:
        sizes = np.array(x.shape[:-2] + second.shape[-2:], dtype=np.int64)
        if np.any(sizes <= 0):
            raise ValueError(f"DynamicTRTResize: size tensor of shape {second.shape} asks for an empty output")
        scales = _op_scales(in_shape, _ort_size_scales(in_shape, sizes), sizes)
        reference_sizes = sizes
    else:
        raise ValueError(
            f"DynamicTRTResize: second input of shape {second.shape} is neither scales (1-D) "
            "nor a size tensor (rank >= 2)"
        )
    if tuple(int(v) for v in sizes) == tuple(x.shape):
        return x.copy()  # ORT copies an output of the input's shape, whatever the scales
    _load_backend()
    _note_backend()  # the evidence record of a report in progress names the backend that ran
    if _fast is not None:
        return _check_size(_fast(x, scales, sizes, params), sizes)
    _warn_fallback()
    # the reference fallback honours the same conventions only as far as its own API allows
    out = _reference_resize(
        x.astype(np.float32, copy=False),
        scales=None if reference_sizes is not None else np.asarray(second, dtype=np.float32),
        sizes=reference_sizes,
        attrs=params,
    )
    return out.astype(x.dtype, copy=False)


def _op_scales(in_shape: np.ndarray, scales32: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per-axis float64 scales for the C++ op that make it compute what ORT computes.

    The op takes ORT's arithmetic from the float32 rounding of each scale (its coordinates)
    and its output size as floor(scale * in) in float64 (the integer length it also uses).
    ORT's size is floor(float32(in) * scale32), which can be one more where the float32
    product rounds up to an integer: there the scale is nudged up within the float64
    values that still round to the same float32, so both hold. An axis where no such value
    exists (never seen in practice) gets out / in, ~1 float32 ulp off in its coordinates.
    """
    scales = scales32.astype(np.float64)
    for axis, (n, s32, out) in enumerate(zip(in_shape, scales32, sizes)):
        value = float(s32)
        if np.floor(value * float(n)) < out:
            # the smallest float64 at or above out / n whose product reaches out (a step or two)
            value = float(out) / float(n)
            while np.floor(value * float(n)) < out:
                value = float(np.nextafter(value, np.inf))
        if np.floor(value * float(n)) != out or np.float32(value) != s32:
            value = float(_scales_for_sizes(in_shape[axis : axis + 1], sizes[axis : axis + 1])[0])
        scales[axis] = value
    return scales


def _ort_size_scales(in_shape: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """ORT's float32 scales for output sizes: float32(out) / float32(in) (1 for an empty axis)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = sizes.astype(np.float32) / in_shape.astype(np.float32)
    return np.where(in_shape == 0, np.float32(1), q).astype(np.float32)


def _check_size(out: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    if tuple(out.shape) != tuple(int(s) for s in sizes):
        raise RuntimeError(f"DynamicTRTResize: kernel produced {out.shape}, expected {tuple(int(s) for s in sizes)}")
    return out


def _scales_for_sizes(in_shape: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """float64 out / in per axis, nudged up until floor(scale * in) (the C++ op's rule) is the size.

    float64, not float32: scale * in then lands on the integer size itself, where a float32
    scale overshoots by ~1e-7, enough to move floor()/ceil() of an exact corner coordinate.
    """
    scales = sizes.astype(np.float64) / in_shape.astype(np.float64)
    for axis in range(len(scales)):
        while np.floor(scales[axis] * np.float64(in_shape[axis])) < sizes[axis]:
            scales[axis] = np.nextafter(scales[axis], np.inf)
    return scales
