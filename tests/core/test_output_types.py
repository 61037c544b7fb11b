"""core.output_types' one shared inference: where ``checked_output_types`` hands back a StrictInference,
the output types are the lenient inference's and ``check_model_full(inference=...)`` gives the full
checker's verdict, in its words; where that is not provable, no StrictInference (two calls, as before).
Real onnx calls throughout: each verdict is compared with ``onnx.checker.check_model(full_check=True)``."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.core import checker, output_types
from graphsurgeon_tools.errors import PostconditionError, PreconditionError
from graphsurgeon_tools.passes.model_check import ModelCheck

_RNG = np.random.default_rng(7)
Dims = Optional[Sequence[Any]]


def _weight(name: str, shape: Sequence[int]) -> TensorProto:
    return numpy_helper.from_array((_RNG.standard_normal(shape) * 0.1).astype(np.float32), name)


def _net(y: Dims = ("N", 4, "h", "w"), z: Dims = ("N", 4, None, None), opset: int = 13) -> onnx.ModelProto:
    """A rewritten model as make-dynamic-scale leaves it: a Resize reading its scales from a graph
    input, convolutions around it (dims inference knows: the channels), two graph outputs."""
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Resize", ["r1", "", "scales"], ["up"], mode="nearest"),
        helper.make_node("Conv", ["up", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c2"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Sigmoid", ["c2"], ["z"]),
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "net",
        [value("x", TensorProto.FLOAT, ["N", 3, 16, 16]), value("scales", TensorProto.FLOAT, [4])],
        [value("y", TensorProto.FLOAT, y), value("z", TensorProto.FLOAT, z)],
        [_weight("w1", (8, 3, 3, 3)), _weight("w2", (4, 8, 3, 3))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _verdict(check: Callable[[], None]) -> Optional[tuple[type, str]]:
    try:
        check()
    except Exception as exc:  # noqa: BLE001 - the verdict is the exception, whatever it is
        return type(exc), str(exc)
    return None


def _full(model: onnx.ModelProto) -> Optional[tuple[type, str]]:
    return _verdict(lambda: onnx.checker.check_model(model.SerializeToString(), full_check=True))


def _types(types: dict[str, onnx.TypeProto]) -> dict[str, bytes]:
    return {name: t.SerializeToString() for name, t in types.items()}


@pytest.mark.parametrize(
    "y",
    [
        ("N", 4, "h", "w"),  # agrees
        (1, 4, 8, 8),  # values where inference knows none: allowed
        (1, 5, 8, 8),  # the channel inference knows is 4: rejected
        (1, 4, 8),  # another rank: rejected
        None,  # no shape declared
    ],
)
def test_the_shared_verdict_is_the_full_checkers_in_its_words(y: Dims) -> None:
    model = _net(y=y)
    types, inference = output_types.checked_output_types(model)
    assert inference is not None  # the shared path: no op here makes it unprovable
    assert _types(types) == _types(output_types.inferred_output_types(model))
    expected = _full(model)
    assert _verdict(lambda: checker.check_model_full(model, inference=inference)) == expected
    if y is not None and y[1] == 5:
        assert expected is not None and "differ in dimension 1" in expected[1]
    if y is not None and len(y) == 3:
        assert expected is not None and "differ in rank" in expected[1]


def test_the_shared_types_are_the_lenient_ones_where_the_type_check_adds_a_type() -> None:
    """Relu-1 (opset 5) has no inference function: the strict run's type check gives its output an
    element type the lenient run never has. The shared run still stands for the check, but its
    types are not taken: the lenient run gives them, as before."""
    assert not onnx.defs.get_schema("Relu", 5).has_type_and_shape_inference_function
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Upsample", ["r", "scales"], ["y"])]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "old",
        [value("x", TensorProto.FLOAT, [1, 3, 8, 8]), value("scales", TensorProto.FLOAT, [4])],
        [value("y", TensorProto.FLOAT, [1, 3, 16, 16])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    types, inference = output_types.checked_output_types(model)
    assert _types(types) == _types(output_types.inferred_output_types(model))
    assert _verdict(lambda: checker.check_model_full(model, inference=inference)) == _full(model)


def test_an_output_another_node_reads_is_never_shared() -> None:
    """Its declared dims reach the reader in the full check (here a MatMul whose inner dims then
    differ) but not in an inference with the output shapes cleared, which passes: not the same check."""
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["o"], mode="nearest"),
        helper.make_node("MatMul", ["o", "w"], ["m"]),
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "read",
        [value("x", TensorProto.FLOAT, [1, 3, 8, 8]), value("scales", TensorProto.FLOAT, [4])],
        [value("o", TensorProto.FLOAT, [1, 3, 4, 4]), value("m", TensorProto.FLOAT, ["a", "b", "c", "d"])],
        [_weight("w", (5, 2))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    cleared = output_types._inference_bytes(model)
    checker.shape_inference(cleared, strict=True, check_type=True, data_prop=False)  # passes: the trap
    expected = _full(model)
    assert expected is not None and "Incompatible dimensions for matrix multiplication" in expected[1]
    types, inference = output_types.checked_output_types(model)
    assert inference is None
    assert _types(types) == _types(output_types.inferred_output_types(model))
    assert _verdict(lambda: checker.check_model_full(model, inference=inference)) == expected


def test_a_model_inference_rejects_gives_no_shared_check_and_the_lenient_types() -> None:
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["t"]),  # inner dims 8 and 5
        helper.make_node("Resize", ["t", "", "scales"], ["y"], mode="nearest"),
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "bad",
        [value("x", TensorProto.FLOAT, [1, 3, 8, 8]), value("scales", TensorProto.FLOAT, [4])],
        [value("y", TensorProto.FLOAT, [1, 3, 16, 16])],
        [_weight("w", (5, 8))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    types, inference = output_types.checked_output_types(model)
    assert inference is None
    assert _types(types) == _types(output_types.inferred_output_types(model))
    expected = _full(model)
    assert expected is not None and expected[0] is onnx.shape_inference.InferenceError
    assert _verdict(lambda: checker.check_model_full(model)) == expected


@pytest.mark.parametrize(
    "change",
    ["shape-op", "value-info-undefined", "function", "output-is-initializer"],
)
def test_what_the_proof_cannot_cover_is_not_shared(change: str) -> None:
    model = _net()
    graph = model.graph
    if change == "shape-op":  # data propagation (on in the lenient run) would see it
        graph.node.append(helper.make_node("Shape", ["c2"], ["s"]))
        graph.output.append(helper.make_tensor_value_info("s", TensorProto.INT64, [4]))
    elif change == "value-info-undefined":  # a type the type check could complete undetected
        graph.value_info.append(helper.make_tensor_value_info("c2", TensorProto.UNDEFINED, ["N", 4, None, None]))
    elif change == "function":
        model.functions.append(helper.make_function("local", "f", ["a"], ["b"], [], []))
    else:
        graph.initializer.append(_weight("z", (1,)))
    types, inference = output_types.checked_output_types(model)
    assert inference is None
    assert _types(types) == _types(output_types.inferred_output_types(model))


def test_a_model_changed_after_the_shared_inference_gets_the_whole_full_check() -> None:
    model = _net()
    _, inference = output_types.checked_output_types(model)
    assert inference is not None and inference.stands_for(model)
    model.graph.initializer[1].CopyFrom(_weight("w2", (4, 8, 3)))  # a 1-D kernel for a 2-D Conv
    assert not inference.stands_for(model)
    expected = _full(model)
    assert expected is not None and expected[0] is onnx.shape_inference.InferenceError
    assert _verdict(lambda: checker.check_model_full(model, inference=inference)) == expected


def test_metadata_and_output_shapes_are_all_the_shared_inference_allows_to_differ() -> None:
    model = _net()
    _, inference = output_types.checked_output_types(model)
    assert inference is not None
    model.metadata_props.add(key="k", value="v")  # the contract records declared inputs there
    model.graph.output[0].type.tensor_type.shape.dim[1].dim_value = 4
    assert inference.stands_for(model)
    assert [(p.key, p.value) for p in model.metadata_props] == [("k", "v")]  # back as it was
    model.graph.output[0].name = "renamed"
    assert not inference.stands_for(model)


def test_the_contract_refuses_a_written_model_the_full_check_rejects_even_with_a_shared_inference() -> None:
    """A written model whose declared output disagrees with inference: its StrictInference (inferred
    with the output shapes cleared) passed, the full check does not; the contract says so, as before."""
    given = _net()
    written = _net(y=(1, 5, 8, 8))
    _, inference = output_types.checked_output_types(written)
    assert inference is not None
    contract = ModelCheck(given, label="m.onnx")
    with pytest.raises(PostconditionError, match="differ in dimension 1") as shared:
        contract.ensures(written, "a pass", inference)
    with pytest.raises(PostconditionError) as unshared:
        ModelCheck(given, label="m.onnx").ensures(written, "a pass")
    assert str(shared.value) == str(unshared.value)
    bad = _net(y=(1, 5, 8, 8))  # the input already fails: the user's fault, whatever we did
    with pytest.raises(PreconditionError, match="m.onnx fails the ONNX checker: .*differ in dimension 1"):
        ModelCheck(bad, label="m.onnx").ensures(written, "a pass", inference)


def test_the_op_types_kept_off_the_shared_path_are_what_onnx_defines() -> None:
    """UNSHARED_OP_TYPES is written out (building it from every schema costs more than it saves per
    run): with a newer onnx, this says what to add."""
    graph_kinds = (onnx.defs.OpSchema.AttrType.GRAPH, onnx.defs.OpSchema.AttrType.GRAPHS)
    wanted = {
        schema.name
        for schema in onnx.defs.get_all_schemas_with_history()
        if schema.has_data_propagation_function
        or (schema.has_function and not schema.has_type_and_shape_inference_function)
        or any(attribute.type in graph_kinds for attribute in schema.attributes.values())
    }
    assert wanted <= output_types.UNSHARED_OP_TYPES


@pytest.mark.parametrize("y", [("N", 4, "h", "w"), (1, 5, 8, 8), (1, 4, 8)])
def test_the_inference_half_alone_is_the_full_checks_verdict_on_structurally_checked_bytes(y: Dims) -> None:
    """ModelCheck.unchanged: the snapshot passed the structural checker at construction, so only the
    full check's inference runs on it again, giving what check_model(full_check=True) gives."""
    data = _net(y=y).SerializeToString()
    onnx.checker.check_model(data)
    expected = _verdict(lambda: onnx.checker.check_model(data, full_check=True))
    assert _verdict(lambda: checker.check_model_inference(data)) == expected
    assert (expected is None) == (y[1] == 4 and len(y) == 4)
