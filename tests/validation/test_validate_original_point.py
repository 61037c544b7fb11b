"""validate at the original point: a rewritten model records its new inputs' original values, and the
default sweep against onnx-reference runs it there ("original") besides the free factors of 2, 3, 4."""

from __future__ import annotations

import json

import golden
import numpy as np
import onnx

from graphsurgeon_tools import make_dynamic_scale, swap_plugin, validate
from graphsurgeon_tools.resize.original_values import ORIGINAL_VALUES_KEY


def _recorded(model: onnx.ModelProto) -> dict:
    (value,) = [p.value for p in model.metadata_props if p.key == ORIGINAL_VALUES_KEY]
    return json.loads(value)


def test_make_dynamic_scale_records_each_new_inputs_original_value() -> None:
    candidate = make_dynamic_scale(golden.fpn_model(13, symbolic=False)).model
    inputs = {i.name for i in candidate.graph.input}
    recorded = _recorded(candidate)
    assert set(recorded) <= inputs and sorted(map(tuple, recorded.values())) == [
        (1.0, 1.0, 2.0, 2.0),
        (1.0, 1.0, 4.0, 4.0),
        (1.0, 1.0, 8.0, 8.0),
    ]


def test_a_pinned_rewrite_is_compared_at_its_original_values_and_the_pinned_factors_skipped() -> None:
    # Every site's output meets a lateral map of its original size: no common factor is free.
    candidate = make_dynamic_scale(golden.fpn_model(13, symbolic=False)).model
    report = validate(candidate, "onnx-reference")
    data = report.to_dict()
    points = {p["factor"]: p for p in data["factors"]}
    assert list(points) == ["original", 2.0, 3.0, 4.0]
    original = points["original"]
    assert original["status"] == "passed", original
    assert sorted(map(tuple, original["scale_feeds"].values())) == [
        (1.0, 1.0, 2.0, 2.0),
        (1.0, 1.0, 4.0, 4.0),
        (1.0, 1.0, 8.0, 8.0),
    ]
    assert any(o["kind"] == "output" and not o.get("vacuous") for o in original["outputs"])
    for factor in (2.0, 3.0, 4.0):
        assert points[factor]["status"] == "skipped" and points[factor]["reason"].startswith(f"not free at x{factor:g}")
    assert report.passed, data["summary"]


def test_given_factors_or_a_model_without_a_record_have_no_original_point() -> None:
    candidate = make_dynamic_scale(golden.resize_model(13)).model
    given = validate(candidate, "onnx-reference", factors=[2]).to_dict()
    assert [p["factor"] for p in given["factors"]] == [2.0]
    del candidate.metadata_props[:]
    plain = validate(candidate, "onnx-reference").to_dict()
    assert [p["factor"] for p in plain["factors"]] == [2.0, 3.0, 4.0]


def test_swap_plugin_records_a_size_tensor_input_by_its_shape() -> None:
    model = golden.resize_model(13)
    swapped = swap_plugin(model, signature="size-tensor", size_input="size").model
    recorded = _recorded(swapped)
    assert "size" in recorded and isinstance(recorded["size"], dict)
    data = validate(swapped, "onnx-reference").to_dict()
    original = data["factors"][0]
    assert original["factor"] == "original" and original["status"] == "passed", original
    assert np.asarray(recorded["size"]["shape"]).ndim == 1
