"""shape_source: sizes from the SHAPE of data, told apart from data and from big constant subgraphs."""

from __future__ import annotations

import onnx.parser

from graphsurgeon_tools.resize.shape_source import shape_flow_for_sources, shape_source

_SIZED = """
sized ({x}, {lateral}) => (float[?,4,?,?] y)
<int64[1] two = {{2}}, int64[1] four = {{4}}, int64[1] zero = {{0}}>
{{
    xs = Shape (x)
    nc = Slice (xs, zero, two)
    ls = Shape (lateral)
    hw = Slice (ls, two, four)
    sizes = Concat <axis = 0> (nc, hw)
    y = Resize <mode = "nearest"> (x, , , sizes)
}}
"""


def _model(x: str, lateral: str) -> onnx.ModelProto:
    return onnx.parser.parse_model('< ir_version: 8, opset_import: ["" : 13] >' + _SIZED.format(x=x, lateral=lateral))


def test_sizes_from_static_shapes_fold_and_say_simplify() -> None:
    model = _model("float[1,4,8,8] x", "float[1,4,16,16] lateral")
    source = shape_source(model, "sizes")
    assert source.foldable and source.value == (1, 4, 16, 16)
    assert [name for name, _ in source.shapes_of] == ["x", "lateral"]
    assert source.describe() == (
        "computed from the static shape of 'x' [1,4,8,8], 'lateral' [1,4,16,16]: the same "
        "[1,4,16,16] for every input; simplify=True folds it to a constant"
    )


def test_sizes_from_dynamic_dims_are_run_time() -> None:
    model = _model("float[N,4,8,8] x", "float[N,4,H,W] lateral")
    source = shape_source(model, "sizes", flow=shape_flow_for_sources(model))
    assert not source.foldable
    assert source.describe() == "computed at run time from the shape of 'x' [?,4,8,8], 'lateral' [?,4,?,?]"


def test_values_read_from_data_or_constants_are_not_shape_sources() -> None:
    model = onnx.parser.parse_model(
        '< ir_version: 8, opset_import: ["" : 13] >'
        + """
    fed (float[1,4,8,8] x, float[4] s) => (float[1,4,?,?] y)
    <float[4] k = {1.0, 1.0, 1.0, 1.0}>
    {
        scales = Mul (s, k)
        y = Resize <mode = "nearest"> (x, , scales)
    }
    """
    )
    assert shape_source(model, "scales") is None  # the VALUES of graph input s
    assert shape_source(model, "k") is None  # a constant


def test_inspect_says_where_run_time_sizes_come_from() -> None:
    from graphsurgeon_tools.inspection import inspect_model

    model = _model("float[1,4,8,8] x", "float[1,4,16,16] lateral")
    (site,) = inspect_model(model).to_dict()["sites"]
    assert site["sizes_source"] == "runtime"
    assert [n for n in site["notes"] if n.startswith("sizes:")] == [
        "sizes: computed from the static shape of 'x' [1,4,8,8], 'lateral' [1,4,16,16]: the same [1,4,16,16] "
        "for every input; simplify=True folds it to a constant"
    ]
