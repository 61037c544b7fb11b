"""``export(model, args, path)``: one call that exports, checks and proves an ONNX file.

    nn.Module --torch.onnx.export (TorchScript | dynamo)--> ModelProto
        --onnx.checker (full_check)--> ONNX Runtime vs the PyTorch model --> path (atomic)

Which (variant x exporter) combinations work, and why the one that does not:

=================  ===========  ======================================================
variant            torchscript  dynamo
=================  ===========  ======================================================
static             yes          yes (initializer scales)
new-interpolate    yes          **no**: the dynamo exporter never calls an
                                ``autograd.Function``'s ``symbolic``; it traces
                                ``forward``, where ``scales.tolist()`` turns the
                                factor into data-dependent Python floats that
                                ``interpolate`` must branch on
                                (``GuardOnDataDependentSymNode``). That is the
                                limitation the C++ op variant exists to remove.
cxx-op             yes          yes (custom_translation_table, onnxscript)
plugin (both)      yes          yes (custom_translation_table, custom domain)
=================  ===========  ======================================================

The export is refused up front for the combination that cannot work, with
that reason (:class:`~graphsurgeon_tools.errors.UsageError`).
"""

from __future__ import annotations

import contextlib
import io
import logging
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Mapping, Optional, Sequence, Union

import numpy as np
import torch

from graphsurgeon_tools.errors import CheckFailedError, UnsupportedModelError, UsageError

if TYPE_CHECKING:  # onnx is imported where it is used; this is for the annotations
    import onnx

__all__ = ["EXPORTERS", "ExportFailedError", "ExportResult", "export", "export_srcnn"]

Exporter = Literal["torchscript", "dynamo"]
EXPORTERS: tuple[str, ...] = ("torchscript", "dynamo")
# The TorchScript exporter's default differs across torch releases; pin ours so files are
# reproducible. 17 is the newest opset the TorchScript exporter fully supports for Resize.
DEFAULT_OPSET = {"torchscript": 17, "dynamo": 18}
_STANDARD_DOMAINS = ("", "ai.onnx")


class ExportFailedError(UnsupportedModelError):
    """torch could not export the model (exit code 3): the message carries torch's reason."""


@dataclass
class ExportResult:
    """What :func:`export` wrote and how it was checked (``to_dict()`` is the CLI's ``--json``)."""

    path: Path
    exporter: str
    opset: int
    inputs: list[dict] = field(default_factory=list)  # name, dtype, shape (dim names for dynamic axes)
    outputs: list[dict] = field(default_factory=list)
    op_types: dict[str, int] = field(default_factory=dict)  # "domain::Op" for custom domains
    checker: str = "passed (full_check)"
    ort_checked: bool = False
    ort_cases: int = 0
    ort_max_abs_diff: Optional[float] = None
    ort_skipped_reason: Optional[str] = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "exporter": self.exporter,
            "opset": self.opset,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "op_types": self.op_types,
            "checker": self.checker,
            "ort": {
                "checked": self.ort_checked,
                "cases": self.ort_cases,
                "max_abs_diff": self.ort_max_abs_diff,
                "skipped_reason": self.ort_skipped_reason,
            },
            "seconds": round(self.seconds, 3),
        }


def _one_line(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    # torch's export errors bury the reason after a banner; prefer the line that names it.
    for line in lines:
        if "Error" in line and ":" in line and "step 1/3" not in line:
            return line[:limit]
    return (lines[0] if lines else "")[:limit]


@contextlib.contextmanager
def _quiet():
    """Library code is quiet: silence torch's export chatter (progress lines, tracer and
    deprecation warnings, "torchvision is not installed" log lines). Errors still raise."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    # torch 2.13's TorchScript exporter tests `_C._jit_is_onnx_log_enabled` without calling it,
    # so its C++ log is always on and dumps the whole IR graph to stderr on any export error.
    # Swap in a context manager that leaves the log off (a private hook: skipped if it moves).
    try:
        from torch.onnx._internal.torchscript_exporter import utils as ts_utils
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


def _input_names(model: torch.nn.Module, count: int, given: Optional[Sequence[str]]) -> list[str]:
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


def _dynamic_axes(names: Sequence[str], args: Sequence[torch.Tensor], output_names: Sequence[str],
                  output_axis_names: Optional[Mapping[int, str]] = None) -> dict:
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


def _dynamic_shapes(axes: Mapping[str, Mapping[int, str]], names: Sequence[str], args: Sequence[Any]) -> tuple:
    # torch.export wants one Dim object per symbol; equal names share one, as in dynamic_axes.
    dims: dict[str, Any] = {}
    shapes = []
    for name, _ in zip(names, args):
        spec = axes.get(name)
        if spec:
            shapes.append({axis: dims.setdefault(dim, torch.export.Dim(dim.replace(".", "_"))) for axis, dim in spec.items()})
        else:
            shapes.append(None)
    return tuple(shapes)


def _describe_values(values) -> list[dict]:
    import onnx

    described = []
    for value in values:
        tensor_type = value.type.tensor_type
        shape = [dim.dim_param if dim.HasField("dim_param") else (dim.dim_value if dim.HasField("dim_value") else None)
                 for dim in tensor_type.shape.dim] if tensor_type.HasField("shape") else None
        described.append({
            "name": value.name,
            "dtype": onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type).name if tensor_type.elem_type else None,
            "shape": shape,
        })
    return described


def _op_types(model) -> dict[str, int]:
    counts = Counter(
        node.op_type if node.domain in _STANDARD_DOMAINS else f"{node.domain}::{node.op_type}"
        for node in model.graph.node
    )
    return dict(counts)


def _refuse_impossible(model: torch.nn.Module, exporter: str) -> None:
    if exporter == "dynamo" and getattr(model, "variant", None) == "new-interpolate":
        raise UsageError(
            "the new-interpolate variant cannot be exported with the dynamo exporter: it ignores "
            "NewInterpolate.symbolic and traces forward, where the scales become data-dependent Python "
            "floats; use --exporter torchscript, or the cxx-op variant"
        )


def _run_loading_ops(run, model, args, **options) -> "onnx.ModelProto":
    """``run`` once; again if the model's forward loaded the C++ ops during the first attempt (their
    symbolics/translations could not register before)."""
    import exporters.ops

    loaded_before = exporters.ops.loaded()
    try:
        with torch.no_grad(), _quiet():
            return run(model, args, **options)
    except (UsageError, CheckFailedError):
        raise
    except Exception:
        if loaded_before or not exporters.ops.loaded():
            raise
    with torch.no_grad(), _quiet():
        return run(model, args, **options)


def _run_torchscript(model, args, *, opset, input_names, output_names, axes, domain) -> "onnx.ModelProto":
    import onnx

    from exporters.symbolic import register_torchscript_symbolics

    register_torchscript_symbolics(domain=domain)
    buffer = io.BytesIO()
    torch.onnx.export(
        model, tuple(args), buffer, dynamo=False, opset_version=opset,
        input_names=list(input_names), output_names=list(output_names),
        dynamic_axes=axes or None, do_constant_folding=True,
    )
    return onnx.load_from_string(buffer.getvalue())


def _run_dynamo(model, args, *, opset, input_names, output_names, axes, domain) -> "onnx.ModelProto":
    from exporters.symbolic import dynamo_translation_table

    program = torch.onnx.export(
        model, tuple(args), dynamo=True, opset_version=opset,
        input_names=list(input_names), output_names=list(output_names),
        dynamic_shapes=_dynamic_shapes(axes, input_names, args) if axes else None,
        custom_translation_table=dynamo_translation_table(domain=domain),
        external_data=False, verbose=False, report=False,
    )
    return program.model_proto


def _compare(model_proto, module: torch.nn.Module, cases: Sequence[Sequence[torch.Tensor]],
             input_names: Sequence[str], rtol: float, atol: float, use_plugin_runtime: bool, label: str) -> float:
    if use_plugin_runtime:
        from graphsurgeon_tools.runtime import make_session

        session = make_session(model_proto)
    else:
        import onnxruntime as ort

        session = ort.InferenceSession(model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
    graph_inputs = [i.name for i in session.get_inputs()]
    worst = 0.0
    for case in cases:
        with torch.no_grad():
            expected = module(*case)
        expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
        feeds = {name: value.detach().cpu().numpy() for name, value in zip(input_names, case) if name in graph_inputs}
        got = session.run(None, feeds)
        for want, have in zip(expected, got):
            want = want.detach().cpu().numpy()
            if want.shape != have.shape:
                raise CheckFailedError(
                    f"{label}: ONNX Runtime output shape {have.shape} differs from PyTorch's {want.shape} "
                    f"for input shapes {[tuple(t.shape) for t in case]}"
                )
            diff = float(np.max(np.abs(want.astype(np.float64) - have.astype(np.float64)))) if want.size else 0.0
            worst = max(worst, diff)
            if not np.allclose(have, want, rtol=rtol, atol=atol):
                raise CheckFailedError(
                    f"{label}: ONNX Runtime differs from PyTorch by up to {diff:.3g} (rtol {rtol:g}, atol {atol:g}) "
                    f"for input shapes {[tuple(t.shape) for t in case]}"
                )
    return worst


def export(
    model: torch.nn.Module,
    args: Sequence[torch.Tensor],
    path: Union[str, Path],
    *,
    exporter: Exporter = "torchscript",
    opset: Optional[int] = None,
    input_names: Optional[Sequence[str]] = None,
    output_names: Sequence[str] = ("output",),
    dynamic: bool = True,
    dynamic_axes: Optional[Mapping[str, Mapping[int, str]]] = None,
    check_args: Sequence[Sequence[torch.Tensor]] = (),
    compare: Union[bool, Literal["auto"]] = "auto",
    rtol: float = 1e-4,
    atol: float = 1e-4,
    plugin_domain: Optional[str] = None,
) -> ExportResult:
    """Export ``model(*args)`` to ``path`` with the chosen torch exporter, check it, and prove it.

    * ``dynamic=True``: batch, height and width of every 4-D input (and of the
      outputs) are symbolic; other inputs (scales) keep their shape.
      ``dynamic_axes`` (TorchScript spelling, also translated for dynamo)
      overrides that convention.
    * The ``onnxtool`` custom ops export through :mod:`exporters.symbolic`
      (loaded automatically); the plugin ops become ``plugin_domain::DynamicTRTResize``.
    * The result must pass ``onnx.checker.check_model(full_check=True)``; then
      ONNX Runtime runs ``args`` and each of ``check_args`` and must match the
      module's eager output (``np.allclose`` with ``rtol``/``atol``).
      ``compare="auto"`` skips that for graphs with custom-domain nodes (stock ORT
      cannot run them) and says why in the result; ``compare=True`` runs those
      through ``graphsurgeon_tools.runtime.make_session`` instead.
    * The file is written atomically (``graphsurgeon_tools.io.save_model``),
      only after every check passed: a failed export leaves ``path`` untouched.

    Raises :class:`UsageError` for a combination that cannot work (see the
    module docstring) or bad arguments, :class:`ExportFailedError` when torch
    cannot export the model, :class:`CheckFailedError` when the checker or ORT
    disagrees. Does not put the model in eval mode (the caller decides), and
    does not simplify or constant-fold beyond what the exporter does.
    """
    import onnx

    from exporters.symbolic import PLUGIN_DOMAIN
    from graphsurgeon_tools.io import save_model

    started = time.perf_counter()
    if exporter not in EXPORTERS:
        raise UsageError(f"exporter must be one of {', '.join(EXPORTERS)}, got {exporter!r}")
    args = tuple(args)
    domain = plugin_domain or PLUGIN_DOMAIN
    opset = int(opset) if opset is not None else DEFAULT_OPSET[exporter]
    if exporter == "dynamo" and opset < 18:
        raise UsageError(f"the dynamo exporter writes opset 18 or later, got --opset {opset}; use the torchscript exporter")
    _refuse_impossible(model, exporter)
    destination = Path(path)
    if destination.is_dir():
        raise UsageError(f"output path is a folder, not a file: {destination}")
    if not destination.parent.is_dir():  # before the export, which can take seconds
        raise UsageError(f"output folder does not exist: {destination.parent}")
    ops_error: Optional[Exception] = None
    import exporters.ops

    try:
        # The C++ ops where they are built already, so their symbolics/translations register; never a
        # build here: a model that calls them builds them in its forward, and the export is retried.
        exporters.ops.load(build=False)
    except Exception as exc:  # noqa: BLE001 - broken: only models calling the ops need it;
        ops_error = exc  # if the export then fails, the missing op is the reason (not torch's exporter)

    names = _input_names(model, len(args), input_names)
    output_names = list(output_names)
    axes = dict(dynamic_axes) if dynamic_axes is not None else (
        _dynamic_axes(names, args, output_names, getattr(model, "output_axis_names", None)) if dynamic else {})
    run = _run_torchscript if exporter == "torchscript" else _run_dynamo
    label = f"{type(model).__name__} ({exporter} exporter, opset {opset})"
    try:
        proto = _run_loading_ops(run, model, args, opset=opset, input_names=names, output_names=output_names,
                                 axes=axes, domain=domain)
    except (UsageError, CheckFailedError):
        raise
    except Exception as exc:
        from graphsurgeon_tools.extensions import environment_problem

        problem = environment_problem(exc) or (environment_problem(ops_error) if ops_error is not None else None)
        if problem is not None:  # the op library (or torch's own dependency) is what is missing
            raise problem from exc
        raise ExportFailedError(f"torch could not export {label} to {path}: {_one_line(exc)}") from exc

    try:
        onnx.checker.check_model(proto, full_check=True)
    except Exception as exc:
        raise CheckFailedError(f"{label}: the exported model fails onnx.checker: {_one_line(exc)}") from exc

    result = ExportResult(
        path=Path(path), exporter=exporter, opset=next(
            (entry.version for entry in proto.opset_import if entry.domain in _STANDARD_DOMAINS), opset),
        inputs=_describe_values(proto.graph.input), outputs=_describe_values(proto.graph.output),
        op_types=_op_types(proto),
    )
    custom = sorted({f"{n.domain}::{n.op_type}" for n in proto.graph.node if n.domain not in _STANDARD_DOMAINS})
    if compare is False:
        result.ort_skipped_reason = "not requested"
    elif custom and compare == "auto":
        result.ort_skipped_reason = (
            f"custom-domain nodes ({', '.join(custom)}) that stock ONNX Runtime cannot run; "
            "compare=True runs them through graphsurgeon_tools.runtime.make_session"
        )
    else:
        cases = [args, *[tuple(case) for case in check_args]]
        result.ort_max_abs_diff = _compare(proto, model, cases, names, rtol, atol, bool(custom), label)
        result.ort_checked, result.ort_cases = True, len(cases)

    result.path = save_model(proto, path)
    result.seconds = time.perf_counter() - started
    return result


CHECK_FACTORS = (2.0, 3.0, 4.0)


def default_srcnn_filename(variant: str = "static", *, signature: str = "scales", exporter: str = "torchscript") -> str:
    """``srcnn_static.onnx``, ``srcnn_cxx_op_dynamo.onnx``, ``srcnn_plugin_size_tensor.onnx``..."""
    parts = ["srcnn", variant.replace("-", "_")]
    if variant == "plugin" and signature != "scales":
        parts.append(signature.replace("-", "_"))
    if exporter != "torchscript":
        parts.append(exporter)
    return "_".join(parts) + ".onnx"


def export_srcnn(
    path: Union[str, Path, None] = None,
    *,
    variant: str = "static",
    signature: str = "scales",
    align_corners: bool = False,
    exporter: Exporter = "torchscript",
    opset: Optional[int] = None,
    factor: float = 3.0,
    compare: Union[bool, Literal["auto"]] = "auto",
) -> ExportResult:
    """Export the built-in SRCNN example (shipped weights) in one export style: ``onnxtool export srcnn``.

    ``path`` defaults to :func:`default_srcnn_filename` in the current folder.
    The static variant bakes ``factor`` in and is checked at it (on two input
    shapes); the dynamic variants are traced at ``factor`` and checked in ONNX
    Runtime at 2, 3 and 4 (and ``factor``), on a 1x3x8x8 and a 2x3x5x7 input.
    Everything else is :func:`export`'s contract.
    """
    from exporters.models import SIGNATURES, VARIANTS, srcnn

    if variant not in VARIANTS:
        raise UsageError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if signature not in SIGNATURES:
        raise UsageError(f"signature must be one of {', '.join(SIGNATURES)}, got {signature!r}")
    if variant != "plugin" and (signature != "scales" or align_corners):
        raise UsageError("--signature and --align-corners apply to the plugin variant only")
    if signature == "scales" and align_corners:
        raise UsageError("--align-corners applies to --signature size-tensor only (the MMDeploy plugin's attribute)")
    if not (float(factor) > 0 and float(factor) <= 16):
        raise UsageError(f"--factor must be in (0, 16], got {factor!r}")
    if path is None:
        path = Path.cwd() / default_srcnn_filename(variant, signature=signature, exporter=exporter)
    model = srcnn(variant, factor=factor, signature=signature, align_corners=align_corners)
    args = model.example_inputs(factor)
    if variant == "static":
        check_args = [model.example_inputs(factor, batch=2, height=5, width=7, seed=1)]
    else:
        factors = sorted({*CHECK_FACTORS, float(factor)})
        check_args = [model.example_inputs(f, batch=2, height=5, width=7, seed=1) for f in factors]
    return export(model, args, path, exporter=exporter, opset=opset, check_args=check_args, compare=compare)
