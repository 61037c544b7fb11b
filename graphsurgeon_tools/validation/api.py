"""Prove a rewrite right: run the candidate in ONNX Runtime against a reference over a sweep of factors.

``validate(candidate, reference, *, factors, inputs, atol, rtol) -> ValidationReport``::

    candidate (ONNX, run through runtime.make_session, plugin nodes included)
        x factor sweep (each factor fed through whatever scale input the rewrite made)
        vs reference (ONNX model | torch:srcnn | python:MODULE:CALLABLE | onnx-reference)
        -> per factor and output: shapes, max/mean abs error, max rel error, share out of
           tolerance, the atol that would have passed, PSNR (image-like outputs)
        -> on a mismatch: a diagnosis (which Resize attribute change reproduces the
           reference, border/interior and periodic error patterns, differing weights)

An element is within tolerance when ``|candidate - reference| <= atol + rtol * |reference|``
(numpy's ``isclose``; equal infinities and NaN-vs-NaN count as equal). Besides the graph
outputs, the outputs of the candidate's Resize/Upsample/plugin nodes are compared wherever
the reference has tensors of the same names (an ONNX reference, onnx-reference): they are
exactly what a rewrite changed. A sweep point whose every comparison is vacuous (the
reference constant or below atol) is "vacuous", not passed. The report passes when at least
one factor was compared and every compared factor passed.

Static models: a reference without scale inputs is compared only at the factor it bakes
in (the other factors are reported as skipped, with the reason); one whose Resize nodes
bake different factors is compared once, the candidate's scale inputs fed the reference's
scales node by node. A static candidate likewise runs only at its own factor.

Library code: nothing is printed and nothing is written (JUnit output: :mod:`.junit`).
The report is a value; :meth:`ValidationReport.raise_if_failed` turns a mismatch into
:class:`CheckFailedError` (exit code 1) for pipelines. torch is imported only when a
PyTorch reference is asked for (through :mod:`graphsurgeon_tools.extensions`).

Requires: a candidate ONNX model and a reference spec. Ensures: a :class:`ValidationReport`
(a mismatch is not an exception). Does NOT modify or write any file.
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np
import onnx

from graphsurgeon_tools.check.feeds import InputLike
from graphsurgeon_tools.check.tolerance import UlpTolerance
from graphsurgeon_tools.errors import CheckFailedError, UsageError
from graphsurgeon_tools.runtime.provenance import evidence_record, recording
from graphsurgeon_tools.runtime.session import custom_op_scope
from graphsurgeon_tools.validation.diagnosis import diagnose as run_diagnosis
from graphsurgeon_tools.validation.evidence import vacuous_reason
from graphsurgeon_tools.validation.localise import localise_nodes
from graphsurgeon_tools.validation.point import original_point, prepare_inputs, run_point, takes_no_factor
from graphsurgeon_tools.validation.quantized import QuantizedPlan
from graphsurgeon_tools.validation.reference_specs import ReferenceLike, make_reference
from graphsurgeon_tools.validation.references import Reference
from graphsurgeon_tools.validation.report import FactorResult, ValidationReport
from graphsurgeon_tools.validation.runner import OnnxRunner, load_onnx
from graphsurgeon_tools.validation.sites import (
    ClashFinder,
    localise,
    not_free_points,
    originals_of,
    parse_site_factors,
    plan_site_points,
    point_feeds,
)
from graphsurgeon_tools.validation.sweep import Factor, format_factor, parse_factors, plan_sweep

__all__ = ["DEFAULT_ATOL", "DEFAULT_INPUT_SIZE", "DEFAULT_RTOL", "VALIDATE_ULPS", "validate"]

DEFAULT_ATOL = 1e-4
DEFAULT_RTOL = 1e-3
#: validate's dtype-aware default, in ulps of the candidate output's dtype at the reference's
#: magnitude (check.tolerance), floored at DEFAULT_ATOL/DEFAULT_RTOL: a float32 output keeps
#: those unless its values reach the tens (64 ulps at 300 is 2.3e-3); a float16 model (its
#: reference run in float32, or in half) differs by several float16 ulps through a network:
#: 16 (1.6% of the magnitude); bfloat16 has 3 fewer bits: 4 ulps (3.1%).
VALIDATE_ULPS = {"float32": 64.0, "float64": 64.0, "float16": 16.0, "bfloat16": 4.0}
# Symbolic spatial dims of random inputs get this size: big enough for a 9x9 conv and
# border effects to separate from the interior, small enough to keep a sweep quick.
DEFAULT_INPUT_SIZE = 32

ProgressCallback = Callable[[str, int, int], None]


def _site_plan(
    sites: Any,
    runner: OnnxRunner,
    ref: Reference,
    data: list[tuple[str, np.ndarray]],
    fixed: dict[str, np.ndarray],
    notes: list[str],
    results: list[FactorResult],
) -> tuple[list[tuple[Factor, str]], list[tuple[str, dict[str, np.ndarray]]]]:
    """Per-site points as (factor, skip reason) plus, per point, its label and the scale feeds it fixes.

    A routed PyTorch reference is paired with the candidate first (its original factors are the
    other sites' values); a pairing that fails is recorded in ``results`` as one failed point.
    """
    wanted = parse_site_factors(sites)
    prepare = getattr(ref, "prepare", None)
    if prepare is not None:
        try:
            prepare([array for _, array in data])
        except CheckFailedError as exc:
            results.append(FactorResult(factor=None, status="failed", reason=str(exc)))
            return [], []
    originals = originals_of(ref, data)
    points = plan_site_points(
        wanted, runner.model, runner.ports, ref, originals, notes, {name: array.shape for name, array in data}
    )
    x_shape = data[0][1].shape if data else ()
    return (
        [(None, reason) for _, reason in points],
        [(point.label, {**point_feeds(point, runner.ports, x_shape, originals), **fixed}) for point, _ in points],
    )


def validate(
    candidate: Union[str, os.PathLike, onnx.ModelProto],
    reference: ReferenceLike,
    *,
    factors: Optional[Sequence[float]] = None,
    inputs: Optional[Mapping[str, InputLike]] = None,
    atol: Optional[float] = None,
    rtol: Optional[float] = None,
    seed: int = 0,
    input_size: int = DEFAULT_INPUT_SIZE,
    diagnose: bool = True,
    max_output_bytes: Optional[int] = None,
    progress: Optional[ProgressCallback] = None,
    sites: Optional[Union[Mapping[str, Any], Sequence[str]]] = None,
    scales_argument: bool = False,
    custom_op_libs: Optional[Sequence[Union[str, os.PathLike]]] = None,
    certificate: Optional[Any] = None,
) -> ValidationReport:
    """Run ``candidate`` in ONNX Runtime against ``reference`` at each factor and compare.

    Args:
        candidate: the ONNX model to check (path or ModelProto; never modified).
        reference: a path to an ONNX model, a ModelProto, ``"python:MODULE:CALLABLE"``,
            ``"onnx-reference"``, a registered name (``"torch:srcnn"``) or an ``nn.Module``
            (see :mod:`graphsurgeon_tools.validation.references` for the calling convention).
        factors: the sweep (numbers or strings, see :func:`.sweep.parse_factors`); ``None``
            picks the static side's baked factor, else 2, 3, 4. Every scale input of the
            candidate gets the same factor; for a model whose Resize nodes had different
            factors, compare against its static original instead (each input is then fed its
            own node's original scales, matched by node name).
        inputs: name -> array or ``.npy`` path; other data inputs get seeded uniform [0, 1)
            data with symbolic dims set to 1 (first axis) or ``input_size``. Giving a scale
            input fixes it (the sweep then no longer drives it).
        atol, rtol: within tolerance when ``|a - b| <= atol + rtol * |b|``. Neither given: the
            dtype-aware default (:data:`VALIDATE_ULPS` ulps of each candidate output's dtype at the
            reference's magnitude, never below ``DEFAULT_ATOL``/``DEFAULT_RTOL``; the report says
            so in ``tolerance``). One given: the other is its ``DEFAULT_*`` value.
        seed: seed of the random inputs.
        input_size: size of symbolic spatial dims of random inputs.
        diagnose: on a mismatch, look for the Resize setting behind it.
        max_output_bytes: per-tensor size limit (see :mod:`graphsurgeon_tools.check.limits`).
        progress: ``progress(step, done, total)``, called as the sweep advances.
        sites: per-site points instead of ``factors``: ``{"NAME": [2, 3]}`` or ``["NAME=2,3"]``;
            NAME is a resize node of the candidate, ``#k`` (its k-th scale-driven site) or a
            PyTorch reference's module scope. The named sites take the factors (lists zipped),
            every other site its original factor; see :mod:`.sites`.
        scales_argument: call an ``nn.Module`` reference as ``module(*data, scales)`` instead of
            running it unmodified with its resizes routed (see :mod:`.references`).
        custom_op_libs: the user's own ONNX Runtime op libraries (e.g. MMDeploy's), registered
            on every session of the run (candidate, ONNX reference, diagnosis).
        certificate: a certificate of the candidate (``graphsurgeon_tools.certify(...)`` or its
            dict, schema ``onnxtool.certificate/1``) to carry in the report beside the sweep:
            its verdict joins the report's, and the JSON and JUnit reports include it.

    Factors a plain sweep cannot run because the graph pins a site (a skip connection meeting
    the upsampled tensor, a baked Reshape) are skipped as ``not free at xN: ...``.
    Without ``factors`` against ``onnx-reference``, a candidate written by make_dynamic_scale or
    swap_plugin is also compared at the point ``original``: each scale input fed the original
    value the pass recorded (metadata_props ``onnxtool.original_values``, or a pass's declared
    inputs, ``onnxtool.declared_inputs``), so a model whose sites are all pinned is still compared
    at the factors it was made for. Against a static reference that bakes no factor (the model a
    pass was given, when its new inputs drive no Resize) that point is the only one. A pass's
    declared inputs of layout ``value`` are fed their original at every point (or what ``inputs``
    gives them).

    Returns the report; a mismatch is not an exception (see ``raise_if_failed``). Raises
    :class:`OnnxToolError` subclasses (exit code 3, or 2 for usage) for unreadable models,
    arrays that do not fit, unknown references and nonsense factors. Does not modify or
    write any file, and does not check the graph itself (use ``onnx.checker`` for that).
    """
    with custom_op_scope(custom_op_libs), recording() as ran:
        report = _validate(
            candidate,
            reference,
            factors=factors,
            inputs=inputs,
            atol=atol,
            rtol=rtol,
            seed=seed,
            input_size=input_size,
            diagnose=diagnose,
            max_output_bytes=max_output_bytes,
            progress=progress,
            sites=sites,
            scales_argument=scales_argument,
        )
    report.evidence = evidence_record(
        ran,
        models=_compared(candidate, reference, report.reference),
        torch_reference=report.reference.get("kind") == "torch",
    )
    if certificate is not None:
        report.certificate = dict(certificate.to_dict() if hasattr(certificate, "to_dict") else certificate)
    return report


def _compared(candidate: Any, reference: Any, described: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(role, what was compared) for the evidence record: files by path, in-memory models as themselves.

    A ``python:FILE.py:CALLABLE`` reference is its source file; a named or in-process module
    reference has no file (its label stands for it); ``onnx-reference`` runs the candidate itself."""
    models: list[tuple[str, Any]] = [("candidate", candidate)]
    kind = described.get("kind")
    if kind == "onnx-reference":
        return models
    if isinstance(reference, (str, os.PathLike)) and kind == "onnx":
        models.append(("reference", reference))
    elif isinstance(reference, onnx.ModelProto):
        models.append(("reference", reference))
    elif (
        isinstance(reference, str)
        and reference.startswith(("python:", "python-scales:"))
        and reference.rpartition(":")[0].split(":", 1)[-1].endswith(".py")
    ):
        models.append(("reference", reference.rpartition(":")[0].split(":", 1)[-1]))
    else:
        models.append(("reference", str(described.get("label") or reference)))
    return models


def _validate(
    candidate: Union[str, os.PathLike, onnx.ModelProto],
    reference: ReferenceLike,
    *,
    factors: Optional[Sequence[float]],
    inputs: Optional[Mapping[str, InputLike]],
    atol: Optional[float],
    rtol: Optional[float],
    seed: int,
    input_size: int,
    diagnose: bool,
    max_output_bytes: Optional[int],
    progress: Optional[ProgressCallback],
    sites: Optional[Union[Mapping[str, Any], Sequence[str]]],
    scales_argument: bool,
) -> ValidationReport:
    # validate's body, inside the custom_op_libs scope (every session made here registers them)
    tolerance = None
    if atol is None and rtol is None:
        tolerance = UlpTolerance(
            dict(VALIDATE_ULPS),
            floor=(DEFAULT_ATOL, DEFAULT_RTOL),
            why="candidate output dtype at the reference's magnitude",
        )
    atol = DEFAULT_ATOL if atol is None else atol
    rtol = DEFAULT_RTOL if rtol is None else rtol
    if not (atol >= 0 and rtol >= 0 and math.isfinite(atol) and math.isfinite(rtol)):
        raise UsageError(f"tolerances must be finite and non-negative, got atol={atol} rtol={rtol}")
    if int(input_size) < 1 or int(seed) < 0:
        raise UsageError(f"input_size= must be >= 1 and seed= >= 0, got {input_size} and {seed}")
    sweep = None if factors is None else parse_factors(factors)
    label = str(candidate) if not isinstance(candidate, onnx.ModelProto) else "<ModelProto>"
    model = load_onnx(candidate, "candidate")
    notes: list[str] = []
    runner = OnnxRunner(model, label)
    ref = make_reference(reference, model, scales_argument=scales_argument)
    data, fixed, described = prepare_inputs(
        runner.ports, inputs, seed, input_size, notes, max_output_bytes=max_output_bytes, label=label
    )
    # Compare the resize sites' outputs too, where the reference has tensors of the same names.
    quantized = QuantizedPlan.of(runner, ref, notes)  # DQ -> Resize -> Q: both ONNX sides unfused
    runner.expose(ref.expose(runner.site_outputs() + (quantized.quantized if quantized else [])))
    results: list[FactorResult] = []
    if sites is not None:
        if sweep is not None:
            raise UsageError(
                "give factors= or sites=, not both: sites= sweeps the named sites, "
                "every other site at its original factor"
            )
        plan, point_fixed = _site_plan(sites, runner, ref, data, fixed, notes, results)
    else:
        original = original_point(sweep, runner, ref, fixed)
        if original is not None and takes_no_factor(ref):  # the one point both sides compute alike
            notes.append(
                "the reference is static and takes no factor: compared at the point original (each "
                "driven input fed the value its pass recorded); give factors= to ask for others"
            )
            plan, point_fixed = [(None, "")], [("original", original)]
        else:
            finder = ClashFinder(
                model, runner.ports, originals_of(ref, data), {name: array.shape for name, array in data}
            )
            plan = not_free_points(plan_sweep(sweep, runner.ports, ref, notes), runner, fixed, finder)
            point_fixed = [(None, fixed)] * len(plan)
            if original is not None:
                plan.insert(0, (None, ""))
                point_fixed.insert(0, ("original", original))
    runnable = sum(1 for _, reason in plan if not reason)
    total = runnable + (1 if diagnose else 0)
    failing: Optional[tuple[FactorResult, dict[str, Any]]] = None
    quantized_figure = ""
    done = 0
    for (factor, reason), (point_label, fed) in zip(plan, point_fixed):
        if reason:
            skipped = FactorResult(factor=factor, status="skipped", reason=reason)
            skipped.factor_label = point_label or skipped.factor_label
            results.append(skipped)
            continue
        if progress:
            progress(f"comparing at {point_label or format_factor(factor)}", done, total)
        result, arrays = run_point(factor, runner, ref, data, fed, atol, rtol, max_output_bytes, tolerance, quantized)
        if quantized is not None and arrays is not None and not quantized_figure:
            quantized_figure = quantized.fused_figure(arrays["feeds"]) or "-"
            if quantized_figure != "-":
                notes.append(quantized_figure)
        if point_label:
            result.factor_label = point_label
        elif factor is None and not runner.ports.is_dynamic and runner.ports.resize_nodes == 0:
            result.factor_label = "as-is"
        if (
            result.status in ("passed", "vacuous") and arrays is not None
        ):  # never a pass on nothing (validation.evidence)
            vacuous = vacuous_reason(arrays["expected"], arrays["actual"])
            if vacuous:
                result.status, result.reason, arrays = "failed", vacuous, None
        results.append(result)
        done += 1
        if failing is None and result.status == "failed" and arrays is not None:
            failing = (result, arrays)
    report = ValidationReport(
        candidate=label,
        reference=ref.to_dict(),
        atol=float(atol),
        rtol=float(rtol),
        seed=int(seed),
        inputs=described,
        candidate_ports=runner.ports.to_dict(),
        factors=results,
        notes=notes,
        tolerance=tolerance.describe() if tolerance is not None else "",
    )
    described = report.reference
    if described.get("precision"):
        notes.append(f"reference: {described['precision']}")
    if described.get("left_to_pytorch"):
        notes.append(
            f"left to PyTorch at the code's factor (the candidate has no Resize for them): "
            f"{', '.join(described['left_to_pytorch'])}"
        )
    if tolerance is not None:  # what the diagnosis and localisation judge by: the widest bound used
        notes.append(f"tolerance: {report.tolerance}")
        atol = max(atol, tolerance.largest_atol())
        rtol = max([rtol, *(r for _, r, *_ in tolerance.used.values())])
    if failing is not None:
        where = localise(runner, ref, data, failing[1]["feeds"])
        if where:
            notes.append(where)
        node = localise_nodes(runner, ref, failing[0].factor, data, failing[1]["feeds"], atol=atol, rtol=rtol)
        if node is not None:
            notes.append(node.message)
    if diagnose and failing is not None and any(not o.passed for o in failing[0].outputs):
        if progress:
            progress("diagnosing the mismatch", done, total)
        report.diagnosis = run_diagnosis(runner, ref, failing[0], failing[1], atol=atol, rtol=rtol)
    if progress:
        progress("done", total, total)
    return report
