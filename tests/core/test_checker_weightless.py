"""core.checker's "big initializer" question: ``has_big_initializer`` (the scan every check, shape
inference and name search asks) gives :func:`is_big`'s answer for every initializer it skips, and
``weightless_bytes`` leaves out exactly what ``weightless_copy`` does. No data is allocated: big
tensors are declared by their dims (the scan reads no data), or stored externally."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from graphsurgeon_tools.core import checker

THRESHOLD = checker.WEIGHTLESS_THRESHOLD


def _tensor(name: str, elem: int, dims: list[int], external: bool = False) -> TensorProto:
    """A tensor with dims and a type but no data: the scan must size it by its dims alone."""
    tensor = TensorProto(name=name, data_type=elem, dims=dims)
    if external:
        tensor.data_location = TensorProto.EXTERNAL
        tensor.external_data.add(key="location", value="weights.bin")
    return tensor


def _graph(*tensors: TensorProto) -> onnx.GraphProto:
    return helper.make_graph([], "g", [], [], list(tensors))


# Each element type at the threshold's edge: one element short of it (small) and exactly at it (big).
EDGES = [
    (elem, count)
    for elem in (TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.COMPLEX128)
    for size in [checker.itemsize(elem)]
    for count in (THRESHOLD // size - 1, THRESHOLD // size)
]


@pytest.mark.parametrize("elem, count", EDGES)
def test_an_initializer_at_the_edge_is_big_exactly_when_is_big_says_so(elem: int, count: int) -> None:
    small = _tensor("s", TensorProto.FLOAT, [4])
    edge = _tensor("e", elem, [count])
    assert checker.has_big_initializer(_graph(small, edge)) == checker.is_big(edge)
    assert checker.is_big(edge) == (count * checker.itemsize(elem) >= THRESHOLD)


def test_complex128_is_the_widest_element_the_scan_allows_for() -> None:
    # 16 bytes an element: a tensor of THRESHOLD / 16 elements is big, one of THRESHOLD / 8 - 1 floats64 is not
    assert checker.has_big_initializer(_graph(_tensor("c", TensorProto.COMPLEX128, [THRESHOLD // 16])))
    assert not checker.has_big_initializer(_graph(_tensor("d", TensorProto.DOUBLE, [THRESHOLD // 8 - 1])))


@pytest.mark.parametrize(
    "tensor, big",
    [
        (_tensor("x", TensorProto.FLOAT, [1], external=True), True),  # external: big whatever its size
        (_tensor("n", TensorProto.FLOAT, [-1, -THRESHOLD]), True),  # two negative dims: a big product
        (_tensor("m", TensorProto.FLOAT, [-1, THRESHOLD]), False),  # a negative product: nothing
        (_tensor("k", TensorProto.FLOAT, [-1]), False),  # -4 bytes: "big" only for a threshold of -4 or less
        (_tensor("u", 99, [THRESHOLD // 8]), True),  # a type number onnx lacks: 8 bytes an element
        (_tensor("z", TensorProto.FLOAT, [0, THRESHOLD]), False),
        (_tensor("scalar", TensorProto.INT64, []), False),
    ],
    ids=["external", "negative-dims", "negative-product", "minus-one", "unknown-type", "empty", "scalar"],
)
def test_odd_initializers_get_is_bigs_answer(tensor: TensorProto, big: bool) -> None:
    assert checker.is_big(tensor) == big
    assert checker.has_big_initializer(_graph(_tensor("s", TensorProto.FLOAT, [4]), tensor)) == big
    for threshold in (0, -5, 1, 64):  # any size, the same answer as asking is_big of each
        assert checker.has_big_initializer(_graph(tensor), threshold) == checker.is_big(tensor, threshold)


def test_weightless_bytes_are_the_model_itself_or_its_weightless_copy() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [THRESHOLD // 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [THRESHOLD // 4])
    node = helper.make_node("Add", ["x", "w"], ["y"])
    small = helper.make_model(helper.make_graph([node], "g", [x], [y], [_tensor("w", TensorProto.FLOAT, [1])]))
    assert checker.weightless_bytes(small) == small.SerializeToString()
    big = helper.make_model(helper.make_graph([node], "g", [x], [y], [_tensor("w", TensorProto.FLOAT, [THRESHOLD])]))
    copy = checker.weightless_copy(big)
    assert checker.weightless_bytes(big) == copy.SerializeToString()
    assert [i.name for i in copy.graph.input] == ["x", "w"] and not len(copy.graph.initializer)


def _typed(elem: int, dims: list[int], field: str, values: list) -> TensorProto:
    tensor = TensorProto(name="t", data_type=elem, dims=dims)
    getattr(tensor, field).extend(values)
    return tensor


@pytest.mark.parametrize(
    "tensor, problem",
    [
        (_typed(TensorProto.FLOAT, [2, 2], "float_data", [1.0] * 4), None),
        (_typed(TensorProto.FLOAT, [2, 2], "float_data", [1.0] * 3), "holds 3 values but its shape [2, 2] needs 4"),
        (_typed(TensorProto.COMPLEX64, [3], "float_data", [1.0] * 6), None),  # two floats an element
        (_typed(TensorProto.COMPLEX128, [3], "double_data", [1.0] * 3), "holds 3 values but its shape [3] needs 6"),
        (_typed(TensorProto.INT4, [3], "int32_data", [1, 2]), None),  # two elements a value
        (_typed(TensorProto.UINT4, [3], "int32_data", [1, 2, 3]), "holds 3 values but its shape [3] needs 2"),
        (_typed(TensorProto.UINT32, [2], "uint64_data", [1, 2]), None),
        (_typed(TensorProto.INT8, [2], "int32_data", [1]), "holds 1 values but its shape [2] needs 2"),
        (TensorProto(name="t", data_type=TensorProto.FLOAT, dims=[2], raw_data=b"\0" * 8), None),
        (TensorProto(name="t", data_type=TensorProto.FLOAT, dims=[2], raw_data=b"\0" * 6), "holds 6 bytes"),
        (_tensor("t", TensorProto.FLOAT, [THRESHOLD], external=True), None),  # io's business
    ],
)
def test_check_tensor_data_counts_what_each_type_stores(tensor: TensorProto, problem) -> None:
    """The structural check's look at every inline initializer (the ONNX checker lets a short one through)."""
    said = checker.check_tensor_data(tensor)
    assert said == problem if problem is None else problem in said
