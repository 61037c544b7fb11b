"""core.graph on nested graphs: captures from outer scopes, names, scopes - walked iteratively."""

from __future__ import annotations

from onnx import TensorProto, helper

from graphsurgeon_tools.core.graph import all_tensor_names, consumers, outer_reads, remove_unused, scopes
from hostile import nested


def _deep(levels: int):
    """``levels`` nested Ifs; the innermost branch reads ``w`` (a main-graph initializer)."""
    graph = helper.make_graph([helper.make_node("Identity", ["w"], ["o0"], name="leaf")], "g0", [],
                              [helper.make_tensor_value_info("o0", TensorProto.FLOAT, None)])
    for level in range(1, levels):
        other = helper.make_graph([helper.make_node("Identity", ["x"], [f"e{level}"])], f"e{level}", [],
                                  [helper.make_tensor_value_info(f"e{level}", TensorProto.FLOAT, None)])
        node = helper.make_node("If", ["c"], [f"o{level}"], name=f"if{level}", then_branch=graph, else_branch=other)
        graph = helper.make_graph([node], f"g{level}", [],
                                  [helper.make_tensor_value_info(f"o{level}", TensorProto.FLOAT, None)])
    return graph


def test_outer_reads_sees_a_capture_many_levels_down() -> None:
    graph = _deep(30)
    assert outer_reads(graph) == {"c", "w", "x"}
    assert {"w", "o0", "leaf", "e29"} <= all_tensor_names(graph)


def test_consumers_and_cleanup_count_a_body_read_as_its_holder_reading() -> None:
    model = nested.if_model()  # the else branch reads the main-graph initializer else_scales
    assert consumers(model.graph)["else_scales"] == [0]
    assert remove_unused(model.graph, ["else_scales"]) == []  # still read from inside the body
    assert [s.name for s in scopes(model)] == ["main graph", "If 'branch' else_branch", "If 'branch' then_branch"]
    (body,) = [s for s in scopes(nested.loop_model()) if s.parent == "main graph"]
    assert (body.name, body.holder, body.function) == ("Loop 'steps' body", 2, False)
    names = [(s.name, s.parent, s.function) for s in scopes(nested.function_model())]
    assert names == [("main graph", None, False), ("function 'local.Up'", None, True)]
