"""One sweep point of ``validate``: what each input is fed, and both sides run and compared.

* :func:`prepare_inputs`: the data inputs (the user's arrays, conformed, or seeded random data)
  and the scale inputs the user fixed;
* :func:`original_point`: the scale feeds of the point ``original`` (each input fed the value the
  pass that made it recorded or declared), when the default sweep has that point;
* :func:`run_point`: run the candidate and the reference at one point and compare every output
  and every resize site output both have (``|a - b| <= atol + rtol * |b|``, or the dtype-aware
  bound), quantized tensors in steps.

Requires: the candidate's :class:`~.runner.OnnxRunner` and a :class:`~.references.Reference`.
Ensures: a failing run is a result with the reason (not an exception); a point whose every
comparison is vacuous is ``vacuous``, not passed. Raises ResourceLimitError before running
above the size limit, UsageError for inputs the candidate does not have.
Does NOT diagnose a mismatch (:mod:`.diagnosis`) or write anything.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Optional

import numpy as np

from graphsurgeon_tools.check.compare import compare_arrays
from graphsurgeon_tools.check.feeds import (
    InputLike,
    conform_array,
    conform_scale_input,
    guard_output_sizes,
    load_user_array,
    random_input,
)
from graphsurgeon_tools.check.limits import check_output_size, resized_shape
from graphsurgeon_tools.check.tolerance import UlpTolerance
from graphsurgeon_tools.errors import CheckFailedError, UsageError
from graphsurgeon_tools.validation.evidence import refuse_nan_input
from graphsurgeon_tools.validation.ports import Ports
from graphsurgeon_tools.validation.quantized import QuantizedPlan
from graphsurgeon_tools.validation.references import Reference
from graphsurgeon_tools.validation.report import FactorResult
from graphsurgeon_tools.validation.runner import OnnxRunner, RunFailed
from graphsurgeon_tools.validation.sweep import Factor, format_factor

__all__ = ["original_point", "prepare_inputs", "run_point", "takes_no_factor"]


def prepare_inputs(
    ports: Ports,
    inputs: Optional[Mapping[str, InputLike]],
    seed: int,
    size: int,
    notes: list[str],
    *,
    max_output_bytes: Optional[int] = None,
    label: str = "the candidate",
) -> tuple[list[tuple[str, np.ndarray]], dict[str, np.ndarray], list[dict[str, Any]]]:
    given = dict(inputs or {})
    known = (
        {d.name for d in ports.data_inputs}
        | {s.name for s in ports.scale_inputs}
        | {f.name for f in ports.fixed_inputs}
    )
    unknown = sorted(set(given) - known)
    if unknown:
        raise UsageError(f"inputs={unknown[0]}: the candidate has no such input (it has {', '.join(sorted(known))})")
    rng = np.random.default_rng(seed)
    data: list[tuple[str, np.ndarray]] = []
    described: list[dict[str, Any]] = []
    for spec in ports.data_inputs:
        if spec.name in given:
            array, source = load_user_array(spec.name, given[spec.name])
            array = conform_array(spec.name, array, spec.shape, spec.dtype, source, notes)
            refuse_nan_input(spec.name, array, source)  # NaN in: nothing compared out (validation.evidence)
        else:
            array = random_input(
                spec.shape, spec.dtype, rng, size, limit=max_output_bytes, what=f"{label}: random input {spec.name!r}"
            )
            source = f"random(seed={seed})"
        data.append((spec.name, array))
        described.append({"name": spec.name, "shape": list(array.shape), "dtype": str(array.dtype), "source": source})
    fixed: dict[str, np.ndarray] = {}
    for spec in ports.scale_inputs:
        if spec.name in given:
            array, source = load_user_array(spec.name, given[spec.name])
            # Checked as a swept factor is (type, NaN, range, output size), never cast blindly.
            fixed[spec.name] = conform_scale_input(
                spec, array, source, [a.shape for _, a in data], limit=max_output_bytes, what=label
            )
            notes.append(f"scale input {spec.name!r} is fixed by {source}: the factor sweep does not drive it")
            described.append(
                {"name": spec.name, "shape": list(array.shape), "dtype": str(spec.dtype), "source": source}
            )
    for declared in ports.fixed_inputs:  # a pass's declared input: the user's value instead of its original
        if declared.name in given:
            array, source = load_user_array(declared.name, given[declared.name])
            fixed[declared.name] = conform_array(
                declared.name, array, declared.shape, np.dtype(declared.dtype), source, notes
            )
            described.append(
                {"name": declared.name, "shape": list(array.shape), "dtype": declared.dtype, "source": source}
            )
    ports.fixed_feeds(given=fixed)  # UsageError now for a declared input nothing can feed
    return data, fixed, described


def original_point(
    sweep: Optional[list[float]], runner: OnnxRunner, ref: Reference, fixed: dict[str, np.ndarray]
) -> Optional[dict[str, np.ndarray]]:
    """The scale feeds of the default sweep's "original" point, or None when it has none.

    Only without factors=, against onnx-reference (it runs the candidate's own feeds) or a static
    reference that bakes no factor (:func:`takes_no_factor`: the original point is where both
    compute the same function), and when every driven scale input's original value is recorded
    (make_dynamic_scale / swap_plugin's record, or a pass's declaration).
    """
    if sweep is not None or (ref.kind != "onnx-reference" and not takes_no_factor(ref)):
        return None
    feeds = runner.ports.original_feeds(fixed)
    return None if feeds is None else {**feeds, **fixed}


def takes_no_factor(ref: Reference) -> bool:
    """A static reference that bakes no factor validate can read (no resize at all, or sites it
    cannot read a factor from): a factor sweep means nothing to it."""
    return not ref.dynamic and ref.baked_factor is None and not ref.baked_scales


def run_point(
    factor: Factor,
    candidate: OnnxRunner,
    reference: Reference,
    data: list[tuple[str, np.ndarray]],
    fixed: dict[str, np.ndarray],
    atol: float,
    rtol: float,
    max_output_bytes: Optional[int],
    tolerance: Optional[UlpTolerance] = None,
    quantized: Optional[QuantizedPlan] = None,
) -> tuple[FactorResult, Optional[dict[str, Any]]]:
    """Run both sides at one sweep point and compare every output.

    Args:
        factor: the sweep point (None: as baked).
        candidate: the candidate's runner; reference: what it is compared against.
        data: the data inputs, in the candidate's order; fixed: scale inputs the user fixed.
        atol, rtol: the tolerance; max_output_bytes: the size limit checked before running.
        tolerance: the dtype-aware default instead of ``atol``/``rtol`` (None: those decide).
        quantized: the quantized tensors compared in steps, and the requantization rule (:mod:`.quantized`).

    Returns the result and, when both sides ran, the arrays (feeds, expected, actual) the
    diagnosis needs. Raises ResourceLimitError before running above the size limit.
    """
    started = time.perf_counter()
    result = FactorResult(factor=factor, status="error")
    # Sizes fixed by the graph itself (baked scales, static shapes): shape inference finds them.
    shapes = {name: list(array.shape) for name, array in data}
    shapes.update({name: list(np.shape(value)) for name, value in fixed.items()})
    guard_output_sizes(candidate.model, shapes, max_output_bytes, what=candidate.where, values=fixed)
    if factor is not None:  # sizes a fed factor decides
        for name, array in data:
            if array.ndim >= 3:
                scales = [1.0, 1.0] + [factor] * (array.ndim - 2)  # N, C kept; every spatial axis scaled
                check_output_size(
                    resized_shape(array.shape, scales),
                    array.dtype,
                    limit=max_output_bytes,
                    what=f"{candidate.where}: input {name!r} resized at {format_factor(factor)}",
                )
    try:
        baked = reference.baked_scales if not reference.dynamic else None
        feeds = candidate.feeds(factor, dict(data), fixed, baked)
        driven = [*candidate.ports.scale_inputs, *candidate.ports.fixed_inputs]
        result.scale_feeds = {
            s.name: np.asarray(feeds[s.name]).tolist()
            if np.ndim(feeds[s.name]) <= 1
            else f"zeros{list(feeds[s.name].shape)}"
            for s in driven
        }
        actual = candidate.run(feeds)
        expected = reference.run(factor, data, feeds, candidate.ports.baked_scales)
    except RunFailed as exc:
        result.reason = str(exc)
        result.seconds = time.perf_counter() - started
        return result, None
    except CheckFailedError as exc:  # a routed PyTorch reference whose calls disagree with the candidate's sites
        result.status, result.reason = "failed", str(exc)
        result.seconds = time.perf_counter() - started
        return result, None
    # Both sides return their graph outputs first, then the site tensors they were asked to expose.
    sites = set(candidate.exposed)
    site_pairs = [(name, value) for name, value in actual if name in sites]
    actual = [(name, value) for name, value in actual if name not in sites]
    reference_sites = {name: value for name, value in expected if name in sites}
    expected = [(name, value) for name, value in expected if name not in sites]
    names_match = {n for n, _ in actual} <= {n for n, _ in expected}
    by_name = dict(expected)
    pairs = []
    for index, (name, value) in enumerate(actual):
        if names_match:
            pairs.append((name, value, name, by_name[name]))
        elif index < len(expected):
            pairs.append((name, value, expected[index][0], expected[index][1]))
    if len(expected) != len(actual):
        result.reason = f"the candidate has {len(actual)} output(s), the reference {len(expected)}"

    def bounds(value: np.ndarray, ref_value: np.ndarray, name: str) -> dict[str, float]:
        steps = quantized.bounds(name, value) if quantized is not None else None
        if steps is not None:
            return steps
        if tolerance is None:
            return {"atol": atol, "rtol": rtol}
        found = tolerance.bounds(value, ref_value, name)
        return {"atol": found[0], "rtol": found[1]}

    for name, value, ref_name, ref_value in pairs:
        result.outputs.append(
            compare_arrays(value, ref_value, name=name, reference_name=ref_name, **bounds(value, ref_value, name))
        )
    for name, value in site_pairs:
        if name in reference_sites:
            result.outputs.append(
                compare_arrays(
                    value, reference_sites[name], name=name, kind="site", **bounds(value, reference_sites[name], name)
                )
            )
            pairs.append((name, value, name, reference_sites[name]))
    if quantized is not None:
        per_site = tolerance if tolerance is not None else UlpTolerance({}, floor=(atol, rtol))
        figure = quantized.judge(result.outputs, feeds, per_site)
        if figure:
            result.reason = figure
    ok = bool(result.outputs) and all(o.passed for o in result.outputs) and len(expected) == len(actual)
    # A pass needs one comparison that could have failed: a constant reference, or one below
    # atol, passes anything (reported "vacuous", not "passed").
    vacuous = ok and all(o.vacuous for o in result.outputs)
    result.status = "vacuous" if vacuous else "passed" if ok else "failed"
    if vacuous:
        result.reason = (
            "vacuous: every compared reference tensor is constant or below atol; give inputs= the model responds to"
        )
    result.seconds = time.perf_counter() - started
    return result, {"feeds": feeds, "expected": {o[0]: o[3] for o in pairs}, "actual": {o[0]: o[1] for o in pairs}}
