"""make_dynamic_scale: op types, numerics in ONNX Runtime, checker, shapes, options, laws, near-misses.

Every rewrite is checked three ways (as in the onnxscript rewriter's tests): the op types
that result, numerics through onnxruntime on seeded inputs (at the original factor AND at
a new one, which is the point of the pass), and ``onnx.checker.check_model(full_check=True)``.
"""

from __future__ import annotations

import math

import golden
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphsurgeon_tools.check import equivalence as checks
from graphsurgeon_tools.errors import CheckFailedError, InvalidScalesError, UsageError
from graphsurgeon_tools.io import load_model, save_model
from graphsurgeon_tools.passes.make_dynamic_scale import DynamicScaleResult, make_dynamic_scale
from graphsurgeon_tools.resize import ValueSource, find_resize_sites

CONSTANT_SOURCES = ("initializer", "constant", "identity", "folded")


def _run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _x(shape=(1, 3, 8, 8), seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


def _dims(value_info) -> list:
    return [
        d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in value_info.type.tensor_type.shape.dim
    ]


@pytest.mark.parametrize("opset", golden.RESIZE_OPSETS)
@pytest.mark.parametrize("source", CONSTANT_SOURCES)
def test_constant_scales_become_an_input(opset: int, source: str) -> None:
    model = golden.resize_model(
        opset, source=source, scales=(1.0, 1.0, 2.0, 2.0), mode="linear" if opset > 10 else "nearest"
    )
    result = make_dynamic_scale(model)
    out = result.model
    # op types: the Resize stays a Resize of the same version, the scales producers are gone
    assert [n.op_type for n in out.graph.node if n.op_type == "Resize"] == ["Resize"]
    assert not [
        n for n in out.graph.node if n.op_type in ("Identity", "Mul", "Concat") or n.name == "scales_const_node"
    ]
    assert not [i for i in out.graph.initializer if i.name.startswith("scales_const")]
    assert [i.name for i in out.graph.input] == ["x", "scales"]
    assert result.new_inputs[0].shape == [4] and result.new_inputs[0].dtype == "float32"
    (site,) = find_resize_sites(out)
    assert site.scales_source is ValueSource.GRAPH_INPUT and site.scales_tensor == "scales"
    onnx.checker.check_model(out, full_check=True)
    # numerics: the built-in check ran and found no difference ...
    assert result.check is not None and result.check.passed is True
    assert all(o.max_abs_diff == 0.0 for o in result.check.outputs)
    # ... and the factor really is dynamic now
    x = _x()
    (at_2,) = _run(out, {"x": x, "scales": np.array([1, 1, 2, 2], np.float32)})
    (at_3,) = _run(out, {"x": x, "scales": np.array([1, 1, 3, 3], np.float32)})
    (original,) = _run(model, {"x": x})
    np.testing.assert_array_equal(at_2, original)
    assert at_3.shape == (1, 3, 24, 24)


def test_result_report() -> None:
    result = make_dynamic_scale(golden.resize_model(13, source="constant", scales=(1.0, 1.0, 2.0, 3.0)))
    report = result.to_dict()
    (site,) = report["rewritten"]
    assert site["node"] == "resize" and site["op_type"] == "Resize" and site["mode"] == "nearest"
    assert site["original_scales"] == [1.0, 1.0, 2.0, 3.0] and site["new_input"] == "scales"
    assert site["source"] == "constant"
    assert report["new_inputs"] == [
        {"name": "scales", "dtype": "float32", "shape": [4], "default": None, "value": [1.0, 1.0, 2.0, 3.0]}
    ]
    assert report["skipped"] == [] and report["check"]["passed"] is True
    assert {"find", "rewrite", "shapes", "checker", "check"} <= set(report["timings"])


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("opset", [7, 8])
def test_upsample_7_becomes_upsample_9_at_opset_9(opset: int, mode: str) -> None:
    model = golden.upsample_model(7, opset=opset, mode=mode, scales=(1.0, 1.0, 2.0, 3.0))
    result = make_dynamic_scale(model)
    out = result.model
    assert result.opset_before == opset and result.opset_after == 9
    assert any("opset raised" in n for n in result.notes)
    (node,) = [n for n in out.graph.node if n.op_type == "Upsample"]
    assert list(node.input) == ["x", "scales"] and not [a for a in node.attribute if a.name == "scales"]
    onnx.checker.check_model(out, full_check=True)
    assert result.check.passed is True
    (bigger,) = _run(out, {"x": _x((1, 2, 5, 7)), "scales": np.array([1, 1, 3, 2], np.float32)})
    assert bigger.shape == (1, 2, 15, 14)


def test_upsample_7_with_batchnorm_is_bumped() -> None:
    result = make_dynamic_scale(golden.upsample_model(7, extra_ops=["BatchNormalization"]))
    assert result.opset_after == 9 and result.check.passed is True


def test_upsample_7_is_skipped_when_the_opset_bump_would_change_another_op() -> None:
    model = golden.upsample_model(7, extra_ops=["BatchNormalization"])
    bn = next(n for n in model.graph.node if n.op_type == "BatchNormalization")
    bn.attribute.append(onnx.helper.make_attribute("spatial", 0))
    result = make_dynamic_scale(model)
    assert not result.rewritten and result.opset_after == 8
    (skip,) = result.skipped
    assert "BatchNormalization(spatial=0)" in skip.reason and "opset 8 -> 9" in skip.reason


@pytest.mark.parametrize("source", ["constant", "initializer"])
def test_upsample_9_and_resize_10_keep_their_op(source: str) -> None:
    for model in (golden.upsample_model(9, source=source), golden.resize_model(10, source=source)):
        result = make_dynamic_scale(model)
        (site,) = result.rewritten
        assert site.op_version in (9, 10) and result.opset_after == result.opset_before
        assert result.check.passed is True


def test_several_sites_get_one_input_each_in_graph_order() -> None:
    model = golden.fpn_model(factors=(2.0, 4.0, 8.0))
    result = make_dynamic_scale(model)
    assert [s.new_input for s in result.rewritten] == ["scales_0", "scales_1", "scales_2"]
    assert [i.value for i in result.new_inputs] == [[1, 1, 2, 2], [1, 1, 4, 4], [1, 1, 8, 8]]
    assert result.check.passed is True
    # the output's spatial dims are still fixed by the lateral inputs (shape inference says
    # so through the Adds); the batch dim, which a full scales vector can change, is symbolic
    dims = _dims(result.model.graph.output[0])
    assert dims[1:] == [12, 16, 16] and isinstance(dims[0], str)


def test_shared_input_for_equal_scales_and_refusal_for_different_ones() -> None:
    model = golden.fpn_model(factors=(2.0, 2.0))
    result = make_dynamic_scale(model, shared=True)
    assert [i.name for i in result.new_inputs] == ["scales"]
    assert {s.new_input for s in result.rewritten} == {"scales"}
    assert result.check.passed is True
    with pytest.raises(
        UsageError,
        match=r"shared=True needs equal scales.*resize_0: \[1.0, 1.0, 2.0, 2.0\].*resize_1: \[1.0, 1.0, 4.0, 4.0\]",
    ):
        make_dynamic_scale(golden.fpn_model(factors=(2.0, 4.0)), shared=True)


def test_input_name_and_clash() -> None:
    result = make_dynamic_scale(golden.resize_model(13), input_name="upscale")
    assert [i.name for i in result.model.graph.input] == ["x", "upscale"]
    several = make_dynamic_scale(golden.fpn_model(factors=(2.0, 4.0)), input_name="s")
    assert [i.name for i in several.new_inputs] == ["s_0", "s_1"]
    with pytest.raises(UsageError, match="'x' is already a tensor name"):
        make_dynamic_scale(golden.resize_model(13), input_name="x")
    with pytest.raises(UsageError, match="must not be empty"):
        make_dynamic_scale(golden.resize_model(13), input_name=" ")


def test_factor_input_holds_only_the_spatial_factors() -> None:
    model = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 3.0), shape=(None, 3, None, None))
    result = make_dynamic_scale(model, factor=True)
    (inp,) = result.new_inputs
    assert inp.shape == [2] and inp.value == [2.0, 3.0]
    assert [n.op_type for n in result.model.graph.node] == ["Constant", "Constant", "Concat", "Resize", "Relu"]
    assert result.check.passed is True
    (y,) = _run(result.model, {"x": _x((2, 3, 4, 5)), "scales": np.array([4, 0.5], np.float32)})
    assert y.shape == (2, 3, 16, 2)
    # factor mode keeps the batch/channel dims linked to the input's
    assert _dims(result.model.graph.output[0])[:2] == ["N", 3]


def test_factor_with_axes_and_refusal_when_spatial_entries_are_not_a_suffix() -> None:
    result = make_dynamic_scale(golden.resize_model(18, axes=(2, 3), scales=(2.0, 3.0)), factor=True)
    assert result.new_inputs[0].value == [2.0, 3.0] and result.check.passed is True
    assert "Concat" not in [n.op_type for n in result.model.graph.node]  # nothing to expand
    with pytest.raises(UsageError, match="not a suffix"):
        make_dynamic_scale(golden.resize_model(18, axes=(3, 0), scales=(2.0, 1.0)), factor=True)


def test_keep_default_makes_the_input_optional() -> None:
    model = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 2.0))
    result = make_dynamic_scale(model, keep_default=True)
    assert result.new_inputs[0].default == [1.0, 1.0, 2.0, 2.0]
    assert "scales" in {i.name for i in result.model.graph.initializer}
    x = _x()
    np.testing.assert_array_equal(_run(result.model, {"x": x})[0], _run(model, {"x": x})[0])
    # and it can still be overridden
    assert _run(result.model, {"x": x, "scales": np.array([1, 1, 3, 3], np.float32)})[0].shape == (1, 3, 24, 24)


def test_node_selection_by_name_and_pattern() -> None:
    model = golden.fpn_model(factors=(2.0, 4.0, 8.0))
    result = make_dynamic_scale(model, nodes=["resize_[02]"])
    assert [s.node for s in result.rewritten] == ["resize_0", "resize_2"]
    sites = {s.node_name: s for s in find_resize_sites(result.model)}
    assert sites["resize_1"].scales_source is ValueSource.CONSTANT  # untouched
    with pytest.raises(UsageError, match=r"nodes=\['nope'\] matches no Resize/Upsample node \(candidates: 'resize_0'"):
        make_dynamic_scale(model, nodes=["nope"])


def test_sizes_sites_are_skipped_unless_from_sizes() -> None:
    model = golden.sizes_model(13, sizes=(1, 3, 24, 20), shape=(1, 3, 8, 10))
    result = make_dynamic_scale(model)
    assert not result.rewritten and "driven by sizes" in result.skipped[0].reason
    assert result.model is model and result.check is None


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_from_sizes_converts_exactly(opset: int, mode: str) -> None:
    model = golden.sizes_model(opset, sizes=(1, 3, 24, 15), shape=(1, 3, 8, 10), mode=mode)
    result = make_dynamic_scale(model, from_sizes=True)
    (site,) = result.rewritten
    assert site.source == "sizes" and site.fed_value == [1.0, 1.0, 3.0, 1.5]
    assert result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0
    assert not [i for i in result.model.graph.initializer if i.name == "sizes_const"]
    onnx.checker.check_model(result.model, full_check=True)


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"shape": (None, 3, None, None)}, "not static"),
        ({"sizes": (1, 3, 7, 10), "shape": (1, 3, 3, 10)}, "not reproduced exactly"),
        ({"keep_aspect_ratio_policy": "not_larger", "sizes": (1, 3, 16, 16)}, "keep_aspect_ratio_policy"),
    ],
)
def test_from_sizes_near_misses_stay_unchanged(kwargs: dict, reason: str) -> None:
    opset = 18 if "keep_aspect_ratio_policy" in kwargs else 13
    model = golden.sizes_model(opset, **kwargs)
    result = make_dynamic_scale(model, from_sizes=True)
    assert not result.rewritten and reason in result.skipped[0].reason
    assert result.model.SerializeToString() == model.SerializeToString()


@pytest.mark.parametrize("source", ["runtime", "graph_input"])
def test_non_constant_scales_are_near_misses(source: str) -> None:
    model = golden.resize_model(13, source=source)
    result = make_dynamic_scale(model)
    assert not result.rewritten and result.model is model
    expected = "computed at run time" if source == "runtime" else "already come from graph input"
    assert expected in result.skipped[0].reason


@pytest.mark.parametrize("via", ["initializer", "constant"])
def test_a_constant_other_nodes_read_stays_for_them(via: str) -> None:
    model = golden.shared_constant_model(via=via)
    result = make_dynamic_scale(model)
    mul = next(n for n in result.model.graph.node if n.op_type == "Mul")
    assert mul.input[1] == "scales_const"
    producers = {o for n in result.model.graph.node for o in n.output} | {
        i.name for i in result.model.graph.initializer
    }
    assert "scales_const" in producers
    assert result.check.passed is True and len(result.check.outputs) == 2


@pytest.mark.parametrize(
    "scales, message",
    [
        ((1.0, 1.0, float("nan"), 2.0), "nan"),
        ((1.0, 1.0, 0.0, 2.0), "0.0, not a positive"),
        ((1.0, 1.0, -2.0, 2.0), "-2.0, not a positive"),
        ((1.0, 2.0, 2.0), "3 entries for a rank-4 input"),
        ((1.0, 1.0, 1e9, 1.0), "absurdly large"),
    ],
)
def test_nonsense_scales_are_refused(scales, message: str) -> None:
    model = golden.resize_model(13, scales=scales, infer=False)
    with pytest.raises(InvalidScalesError, match=message):
        make_dynamic_scale(model, check=False)


def test_stale_shapes_do_not_survive() -> None:
    model = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 2.0))
    assert _dims(next(v for v in model.graph.value_info if v.name == "resized")) == [1, 3, 16, 16]
    result = make_dynamic_scale(model)
    infos = {v.name: _dims(v) for v in result.model.graph.value_info}
    assert 16 not in infos.get("resized", []), infos
    out = _dims(result.model.graph.output[0])
    assert out[2:] == ["y_dim2", "y_dim3"] and 16 not in out
    assert any("output shapes made symbolic" in n for n in result.notes)


def test_inplace_false_leaves_the_callers_model_alone_and_inplace_true_does_not() -> None:
    model = golden.resize_model(13)
    before = model.SerializeToString()
    result = make_dynamic_scale(model)
    assert model.SerializeToString() == before and result.model is not model
    result = make_dynamic_scale(model, inplace=True)
    assert result.model is model and model.SerializeToString() != before
    assert result.check.passed is True  # the check compared against the serialized original


def test_custom_domain_ops_skip_the_check_with_a_reason() -> None:
    result = make_dynamic_scale(golden.custom_domain_model())
    assert result.rewritten and result.check.passed is None
    assert "custom.domain::Mystery" in result.check.skipped


def test_a_difference_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # Feed the rewritten model a wrong factor: the check must notice.
    monkeypatch.setattr(
        DynamicScaleResult,
        "feeds",
        lambda self: {i.name: np.array([1, 1, 2, 2.5], np.float32) for i in self.new_inputs},
    )
    result = make_dynamic_scale(golden.resize_model(13, scales=(1.0, 1.0, 2.0, 2.0), mode="linear"))
    # The library returns a failed result (one failure policy for every pass); raise_if_failed raises.
    assert result.failed and result.check.passed is False and result.changed
    with pytest.raises(CheckFailedError, match="differs from your input model in ONNX Runtime: output 'y'"):
        result.raise_if_failed()


def test_compare_models_reports_values_that_differ() -> None:
    original = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 2.0), mode="linear")
    rewritten = make_dynamic_scale(original, check=False).model
    result = checks.compare_models(original, rewritten, {"scales": np.array([1, 1, 2, 2], np.float32)})
    assert result.passed is True and result.input_shapes == {"x": [1, 3, 8, 8]}
    other = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 2.0), mode="nearest")
    result = checks.compare_models(other, rewritten, {"scales": np.array([1, 1, 2, 2], np.float32)})
    assert result.passed is False and result.outputs[0].mismatched > 0 and result.outputs[0].max_abs_diff > 0


def test_the_check_refuses_outputs_above_the_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphsurgeon_tools.errors import ResourceLimitError

    monkeypatch.setenv("ONNXTOOL_MAX_OUTPUT_BYTES", "1K")
    with pytest.raises(ResourceLimitError, match="above the output size limit"):
        make_dynamic_scale(golden.resize_model(13, scales=(1.0, 1.0, 4.0, 4.0)))


def test_external_data_model_weights_stay_on_disk(tmp_path) -> None:
    model = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 2.0), post_op=False)
    # a weight big enough to be stored externally, used after the Resize
    weight = np.random.default_rng(0).uniform(size=(1, 3, 16, 16)).astype(np.float32)
    model.graph.initializer.append(onnx.numpy_helper.from_array(weight, "bias"))
    model.graph.node[-1].output[0] = "resized"
    model.graph.node.append(onnx.helper.make_node("Add", ["resized", "bias"], ["y"]))
    x = _x()
    (expected,) = _run(model, {"x": x})
    src = tmp_path / "src"
    src.mkdir()
    onnx.save(model, src / "m.onnx", save_as_external_data=True, location="m.onnx.data", size_threshold=1024)
    loaded = load_model(src / "m.onnx")
    result = make_dynamic_scale(loaded, inplace=True)
    bias = next(i for i in result.model.graph.initializer if i.name == "bias")
    assert not bias.raw_data  # never read into memory
    assert result.check.passed is True  # ORT read the weights from the source folder
    (tmp_path / "dst").mkdir()
    out = save_model(result.model, tmp_path / "dst" / "dyn.onnx")
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x, "scales": np.array([1, 1, 2, 2], np.float32)})
    np.testing.assert_array_equal(y, expected)


def test_simplify_folds_with_onnxsim() -> None:
    pytest.importorskip("onnxsim")
    result = make_dynamic_scale(golden.resize_model(13, source="folded"), simplify=True)
    assert result.rewritten and result.rewritten[0].source in ("initializer", "constant")
    assert "simplify" in result.timings and result.check.passed is True


def test_idempotent_on_its_own_output_with_every_option() -> None:
    for kwargs in ({}, {"factor": True}, {"keep_default": True}, {"shared": True}):
        once = make_dynamic_scale(golden.fpn_model(factors=(2.0, 2.0)), **kwargs).model
        twice = make_dynamic_scale(once, check=False, **kwargs)
        assert not twice.rewritten, kwargs
        assert twice.model.SerializeToString() == once.SerializeToString(), kwargs


# ----------------------------------------------------------------------------- laws (hypothesis)

_factors = st.sampled_from([0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    opset=st.sampled_from(golden.RESIZE_OPSETS),
    source=st.sampled_from(CONSTANT_SOURCES),
    mode=st.sampled_from(["nearest", "linear", "cubic"]),
    h=_factors,
    w=_factors,
    factor=st.booleans(),
)
def test_law_pass_twice_equals_once_and_original_factor_equals_original(opset, source, mode, h, w, factor) -> None:
    if opset == 10:
        mode = "nearest" if mode == "cubic" else mode
    model = golden.resize_model(opset, source=source, mode=mode, scales=(1.0, 1.0, h, w), shape=(1, 2, 6, 5))
    once = make_dynamic_scale(model, factor=factor, check=False)
    twice = make_dynamic_scale(once.model, factor=factor, check=False)
    assert twice.model.SerializeToString() == once.model.SerializeToString()
    x = _x((1, 2, 6, 5), seed=int(h * 8 + w))
    fed = {"x": x, **once.feeds()}
    np.testing.assert_array_equal(_run(once.model, fed)[0], _run(model, {"x": x})[0])
    assert math.prod(once.feeds()["scales"].shape) == (2 if factor else 4)


def test_opset_bump_converts_unselected_upsample_7_too() -> None:
    model = golden.upsample_model(7, opset=8, scales=(1.0, 1.0, 2.0, 2.0))
    # a second Upsample-7 after the first, left out of the selection
    last = model.graph.node[-1]
    last.output[0] = "mid"
    model.graph.node.append(
        onnx.helper.make_node("Upsample", ["mid"], ["y"], name="second", mode="nearest", scales=[1.0, 1.0, 1.0, 2.0])
    )
    model.graph.output[0].type.tensor_type.shape.dim[3].dim_value = 28
    del model.graph.value_info[:]
    onnx.checker.check_model(model, full_check=True)
    result = make_dynamic_scale(model, nodes=["upsample"])
    assert [s.node for s in result.rewritten] == ["upsample"] and result.opset_after == 9
    second = next(n for n in result.model.graph.node if n.name == "second")
    assert len(second.input) == 2 and not second.attribute[1:]  # scales moved to a Constant input
    sites = {s.node_name: s for s in find_resize_sites(result.model)}
    assert sites["second"].scales == (1.0, 1.0, 1.0, 2.0) and sites["second"].scales_source is ValueSource.CONSTANT
    assert result.check.passed is True


def test_two_resizes_reading_one_constant_get_their_own_inputs() -> None:
    model = golden.resize_model(13, post_op=False, scales=(1.0, 1.0, 2.0, 2.0))
    model.graph.node[-1].output[0] = "first"
    model.graph.node.append(
        onnx.helper.make_node("Resize", ["first", "roi_empty", "scales_const"], ["y"], name="again", mode="nearest")
    )
    model.graph.output[0].type.tensor_type.shape.dim[2].dim_value = 32
    model.graph.output[0].type.tensor_type.shape.dim[3].dim_value = 32
    del model.graph.value_info[:]
    result = make_dynamic_scale(model)
    assert [i.name for i in result.new_inputs] == ["scales_0", "scales_1"]
    assert "scales_const" not in {i.name for i in result.model.graph.initializer}
    assert result.check.passed is True


def test_public_api_names() -> None:
    import graphsurgeon_tools as api

    assert api.make_dynamic_scale is make_dynamic_scale and api.load_model is load_model
    assert api.save_model is save_model and api.find_resize_sites is find_resize_sites
    assert api.DynamicScaleResult is DynamicScaleResult


def test_check_is_skipped_with_a_reason_when_the_original_cannot_run_on_the_chosen_shapes() -> None:
    # y = Resize(x) + b where b is a graph input of fixed size 16: symbolic H=W=32 cannot match
    model = golden.resize_model(13, shape=(1, 3, None, None), post_op=False, scales=(1.0, 1.0, 2.0, 2.0))
    model.graph.node[-1].output[0] = "r"
    model.graph.node.append(onnx.helper.make_node("Add", ["r", "b"], ["y"]))
    model.graph.input.append(onnx.helper.make_tensor_value_info("b", onnx.TensorProto.FLOAT, [1, 3, 16, 16]))
    del model.graph.value_info[:]
    result = make_dynamic_scale(model)
    assert result.check.passed is None and "does not run in ONNX Runtime" in result.check.skipped
    fixed = make_dynamic_scale(model, check_dims={"H": 8, "W": 8})
    assert fixed.check.passed is True and fixed.check.input_shapes["x"] == [1, 3, 8, 8]
