"""The SRCNN family certified over every length 16..512 at factors 1-4, dynamic and plugin forms, against the
PyTorch reference (torch:srcnn); validate --certify carries the certificate; --verify catches changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

PROFILE = "16..512:1,2,3,4"


@pytest.fixture(scope="module")
def srcnn_family(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from exporters.onnx_export import export_srcnn
    from graphsurgeon_tools import make_dynamic_scale, save_model, swap_plugin

    folder = tmp_path_factory.mktemp("certify-srcnn")
    static = folder / "srcnn_static_x3.onnx"
    export_srcnn(static, variant="static", factor=3.0, compare=False)
    dynamic = make_dynamic_scale(static)
    save_model(dynamic.model, folder / "srcnn_dynamic.onnx")
    save_model(swap_plugin(dynamic.model).model, folder / "srcnn_plugin.onnx")
    return {"static": static, "dynamic": folder / "srcnn_dynamic.onnx", "plugin": folder / "srcnn_plugin.onnx"}


@pytest.fixture(scope="module")
def certificates(srcnn_family: dict[str, Path]) -> dict[str, dict]:
    from graphsurgeon_tools import certify

    return {form: certify(srcnn_family[form], "torch:srcnn", profile=PROFILE, onnx_reference_budget_s=0.5,
                          whole_model_points=2).to_dict() for form in ("dynamic", "plugin")}


def _pairs(data: dict) -> dict[tuple[str, str], dict]:
    (site,) = data["sites"]
    return {(p["a"], p["b"]): p for p in site["pairs"]}


def _covers_profile(pair: dict) -> None:
    for axis in ("h", "w"):
        for factor in (1.0, 2.0, 3.0, 4.0):
            lengths = [r for group in pair["identical"] + pair["within_bound"]
                       if (group["axis"], group["factor"]) == (axis, factor) for r in group["lengths"]]
            covered = {v for low, high in lengths for v in range(low, high + 1)}
            assert covered == set(range(16, 513)), (axis, factor)


@pytest.mark.parametrize("form", ["dynamic", "plugin"])
def test_srcnn_is_certified_for_every_length_and_factor_against_pytorch(certificates, form):
    data = certificates[form]
    assert data["certified"] and data["first_counterexample"] is None, data["summary"]
    assert data["profile"]["lengths"] == [[16, 512]] and data["profile"]["factors"] == [1.0, 2.0, 3.0, 4.0]
    pairs = _pairs(data)
    gate = pairs["candidate", "torch-routed"]
    assert gate["gating"] and gate["verdict"] in ("identical", "within-bound") and not gate["counterexamples"]
    _covers_profile(gate)
    # identical where they should be: the rewrite keeps ORT's own Resize (dynamic form, bit for bit); the
    # plugin runs the routed reference's kernel (bit for bit); every float32 engine within the stated bound
    if form == "dynamic":
        assert pairs["candidate", "onnxruntime"]["verdict"] == "identical"
    else:
        assert gate["verdict"] == "identical"
        assert pairs["candidate", "onnxruntime"]["largest_weight_difference"] < 1e-4
    for pair in pairs.values():
        assert not pair["counterexamples"], pair
    implementations = {i["name"]: i for i in data["sites"][0]["implementations"]}
    assert set(implementations) == {"onnxruntime", "candidate", "onnx-reference", "tensorrt-model", "torch-routed",
                                    "torch-interpolate"}
    assert implementations["torch-routed"]["calls"] == 2 * 4 * 497  # every length, factor and axis
    assert implementations["onnx-reference"]["covers"] == "sampled" and implementations["onnx-reference"]["points"]
    whole = data["whole_model"]
    assert whole["agrees"] and whole["factor_inputs"] and all(p["validate"] == "passed" for p in whole["points"])


def test_validate_carries_the_certificate_in_json_and_junit(srcnn_family, run_cli, tmp_path):
    junit = tmp_path / "report.xml"
    result = run_cli("validate", srcnn_family["dynamic"], "--reference", "torch:srcnn", "--factors", "2",
                     "--certify", "16..40:2,3", "--json", "--junit", junit)
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["certificate"]["certified"] and report["certificate"]["schema"] == "onnxtool.certificate/1"
    assert 'name="certify./upsample/Resize"' in junit.read_text()


def test_verify_holds_on_the_certified_model_and_fails_on_a_changed_model_or_engine(srcnn_family, run_cli, tmp_path):
    cert = tmp_path / "cert.json"
    made = run_cli("certify", srcnn_family["plugin"], "--reference", "torch:srcnn", "--profile", "16..24:2,3",
                   "--out", cert)
    assert made.code == 0, made.err
    assert run_cli("certify", "--verify", cert, srcnn_family["plugin"]).code == 0
    changed = tmp_path / "changed.onnx"
    changed.write_bytes(srcnn_family["plugin"].read_bytes() + b"\x00")
    result = run_cli("certify", "--verify", cert, changed)
    assert result.code == 1 and "sha256" in result.out
    data = json.loads(cert.read_text())
    data["engines"]["onnxruntime"] = "0.0.1"
    cert.write_text(json.dumps(data))
    result = run_cli("certify", "--verify", cert, srcnn_family["plugin"])
    assert result.code == 1 and "onnxruntime is" in result.out and "0.0.1" in result.out


def test_the_certificate_names_the_nodes_the_factor_reaches_and_confirms_at_boundary_points(srcnn_family, tmp_path):
    from graphsurgeon_tools import certify, make_dynamic_scale, save_model

    factor_model = tmp_path / "srcnn_factor.onnx"  # an integer factor input: sizes = Shape(x)[2:] * factor
    save_model(make_dynamic_scale(srcnn_family["static"], layout="factor").model, factor_model)
    cert = certify(factor_model, srcnn_family["static"], profile="16..40:2,3", torch=False, whole_model_points=2,
                   onnx_reference_budget_s=0.2).to_dict()
    assert cert["certified"] and cert["sites"][0]["form"] == "sizes"
    whole = cert["whole_model"]
    assert whole["factor_inputs"] == ["factor"]
    assert {n["op_type"] for n in whole["factor_dependent_nodes"]} >= {"Mul", "Concat"}
    assert "Resize" not in {n["op_type"] for n in whole["factor_dependent_nodes"]}
    ran = {(p["length"], p["factor"]): p["validate"] for p in whole["points"]}
    assert ran[16, 3.0] == "passed"  # the static reference runs only at its own x3: compared there
    assert ran.get((16, 2.0)) in (None, "skipped") and whole["agrees"]
