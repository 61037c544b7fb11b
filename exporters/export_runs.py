"""Running torch's two ONNX exporters for :func:`exporters.onnx_export.export`: quietly, with the
input names and dynamic axes it chose, retried once when the model's forward loaded the C++ ops.

``run_torchscript`` / ``run_dynamo(model, args, *, opset, input_names, output_names, axes, domain)
-> onnx.ModelProto`` (the onnxtool ops' symbolics/translations registered for ``domain``),
``run_loading_ops(run, model, args, **options)`` (the retry), ``quiet()`` (torch's chatter off),
``resolve_input_names``, ``default_dynamic_axes`` (the NCHW convention), ``one_line(exc)``.

Requires: torch; the C++ ops only for models that call them. Ensures: errors are torch's own,
raised unchanged (``export`` words them); nothing is written. Does NOT check the ModelProto
(:mod:`exporters.export_check` and ``export`` do) or build the C++ ops.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from typing import Any, Mapping, Optional, Sequence

import onnx
import torch

import exporters.ops
from exporters.symbolic import dynamo_translation_table, register_torchscript_symbolics
from graphsurgeon_tools.errors import CheckFailedError, UsageError

__all__ = [
    "default_dynamic_axes",
    "one_line",
    "quiet",
    "resolve_input_names",
    "run_dynamo",
    "run_loading_ops",
    "run_torchscript",
]


def one_line(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    # torch's export errors bury the reason after a banner; prefer the line that names it.
    for line in lines:
        if "Error" in line and ":" in line and "step 1/3" not in line:
            return line[:limit]
    return (lines[0] if lines else "")[:limit]


@contextlib.contextmanager
def quiet():
    """Library code is quiet: silence torch's export chatter (progress lines, tracer and
    deprecation warnings, "torchvision is not installed" log lines). Errors still raise."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    # torch 2.13's TorchScript exporter tests `_C._jit_is_onnx_log_enabled` without calling it,
    # so its C++ log is always on and dumps the whole IR graph to stderr on any export error.
    # Swap in a context manager that leaves the log off (a private hook: skipped if it moves).
    try:
        from torch.onnx._internal.torchscript_exporter import utils as ts_utils  # deferred: torch, private
    except ImportError:  # pragma: no cover - torch reorganised its exporter
        ts_utils = None
    original = getattr(ts_utils, "setup_onnx_logging", None)
    if original is not None:
        ts_utils.setup_onnx_logging = lambda verbose: contextlib.nullcontext()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)
        if original is not None:
            ts_utils.setup_onnx_logging = original


def resolve_input_names(model: torch.nn.Module, count: int, given: Optional[Sequence[str]]) -> list[str]:
    if given is not None:
        names = list(given)
        if len(names) != count:
            raise UsageError(f"input_names has {len(names)} names for {count} inputs")
        return names
    declared = getattr(model, "input_names", None)
    if callable(declared):
        declared = declared()
    if declared is not None and len(declared) == count:
        return list(declared)
    return ["input"] + [f"input_{k}" for k in range(1, count)]


def default_dynamic_axes(
    names: Sequence[str],
    args: Sequence[torch.Tensor],
    output_names: Sequence[str],
    output_axis_names: Optional[Mapping[int, str]] = None,
) -> dict:
    """NCHW convention: batch, height and width of every 4-D tensor vary; other tensors are fixed.

    ``output_axis_names`` (a model's ``output_axis_names`` attribute) renames output axes that
    equal an input's, e.g. the size-tensor plugin's output H, W are size_tensor's.
    """
    axes: dict[str, dict[int, str]] = {}
    for index, (name, value) in enumerate(zip(names, args)):
        if isinstance(value, torch.Tensor) and value.dim() == 4:
            prefix = "" if index == 0 else f"{name}_"
            axes[name] = {0: f"{prefix}batch", 2: f"{prefix}height", 3: f"{prefix}width"}
    if axes:
        for name in output_names:
            axes[name] = {0: "batch", 2: f"{name}_height", 3: f"{name}_width", **(output_axis_names or {})}
    return axes


def to_dynamic_shapes(axes: Mapping[str, Mapping[int, str]], names: Sequence[str], args: Sequence[Any]) -> tuple:
    # torch.export wants one Dim object per symbol; equal names share one, as in dynamic_axes.
    dims: dict[str, Any] = {}
    shapes = []
    for name, _ in zip(names, args):
        spec = axes.get(name)
        if spec:
            shapes.append(
                {axis: dims.setdefault(dim, torch.export.Dim(dim.replace(".", "_"))) for axis, dim in spec.items()}
            )
        else:
            shapes.append(None)
    return tuple(shapes)


def run_loading_ops(run, model, args, **options) -> "onnx.ModelProto":
    """``run`` once; again if the model's forward loaded the C++ ops during the first attempt (their
    symbolics/translations could not register before)."""
    loaded_before = exporters.ops.loaded()
    try:
        with torch.no_grad(), quiet():
            return run(model, args, **options)
    except (UsageError, CheckFailedError):
        raise
    except Exception:
        if loaded_before or not exporters.ops.loaded():
            raise
    with torch.no_grad(), quiet():
        return run(model, args, **options)


def run_torchscript(model, args, *, opset, input_names, output_names, axes, domain) -> "onnx.ModelProto":
    register_torchscript_symbolics(domain=domain)
    buffer = io.BytesIO()
    torch.onnx.export(
        model,
        tuple(args),
        buffer,
        dynamo=False,
        opset_version=opset,
        input_names=list(input_names),
        output_names=list(output_names),
        dynamic_axes=axes or None,
        do_constant_folding=True,
    )
    return onnx.load_from_string(buffer.getvalue())


def run_dynamo(model, args, *, opset, input_names, output_names, axes, domain) -> "onnx.ModelProto":
    program = torch.onnx.export(
        model,
        tuple(args),
        dynamo=True,
        opset_version=opset,
        input_names=list(input_names),
        output_names=list(output_names),
        dynamic_shapes=to_dynamic_shapes(axes, input_names, args) if axes else None,
        custom_translation_table=dynamo_translation_table(domain=domain),
        external_data=False,
        verbose=False,
        report=False,
    )
    return program.model_proto
