"""The SRCNN family certified over every length 16..512 at factors 1-4, dynamic and plugin forms, against the
PyTorch reference (torch:srcnn). The family is the session fixture ``srcnn_family`` (tests/conftest.py);
validate --certify and certify --verify, the commands: tests/cli/test_certify_command.py."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

PROFILE = "16..512:1,2,3,4"


@pytest.fixture(scope="module")
def certificates(srcnn_family: dict[str, Path]) -> dict[str, dict]:
    from graphsurgeon_tools import certify

    return {
        form: certify(
            srcnn_family[form], "torch:srcnn", profile=PROFILE, onnx_reference_budget_s=0.5, whole_model_points=2
        ).to_dict()
        for form in ("dynamic", "plugin")
    }


def _pairs(data: dict) -> dict[tuple[str, str], dict]:
    (site,) = data["sites"]
    return {(p["a"], p["b"]): p for p in site["pairs"]}


def _covers_profile(pair: dict) -> None:
    for axis in ("h", "w"):
        for factor in (1.0, 2.0, 3.0, 4.0):
            lengths = [
                r
                for group in pair["identical"] + pair["within_bound"]
                if (group["axis"], group["factor"]) == (axis, factor)
                for r in group["lengths"]
            ]
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
    assert set(implementations) == {
        "onnxruntime",
        "candidate",
        "onnx-reference",
        "tensorrt-model",
        "torch-routed",
        "torch-interpolate",
    }
    assert implementations["torch-routed"]["calls"] == 2 * 4 * 497  # every length, factor and axis
    assert implementations["onnx-reference"]["covers"] == "sampled" and implementations["onnx-reference"]["points"]
    whole = data["whole_model"]
    assert whole["agrees"] and whole["factor_inputs"] and all(p["validate"] == "passed" for p in whole["points"])


def test_the_certificate_names_the_nodes_the_factor_reaches_and_confirms_at_boundary_points(srcnn_family, tmp_path):
    from graphsurgeon_tools import certify, make_dynamic_scale, save_model

    factor_model = tmp_path / "srcnn_factor.onnx"  # an integer factor input: sizes = Shape(x)[2:] * factor
    save_model(make_dynamic_scale(srcnn_family["static"], layout="factor").model, factor_model)
    cert = certify(
        factor_model,
        srcnn_family["static"],
        profile="16..40:2,3",
        torch=False,
        whole_model_points=2,
        onnx_reference_budget_s=0.2,
    ).to_dict()
    assert cert["certified"] and cert["sites"][0]["form"] == "sizes"
    whole = cert["whole_model"]
    assert whole["factor_inputs"] == ["factor"]
    assert {n["op_type"] for n in whole["factor_dependent_nodes"]} >= {"Mul", "Concat"}
    assert "Resize" not in {n["op_type"] for n in whole["factor_dependent_nodes"]}
    ran = {(p["length"], p["factor"]): p["validate"] for p in whole["points"]}
    assert ran[16, 3.0] == "passed"  # the static reference runs only at its own x3: compared there
    assert ran.get((16, 2.0)) in (None, "skipped") and whole["agrees"]
