"""lint's TensorRT fix works on the model it names, on 1-D, 2-D and 3-D sites (passes.make_dynamic_scale.relayout).

A model make-dynamic-scale wrote with ``layout="scales"`` (float32 scales input, its original value
recorded) fails ``lint --target tensorrt`` (a float shape input); lint names
``make_dynamic_scale(model, layout="sizes")`` (or factor). Applied to THAT model, the float input is
replaced by the integer one, the built-in check passes against the scales model fed its recorded
value, and lint passes, on 1-D, 2-D and 3-D sites. A float scales input with no recorded value (not
written by this tool) stays as it is: nothing says what factor it stood for.
"""

from __future__ import annotations

import golden
import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest

from graphsurgeon_tools.lint import lint_model
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale

SHAPES = golden.SPATIAL_SHAPES


def _run(model: onnx.ModelProto, feeds: dict) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


@pytest.mark.parametrize("spatial", [1, 2, 3])
@pytest.mark.parametrize("layout", ["sizes", "factor"])
def test_lints_fix_applies_to_the_float_scales_model_it_names(spatial: int, layout: str) -> None:
    scales_model = make_dynamic_scale(golden.spatial_resize_model(spatial), layout="scales").model
    finding = next(
        f for f in lint_model(scales_model, "tensorrt").to_dict()["findings"] if f["rule"] == "trt-shape-input-integer"
    )
    assert finding["fix"]["call"] == "make_dynamic_scale" and finding["fix"]["keywords"] == {"layout": "sizes"}
    result = make_dynamic_scale(scales_model, layout=layout)  # the fix (or its factor alternative), on that model
    assert result.check.passed is True and all(o.max_abs_diff == 0.0 for o in result.check.outputs)
    assert len(result.rewritten) == 1
    assert [i.name for i in result.model.graph.input] == ["X", layout]  # the float input is gone
    assert not lint_model(result.model, "tensorrt").failed
    x = np.random.default_rng(spatial).standard_normal(SHAPES[spatial]).astype(np.float32)
    feed = [2] * spatial if layout == "factor" else [2 * d for d in SHAPES[spatial][2:]]
    assert result.new_inputs[0].value == feed
    np.testing.assert_array_equal(
        _run(result.model, {"X": x, layout: np.array(feed, dtype=np.int64)}),
        _run(golden.spatial_resize_model(spatial), {"X": x}),
    )


def test_a_float_scales_input_with_no_recorded_value_stays() -> None:
    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,5,7] X, float[4] s) => (float[?,?,?,?] Y) { Y = Resize <mode="linear"> (X, , s) }""")
    result = make_dynamic_scale(model, layout="sizes")
    assert not result.changed and [s.code for s in result.skipped] == ["already-dynamic"]
