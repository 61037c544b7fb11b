"""Run every rule of a target over a model: ``lint_model(model, target) -> LintReport``.

Requires: a ModelProto or a path (loaded weight-free through graphsurgeon_tools.io).
Ensures: each rule runs once per subject (sites, plugin nodes, the model); findings come
in rule order, then graph order; the model is never changed. A proposed fix is kept only
when it works on this model (:mod:`.fixes`: each distinct proposal is applied once, on a
copy, and the result linted again - the one part of lint that runs a pass).
Does NOT: build or run anything (see docs/tensorrt.md for what that leaves unchecked).
"""

from __future__ import annotations

from typing import Any, Union

from onnx import ModelProto

from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.io import load_model
from graphsurgeon_tools.lint import ort_numerics, trt_attributes, trt_axes, trt_dtypes, trt_plugins, trt_shape_inputs
from graphsurgeon_tools.lint.base import TARGETS, Finding, LintContext, LintReport, Rule, node_label
from graphsurgeon_tools.lint.fixes import keep_working_fixes
from graphsurgeon_tools.resize import find_resize_sites

#: Every rule, in report order.
RULES: tuple[Rule, ...] = (
    trt_shape_inputs.RULES
    + trt_axes.RULES
    + trt_attributes.RULES
    + trt_plugins.RULES
    + trt_dtypes.RULES
    + ort_numerics.RULES
)


def rules_for(target: str) -> tuple[Rule, ...]:
    if target not in TARGETS:
        raise UsageError(f"target={target!r} is not a lint target (choose from: {', '.join(TARGETS)})")
    return tuple(rule for rule in RULES if rule.target == target)


def lint_model(model: Union["ModelProto", str, Any], target: str = "tensorrt") -> LintReport:
    """Check ``model`` against the rules of ``target`` ("tensorrt" | "onnxruntime").

    Returns a :class:`LintReport`; ``report.failed`` is True when a rule fails (a finding
    of severity "error"). Warnings say what depends on run-time factors; infos say what
    TensorRT computes differently without being wrong. A finding's ``fix`` is a rewrite that
    was tried on this model and made the finding go away (:mod:`.fixes`); None when no
    rewrite of this tool does.
    """
    rules = rules_for(target)
    proto = load_model(model)
    report = _lint(proto, rules)
    if any(f.candidates for f in report.findings):
        report.findings = keep_working_fixes(proto, report.findings, lambda fixed: _lint(fixed, rules).findings)
    return report


def _lint(proto: "ModelProto", rules: tuple[Rule, ...]) -> LintReport:
    """The rules over one model; each finding's fix is still the rule's proposal."""
    ctx = LintContext(proto, find_resize_sites(proto, nested=True))  # TensorRT imports bodies too
    report = LintReport(
        target=rules[0].target if rules else "",
        rules=tuple(r.id for r in rules),
        sites=len(ctx.sites),
        plugin_nodes=len(ctx.plugin_nodes),
    )
    for rule in rules:
        if rule.subject == "resize":
            subjects = [(site, ctx.node_of(site)) for site in ctx.sites]
        elif rule.subject == "plugin":
            subjects = [(node, node) for node in ctx.plugin_nodes]
        else:
            subjects = [(proto, None)]
        for subject, node in subjects:
            reason = rule.check(ctx, subject)
            if reason is None:
                continue
            scope = getattr(subject, "scope", "main graph")
            report.findings.append(
                Finding(
                    rule=rule.id,
                    target=rule.target,
                    severity=reason.severity,
                    source=rule.source,
                    node=node_label(node) if node is not None else "",
                    op_type=node.op_type if node is not None else "",
                    reason=reason.text if scope == "main graph" else f"in {scope}: {reason.text}",
                    fix=reason.fix,
                    candidates=((reason.fix,) if reason.fix is not None else ()) + reason.alternatives,
                )
            )
    return report
