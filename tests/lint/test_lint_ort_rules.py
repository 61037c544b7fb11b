"""Each ONNX Runtime rule: a model that breaks it, one that passes, and the departure reproduced.

The rules' claims are measured here, not only cited: ONNX Runtime against the ONNX
reference evaluator (and PyTorch where it is installed) on the same seeded input.
"""

from __future__ import annotations

import lint_models as m
import numpy as np
import onnx
import pytest

from graphsurgeon_tools.lint import lint_model


def _sizes(sizes, attrs, x="float[1,1,4,4]"):
    return m.resize(attrs, x=x, init=f"int64[4] sz = {{{sizes}}}", body_inputs="X, , , sz")


CUBIC_TO_ONE = 'mode="cubic", coordinate_transformation_mode="pytorch_half_pixel"'
LINEAR_TO_ONE = 'mode="linear", coordinate_transformation_mode="pytorch_half_pixel"'
NEAREST = 'mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"'

CASES = {
    "ort-nearest-fractional-ratio": (
        _sizes("1, 1, 1, 64", NEAREST, x="float[1,1,1,26]"),
        _sizes("1, 1, 1, 52", NEAREST, x="float[1,1,1,26]"),
    ),
    "ort-cubic-pytorch-half-pixel-length-one": (
        _sizes("1, 1, 1, 1", CUBIC_TO_ONE),
        _sizes("1, 1, 2, 2", CUBIC_TO_ONE),
    ),
    "torch-pytorch-half-pixel-length-one": (
        _sizes("1, 1, 1, 1", LINEAR_TO_ONE),
        _sizes("1, 1, 1, 1", 'mode="linear", coordinate_transformation_mode="half_pixel"'),
    ),
    "torch-cubic-coefficient": (
        m.constant_scales("1.0, 1.0, 0.5, 0.5", attrs='mode="cubic", cubic_coeff_a=-0.5'),
        m.constant_scales("1.0, 1.0, 0.5, 0.5", attrs='mode="cubic", cubic_coeff_a=-0.75'),
    ),
}
WARNING_ONLY = {"torch-cubic-coefficient"}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_model_that_breaks_the_rule_is_reported(rule):
    report = lint_model(CASES[rule][0], "onnxruntime")
    found = [f for f in report.findings if f.rule == rule]
    assert found, report.to_dict()
    assert found[0].severity == ("warning" if rule in WARNING_ONLY else "error")
    assert found[0].source.startswith(("microsoft/onnxruntime#", "pytorch/pytorch#"))


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_model_that_keeps_the_rule_passes_it(rule):
    assert rule not in {f.rule for f in lint_model(CASES[rule][1], "onnxruntime").findings}


def test_run_time_factors_make_the_departures_warnings_not_failures():
    model = m.resize(CUBIC_TO_ONE, inputs="float[4] s")
    report = lint_model(model, "onnxruntime")
    assert {f.rule for f in report.findings} >= {
        "ort-cubic-pytorch-half-pixel-length-one",
        "torch-pytorch-half-pixel-length-one",
    }
    assert not report.failed
    assert {f.severity for f in report.findings} == {"warning"}


def test_the_tensorrt_target_does_not_run_the_onnxruntime_rules():
    assert not [
        f for f in lint_model(CASES["torch-cubic-coefficient"][0], "tensorrt").findings if f.target != "tensorrt"
    ]


def _ort_and_reference(model: onnx.ModelProto, shape):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return x, session.run(None, {"X": x})[0], ReferenceEvaluator(model).run(None, {"X": x})[0]


def test_onnxruntime_departs_from_the_reference_exactly_where_the_cubic_rule_says():
    _, ort_out, ref = _ort_and_reference(CASES["ort-cubic-pytorch-half-pixel-length-one"][0], (1, 1, 4, 4))
    assert np.abs(ort_out - ref).max() > 1e-3  # microsoft/onnxruntime#11496
    _, ort_out, ref = _ort_and_reference(CASES["ort-cubic-pytorch-half-pixel-length-one"][1], (1, 1, 4, 4))
    assert np.abs(ort_out - ref).max() < 1e-5


def test_onnxruntime_selects_another_nearest_pixel_than_the_reference_at_a_fractional_ratio():
    x = np.arange(26, dtype=np.float32).reshape(1, 1, 1, 26)
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    def run(model):
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, {"X": x})[0], ReferenceEvaluator(model).run(None, {"X": x})[0]

    ort_out, ref = run(CASES["ort-nearest-fractional-ratio"][0])
    assert (ort_out != ref).sum() >= 1  # microsoft/onnxruntime#28085
    ort_out, ref = run(CASES["ort-nearest-fractional-ratio"][1])
    assert (ort_out == ref).all()


def test_pytorch_interpolate_is_half_pixel_where_the_output_length_is_one():
    torch = pytest.importorskip("torch")
    x, ort_out, _ = _ort_and_reference(CASES["torch-pytorch-half-pixel-length-one"][0], (1, 1, 4, 4))
    expected = torch.nn.functional.interpolate(torch.from_numpy(x), size=(1, 1), mode="bilinear").numpy()
    assert np.abs(ort_out - expected).max() > 1e-3  # pytorch/pytorch#79361
    _, ort_half, _ = _ort_and_reference(CASES["torch-pytorch-half-pixel-length-one"][1], (1, 1, 4, 4))
    np.testing.assert_allclose(ort_half, expected, atol=1e-6)


def test_whole_factor_layout_sites_need_no_run_time_warning():
    from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale

    original = m.constant_scales(
        "1.0, 1.0, 2.0, 2.0", attrs=CUBIC_TO_ONE.replace("cubic", "nearest"), x="float[1,1,4,4]"
    )
    by_layout = {
        layout: lint_model(make_dynamic_scale(original, layout=layout, check=False).model, "onnxruntime")
        for layout in ("factor", "sizes")
    }
    assert by_layout["factor"].findings == []  # out = in * f with f whole: no fractional ratio, no length 1
    assert {f.rule for f in by_layout["sizes"].findings} == {"ort-nearest-fractional-ratio"}  # any size can be fed
