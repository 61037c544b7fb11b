"""The whole model, not only its sites: which nodes the factor reaches, and runs at boundary points.

The rewrites change only where a site's factor comes from; so equal sites plus the
unchanged rest of the graph give equal models wherever the graph runs. This module says
(a) which non-Resize nodes depend on the factor: the nodes on the way from a factor input to
a site's scales/sizes (Shape/Mul/Cast/Concat a layout writes), and each site's freedom
(:func:`graphsurgeon_tools.resize.freedom.site_freedom`: whether the rest of the graph runs
at another factor, or which node pins it); (b) runs the full candidate against the reference
with :func:`graphsurgeon_tools.validation.validate` at the boundary points the per-axis
tables reveal (where the gating pair's verdict changes, and the profile's ends), within a
stated budget (points, largest side).

The prediction at a point uses the data's size as each site's input length: exact for sites
resizing the model input (SRCNN), indicative for deeper sites. Requires: a certificate's
ledgers. Ensures: ``agrees`` is False only when the tables predict equality and the full run
is out of validate's tolerance (a point where the graph cannot run, e.g. a detector that needs
sides divisible by 32, is recorded as ``error`` with ONNX Runtime's reason, not as a
disagreement). Does NOT run points past the budget (they are counted as not run).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from graphsurgeon_tools.certify.ledger import compact_ranges
from graphsurgeon_tools.errors import OnnxToolError
from graphsurgeon_tools.resize.freedom import site_freedom
from graphsurgeon_tools.resize.semantics import PLUGIN_OP_TYPE, RESIZE_OPS
from graphsurgeon_tools.validation import validate
from graphsurgeon_tools.validation.ports import model_ports

__all__ = ["boundary_points", "factor_dependent_nodes", "whole_model_check"]


def factor_dependent_nodes(model: Any) -> tuple[list[str], list[dict[str, str]]]:
    """(factor inputs, the non-Resize nodes their values reach before a site: [{node, op_type}])."""
    ports = model_ports(model)
    inputs = [s.name for s in ports.scale_inputs]
    consumers: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    found: list[dict[str, str]] = []
    seen: set[int] = set()
    queue = deque(inputs)
    while queue:
        tensor = queue.popleft()
        for node in consumers.get(tensor, []):
            if id(node) in seen or node.op_type in RESIZE_OPS + (PLUGIN_OP_TYPE,):
                continue
            seen.add(id(node))
            found.append({"node": node.name or node.output[0], "op_type": node.op_type})
            queue.extend(node.output)
    return inputs, found


def boundary_points(certificate: Any) -> list[tuple[int, float, str]]:
    """(length, factor, predicted "match" | "differs") where the gating verdict changes, cheap ones first."""
    verdicts: dict[tuple[int, float], str] = {}
    for site in certificate.sites:
        gate = site.gating
        if gate is None:
            continue
        for (axis, factor, kind), lengths in gate.outcomes.items():
            if kind == "not-run":
                continue
            for low, high in compact_ranges(lengths):
                for length in {low, high}:
                    key = (length, factor)
                    verdicts[key] = "differs" if kind == "differs" or verdicts.get(key) == "differs" else "match"
        for (axis, factor, _), (_, lengths) in gate.counterexamples.items():
            for length in lengths:
                if (length, factor) in verdicts:
                    verdicts[(length, factor)] = "differs"
    return sorted(
        ((length, factor, v) for (length, factor), v in verdicts.items()),
        key=lambda p: (p[2] != "differs", p[0] * p[1], p[0]),
    )


def whole_model_check(
    model: Any, reference: Any, certificate: Any, *, max_points: int, max_length: int
) -> dict[str, Any]:
    inputs, nodes = factor_dependent_nodes(model)
    try:
        freedom = {key: value.describe() for key, value in site_freedom(model).items()}
    except OnnxToolError as exc:
        freedom = {"*": f"not decided: {exc}"}
    result: dict[str, Any] = {
        "factor_inputs": inputs,
        "factor_dependent_nodes": nodes,
        "freedom": freedom,
        "budget": {"points": max_points, "max_length": max_length},
        "points": [],
        "agrees": True,
    }
    if reference is None:
        result["note"] = "no reference given: the full model was not run (pass one to confirm the tables)"
        return result

    candidates = boundary_points(certificate)
    runnable = [p for p in candidates if p[0] <= max_length]
    # both predictions, when both occur: the tables' claims are tested either way
    chosen = [p for p in runnable if p[2] == "differs"][: max(1, max_points // 2)]
    chosen += [p for p in runnable if p[2] == "match"][: max_points - len(chosen)]
    for length, factor, predicted in chosen:
        report = validate(model, reference, factors=[factor], input_size=length, diagnose=False)
        data = report.to_dict()
        status = data["factors"][0]["status"] if data["factors"] else "skipped"
        worst = data["counts"]["worst_max_abs_error"]
        result["points"].append(
            {
                "length": length,
                "factor": factor,
                "predicted": predicted,
                "validate": status,
                "max_abs_error": worst,
                "reason": data["factors"][0]["reason"] if data["factors"] else "",
            }
        )
        if predicted == "match" and status == "failed":  # "error": the graph does not run at that size
            result["agrees"] = False
    ran = [p for p in result["points"] if p["validate"] in ("passed", "failed")]
    left = len(candidates) - len(chosen)
    result["note"] = (
        f"{len(ran)} of {len(candidates)} boundary point(s) run in full "
        f"(side <= {max_length}, at most {max_points}); "
        + (
            "every run agrees with the tables"
            if result["agrees"]
            else "a run predicted equal by the tables is out of tolerance"
        )
        + (f"; {left} not run (budget)" if left > 0 else "")
    )
    return result
