"""Why a comparison failed: the Resize attribute change that reproduces the reference, and the error's pattern.

``diagnose(runner, reference, failed, arrays, atol=, rtol=) -> Diagnosis``: each variant
(one attribute change first, then common pairs) is applied to every resize node of the
candidate and run; the first that matches the reference within tolerance explains the
mismatch. Also: where the error sits (border band vs interior, periodic with the upscale
factor) and which same-named weights differ.

Requires: a failed :class:`FactorResult` and the arrays of its run. Ensures: a
:class:`Diagnosis` with a one-line summary; a variant ORT refuses is skipped (not a suspect).
Does NOT modify the candidate (variants are copies) or print.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import onnx

from graphsurgeon_tools.check.compare import abs_diff, compare_arrays
from graphsurgeon_tools.core.attributes import get_attr
from graphsurgeon_tools.errors import OnnxToolError
from graphsurgeon_tools.resize.semantics import (
    MODES,
    PLUGIN_CTMS,
    PLUGIN_OP_TYPE,
    RESIZE_DEFAULTS,
    defaults,
    is_resize_node,
    normalize_mode,
    op_version,
)
from graphsurgeon_tools.validation.ports import model_opset
from graphsurgeon_tools.validation.references import Reference
from graphsurgeon_tools.validation.report import Diagnosis, FactorResult
from graphsurgeon_tools.validation.runner import OnnxRunner, RunFailed
from graphsurgeon_tools.validation.sweep import Factor

__all__ = ["diagnose"]

# The candidates tried, in this order (the first that matches explains the mismatch);
# half_pixel_symmetric only from opset 19, where it exists.
_CTMS = tuple(c for c in PLUGIN_CTMS if c != "half_pixel_symmetric")
_MODES = MODES

# What a matching change usually means, for the summary line.
_HINTS = {
    (
        "coordinate_transformation_mode",
        "align_corners",
    ): "PyTorch's interpolate(..., align_corners=True) / MMDeploy's align_corners=1",
    (
        "coordinate_transformation_mode",
        "asymmetric",
    ): "TensorFlow 1's resize without half_pixel_centers, or nearest upsampling exported as asymmetric",
    ("coordinate_transformation_mode", "half_pixel"): "PyTorch's align_corners=False (half-pixel centres)",
    ("coordinate_transformation_mode", "pytorch_half_pixel"): "PyTorch's align_corners=False (half-pixel centres)",
    ("cubic_coeff_a", -0.5): "a = -0.5 is TensorFlow's and some TensorRT versions' bicubic; PyTorch uses -0.75",
    ("cubic_coeff_a", -0.75): "a = -0.75 is PyTorch's and OpenCV's bicubic",
    ("exclude_outside", 1): "exclude_outside=1 renormalises the cubic weights at the border (TensorFlow style)",
    ("exclude_outside", 0): "PyTorch clamps at the border (exclude_outside=0)",
}


def _resize_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for n in model.graph.node if n.op_type == PLUGIN_OP_TYPE or is_resize_node(n)]


def _current(node: onnx.NodeProto, name: str, opset: int) -> Any:
    """The value ``node`` has for attribute ``name``: set, else its op version's default."""
    value = get_attr(node, name)
    if value is None:
        if node.op_type == PLUGIN_OP_TYPE:
            value = RESIZE_DEFAULTS.get(name)
        else:
            value = defaults(node.op_type, op_version(node.op_type, opset) if opset else 0).get(name)
    if name == "mode" and isinstance(value, str):
        value = normalize_mode(value)
    return value


def _applicable(node: onnx.NodeProto, name: str, opset: int) -> bool:
    if node.op_type == "Upsample":
        return name == "mode"
    if node.op_type == PLUGIN_OP_TYPE:
        # Only what the plugin node spells out; a plugin reads nothing else.
        return get_attr(node, name) is not None
    if name == "cubic_coeff_a" or name == "exclude_outside":
        return opset >= 11
    if name == "coordinate_transformation_mode":
        return opset >= 11
    return True


def _with_attributes(model: onnx.ModelProto, change: dict[str, Any]) -> Optional[onnx.ModelProto]:
    """A copy of ``model`` with ``change`` applied to every resize node it applies to (None: none)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    opset = model_opset(model)
    touched = False
    for node in _resize_nodes(copy):
        for name, value in change.items():
            if not _applicable(node, name, opset):
                continue
            kept = [a for a in node.attribute if a.name != name]
            del node.attribute[:]
            node.attribute.extend(kept)
            node.attribute.append(onnx.helper.make_attribute(name, value))
            touched = True
            if name == "coordinate_transformation_mode" and get_attr(node, "align_corners") is not None:
                kept = [a for a in node.attribute if a.name != "align_corners"]
                del node.attribute[:]
                node.attribute.extend(kept)
                node.attribute.append(onnx.helper.make_attribute("align_corners", int(value == "align_corners")))
        if (
            node.op_type == "Resize"
            and _current(node, "exclude_outside", opset)
            and _current(node, "mode", opset) != "cubic"
        ):
            return None  # ORT (and the spec) refuse exclude_outside=1 outside cubic: not a real alternative
    return copy if touched else None


def _variants(model: onnx.ModelProto) -> list[dict[str, Any]]:
    """Single attribute changes first (they name one culprit), then the common pairs."""
    nodes = _resize_nodes(model)
    if not nodes:
        return []
    first = nodes[0]
    opset = model_opset(model)
    mode = _current(first, "mode", opset)
    ctm = _current(first, "coordinate_transformation_mode", opset)
    coeff = _current(first, "cubic_coeff_a", opset)
    exclude = _current(first, "exclude_outside", opset)
    ctms = list(_CTMS) + (["half_pixel_symmetric"] if opset >= 19 else [])
    singles: list[dict[str, Any]] = [{"mode": m} for m in _MODES if m != mode]
    singles += [{"coordinate_transformation_mode": c} for c in ctms if c != ctm]
    if mode == "cubic":
        singles += [{"cubic_coeff_a": a} for a in (-0.5, -0.75) if not math.isclose(float(coeff), a)]
        singles.append({"exclude_outside": 1 - int(exclude)})
    if mode == "nearest":
        current_nearest = _current(first, "nearest_mode", opset)
        singles += [
            {"nearest_mode": n}
            for n in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
            if n != current_nearest
        ]
    pairs: list[dict[str, Any]] = []
    for m in _MODES:
        for c in ctms:
            if m != mode and c != ctm:
                pairs.append({"mode": m, "coordinate_transformation_mode": c})
    if mode == "cubic":
        alt = -0.5 if math.isclose(float(coeff), -0.75) else -0.75
        pairs.append({"cubic_coeff_a": alt, "exclude_outside": 1 - int(exclude)})
        pairs += [{"coordinate_transformation_mode": c, "cubic_coeff_a": alt} for c in ctms if c != ctm]
    else:
        pairs += [{"mode": "cubic", "cubic_coeff_a": -0.5}]
    return singles + pairs


def _error_pattern(actual: np.ndarray, expected: np.ndarray, factor: Factor) -> dict[str, Any]:
    """Where the error sits in an N x C x H x W output: border band vs interior, and per phase."""
    if actual.shape != expected.shape or actual.ndim != 4:
        return {}
    err = abs_diff(actual, expected)
    err = np.where(np.isfinite(err), err, np.nan)
    emap = np.nanmean(err, axis=(0, 1))
    h, w = emap.shape
    f = factor or 2.0
    band = int(min(max(2, math.ceil(2 * f)), max(1, min(h, w) // 4)))
    interior = emap[band : h - band, band : w - band]
    mask = np.ones_like(emap, dtype=bool)
    mask[band : h - band, band : w - band] = False
    border_mean = float(np.nanmean(emap[mask])) if mask.any() else 0.0
    interior_mean = float(np.nanmean(interior)) if interior.size else 0.0
    pattern: dict[str, Any] = {
        "border_band_px": band,
        "border_mean_abs_error": border_mean,
        "interior_mean_abs_error": interior_mean,
    }
    if interior_mean > 0:
        pattern["border_to_interior"] = border_mean / interior_mean
    else:
        pattern["border_to_interior"] = math.inf if border_mean > 0 else 1.0
    # Error that repeats with the upscale period points at the sampling grid.
    if factor is not None and float(factor).is_integer() and factor >= 2 and interior.size:
        p = int(factor)
        ih, iw = (interior.shape[0] // p) * p, (interior.shape[1] // p) * p
        if ih >= 2 * p and iw >= 2 * p:
            phases = interior[:ih, :iw].reshape(ih // p, p, iw // p, p).mean(axis=(0, 2))
            lo, hi = float(np.nanmin(phases)), float(np.nanmax(phases))
            pattern["phase_spread"] = hi / lo if lo > 0 else (math.inf if hi > 0 else 1.0)
    return pattern


def _describe_pattern(pattern: dict[str, Any]) -> str:
    if not pattern:
        return ""
    ratio = pattern.get("border_to_interior", 1.0)
    band = pattern["border_band_px"]
    spread = pattern.get("phase_spread", 1.0)
    if ratio >= 5:
        return (
            f"the error sits within {band} px of the border (border mean {ratio:.3g}x the interior's): "
            "typical of border handling (exclude_outside, cubic_coeff_a, coordinate_transformation_mode)"
        )
    if spread >= 2:
        return (
            f"the error repeats with the upscale period (phases differ {spread:.3g}x): "
            "the sampling grid differs (coordinate_transformation_mode or mode)"
        )
    return (
        "the error is spread evenly over the image (border/interior "
        f"{ratio:.3g}x): not the signature of a Resize setting; look at weights or other ops"
    )


def _compare_weights(model: onnx.ModelProto, reference: Reference, atol: float, rtol: float) -> list[dict[str, Any]]:
    theirs = reference.parameters()  # {} when unknown or unreadable: a nicety never hides the report
    if not theirs:
        return []
    differing = []
    for tensor in model.graph.initializer:
        other = theirs.get(tensor.name)
        if other is None:
            continue
        ours = onnx.numpy_helper.to_array(tensor)
        if ours.shape != other.shape:
            continue
        comparison = compare_arrays(ours, other, atol=atol, rtol=rtol, name=tensor.name)
        if comparison.max_abs_error:
            differing.append(
                {
                    "name": tensor.name,
                    "max_abs_difference": comparison.max_abs_error,
                    "elements_differing": int(np.count_nonzero(abs_diff(ours, other))),
                }
            )
    return differing


def diagnose(
    runner: OnnxRunner, reference: Reference, failed: FactorResult, arrays: dict[str, Any], *, atol: float, rtol: float
) -> Diagnosis:
    # A graph output when one differs (what the user sees), else the first differing site output.
    failing = [o for o in failed.outputs if not o.passed]
    comparison = next((o for o in failing if o.kind == "output"), failing[0])
    name = comparison.output
    expected = arrays["expected"][name]
    actual = arrays["actual"][name]
    model = runner.model
    nodes = _resize_nodes(model)
    opset = model_opset(model)
    diagnosis = Diagnosis(factor=failed.factor, output=name, summary="")
    diagnosis.pattern = _error_pattern(actual, expected, failed.factor)
    diagnosis.weights = _compare_weights(model, reference, atol, rtol)
    baseline = comparison.max_abs_error if comparison.max_abs_error is not None else math.inf
    best: Optional[tuple[float, dict[str, Any]]] = None
    if nodes and comparison.max_abs_error is not None:
        for change in _variants(model):
            variant = _with_attributes(model, change)
            if variant is None:
                continue
            try:
                variant_runner = OnnxRunner(variant, runner.where, quiet=True)
                variant_runner.expose([name])  # no-op for a graph output
                outputs = dict(variant_runner.run(arrays["feeds"]))
            except (RunFailed, OnnxToolError):  # a combination ORT refuses: not a suspect
                continue
            diagnosis.variants_tried += 1
            got = outputs.get(name)
            if got is None:
                continue
            stats = compare_arrays(got, expected, atol=atol, rtol=rtol, name=name)
            if stats.max_abs_error is None:
                continue
            if best is None or stats.max_abs_error < best[0]:
                best = (stats.max_abs_error, change)
            if stats.passed:
                current = {key: _current(nodes[0], key, opset) for key in change}
                diagnosis.explained_by = {
                    "change": change,
                    "candidate_has": current,
                    "max_abs_error_after": stats.max_abs_error,
                    "nodes": [n.name for n in nodes],
                }
                break
    if diagnosis.explained_by is None and best is not None and best[0] < baseline / 10:
        diagnosis.closest = {
            "change": best[1],
            "candidate_has": {key: _current(nodes[0], key, opset) for key in best[1]},
            "max_abs_error_after": best[0],
            "max_abs_error_before": baseline,
        }
    diagnosis.summary = _summarise(diagnosis, nodes)
    return diagnosis


def _fmt_change(change: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in change.items())


def _summarise(diagnosis: Diagnosis, nodes: list[onnx.NodeProto]) -> str:
    parts: list[str] = []
    where = ", ".join(repr(n.name) if n.name else n.op_type for n in nodes[:3]) or "the resize"
    if diagnosis.explained_by:
        change = diagnosis.explained_by["change"]
        had = diagnosis.explained_by["candidate_has"]
        text = (
            f"the reference resizes with {_fmt_change(change)}: the candidate's {where} has "
            f"{_fmt_change(had)}, and with {_fmt_change(change)} it matches the reference "
            f"(max abs error {diagnosis.explained_by['max_abs_error_after']:.3g})"
        )
        hints = [_HINTS[(k, v)] for k, v in change.items() if (k, v) in _HINTS]
        if hints:
            text += f" [{'; '.join(hints)}]"
        parts.append(text)
    elif diagnosis.closest:
        c = diagnosis.closest
        parts.append(
            f"no single Resize setting explains it; closest: {_fmt_change(c['change'])} "
            f"(max abs error {c['max_abs_error_before']:.3g} -> {c['max_abs_error_after']:.3g})"
        )
    if diagnosis.weights:
        w = diagnosis.weights
        names = ", ".join(f"{d['name']} (max diff {d['max_abs_difference']:.3g})" for d in w[:3])
        parts.append(f"{len(w)} weight tensor(s) differ from the reference's: {names}")
    if not diagnosis.explained_by:
        pattern = _describe_pattern(diagnosis.pattern)
        if pattern:
            parts.append(pattern)
        elif nodes:
            parts.append("no Resize attribute change reproduces the reference")
    return "; ".join(parts) or "no pattern recognised"
