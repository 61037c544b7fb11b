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

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Sequence, Union

import onnx
import torch

import exporters.ops
from exporters.export_check import STANDARD_DOMAINS, compare_in_ort, describe_values, op_types
from exporters.export_runs import (
    default_dynamic_axes,
    one_line,
    resolve_input_names,
    run_dynamo,
    run_loading_ops,
    run_torchscript,
)
from exporters.models import SIGNATURES, VARIANTS, srcnn
from exporters.symbolic import PLUGIN_DOMAIN
from graphsurgeon_tools.errors import CheckFailedError, UnsupportedModelError, UsageError
from graphsurgeon_tools.extensions import environment_problem
from graphsurgeon_tools.io import save_model

__all__ = ["EXPORTERS", "ExportFailedError", "ExportResult", "export", "export_srcnn"]

Exporter = Literal["torchscript", "dynamo"]
EXPORTERS: tuple[str, ...] = ("torchscript", "dynamo")
# The TorchScript exporter's default differs across torch releases; pin ours so files are
# reproducible. 17 is the newest opset the TorchScript exporter fully supports for Resize.
DEFAULT_OPSET = {"torchscript": 17, "dynamo": 18}


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


def _refuse_impossible(model: torch.nn.Module, exporter: str) -> None:
    if exporter == "dynamo" and getattr(model, "variant", None) == "new-interpolate":
        raise UsageError(
            "the new-interpolate variant cannot be exported with the dynamo exporter: it ignores "
            "NewInterpolate.symbolic and traces forward, where the scales become data-dependent Python "
            "floats; use --exporter torchscript, or the cxx-op variant"
        )


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
    started = time.perf_counter()
    if exporter not in EXPORTERS:
        raise UsageError(f"exporter must be one of {', '.join(EXPORTERS)}, got {exporter!r}")
    args = tuple(args)
    domain = plugin_domain or PLUGIN_DOMAIN
    opset = int(opset) if opset is not None else DEFAULT_OPSET[exporter]
    if exporter == "dynamo" and opset < 18:
        raise UsageError(
            f"the dynamo exporter writes opset 18 or later, got --opset {opset}; use the torchscript exporter"
        )
    _refuse_impossible(model, exporter)
    destination = Path(path)
    if destination.is_dir():
        raise UsageError(f"output path is a folder, not a file: {destination}")
    if not destination.parent.is_dir():  # before the export, which can take seconds
        raise UsageError(f"output folder does not exist: {destination.parent}")
    ops_error: Optional[Exception] = None
    try:
        # The C++ ops where they are built already, so their symbolics/translations register; never a
        # build here: a model that calls them builds them in its forward, and the export is retried.
        exporters.ops.load(build=False)
    except Exception as exc:  # noqa: BLE001 - broken: only models calling the ops need it;
        ops_error = exc  # if the export then fails, the missing op is the reason (not torch's exporter)

    names = resolve_input_names(model, len(args), input_names)
    output_names = list(output_names)
    axes = (
        dict(dynamic_axes)
        if dynamic_axes is not None
        else (
            default_dynamic_axes(names, args, output_names, getattr(model, "output_axis_names", None))
            if dynamic
            else {}
        )
    )
    run = run_torchscript if exporter == "torchscript" else run_dynamo
    label = f"{type(model).__name__} ({exporter} exporter, opset {opset})"
    try:
        proto = run_loading_ops(
            run, model, args, opset=opset, input_names=names, output_names=output_names, axes=axes, domain=domain
        )
    except (UsageError, CheckFailedError):
        raise
    except Exception as exc:
        problem = environment_problem(exc) or (environment_problem(ops_error) if ops_error is not None else None)
        if problem is not None:  # the op library (or torch's own dependency) is what is missing
            raise problem from exc
        raise ExportFailedError(f"torch could not export {label} to {path}: {one_line(exc)}") from exc

    try:
        onnx.checker.check_model(proto, full_check=True)
    except Exception as exc:
        raise CheckFailedError(f"{label}: the exported model fails onnx.checker: {one_line(exc)}") from exc

    result = ExportResult(
        path=Path(path),
        exporter=exporter,
        opset=next((entry.version for entry in proto.opset_import if entry.domain in STANDARD_DOMAINS), opset),
        inputs=describe_values(proto.graph.input),
        outputs=describe_values(proto.graph.output),
        op_types=op_types(proto),
    )
    custom = sorted({f"{n.domain}::{n.op_type}" for n in proto.graph.node if n.domain not in STANDARD_DOMAINS})
    if compare is False:
        result.ort_skipped_reason = "not requested"
    elif custom and compare == "auto":
        result.ort_skipped_reason = (
            f"custom-domain nodes ({', '.join(custom)}) that stock ONNX Runtime cannot run; "
            "compare=True runs them through graphsurgeon_tools.runtime.make_session"
        )
    else:
        cases = [args, *[tuple(case) for case in check_args]]
        result.ort_max_abs_diff = compare_in_ort(proto, model, cases, names, rtol, atol, bool(custom), label)
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
