"""validate on a candidate whose rewritten sites live in If/Loop bodies: the scale inputs the
bodies read from the outer scope are scale inputs (not random data), fed the reference's
per-node baked scales."""

from __future__ import annotations

import pytest
from hostile import models, nested

from graphsurgeon_tools import make_dynamic_scale
from graphsurgeon_tools.validation import validate
from graphsurgeon_tools.validation.ports import model_ports


@pytest.mark.parametrize("builder", [nested.if_model, nested.loop_model, nested.nested_if_in_loop_model])
def test_a_nested_rewrite_validates_against_its_original(builder, tmp_path) -> None:
    original = models.write(builder(), tmp_path / "original.onnx")
    rewritten = make_dynamic_scale(builder())
    candidate = models.write(rewritten.model, tmp_path / "dynamic.onnx")
    ports = model_ports(rewritten.model)
    assert {s.name for s in ports.scale_inputs} == {i.name for i in rewritten.new_inputs}
    assert "cond" not in {s.name for s in ports.scale_inputs}
    assert model_ports(builder()).resize_nodes == len(rewritten.rewritten)  # the original's bodies count
    report = validate(candidate, original)
    assert report.passed and [f.status for f in report.factors] == ["passed"]
