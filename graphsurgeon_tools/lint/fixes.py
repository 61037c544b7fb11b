"""Suggest only fixes that work: each rule's proposed rewrite is tried on the model linted.

A rule proposes a :class:`~graphsurgeon_tools.refusal.Fix` (and alternatives) from what it
sees locally; whether the pass will really rewrite *this* model so the subject passes depends
on everything else (a float input the user wrote has no recorded value, a layout cannot hold
``axes``, a plugin node another tool wrote may not be readable). So each distinct proposal is
applied once, as the API calls it names (``check=False``: the rewrite, not the ONNX Runtime
check, is what is tried), and the result is linted again; a finding keeps the first proposal
after which its rule no longer fires at its node and nothing as severe appears in its place,
and gets no fix otherwise.

Requires: the ModelProto that was linted (weights may stay on disk: the passes do not read
them with ``check=False``). Ensures: the model is not changed (every pass works on a copy);
each proposal is applied at most once per lint; a proposal that raises (any error: a refused
model, a pass's own bug) is simply not offered. Does NOT write files or run ONNX Runtime.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from onnx import ModelProto

import graphsurgeon_tools
from graphsurgeon_tools.lint.base import SEVERITIES, Finding
from graphsurgeon_tools.refusal import Fix

__all__ = ["apply_fix", "keep_working_fixes"]


def _api_call(name: str) -> Callable:
    """The public API function a Fix names (``Fix.call`` is one of ``graphsurgeon_tools.__all__``).
    The package resolves it on first use, so a lint whose findings propose no fix never loads a
    pass, and a new pass's fixes need no entry here."""
    return getattr(graphsurgeon_tools, name)


def apply_fix(model: "ModelProto", fix: "Fix") -> "ModelProto":
    """The model after the calls ``fix`` names (``fix``, then ``fix.then``...), each with ``check=False``."""
    current, step = model, fix
    while step is not None:
        keywords = dict(step.keywords)
        keywords["check"] = False
        if step.call == "make_dynamic_scale":
            keywords.setdefault("freedom", False)  # a report-only analysis: not needed to try the rewrite
        current = _api_call(step.call)(current, **keywords).model
        step = step.then
    return current


def keep_working_fixes(
    model: "ModelProto", findings: list["Finding"], lint: Callable[["ModelProto"], list["Finding"]]
) -> list["Finding"]:
    """``findings`` with each fix replaced by the first of its candidates that works on ``model``
    (None when none does). ``lint`` lints a model with the same rules, without this step.

    A candidate works for a finding when, on the rewritten model, the finding's rule no longer
    fires at its node and no finding at least as severe appears that the model did not have (a
    rewrite that merely removes the subject - a plugin node turned back into a Resize that then
    breaks another rule - is no fix).
    """
    rank = {severity: index for index, severity in enumerate(SEVERITIES)}  # "error" first
    before = {(f.rule, f.node) for f in findings}
    outcomes: dict["Fix", Optional[list["Finding"]]] = {}

    def after(fix: "Fix") -> Optional[list["Finding"]]:
        if fix not in outcomes:
            try:
                outcomes[fix] = lint(apply_fix(model, fix))
            except Exception:  # noqa: BLE001 - any failure means: not a fix to offer
                outcomes[fix] = None
        return outcomes[fix]

    def works(finding: "Finding", remaining: Optional[list["Finding"]]) -> bool:
        if remaining is None:
            return False
        if any((f.rule, f.node) == (finding.rule, finding.node) for f in remaining):
            return False
        return not any((f.rule, f.node) not in before and rank[f.severity] <= rank[finding.severity] for f in remaining)

    kept = []
    for finding in findings:
        working = next((c for c in finding.candidates if works(finding, after(c))), None)
        kept.append(dataclasses.replace(finding, fix=working))
    return kept
