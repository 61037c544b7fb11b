"""validate() against a user's own, unmodified PyTorch module (the ``user_model`` fixture: tests/user_net.py).

`onnxtool validate` with such a module: tests/cli/test_validate_command.py."""

from __future__ import annotations

import copy
import io
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")

from user_net import user_model  # noqa: E402, F401 - the fixture

from graphsurgeon_tools import make_dynamic_scale, validate  # noqa: E402


def test_a_python_file_reference_runs_unmodified_at_every_factor(user_model: dict) -> None:
    report = validate(user_model["folder"] / "dynamic.onnx", user_model["spec"], factors=[2, 3, 4])
    assert report.passed, report.to_dict()
    assert [r.status for r in report.factors] == ["passed"] * 3
    sites = report.reference["sites"]
    assert [(s["mode"], s["factors"], s["free"]) for s in sites] == [
        ("linear", [2.0, 2.0], True),
        ("nearest", [2.0, 2.0], True),
    ]


def test_a_module_object_is_routed_and_sites_take_their_own_factors(user_model: dict) -> None:
    fixed = {"scales_0": np.array([1, 1, 3, 3], np.float32), "scales_1": np.array([1, 1, 1.5, 1.5], np.float32)}
    report = validate(user_model["dynamic"], user_model["net"], factors=[3], inputs=fixed)
    assert report.passed, report.to_dict()
    assert report.factors[0].outputs[0].shape == [1, 1, 36, 45]


def test_an_output_count_mismatch_is_one_failure_not_a_crash(user_model: dict) -> None:
    fewer = copy.deepcopy(user_model["dynamic"])
    del fewer.graph.output[1]
    report = validate(fewer, user_model["net"], factors=[2])
    assert not report.passed
    assert report.factors[0].reason == "the candidate has 1 output(s), the reference 2"


def test_a_candidate_without_scale_inputs_passes_only_at_its_own_factor(user_model: dict) -> None:
    report = validate(user_model["static"], user_model["net"], factors=[2, 3, 4])
    statuses = {r.factor: r.status for r in report.factors}
    assert statuses[2.0] == "passed" and statuses[3.0] != "passed" and statuses[4.0] != "passed"


def test_a_changed_site_mode_is_caught_and_named(user_model: dict) -> None:
    wrong = copy.deepcopy(user_model["dynamic"])
    node = [n for n in wrong.graph.node if n.op_type == "Resize"][1]
    next(a for a in node.attribute if a.name == "mode").s = b"linear"
    report = validate(wrong, user_model["net"], factors=[2, 3])
    assert not report.passed
    assert (
        f"site 1 in 'root': interpolate(mode='nearest') 2x2 vs node '{node.name}'" in report.factors[0].reason
        or f"vs node '{node.name}'" in report.factors[0].reason
    )
    assert "mode linear (the reference: nearest)" in report.factors[0].reason


def test_a_mismatch_is_localised_to_the_first_differing_site(user_model: dict) -> None:
    wrong = copy.deepcopy(user_model["dynamic"])
    weight = next(t for t in wrong.graph.initializer if t.name == "tail.weight")
    weight.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(weight) * 2, "tail.weight"))
    body = next(t for t in wrong.graph.initializer if t.name == "body.0.weight")
    body.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(body) * 2, "body.0.weight"))
    report = validate(wrong, user_model["net"], factors=[3])
    assert not report.passed
    text = " ".join(report.notes)
    assert "site 0" in text and "the error comes from upstream" in text


def test_the_old_scales_convention_is_chosen_explicitly(tmp_path: Path) -> None:
    from exporters import export, srcnn

    model = srcnn("cxx-op")
    path = tmp_path / "srcnn.onnx"
    export(
        model,
        model.example_inputs(3),
        path,
        exporter="torchscript",
        input_names=["input", "scales"],
        output_names=["output"],
    )
    (tmp_path / "srcnn_ref.py").write_text("from exporters import srcnn\n\ndef build():\n    return srcnn('cxx-op')\n")
    report = validate(path, f"python-scales:{tmp_path / 'srcnn_ref.py'}:build", factors=[2, 3])
    assert report.passed, report.to_dict()


def test_chosen_sites_are_swept_with_the_others_at_their_original_factors(user_model: dict) -> None:
    nodes = [n.name for n in user_model["dynamic"].graph.node if n.op_type == "Resize"]
    report = validate(user_model["dynamic"], user_model["net"], sites={"#1": [1.5, 3]})
    assert report.passed, report.to_dict()
    assert [r.factor_label for r in report.factors] == [f"{nodes[1]}=x1.5", f"{nodes[1]}=x3"]
    assert report.factors[1].scale_feeds == {"scales_0": [1.0, 1.0, 2.0, 2.0], "scales_1": [1.0, 1.0, 3.0, 3.0]}
    by_scope = validate(user_model["dynamic"], user_model["net"], sites=["up=3", f"{nodes[1]}=1"])
    assert by_scope.passed and by_scope.factors[0].outputs[0].shape == [1, 1, 24, 30]


def test_a_pinned_site_is_skipped_as_not_free(tmp_path: Path) -> None:
    nn = torch.nn

    class Skip(nn.Module):
        def forward(self, x):
            up = torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest")
            return up + x.repeat(1, 1, 2, 2)  # a skip connection pins the site's factor

    module = Skip().eval()
    x = torch.rand(1, 1, 4, 4)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x,), buffer, dynamo=False, opset_version=17, input_names=["input"])
    dynamic = make_dynamic_scale(onnx.load_from_string(buffer.getvalue())).model
    report = validate(dynamic, module, sites={"#0": [2, 3]})
    assert [r.status for r in report.factors] == ["passed", "skipped"]
    assert report.factors[1].reason.startswith(f"{report.reference['sites'][0]['node']} is not free at x3: ")


# --- real models (tests/realmodels builders) through validate() itself ------------------------

REAL_POINTS = {  # free sites to sweep alone (by site number) and factors; Swin2SR keeps within its x4 crop
    "swin2sr": ({"#0": [1, 1.5], "#1": [1, 1.5]}, [1.5, 2]),
    "vae_decoder": ({"#0": [3, 4]}, [2, 3, 4]),
    "dpt": ({"#3": [3, 4], "#4": [3, 4]}, [2, 3, 4]),
}


@pytest.mark.slow
@pytest.mark.parametrize("form", ["dynamic", "plugin"])
@pytest.mark.parametrize("variant", ["torchscript-17", "dynamo-18"])
@pytest.mark.parametrize("name", list(REAL_POINTS))
def test_real_models_validate_against_their_unmodified_modules(real_export, name: str, variant: str, form: str) -> None:
    from graphsurgeon_tools import swap_plugin
    from graphsurgeon_tools.resize.freedom import site_freedom

    built, path = real_export(name, variant)
    static = onnx.load(str(path))
    candidate = make_dynamic_scale(static, check=False).model
    if form == "plugin":
        candidate = swap_plugin(candidate).model
    x = {candidate.graph.input[0].name: built.example.numpy()}
    free = {k for k, v in site_freedom(static).items() if v.free}
    sites, factors = REAL_POINTS[name]
    compared = 0
    for site, values in sites.items():
        report = validate(candidate, built.module, sites={site: values}, inputs=x)
        node = report.reference["sites"][int(site[1:])]["node"]
        for point in report.factors:
            assert point.status in ("passed", "skipped"), (site, point.reason)
            assert point.status == "passed" or node not in free, (site, point.reason)
            compared += point.status == "passed"
    together = validate(candidate, built.module, factors=factors, inputs=x)
    for point in together.factors:
        assert point.status in ("passed", "skipped"), point.reason
        assert point.status == "passed" or point.reason.startswith("not free at x"), point.reason
    assert sum(p.status == "passed" for p in together.factors) >= 1  # at least the original factor
    assert compared >= 1 or not free, "a free site was never compared away from its original factor"


def test_site_outputs_are_compared_against_the_routed_calls(user_model: dict) -> None:
    report = validate(user_model["dynamic"], user_model["net"], factors=[3])
    kinds = [(o.kind, o.passed) for o in report.factors[0].outputs]
    # Two graph outputs (z and the first site's output, "features"), and the second site's output.
    assert kinds == [("output", True), ("output", True), ("site", True)]
