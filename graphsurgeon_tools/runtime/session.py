"""ONNX Runtime sessions that can run plugin nodes (DynamicTRTResize) next to stock ops.

``make_session(model_or_path, *, custom_op_libs=None, **ort_options) -> onnxruntime.InferenceSession``

How, in order of preference:

1. onnxtool's compiled custom-op library (:mod:`graphsurgeon_tools.runtime.ort_library`,
   built by ``make setup``), when every plugin node is in its domain ``trt.plugins``: the
   library is registered on the session options and ORT gets the model AS IS (no domain
   remap, no private copy; a path is opened by ORT straight from the file).
2. Otherwise (library not built, another domain, ``ONNXTOOL_RUNTIME_FALLBACK=1``)
   onnxruntime-extensions' Python custom ops. They only accept the domain
   ``ai.onnx.contrib`` and every op must be defined before the extensions library is
   registered with a session (defining one later crashes the process), so the kernels
   (:func:`graphsurgeon_tools.runtime.kernels.resize_kernel`) are defined once, on first
   use, for every dtype combination we support, and the plugin nodes are moved to
   ``ai.onnx.contrib`` in a PRIVATE COPY of the model (op_type renamed per dtype
   combination, attributes completed with their defaults).

Every library (onnxtool's, onnxruntime-extensions', the user's ``custom_op_libs``) is
registered at most once per ``SessionOptions`` object, so one options object can serve
any number of calls.

Requires: a ModelProto or a path. Ensures: the caller's model and file are never touched;
a failed kernel raises from ``run`` (ORT's own error naming the node with the library; the
parked kernel error on the extensions path) instead of returning a placeholder. Does NOT
check the model, run other custom domains' ops (pass their libraries as
``custom_op_libs``), or make TensorRT plugins: it only lets ORT run the node so a plugin
model can be validated.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import onnx
from onnx import TensorProto, helper

from graphsurgeon_tools.core.checker import shape_inference
from graphsurgeon_tools.core.dtypes import onnx_name
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS
from graphsurgeon_tools.errors import InvalidModelError, UnsupportedModelError
from graphsurgeon_tools.io import external_data_dir, load_model
from graphsurgeon_tools.resize.plugin_node import plugin_node_attributes
from graphsurgeon_tools.runtime import ort_library
from graphsurgeon_tools.runtime.kernels import KERNEL_OP_TYPES, resize_kernel
from graphsurgeon_tools.runtime.provenance import file_sha256, note_kernel

__all__ = [
    "CONTRIB_DOMAIN",
    "custom_op_scope",
    "make_session",
    "ort_errors",
    "ort_module",
    "plugin_nodes",
    "scoped_custom_op_libs",
]

CONTRIB_DOMAIN = "ai.onnx.contrib"

# (X dtype, second input dtype) pairs that get a kernel; ONNX elem type names. No float16:
# onnxruntime-extensions' Python ops cannot take it and abort the process (a C++ exception);
# the compiled library runs float16 models.
_DTYPE_PAIRS = (
    ("float", "float"),
    ("float", "int64"),
    ("double", "float"),
    ("double", "double"),
    ("double", "int64"),
)

_lock = threading.Lock()
_define_lock = threading.Lock()
_defined = False


def _kernel_op_name(x_type: str, s_type: str) -> str:
    return f"DynamicTRTResize_{x_type}_{s_type}"


def ort_module() -> Any:
    """The onnxruntime module, imported on first use: the one place graphsurgeon_tools imports it
    (besides ort_library, which the wheel build hook loads without it). Importing onnxruntime costs
    tens of milliseconds that ``import graphsurgeon_tools``, ``onnxtool --help`` and a pass run
    without its check must not pay; everything that makes or configures a session calls this."""
    import onnxruntime  # deferred: onnxruntime; this module is imported on paths that run no session

    return onnxruntime


def ort_errors() -> tuple[type[BaseException], ...]:
    """ONNX Runtime's own exception types (Fail, InvalidArgument, RuntimeException ...), plus
    RuntimeError (a failed plugin kernel) and ValueError (ORT's Python layer: missing feeds)."""
    state = ort_module().capi.onnxruntime_pybind11_state
    found = [v for v in vars(state).values() if isinstance(v, type) and issubclass(v, Exception)]
    return (*found, RuntimeError, ValueError)


_kernel_errors: list[BaseException] = []


def _safe_kernel(x: np.ndarray, second: np.ndarray, **attrs: Any) -> np.ndarray:
    # An exception escaping a Python custom op aborts the whole process (onnxruntime-extensions
    # rethrows it across the C++ boundary). So the error is parked here and an empty tensor of
    # the right rank goes back; the session's run() raises the parked error afterwards.
    try:
        return resize_kernel(x, second, **attrs)
    except Exception as exc:  # every failure (it must not cross into C++); re-raised by PluginSession.run
        with _lock:
            _kernel_errors.append(exc)
        return np.zeros((0,) * max(x.ndim, 1), dtype=x.dtype)


def _import_extensions(*names: str) -> tuple[Any, ...]:
    """Names from onnxruntime_extensions, imported without its side effect on the environment.

    Importing it sets PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python in os.environ (its cvt
    module), which every subprocess started afterwards inherits: they then run protobuf's
    slow pure-Python parser, whose errors differ. The variable is put back as it was.
    """
    key = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"
    before = os.environ.get(key)
    try:
        import onnxruntime_extensions as extensions  # deferred: optional onnxruntime-extensions (its import edits os.environ)
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before
    return tuple(getattr(extensions, name) for name in names)


def _define_kernels() -> None:
    """Define every custom op once, before any session registers the extensions library."""
    global _defined
    with _define_lock:
        if _defined:
            return
        PyCustomOpDef, onnx_op = _import_extensions("PyCustomOpDef", "onnx_op")

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
    return [node for node in model.graph.node if node.op_type in KERNEL_OP_TYPES and node.domain not in DEFAULT_DOMAINS]


def _elem_types(model: Any) -> dict[str, int]:
    try:
        inferred = shape_inference(model, data_prop=False)  # types only: the weightless model says them
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
        # inference is only a source of dtypes here; fall back to what is written
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
    copy = _inline_copy(model)
    types = _elem_types(copy)
    used_domains = set()
    for node in copy.graph.node:
        if node.op_type not in KERNEL_OP_TYPES or node.domain in DEFAULT_DOMAINS:
            used_domains.add(node.domain)
            continue
        if len(node.input) != 2 or len(node.output) != 1:
            raise InvalidModelError(
                f"node {node.name or node.op_type!r}: DynamicTRTResize takes 2 inputs and 1 output, "
                f"got {len(node.input)} and {len(node.output)}"
            )
        x_type = onnx_name(types.get(node.input[0], TensorProto.FLOAT))
        s_type = onnx_name(types.get(node.input[1], TensorProto.FLOAT))
        if (x_type, s_type) not in _DTYPE_PAIRS:
            raise UnsupportedModelError(
                f"node {node.name or node.op_type!r}: no DynamicTRTResize kernel for input types "
                f"({x_type}, {s_type}); supported: {', '.join(f'({a}, {b})' for a, b in _DTYPE_PAIRS)}"
            )
        semantics = plugin_node_attributes(node)  # the five the kernel reads, defaults filled in
        del node.attribute[:]
        for name, value in semantics.items():
            node.attribute.append(helper.make_attribute(name, value))
        node.op_type = _kernel_op_name(x_type, s_type)
        node.domain = CONTRIB_DOMAIN
    # Drop opset imports nothing uses any more: the plugin's domain means nothing to ORT.
    keep = [op for op in copy.opset_import if op.domain in used_domains or op.domain in DEFAULT_DOMAINS]
    del copy.opset_import[:]
    copy.opset_import.extend(keep)
    copy.opset_import.append(helper.make_opsetid(CONTRIB_DOMAIN, 1))
    return copy


def _load(path: Path) -> Any:
    """The model at ``path`` through the core loader (path and external-data checks), weights left on disk."""
    return load_model(path)


def _inline_copy(model: Any) -> Any:
    """A copy of ``model`` with weights kept on disk by io.load_model read in (ORT gets bytes, not a folder)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    if external_data_dir(copy) is not None:
        load_model(copy, load_external_data=True)
    return copy


_TWO_GB = 2**31 - 2**20


# The users' op libraries of the call in progress (validate(custom_op_libs=...), a pass's
# built-in check): every session made inside registers them, however deep it is made.
_scoped_libraries: contextvars.ContextVar[tuple[Path, ...]] = contextvars.ContextVar(
    "onnxtool_custom_op_libs", default=()
)


@contextlib.contextmanager
def custom_op_scope(custom_op_libs: Optional[Iterable[Union[str, Path]]]) -> Iterator[tuple[Path, ...]]:
    """Within the block, every :func:`make_session` (and the built-in check's sessions) also
    registers ``custom_op_libs``; UsageError up front for a path that is not a file."""
    added = tuple(ort_library.user_libraries(custom_op_libs))
    token = _scoped_libraries.set(_scoped_libraries.get() + added)
    try:
        yield _scoped_libraries.get()
    finally:
        _scoped_libraries.reset(token)


def scoped_custom_op_libs() -> tuple[Path, ...]:
    """The libraries :func:`custom_op_scope` put in force here (empty outside any scope)."""
    return _scoped_libraries.get()


def make_session(
    model_or_path: Union[str, Path, Any],
    *,
    custom_op_libs: Optional[Iterable[Union[str, Path]]] = None,
    **ort_options: Any,
) -> Any:
    """An ``onnxruntime.InferenceSession`` that runs DynamicTRTResize nodes as well as stock ops.

    Args:
        model_or_path: a ModelProto or a path. The caller's model is never modified. A
            model that needs no private copy (no plugin nodes, or plugin nodes the compiled
            library runs), given as a path, is opened by ORT straight from the file.
        custom_op_libs: the user's own ONNX Runtime custom-op libraries (shared objects
            exporting ``RegisterCustomOps``, such as MMDeploy's ORT ops), registered before
            the session is made, after those of an enclosing :func:`custom_op_scope`. A
            missing file or one ORT cannot load is a UsageError.
        ort_options: passed to ``InferenceSession`` (``sess_options``, ``providers``;
            providers default to CPU). A ``sess_options`` object may be reused across calls.

    Does NOT check the model (run ``onnx.checker`` yourself); ORT reports custom ops it has
    no library for when the session is created.
    """
    ort = ort_module()

    user_libraries = [*scoped_custom_op_libs(), *ort_library.user_libraries(custom_op_libs)]
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
    for library in user_libraries:
        ort_library.register(sess_options, library)
    nodes = plugin_nodes(model)
    compiled = _compiled_library(nodes) if nodes else None
    if compiled is not None:
        ort_library.register(sess_options, compiled)

        note_kernel("compiled-library", path=str(compiled), sha256=file_sha256(compiled))  # a report's evidence
    if not nodes or compiled is not None:
        if from_path is not None:
            return ort.InferenceSession(str(from_path), sess_options=sess_options, providers=providers, **options)
        return _session_from_proto(ort, _inline_copy(model), sess_options, providers, options)

    _define_kernels()
    (get_library_path,) = _import_extensions("get_library_path")
    ort_library.register(sess_options, get_library_path())
    return _session_from_proto(ort, _private_copy(model), sess_options, providers, options, plugin=True)


def _compiled_library(nodes: list[Any]) -> Optional[Path]:
    """onnxtool's ORT library when it can run every plugin node here (built, all in its domain)."""
    if os.environ.get("ONNXTOOL_RUNTIME_FALLBACK", "") not in ("", "0"):
        return None  # the slow path, forced (tests of the fallback)
    if any(node.domain != ort_library.DOMAIN for node in nodes):
        return None
    return ort_library.library_path()


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


def _session_from_proto(
    ort: Any, model: Any, sess_options: Any, providers: list[Any], options: dict[str, Any], *, plugin: bool = False
) -> Any:
    cls = _plugin_session_class(ort) if plugin else ort.InferenceSession
    if model.ByteSize() < _TWO_GB:
        return cls(model.SerializeToString(), sess_options=sess_options, providers=providers, **options)
    # A protobuf cannot exceed 2 GB: hand ORT a temporary file with external data instead.

    copy = onnx.ModelProto()
    copy.CopyFrom(model)  # onnx.save with external data rewrites the proto it is given
    with tempfile.TemporaryDirectory(prefix="onnxtool-session-") as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(copy, path, save_as_external_data=True, all_tensors_to_one_file=True, location="model.data")
        return cls(path, sess_options=sess_options, providers=providers, **options)
