"""core.graph on nested graphs: captures from outer scopes, names, scopes - walked iteratively."""

from __future__ import annotations

from hostile import nested
from onnx import TensorProto, helper

from graphsurgeon_tools.core.graph import all_tensor_names, consumers, outer_reads, remove_unused, scopes


def _deep(levels: int):
    """``levels`` nested Ifs; the innermost branch reads ``w`` (a main-graph initializer)."""
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["o0"], name="leaf")],
        "g0",
        [],
        [helper.make_tensor_value_info("o0", TensorProto.FLOAT, None)],
    )
    for level in range(1, levels):
        other = helper.make_graph(
            [helper.make_node("Identity", ["x"], [f"e{level}"])],
            f"e{level}",
            [],
            [helper.make_tensor_value_info(f"e{level}", TensorProto.FLOAT, None)],
        )
        node = helper.make_node("If", ["c"], [f"o{level}"], name=f"if{level}", then_branch=graph, else_branch=other)
        graph = helper.make_graph(
            [node], f"g{level}", [], [helper.make_tensor_value_info(f"o{level}", TensorProto.FLOAT, None)]
        )
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


def test_folding_obeys_the_users_output_limit(monkeypatch) -> None:
    """ONNXTOOL_MAX_OUTPUT_BYTES below the 16 MiB default bounds folding too (class 4: bounded work)."""
    import numpy as np
    from onnx import numpy_helper

    from graphsurgeon_tools.core.constants import DEFAULT_FOLD_BYTES, fold_byte_budget
    from graphsurgeon_tools.resize import ValueSource, find_resize_sites

    monkeypatch.delenv("ONNXTOOL_MAX_OUTPUT_BYTES", raising=False)
    assert fold_byte_budget() == DEFAULT_FOLD_BYTES
    for raw, expected in [
        ("1K", 1024),
        ("2GiB", DEFAULT_FOLD_BYTES),
        ("0", DEFAULT_FOLD_BYTES),
        ("junk", DEFAULT_FOLD_BYTES),
        ("64", 64),
    ]:
        monkeypatch.setenv("ONNXTOOL_MAX_OUTPUT_BYTES", raw)
        assert fold_byte_budget() == expected, raw
    assert fold_byte_budget(0) is None and fold_byte_budget(10) == 10  # an explicit bound wins
    # scales = Slice(a 4 KiB table, 0:4): folded at the default bound, run time at a 1 KiB limit
    from onnx import TensorProto, helper

    table = np.ones(1024, np.float32)
    table[2:4] = 2.0
    ints = [numpy_helper.from_array(np.asarray(v, np.int64), n) for n, v in (("b", [0]), ("e", [4]), ("a", [0]))]
    graph = helper.make_graph(
        [
            helper.make_node("Slice", ["table", "b", "e", "a"], ["scales"], name="cut"),
            helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up"),
        ],
        "g",
        [nested.X],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 16, 16])],
        [numpy_helper.from_array(table, "table"), *ints],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    monkeypatch.delenv("ONNXTOOL_MAX_OUTPUT_BYTES")
    (site,) = find_resize_sites(model)
    assert site.scales_source is ValueSource.FOLDED and site.scales == (1, 1, 2, 2)
    monkeypatch.setenv("ONNXTOOL_MAX_OUTPUT_BYTES", "1K")
    (site,) = find_resize_sites(model)
    assert site.scales_source is ValueSource.RUNTIME and any("over 1024 bytes" in n for n in site.notes), site.notes
