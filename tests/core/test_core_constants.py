"""core.constants: the one tracer is iterative and bounded by nodes and bytes, checked before folding."""

from __future__ import annotations

import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.core.constants import DEFAULT_FOLD_BYTES, ConstantTracer, ValueSource, trace_value


def _model(nodes, inits=(), inputs=(), opset=13) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes), "g", list(inputs), [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], list(inits)
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_an_identity_chain_longer_than_the_recursion_limit_is_traced() -> None:
    length = 5_000
    nodes = [helper.make_node("Identity", ["s" if i == 0 else f"i{i}"], [f"i{i + 1}"]) for i in range(length)]
    nodes.append(helper.make_node("Identity", [f"i{length}"], ["out"]))
    model = _model(nodes, [numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "s")])
    trace = trace_value(model, "out")
    assert trace.source is ValueSource.IDENTITY
    assert trace.value.tolist() == [1.0, 2.0] and len(trace.nodes) == length + 1


def test_a_small_constant_subgraph_folds() -> None:
    nodes = [helper.make_node("Mul", ["a", "b"], ["out"])]
    inits = [
        numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "a"),
        numpy_helper.from_array(np.array([3.0, 3.0], np.float32), "b"),
    ]
    trace = trace_value(_model(nodes, inits), "out")
    assert trace.source is ValueSource.FOLDED and trace.value.tolist() == [3.0, 6.0]


def test_a_subgraph_over_the_node_bound_is_not_folded() -> None:
    nodes = [helper.make_node("Neg", ["a" if i == 0 else f"n{i}"], [f"n{i + 1}"]) for i in range(10)]
    nodes.append(helper.make_node("Neg", ["n10"], ["out"]))
    model = _model(nodes, [numpy_helper.from_array(np.array([1.0], np.float32), "a")])
    trace = ConstantTracer(model, max_nodes=5).trace("out")
    assert trace.source is ValueSource.RUNTIME and "over 5 nodes" in trace.reason
    assert ConstantTracer(model).trace("out").source is ValueSource.FOLDED  # 11 nodes fit the default 64


def test_a_subgraph_reading_more_than_the_byte_bound_is_not_folded() -> None:
    nodes = [helper.make_node("ReduceSum", ["big"], ["out"], keepdims=0)]
    model = _model(nodes, [numpy_helper.from_array(np.ones(1024, np.float32), "big")])
    trace = ConstantTracer(model, max_bytes=1000).trace("out")
    assert trace.source is ValueSource.RUNTIME and "reads over 1000 bytes" in trace.reason
    assert ConstantTracer(model, max_bytes=4096).trace("out").value == 1024.0


def test_an_expanding_op_is_sized_before_it_runs() -> None:
    # ConstantOfShape([1e6, 1e6]) would ask for 4 TB: refused before the evaluator allocates anything
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["big"]),
        helper.make_node("ReduceSum", ["big"], ["out"], keepdims=0),
    ]
    model = _model(nodes, [numpy_helper.from_array(np.array([10**6, 10**6], np.int64), "shape")])
    start = time.perf_counter()
    trace = ConstantTracer(model, max_bytes=1 << 20).trace("out")
    assert time.perf_counter() - start < 5
    assert trace.source is ValueSource.RUNTIME and "would make" in trace.reason


def test_an_expanding_op_within_the_bound_folds() -> None:
    nodes = [
        helper.make_node(
            "ConstantOfShape", ["shape"], ["ones"], value=numpy_helper.from_array(np.array([1.0], np.float32))
        ),
        helper.make_node("ReduceSum", ["ones"], ["out"], keepdims=0),
    ]
    model = _model(nodes, [numpy_helper.from_array(np.array([2, 3], np.int64), "shape")])
    trace = ConstantTracer(model, max_bytes=1 << 20).trace("out")
    assert trace.source is ValueSource.FOLDED and float(trace.value) == 6.0


def test_the_default_byte_bound_and_no_bound() -> None:
    model = _model([helper.make_node("Neg", ["a"], ["out"])], [numpy_helper.from_array(np.ones(1024, np.float32), "a")])
    assert ConstantTracer(model).max_bytes == DEFAULT_FOLD_BYTES
    assert ConstantTracer(model, max_bytes=0).max_bytes is None
    assert ConstantTracer(model, max_bytes=0).trace("out").source is ValueSource.FOLDED


def test_runtime_and_graph_input_sources() -> None:
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["out"], to=1)]
    model = _model(nodes, inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])])
    tracer = ConstantTracer(model)
    assert tracer.trace("out").source is ValueSource.RUNTIME
    assert tracer.trace("x").source is ValueSource.GRAPH_INPUT
    assert tracer.trace("").source is ValueSource.ABSENT


def test_an_outer_product_of_small_vectors_is_sized_before_it_runs() -> None:
    # two 4 KiB vectors broadcast to 1M x 1M: refused from shapes alone
    nodes = [
        helper.make_node("Unsqueeze", ["a", "one"], ["col"]),
        helper.make_node("Mul", ["col", "a"], ["big"]),
        helper.make_node("ReduceSum", ["big"], ["out"], keepdims=0),
    ]
    inits = [
        numpy_helper.from_array(np.ones(10**6, np.float32), "a"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
    ]
    start = time.perf_counter()
    trace = ConstantTracer(_model(nodes, inits), max_bytes=8 << 20).trace("out")
    assert time.perf_counter() - start < 5
    assert trace.source is ValueSource.RUNTIME and "would make" in trace.reason


def test_without_static_shapes_each_node_is_sized_from_its_inputs() -> None:
    # Range up to a float limit computed by Add: shape inference leaves the length unknown, the
    # stepwise path sizes the broadcasting Mul from the values it has computed
    nodes = [
        helper.make_node("Add", ["half", "half"], ["n"]),  # float: shape inference does not propagate it
        helper.make_node("Range", ["zero", "n", "step"], ["rf"]),
        helper.make_node("Unsqueeze", ["rf", "one"], ["col"]),
        helper.make_node("Mul", ["col", "rf"], ["big"]),
        helper.make_node("ReduceSum", ["big"], ["out"], keepdims=0),
    ]
    inits = [
        numpy_helper.from_array(np.array(v, np.float32), k) for k, v in (("zero", 0.0), ("half", 2500.0), ("step", 1.0))
    ] + [numpy_helper.from_array(np.array([1], np.int64), "one")]
    trace = ConstantTracer(_model(nodes, inits), max_bytes=1 << 20).trace("out")
    assert trace.source is ValueSource.RUNTIME and "Mul would make over" in trace.reason
    small = ConstantTracer(_model(nodes, inits), max_bytes=1 << 30).trace("out")
    assert small.source is ValueSource.FOLDED
    assert abs(float(small.value) / float(sum(range(5000))) ** 2 - 1) < 1e-3


def test_tensor_to_array_reads_plain_types_as_onnx_does() -> None:
    """The quick path for float32/64 and int32/64 gives onnx.numpy_helper.to_array's array: same
    dtype, shape, values and writability, from raw bytes and from the typed fields; a short one
    is still refused."""
    import pytest

    from graphsurgeon_tools.core.constants import tensor_to_array
    from graphsurgeon_tools.errors import InvalidModelError

    cases = []
    for dtype, numpy_type in (
        (TensorProto.FLOAT, np.float32),
        (TensorProto.DOUBLE, np.float64),
        (TensorProto.INT64, np.int64),
        (TensorProto.INT32, np.int32),
    ):
        for shape in ([], [0], [4], [2, 3]):
            array = (np.arange(int(np.prod(shape))) * 1.5 - 2).astype(numpy_type).reshape(shape)
            cases.append(numpy_helper.from_array(array, "raw"))
            cases.append(helper.make_tensor("typed", dtype, shape, array.reshape(-1).tolist()))
    for tensor in cases:
        ours, theirs = tensor_to_array(tensor), numpy_helper.to_array(tensor)
        assert (ours.dtype, ours.shape, ours.flags.writeable) == (theirs.dtype, theirs.shape, theirs.flags.writeable)
        assert np.array_equal(ours, theirs) and ours.tolist() == theirs.tolist()
    short = TensorProto(name="short", data_type=TensorProto.FLOAT, dims=[4], float_data=[1.0, 2.0])
    with pytest.raises(InvalidModelError, match="short"):
        tensor_to_array(short)
