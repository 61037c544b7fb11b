"""swap-plugin's type table answers the same with the index of the inference that its sites read too
(``value_infos``) as with its own: the same dict, value_info -> inputs -> outputs, a name's last entry
winning, duplicates and non-tensor entries included; the index answers as the whole dict whatever is
asked first."""

from __future__ import annotations

import onnx
import pytest
from hostile import nested
from onnx import TensorProto, helper

from graphsurgeon_tools.core.checker import inferred_copy
from graphsurgeon_tools.passes.swap_plugin.edit import TypeTable
from graphsurgeon_tools.resize.site_inputs import ValueInfoIndex


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
        old = _old_declared(inferred)
        names = list(old) + ["absent"]
        shared = ValueInfoIndex(inferred.graph)
        shared.cover(set(names[:2]))  # the sites' names first, as swap-plugin's find does
        for table in (TypeTable(model, inferred), TypeTable(model, inferred, shared)):
            assert [table.declared(name) for name in names] == [old.get(name) for name in names]
            assert [table.get(name) for name in names] == [TypeTable(model, inferred).get(name) for name in names]
    table = TypeTable(onnx.ModelProto(), _declarations())
    assert table.get("a").tensor_type.elem_type == TensorProto.INT64  # value_info: the last entry
    assert table.get("b").tensor_type.elem_type == TensorProto.INT32  # an input over a value_info
    assert table.get("c").tensor_type.elem_type == TensorProto.INT8  # an output over both
    assert table.get("s").tensor_type.shape.dim[0].dim_value == 8  # the output's (a tensor), not the sequence's


@pytest.mark.parametrize("order", range(6))
def test_an_index_answers_as_the_whole_dict_whatever_is_asked_first(order: int) -> None:
    graph = _declarations().graph
    whole = {v.name: v for v in graph.value_info}
    asks = [("cover", {"a"}), ("cover", {"a", "b"}), ("get", "c"), ("get", "a"), ("cover", None), ("get", "zz")]
    asks = asks[order:] + asks[:order]
    index = ValueInfoIndex(graph)
    for kind, what in asks:
        if kind == "cover":
            index.cover(what)
        else:
            assert index.get(what) is whole.get(what) or index.get(what) == whole.get(what)
    assert all(index.get(name) == info for name, info in whole.items())


def test_the_first_names_covered_are_indexed_alone() -> None:
    index = ValueInfoIndex(_declarations().graph)
    index.cover({"a", "c"})
    assert sorted(index._index) == ["a", "c"]  # one pass keeping two entries
    assert index.get("a").type.tensor_type.elem_type == TensorProto.INT64
    index.get("b")  # outside them: the whole index, once
    assert sorted(index._index) == ["a", "b", "c", "s"] and index._covered is None
