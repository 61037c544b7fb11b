"""What the rewrite commands say about their built-in check's cost: the levels that ran and the ONNX
Runtime sessions opened (one per model by default; ``--optimized-figure`` adds the ORT_ENABLE_ALL
figure at one more session per model), in --json and in text. The counting of real sessions is
tests/check/test_sessions_per_model.py."""

from __future__ import annotations

import json

import golden

EXACT = "ORT_ENABLE_EXTENDED"
ONE_EACH = [
    {"model": "reference", "level": EXACT, "reused": False},
    {"model": "candidate", "level": EXACT, "reused": False},
]


def test_the_cli_report_says_which_levels_ran(run_cli, save_model_file) -> None:
    path = save_model_file(golden.resize_model(13, mode="linear"), "net.onnx")
    run = run_cli("make-dynamic-scale", path, "--json")
    assert run.code == 0, run.err
    check = json.loads(run.out)["check"]
    assert check["levels"] == [EXACT] and check["sessions"] == ONE_EACH and check["optimized"] == {}
    run = run_cli("make-dynamic-scale", path, "-o", path.with_name("text.onnx"))
    assert run.code == 0, run.err
    assert (
        f"ONNX Runtime sessions: 1 per model, at {EXACT} (--optimized-figure adds the ORT_ENABLE_ALL "
        "figure: one more session per model)"
    ) in run.out
    run = run_cli("swap-plugin", path, "--optimized-figure", "-o", path.with_name("all.onnx"))
    assert run.code == 0, run.err
    assert f"ONNX Runtime sessions: 2 per model, at {EXACT} and ORT_ENABLE_ALL" in run.out
    assert "at ORT_ENABLE_ALL max |diff| " in run.out


def test_the_cli_report_counts_a_steps_session_and_the_reuse_of_yours(run_cli, save_model_file) -> None:
    from graphsurgeon_tools import make_dynamic_scale

    dynamic = make_dynamic_scale(golden.resize_model(13, mode="linear"), check=False).model
    path = save_model_file(dynamic, "net.dynamic.onnx")
    run = run_cli("make-dynamic-scale", path, "--layout", "sizes", "-o", path.with_name("net.sizes.onnx"))
    assert run.code == 0, run.err
    assert (
        f"ONNX Runtime sessions: 1 per model, at {EXACT} (--optimized-figure adds the ORT_ENABLE_ALL figure: "
        "one more session per model); the step model(s): 1 more, your model's session reused 1 time(s)"
    ) in run.out
