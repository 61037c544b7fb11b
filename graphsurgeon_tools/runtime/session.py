"""ONNX Runtime sessions that can run plugin nodes (DynamicTRTResize) next to stock ops.

``make_session(model_or_path, **ort_options) -> onnxruntime.InferenceSession``

How: onnxruntime-extensions' Python custom ops. They only accept the domain
``ai.onnx.contrib`` and every op must be defined before the extensions library is
registered with a session (defining one later crashes the process), so:

* the kernels are defined once, on first use, for every dtype combination we support,
  before any session registers the library;
* the plugin nodes are moved to ``ai.onnx.contrib`` in a PRIVATE COPY of the model
  (op_type renamed per dtype combination, attributes completed with their defaults);
  the caller's model and file are never touched.

The kernel is the C++ resize op (``exporters.ops.resize``, ONNX Resize semantics) when
it can be imported; otherwise the ONNX reference implementation
(``onnx.reference``, pure numpy/Python: exact but slow) with ONE warning.

A compiled ORT custom-op library would avoid the Python bridge (the extensions package
copies each output through a Python list, tens of ns per element); it cannot be built
here because no ONNX Runtime C/C++ headers are installable. This module does NOT make
TensorRT plugins; it only lets ORT run the node so a plugin model can be validated.
"""

from __future__ import annotations

import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np

__all__ = ["KERNEL_OP_TYPES", "kernel_backend", "make_session", "plugin_nodes", "resize_kernel"]

CONTRIB_DOMAIN = "ai.onnx.contrib"
# The plugin op types this module can run, whatever domain the model gives them
# (TensorRT ignores the domain too, so any domain is accepted).
KERNEL_OP_TYPES = ("DynamicTRTResize",)

# DynamicTRTResize attributes the kernel reads, with ONNX Resize's defaults.
_RESIZE_ATTR_DEFAULTS: dict[str, Any] = {
    "mode": "nearest",
    "coordinate_transformation_mode": "half_pixel",
    "cubic_coeff_a": -0.75,
    "exclude_outside": 0,
    "nearest_mode": "round_prefer_floor",
}

# (X dtype, second input dtype) pairs that get a kernel; ONNX elem type names.
_DTYPE_PAIRS = (
    ("float", "float"),
    ("float", "int64"),
    ("double", "float"),
    ("double", "double"),
    ("double", "int64"),
    ("float16", "float"),
    ("float16", "float16"),
    ("float16", "int64"),
)
_ONNX_TO_NAME = {1: "float", 7: "int64", 10: "float16", 11: "double"}

_lock = threading.Lock()
_define_lock = threading.Lock()
_defined = False
_fallback_warned = False
_cpp_resize: Optional[Callable[..., Any]] = None
_backend: Optional[str] = None


def _kernel_op_name(x_type: str, s_type: str) -> str:
    return f"DynamicTRTResize_{x_type}_{s_type}"


def kernel_backend() -> str:
    """``"cpp"`` when the C++ op backs the kernel, ``"reference"`` for the numpy fallback."""
    _load_backend()
    assert _backend is not None
    return _backend


def _load_backend() -> None:
    global _backend, _cpp_resize
    if _backend is not None:
        return
    if os.environ.get("ONNXTOOL_RUNTIME_FALLBACK", "") not in ("", "0"):
        _backend = "reference"  # forced, e.g. to test the fallback on a machine with the op
        return
    try:
        from exporters.ops import resize  # lazy: imports torch and loads the C++ library

        _cpp_resize = resize
        _backend = "cpp"
    except Exception as exc:  # ImportError, OSError, RuntimeError: any failure means "not built"
        _backend = "reference"
        _fallback_reason[0] = f"{type(exc).__name__}: {exc}"


_fallback_reason = [""]


def _warn_fallback() -> None:
    global _fallback_warned
    if not _fallback_warned:
        _fallback_warned = True
        reason = f" ({_fallback_reason[0]})" if _fallback_reason[0] else ""
        warnings.warn(
            "onnxtool: the C++ resize op is not available, DynamicTRTResize runs on the slow "
            f"ONNX reference implementation{reason}; build it with `python -m exporters.ops build`",
            RuntimeWarning,
            stacklevel=3,
        )


def _reference_resize(x: np.ndarray, *, scales: Optional[np.ndarray], sizes: Optional[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
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
        from onnx import TensorProto, helper
        from onnx.reference import ReferenceEvaluator

        inputs = ["X", "", "S"] if slot == "scales" else ["X", "", "", "S"]
        node = helper.make_node("Resize", inputs, ["Y"], **dict(attrs))
        s_type = TensorProto.FLOAT if slot == "scales" else TensorProto.INT64
        graph = helper.make_graph(
            [node], "resize",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
             helper.make_tensor_value_info("S", s_type, [None])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        _evaluators[key] = ReferenceEvaluator(model)
    return _evaluators[key]


def resize_kernel(x: np.ndarray, second: np.ndarray, **attrs: Any) -> np.ndarray:
    """Run DynamicTRTResize on numpy arrays: the function ORT calls for the plugin node.

    ``second`` is told apart by shape: a 1-D float tensor with one entry per axis of ``x``
    is ``scales``; any tensor of rank >= 2 is MMDeploy's ``size_tensor``, whose LAST TWO DIMS
    are the output H, W (its values are ignored) and which resizes with ONNX ``sizes``
    semantics (scale = out / in).

    With ``scales`` the result is what ONNX Runtime's own Resize gives, which is where ORT
    (and PyTorch, and MMDeploy's plugin) differ from the ONNX reference: the output size is
    floor(float32(in) * scale), and align_corners / pytorch_half_pixel look at that INTEGER
    output length where the reference uses the fractional in * scale. See
    :func:`_ort_axis_scales`. Does not validate attribute values beyond what the backend does.
    """
    params = dict(_RESIZE_ATTR_DEFAULTS)
    params.update(attrs)
    params["exclude_outside"] = int(params["exclude_outside"])
    params["cubic_coeff_a"] = float(params["cubic_coeff_a"])
    # ORT may hand over non-contiguous or read-only views; the kernels want plain arrays.
    x = np.ascontiguousarray(x)
    in_shape = np.array(x.shape, dtype=np.int64)
    if second.ndim == 1:
        if second.dtype.kind != "f":
            raise ValueError(f"DynamicTRTResize: a 1-D second input is scales and must be float, got {second.dtype}")
        if second.shape[0] != x.ndim:
            raise ValueError(
                f"DynamicTRTResize: scales must have one entry per input dimension ({x.ndim}), got {second.shape[0]}"
            )
        scales32 = np.asarray(second, dtype=np.float32)
        # ORT's output dims: float32 product, truncated
        sizes = np.floor(in_shape.astype(np.float32) * scales32).astype(np.int64)
        if np.any(sizes <= 0):
            raise ValueError(f"DynamicTRTResize: scales {scales32.tolist()} give an empty output for input {x.shape}")
        scales = _ort_axis_scales(in_shape, scales32, sizes, params["coordinate_transformation_mode"])
        reference_sizes = sizes if params["coordinate_transformation_mode"] == "align_corners" else None
    elif second.ndim >= 2 and x.ndim >= 2:
        sizes = np.array(x.shape[:-2] + second.shape[-2:], dtype=np.int64)
        if np.any(sizes <= 0):
            raise ValueError(f"DynamicTRTResize: size tensor of shape {second.shape} asks for an empty output")
        scales = _scales_for_sizes(in_shape, sizes)
        reference_sizes = sizes
    else:
        raise ValueError(
            f"DynamicTRTResize: second input of shape {second.shape} is neither scales (1-D) "
            "nor a size tensor (rank >= 2)"
        )
    _load_backend()
    if _backend == "cpp" and _cpp_resize is not None:
        return _run_cpp(x, scales, sizes, params)
    _warn_fallback()
    # the reference fallback honours the same conventions only as far as its own API allows
    out = _reference_resize(
        x.astype(np.float32, copy=False),
        scales=None if reference_sizes is not None else np.asarray(second, dtype=np.float32),
        sizes=reference_sizes,
        attrs=params,
    )
    return out.astype(x.dtype, copy=False)


def _ort_axis_scales(in_shape: np.ndarray, scales32: np.ndarray, sizes: np.ndarray, ctm: str) -> np.ndarray:
    """Per-axis float64 scales for the C++ op (ONNX-reference conventions) that reproduce ORT.

    The C++ op takes its output size as floor(double(scale) * in) and, for align_corners and
    pytorch_half_pixel, its output length as scale * in. An axis keeps its own scale unless
    (a) that double floor differs from ORT's float32 one, (b) align_corners and in * scale
    is fractional, or (c) pytorch_half_pixel and the output length is 1 (ORT then maps to
    0). Those axes get out / in instead, which is exact for (b) and (c): there the mapping
    depends on the lengths only, and costs ~1e-7 relative in the coordinates for (a).
    """
    scales = scales32.astype(np.float64)
    target = np.array(sizes, dtype=np.int64)
    for axis, (n, s, out) in enumerate(zip(in_shape, scales32, sizes)):
        product = float(n) * float(s)
        if (
            np.floor(product) != out
            or (ctm == "align_corners" and product != out)
            or (ctm == "pytorch_half_pixel" and out == 1 and product != 1)
        ):
            scales[axis] = _scales_for_sizes(in_shape[axis:axis + 1], target[axis:axis + 1])[0]
    return scales


def _run_cpp(x: np.ndarray, scales: np.ndarray, sizes: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    import torch

    # torch.from_numpy warns on read-only memory (ORT may hand us such buffers); copying is cheap next to the resize
    if not x.flags.writeable:
        x = x.copy()
    scales = np.array(scales, dtype=np.float64)  # a private, writable copy (a handful of numbers)
    y = _cpp_resize(torch.from_numpy(x), torch.from_numpy(scales), **params)  # type: ignore[misc]
    out = y.numpy()
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


_kernel_errors: list[BaseException] = []


def _safe_kernel(x: np.ndarray, second: np.ndarray, **attrs: Any) -> np.ndarray:
    # An exception escaping a Python custom op aborts the whole process (onnxruntime-extensions
    # rethrows it across the C++ boundary). So the error is parked here and an empty tensor of
    # the right rank goes back; the session's run() raises the parked error afterwards.
    try:
        return resize_kernel(x, second, **attrs)
    except Exception as exc:  # every failure, reported by _PluginSession.run
        with _lock:
            _kernel_errors.append(exc)
        return np.zeros((0,) * max(x.ndim, 1), dtype=x.dtype)


def _define_kernels() -> None:
    """Define every custom op once, before any session registers the extensions library."""
    global _defined
    with _define_lock:
        if _defined:
            return
        from onnxruntime_extensions import PyCustomOpDef, onnx_op

        dt = {
            "float": PyCustomOpDef.dt_float,
            "double": PyCustomOpDef.dt_double,
            "float16": PyCustomOpDef.dt_float16,
            "int64": PyCustomOpDef.dt_int64,
        }
        attr_types = {
            "mode": PyCustomOpDef.dt_string,
            "coordinate_transformation_mode": PyCustomOpDef.dt_string,
            "cubic_coeff_a": PyCustomOpDef.dt_float,
            "exclude_outside": PyCustomOpDef.dt_int64,
            "nearest_mode": PyCustomOpDef.dt_string,
        }
        for x_type, s_type in _DTYPE_PAIRS:
            onnx_op(
                op_type=_kernel_op_name(x_type, s_type),
                inputs=[dt[x_type], dt[s_type]],
                outputs=[dt[x_type]],
                attrs=attr_types,
            )(_safe_kernel)
        _defined = True


def plugin_nodes(model: Any) -> list[Any]:
    """The nodes of ``model``'s main graph that this module runs (op_type in KERNEL_OP_TYPES, any non-default domain)."""
    return [
        node for node in model.graph.node
        if node.op_type in KERNEL_OP_TYPES and node.domain not in ("", "ai.onnx")
    ]


def _elem_types(model: Any) -> dict[str, int]:
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # inference is only a source of dtypes here; fall back to what is written
        inferred = model
    graph = inferred.graph
    types = {init.name: init.data_type for init in graph.initializer}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type:
            types[info.name] = info.type.tensor_type.elem_type
    for node in graph.node:  # Constant outputs, which inference may leave out of value_info
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    types[node.output[0]] = attr.t.data_type
    return types


def _private_copy(model: Any) -> Any:
    """Copy ``model`` with its plugin nodes rewritten for the extensions kernels."""
    import onnx
    from onnx import helper

    copy = _inline_copy(model)
    types = _elem_types(copy)
    used_domains = set()
    for node in copy.graph.node:
        if node.op_type not in KERNEL_OP_TYPES or node.domain in ("", "ai.onnx"):
            used_domains.add(node.domain)
            continue
        if len(node.input) != 2 or len(node.output) != 1:
            from graphsurgeon_tools.errors import InvalidModelError

            raise InvalidModelError(
                f"node {node.name or node.op_type!r}: DynamicTRTResize takes 2 inputs and 1 output, "
                f"got {len(node.input)} and {len(node.output)}"
            )
        x_type = _ONNX_TO_NAME.get(types.get(node.input[0], 1), "float")
        s_type = _ONNX_TO_NAME.get(types.get(node.input[1], 1), "float")
        if (x_type, s_type) not in _DTYPE_PAIRS:
            from graphsurgeon_tools.errors import UnsupportedModelError

            raise UnsupportedModelError(
                f"node {node.name or node.op_type!r}: no DynamicTRTResize kernel for input types "
                f"({x_type}, {s_type}); supported: {', '.join(f'({a}, {b})' for a, b in _DTYPE_PAIRS)}"
            )
        present = {attr.name: helper.get_attribute_value(attr) for attr in node.attribute}
        del node.attribute[:]
        for name, default in _RESIZE_ATTR_DEFAULTS.items():
            value = present.get(name, default)
            if isinstance(value, bytes):
                value = value.decode()
            node.attribute.append(helper.make_attribute(name, value))
        node.op_type = _kernel_op_name(x_type, s_type)
        node.domain = CONTRIB_DOMAIN
    # Drop opset imports nothing uses any more: the plugin's domain means nothing to ORT.
    keep = [op for op in copy.opset_import if op.domain in used_domains or op.domain in ("", "ai.onnx")]
    del copy.opset_import[:]
    copy.opset_import.extend(keep)
    copy.opset_import.append(helper.make_opsetid(CONTRIB_DOMAIN, 1))
    return copy


def _load(path: Path) -> Any:
    """The model at ``path`` through the core loader (path and external-data checks), weights left on disk."""
    from graphsurgeon_tools.io import load_model

    return load_model(path)


def _inline_copy(model: Any) -> Any:
    """A copy of ``model`` with weights kept on disk by io.load_model read in (ORT gets bytes, not a folder)."""
    import onnx

    from graphsurgeon_tools.io import external_data_dir, load_model

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    if external_data_dir(copy) is not None:
        load_model(copy, load_external_data=True)
    return copy


_TWO_GB = 2**31 - 2**20


def make_session(model_or_path: Union[str, Path, Any], **ort_options: Any) -> Any:
    """An ``onnxruntime.InferenceSession`` that runs DynamicTRTResize nodes as well as stock ops.

    ``model_or_path`` is a ModelProto or a path; ``ort_options`` go to
    ``InferenceSession`` (``sess_options``, ``providers``; providers default to CPU).
    The caller's model is never modified. A model without plugin nodes, given as a path,
    is opened by ORT straight from the file (external data and all).
    Does NOT check the model (run ``onnx.checker`` yourself) and does not run other
    custom domains' ops: ORT reports those when the session is created.
    """
    import onnx
    import onnxruntime as ort

    from_path: Optional[Path] = None
    if isinstance(model_or_path, (str, Path)):
        from_path = Path(model_or_path)
        model = _load(from_path)
    elif isinstance(model_or_path, onnx.ModelProto):
        model = model_or_path
    else:
        raise TypeError(f"make_session takes a ModelProto or a path, got {type(model_or_path).__name__}")

    options = dict(ort_options)
    sess_options = options.pop("sess_options", None) or ort.SessionOptions()
    providers = options.pop("providers", None) or ["CPUExecutionProvider"]
    if not plugin_nodes(model):
        if from_path is not None:
            return ort.InferenceSession(str(from_path), sess_options=sess_options, providers=providers, **options)
        return _session_from_proto(ort, _inline_copy(model), sess_options, providers, options)

    _define_kernels()
    from onnxruntime_extensions import get_library_path

    sess_options.register_custom_ops_library(get_library_path())
    return _session_from_proto(ort, _private_copy(model), sess_options, providers, options, plugin=True)


def _plugin_session_class(ort: Any) -> Any:
    class PluginSession(ort.InferenceSession):  # type: ignore[misc, name-defined]
        """An InferenceSession whose ``run`` reports a failed DynamicTRTResize kernel as an exception.

        Only ``run`` checks for kernel errors; ``run_with_iobinding``/``run_with_ort_values``
        would return the kernel's empty placeholder output instead. Errors are collected
        process-wide, so two sessions failing in concurrent runs may swap messages.
        """

        def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
            with _lock:
                _kernel_errors.clear()
            try:
                outputs = super().run(output_names, input_feed, run_options)
            except Exception as exc:
                error = _take_kernel_error()
                if error is not None:  # the ORT failure is only a consequence of the kernel's
                    raise error from exc
                raise
            error = _take_kernel_error()
            if error is not None:
                raise error
            return outputs

    return PluginSession


def _take_kernel_error() -> Optional[Exception]:
    with _lock:
        errors = list(_kernel_errors)
        _kernel_errors.clear()
    if not errors:
        return None
    first = errors[0]
    return RuntimeError(f"DynamicTRTResize kernel failed: {type(first).__name__}: {first}")


def _session_from_proto(ort: Any, model: Any, sess_options: Any, providers: list[Any], options: dict[str, Any], *, plugin: bool = False) -> Any:
    cls = _plugin_session_class(ort) if plugin else ort.InferenceSession
    if model.ByteSize() < _TWO_GB:
        return cls(model.SerializeToString(), sess_options=sess_options, providers=providers, **options)
    # A protobuf cannot exceed 2 GB: hand ORT a temporary file with external data instead.
    import onnx

    copy = onnx.ModelProto()
    copy.CopyFrom(model)  # onnx.save with external data rewrites the proto it is given
    with tempfile.TemporaryDirectory(prefix="onnxtool-session-") as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(copy, path, save_as_external_data=True, all_tensors_to_one_file=True, location="model.data")
        return cls(path, sess_options=sess_options, providers=providers, **options)
