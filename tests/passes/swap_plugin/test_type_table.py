"""swap-plugin's type table answers the same with the index of the inference that its sites read too
(``value_infos``) as with its own: the same dict, value_info -> inputs -> outputs, a name's last entry
winning, duplicates and non-tensor entries included."""

from __future__ import annotations

import onnx
from hostile import nested
from onnx import TensorProto, helper

from graphsurgeon_tools.core.checker import inferred_copy
from graphsurgeon_tools.passes.swap_plugin.edit import TypeTable
from graphsurgeon_tools.resize.site_inputs import inferred_value_infos


def _info(name: str, elem: int, dims: list) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, dims)


def _declarations() -> onnx.ModelProto:
    """An 'inferred' model whose names repeat across and within value_info, inputs and outputs."""
    model = onnx.ModelProto()
    graph = model.graph
    graph.value_info.extend([_info("a", TensorProto.FLOAT, [1]), _info("b", TensorProto.FLOAT, [2])])
    graph.value_info.extend([_info("a", TensorProto.INT64, [3]), _info("c", TensorProto.FLOAT, [4])])
    sequence = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [1]))
    graph.value_info.append(helper.make_value_info("s", sequence))
    graph.input.extend([_info("b", TensorProto.INT32, [5]), _info("x", TensorProto.FLOAT, [6])])
    graph.output.extend([_info("c", TensorProto.INT8, [7]), _info("s", TensorProto.FLOAT, [8])])
    return model


def _old_declared(inferred: onnx.ModelProto) -> dict:
    graph = inferred.graph
    return {v.name: v for field in (graph.value_info, graph.input, graph.output) for v in field}


def test_the_shared_index_gives_the_table_it_built_itself() -> None:
    models = [_declarations()] + [inferred_copy(build()) for build in (nested.if_model, nested.loop_model)]
    for inferred in models:
        model = onnx.ModelProto()
        own, shared = TypeTable(model, inferred), TypeTable(model, inferred, inferred_value_infos(inferred))
        old = _old_declared(inferred)
        for table in (own, shared):
            assert list(table._declared.items()) == list(old.items())  # the same entries, in the same order
        for name in list(old) + ["absent"]:
            assert own.get(name) == shared.get(name)
    table = TypeTable(onnx.ModelProto(), _declarations())
    assert table.get("a").tensor_type.elem_type == TensorProto.INT64  # value_info: the last entry
    assert table.get("b").tensor_type.elem_type == TensorProto.INT32  # an input over a value_info
    assert table.get("c").tensor_type.elem_type == TensorProto.INT8  # an output over both
    assert table.get("s").tensor_type.shape.dim[0].dim_value == 8  # the output's (a tensor), not the sequence's
