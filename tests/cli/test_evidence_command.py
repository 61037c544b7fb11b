"""What the commands print as evidence of what ran: validate's JSON, JUnit properties and text carry the same
record; the slow-fallback warning (text and JSON) when the plugin ran on onnx.reference; a rewrite command's
text carries its built-in check's evidence. The record itself: tests/validation/test_evidence.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import golden
import onnx
from validation.evidence_models import check_models, compiled_library, models, sha  # noqa: F401 - models: fixture

REPO = Path(__file__).resolve().parents[2]


def test_json_junit_and_text_carry_the_same_evidence(models: dict[str, Path], run_cli) -> None:
    junit = models["folder"] / "report.xml"
    done = run_cli("validate", models["plugin"], "--reference", models["static"], "--json", "--junit", junit)
    assert done.code == 0, done.err
    evidence = json.loads(done.out)["evidence"]
    check_models(evidence, models["plugin"], models["static"])
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert properties["evidence.model.candidate.sha256"] == sha(models["plugin"])
    assert properties["evidence.model.reference.sha256"] == sha(models["static"])
    assert properties["evidence.versions.onnxruntime"] == evidence["versions"]["onnxruntime"]
    assert properties["evidence.plugin_kernel.0.kind"] == evidence["plugin_kernels"][0]["kind"]
    assert properties["evidence.slow_fallback"] == str(evidence["slow_fallback"]).lower()
    text = run_cli("validate", models["plugin"], "--reference", models["static"]).out
    assert f"onnxruntime {evidence['versions']['onnxruntime']}" in text
    assert f"candidate {models['plugin']} sha256 {sha(models['plugin'])[:16]}" in text
    if evidence["plugin_kernels"][0]["kind"] == "compiled-library":
        assert f"plugin kernel: compiled ONNX Runtime library {compiled_library()}" in text


def test_slow_fallback_is_said_in_the_text_and_the_json(models: dict[str, Path]) -> None:
    environ = {**os.environ, "PYTHONPATH": str(REPO), "ONNXTOOL_RUNTIME_FALLBACK": "1"}
    environ.pop("ONNXTOOL_DEBUG", None)
    command = [
        sys.executable,
        "-c",
        "from graphsurgeon_tools.cli import main; main()",
        "validate",
        str(models["plugin"]),
        "--reference",
        str(models["static"]),
    ]
    text = subprocess.run(command, capture_output=True, text=True, env=environ, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "warning: DynamicTRTResize ran on the onnx.reference fallback" in text.stdout
    assert "ONNXTOOL_RUNTIME_FALLBACK" in text.stdout  # and why
    data = subprocess.run([*command, "--json"], capture_output=True, text=True, env=environ, timeout=120)
    evidence = json.loads(data.stdout)["evidence"]
    assert evidence["slow_fallback"] is True
    assert evidence["plugin_kernels"] == [
        {
            "kind": "onnxruntime-extensions",
            "backend": "onnx.reference",
            "slow": True,
            "reason": "forced by ONNXTOOL_RUNTIME_FALLBACK=1",
        }
    ]


def test_built_in_check_text_carries_the_evidence(tmp_path: Path, run_cli) -> None:
    source = tmp_path / "model.onnx"
    onnx.save(golden.resize_model(mode="linear"), source)
    out = tmp_path / "model.plugin.onnx"
    done = run_cli("swap-plugin", source, "-o", out)
    assert done.code == 0, done.err
    assert "evidence: onnxtool " in done.out and "plugin kernel: " in done.out
    assert f"candidate (in memory) sha256 {sha(out)[:16]}" in done.out
