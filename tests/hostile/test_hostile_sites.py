"""No silent claims, and every written model loads, on the hostile harness: every command x applicable case of
:mod:`hostile.corpus_sites` (exit code, one stderr line naming the file and the problem, no
traceback, tmp tree unchanged), the claims valid models must produce, and the Python API
face (only OnnxToolError, naming the file).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest

from hostile import models
from hostile.corpus_sites import CASES, CLAIMS, Claim
from hostile.harness import (
    BY_ID,
    COMMANDS,
    Command,
    command_pairs,
    in_process,
    run_and_check,
    run_subprocess,
    snapshot,
)

PAIRS = command_pairs(CASES)  # no case here is subprocess-only: every pair runs in process too


@pytest.mark.parametrize(("case", "command"), PAIRS)
def test_in_process(case, command: Command, tmp_path, available, capsys, monkeypatch) -> None:
    run_and_check(case, command, tmp_path, available, in_process(monkeypatch, capsys))


SUBPROCESS = [
    ("resize_mode_bogus", "make-dynamic-scale"),
    ("plugin_mode_mistyped_int", "swap-plugin"),
    ("opset_ai_onnx_ml_99", "validate"),
    ("body_loop_scales_nan", "inspect"),
    ("input_all_nan", "validate"),
]


@pytest.mark.parametrize(("name", "command_id"), SUBPROCESS, ids=[f"{n}-{c}" for n, c in SUBPROCESS])
def test_subprocess(name: str, command_id: str, tmp_path, available) -> None:
    """The real console script: no traceback, one line, the documented code (what a user sees)."""
    run_and_check(next(c for c in CASES if c.name == name), BY_ID[command_id], tmp_path, available, run_subprocess)


def test_corpus_size() -> None:
    assert len(CASES) + len(CLAIMS) >= 15, (len(CASES), len(CLAIMS))
    for case in CASES:
        assert any(case.expected_code(c.id) is not None for c in COMMANDS), case.name


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.name)
def test_claims(claim: Claim, tmp_path: Path, capsys, monkeypatch) -> None:
    """Exit 0, and every site outside the main graph is accounted for in the JSON report."""
    model = models.write(claim.build(), tmp_path / "in" / "model.onnx")
    before = model.read_bytes()
    out = tmp_path / "out" / "result.onnx"
    out.parent.mkdir()
    argv = [claim.command, str(model), "--json", *claim.args]
    if claim.command != "inspect":
        argv += ["-o", str(out)]
    outcome = in_process(monkeypatch, capsys)(argv, {})
    notices = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert outcome.code == 0 and "Traceback" not in outcome.stderr, outcome
    # stderr stays empty, except the one "nothing to rewrite" notice when nothing was
    assert notices == [] or (not claim.rewritten and len(notices) == 1 and "nothing to" in notices[0]), outcome
    assert model.read_bytes() == before
    report = json.loads(outcome.stdout)
    if claim.scopes:
        assert tuple(site["scope"] for site in report["sites"]) == claim.scopes
        return
    assert [r["node"] for r in report["rewritten"]] == list(claim.rewritten), report["rewritten"]
    skipped = {s["node"]: s["reason"] for s in report["skipped"]}
    assert sorted(skipped) == sorted(claim.skipped), skipped
    assert all(re.search(claim.reason, reason) for reason in skipped.values()), skipped
    if claim.rewritten and claim.command == "make-dynamic-scale":  # its built-in check ran and passed
        assert report["check"] is not None and report["check"]["passed"] is True, report["check"]
    if out.exists():  # the written model loads (plugin nodes through the project's kernels)
        from graphsurgeon_tools.runtime import make_session

        onnx.checker.check_model(onnx.load(str(out)), full_check=True)
        if claim.command == "swap-plugin":
            make_session(onnx.load(str(out)))
        else:
            ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])


def _api(name: str):
    from graphsurgeon_tools import find_resize_sites, make_dynamic_scale, swap_plugin
    from graphsurgeon_tools.inspection import inspect_model

    return {
        "inspect_model": inspect_model,
        "find_resize_sites": lambda path: find_resize_sites(path, nested=True),
        "make_dynamic_scale": make_dynamic_scale,
        "swap_plugin": swap_plugin,
    }[name]


API_PAIRS = [
    pytest.param(case, api, id=f"{case.name}-{api}")
    for case in CASES
    for api in ("inspect_model", "make_dynamic_scale", "swap_plugin")
    if case.expected_code({"inspect_model": "inspect"}.get(api, api.replace("_", "-"))) is not None
]


@pytest.mark.parametrize(("case", "api"), API_PAIRS)
def test_api_raises_only_user_errors(case, api: str, tmp_path) -> None:
    from graphsurgeon_tools.errors import OnnxToolError

    built = case.build(tmp_path)
    kwargs = {"reverse": True} if "--reverse" in built.extra else {}
    before = snapshot(tmp_path)
    with pytest.raises(OnnxToolError) as caught:
        _api(api)(built.model, **kwargs)
    message = str(caught.value)
    assert "\n" not in message.strip() and any(name in message for name in built.names), message
    assert re.search(case.problem, message, re.IGNORECASE), message
    assert snapshot(tmp_path) == before
