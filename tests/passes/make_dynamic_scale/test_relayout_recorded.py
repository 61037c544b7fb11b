"""make_dynamic_scale on its own float output, asked for an integer layout (passes.make_dynamic_scale.relayout).

The float ``scales`` input it wrote (recorded in ``onnxtool.original_values``) is put back as its
recorded value and rewritten in the layout asked for: what lint suggests for a model TensorRT
refuses works on that very model. A float input the user wrote (no record) is left alone.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest

from graphsurgeon_tools.errors import RefusedRequestError
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale

TWO_SITES = """
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,8,8] X) => (float[?,?,?,?] Y, float[?,?,?,?] Z) <float[4] s = {1.0, 1.0, 2.0, 2.0}> {
  Y = Resize <mode="linear", coordinate_transformation_mode="half_pixel"> (X, , s)
  Z = Resize <mode="nearest"> (X, , s)
}"""


def _model(scales: str = "1.0, 1.0, 2.0, 2.0") -> onnx.ModelProto:
    return onnx.parser.parse_model(f"""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,8,8] X) => (float[?,?,?,?] Y) <float[4] s = {{{scales}}}> {{
  Y = Resize <mode="linear", coordinate_transformation_mode="half_pixel"> (X, , s)
}}""")


def _record(model: onnx.ModelProto) -> dict:
    return next((json.loads(p.value) for p in model.metadata_props if p.key == "onnxtool.original_values"), {})


def _run(model: onnx.ModelProto, feeds: dict) -> list:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def test_the_float_scales_input_it_wrote_becomes_the_integer_layout_and_computes_the_same():
    original = _model()
    dynamic = make_dynamic_scale(original, check=False).model
    before = dynamic.SerializeToString()
    result = make_dynamic_scale(dynamic, layout="sizes")
    assert dynamic.SerializeToString() == before  # the caller's proto is untouched
    assert result.changed and result.check is not None and result.check.passed
    inputs = {i.name: i.type.tensor_type.elem_type for i in result.model.graph.input}
    assert inputs == {"X": onnx.TensorProto.FLOAT, "sizes": onnx.TensorProto.INT64}
    assert "scales" not in _record(result.model)
    assert any("put back" in note for note in result.notes)
    x = np.random.default_rng(0).random((1, 3, 8, 8), dtype=np.float32)
    (want,) = _run(original, {"X": x})
    (got,) = _run(result.model, {"X": x, "sizes": np.array([16, 16], np.int64)})
    assert want.std() > 0 and np.array_equal(want, got)
    again = make_dynamic_scale(result.model, layout="sizes", check=False)
    assert not again.changed  # idempotent: the integer layout is not put back


def test_the_factor_form_becomes_the_factor_layout():
    dynamic = make_dynamic_scale(_model(), factor=True, check=False).model
    result = make_dynamic_scale(dynamic, layout="factor")
    assert result.changed and result.check.passed
    (new,) = result.new_inputs
    assert (new.name, new.dtype, list(new.value)) == ("factor", "int64", [2, 2])


def test_a_float_input_of_the_users_own_is_left_alone():
    own = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,8,8] X, float[4] s) => (float[?,?,?,?] Y) { Y = Resize <mode="nearest"> (X, , s) }""")
    result = make_dynamic_scale(own, layout="sizes", check=False)
    assert not result.changed and [i.name for i in result.model.graph.input] == ["X", "s"]


def test_an_input_shared_with_a_site_outside_the_selection_stays():
    dynamic = make_dynamic_scale(onnx.parser.parse_model(TWO_SITES), shared=True, check=False).model
    assert [i.name for i in dynamic.graph.input] == ["X", "scales"]
    result = make_dynamic_scale(dynamic, layout="sizes", nodes=["Y"], check=False)
    assert not result.changed and "scales" in [i.name for i in result.model.graph.input]
    both = make_dynamic_scale(dynamic, layout="sizes", check=False)
    assert both.changed and "scales" not in [i.name for i in both.model.graph.input]


def test_a_layout_that_fits_no_site_is_a_refused_request_and_the_model_is_untouched():
    dynamic = make_dynamic_scale(_model("1.0, 1.0, 1.5, 1.5"), check=False).model
    before = dynamic.SerializeToString()
    with pytest.raises(RefusedRequestError, match="factor"):  # 1.5 is no whole factor
        make_dynamic_scale(dynamic, layout="factor", check=False)
    assert dynamic.SerializeToString() == before
