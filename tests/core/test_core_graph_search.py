"""core.graph on big graphs: remove_unused and downstream_tensors answer a few names from the graph's
bytes instead of walking every node, and give exactly what the walk gives; a NameSet answers from the
graph's bytes, or from its model's weightless bytes where the caller has them, as the set of its names."""

from __future__ import annotations

import random

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core import mentions
from graphsurgeon_tools.core.checker import WEIGHTLESS_THRESHOLD, weightless_bytes
from graphsurgeon_tools.core.graph import downstream_tensors, remove_unused

NODES = mentions._SEARCH_NODES + 10


def _big_graph(rng: random.Random, **extra) -> onnx.GraphProto:
    """x -> a Relu chain of NODES nodes -> y; initializers w0..w9, some read by an Add in the chain,
    one graph output in the middle of the chain."""
    nodes = []
    previous = "x"
    readers = {rng.randrange(NODES): f"w{k}" for k in range(5)}
    for index in range(NODES):
        if index in readers:
            nodes.append(helper.make_node("Add", [previous, readers[index]], [f"a{index}"], name=f"n{index}"))
        else:
            nodes.append(helper.make_node("Relu", [previous], [f"a{index}"], name=f"n{index}"))
        previous = f"a{index}"
    nodes.append(helper.make_node("Identity", [previous], ["y"], name="out"))
    inits = [numpy_helper.from_array(np.ones(1, np.float32), f"w{k}") for k in range(10)]
    return helper.make_graph(
        nodes + extra.get("nodes", []),
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])] + extra.get("inputs", []),
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1]) for name in ("y", "a100")],
        inits + extra.get("inits", []),
        value_info=extra.get("value_info", []),
    )


def _walked(monkeypatch, function, graph, names):
    """``function`` with the byte search off: what the walk over every node answers."""
    with monkeypatch.context() as patch:
        patch.setattr(mentions, "_SEARCH_NODES", 10**9)
        return function(graph, names)


def _same_as_the_walk(monkeypatch, graph: onnx.GraphProto, candidates: list[str]) -> list[str]:
    walked = onnx.GraphProto()
    walked.CopyFrom(graph)
    expected = _walked(monkeypatch, remove_unused, walked, list(candidates))
    got = remove_unused(graph, list(candidates))
    assert got == expected
    assert graph.SerializeToString() == walked.SerializeToString()
    return got


def test_unread_initializers_go_without_a_walk_over_the_nodes(monkeypatch) -> None:
    graph = _big_graph(random.Random(1))
    unread = [f"w{k}" for k in range(5, 10)]

    def no_walk(_graph):
        raise AssertionError("walked every node")

    with monkeypatch.context() as patch:
        patch.setattr(core_graph, "_scan", no_walk)
        probe = onnx.GraphProto()
        probe.CopyFrom(graph)
        assert remove_unused(probe, unread + ["w5"]) == ["w5", "w9", "w8", "w7", "w6"]
    _same_as_the_walk(monkeypatch, graph, unread + ["w5"])
    assert sorted(i.name for i in graph.initializer) == [f"w{k}" for k in range(5)]


@pytest.mark.parametrize(
    "case",
    [
        "read",
        "output",
        "value_info",
        "graph_input",
        "body_read",
        "produced",
        "newline",
        "many",
        "big_weight",
        "heavy_constant",
    ],
)
def test_remove_unused_gives_what_the_walk_gives(monkeypatch, case: str) -> None:
    rng = random.Random(case)
    extra: dict = {}
    candidates = ["w0", "w7"]
    if case == "output":
        candidates = ["a100", "w7"]
    elif case == "value_info":  # a declared, unread initializer: its name occurs once as field 1
        extra["value_info"] = [helper.make_tensor_value_info("w7", TensorProto.FLOAT, [1])]
    elif case == "graph_input":  # an initializer that is also a graph input stays
        extra["inputs"] = [helper.make_tensor_value_info("w7", TensorProto.FLOAT, [1])]
    elif case == "body_read":  # read only from inside an If body
        body = helper.make_graph(
            [helper.make_node("Identity", ["w8"], ["o"])], "b", [], [helper.make_tensor_value_info("o", 1, [1])]
        )
        cond = numpy_helper.from_array(np.array(True), "cond")
        extra["inits"] = [cond]
        extra["nodes"] = [helper.make_node("If", ["cond"], ["z"], then_branch=body, else_branch=body)]
        candidates = ["w8", "w9"]
    elif case == "produced":  # a dead node's output: its chain goes too
        extra["nodes"] = [helper.make_node("Relu", ["w6"], ["dead"], name="dead")]
        candidates = ["dead", "w9"]
    elif case == "newline":
        extra["inits"] = [numpy_helper.from_array(np.ones(1, np.float32), "odd\nname")]
        candidates = ["odd\nname", "w9"]
    elif case == "many":
        candidates = [f"w{k}" for k in range(10)]
    elif case == "big_weight":
        extra["inits"] = [numpy_helper.from_array(np.ones(1 << 18, np.float32), "big")]
        candidates = ["big", "w9"]
    elif case == "heavy_constant":  # many bytes a node (weights in a Constant): the walk is cheaper
        heavy = numpy_helper.from_array(np.ones(1 << 17, np.float32), "heavy")
        extra["nodes"] = [helper.make_node("Constant", [], ["heavy"], name="heavy", value=heavy)]
        candidates = ["heavy", "w9"]
    graph = _big_graph(rng, **extra)
    removed = _same_as_the_walk(monkeypatch, graph, candidates)
    assert "w0" not in removed  # read by an Add of the chain
    assert ("w7" in removed) == (case in ("read", "output", "value_info", "many"))


@pytest.mark.parametrize("start", [["y"], ["a100"], ["a5"], ["w3"], ["w9"], ["", "y"], ["nowhere"]])
def test_downstream_tensors_gives_what_the_walk_gives(monkeypatch, start: list[str]) -> None:
    graph = _big_graph(random.Random(3))
    expected = _walked(monkeypatch, downstream_tensors, graph, start)
    assert downstream_tensors(graph, start) == expected
    if start in (["y"], ["w9"], ["nowhere"]):
        assert expected == set(start)


@pytest.mark.parametrize("shape", [None, [], [1, "n", None, 4], ["a_d0", "a_d1"], [0]])
def test_add_tensor_value_info_writes_what_the_helper_writes(shape) -> None:
    built, helped = onnx.GraphProto(), onnx.GraphProto()
    core_graph.add_tensor_value_info(built.value_info, "a", TensorProto.FLOAT16, shape)
    helped.value_info.append(helper.make_tensor_value_info("a", TensorProto.FLOAT16, shape))
    assert built.SerializeToString() == helped.SerializeToString()


def test_add_tensor_value_info_refuses_what_the_helper_refuses() -> None:
    with pytest.raises(ValueError):
        core_graph.add_tensor_value_info(onnx.GraphProto().value_info, "a", TensorProto.FLOAT, [1.5])


def test_a_name_set_answers_as_the_set_of_every_name() -> None:
    graph = _big_graph(random.Random(5))
    every = core_graph.all_tensor_names(graph)
    names = core_graph.NameSet(graph)
    asked = ["x", "y", "a7", "n12", "w3", "scales", "a", "w", "nowhere"] + [f"a{i}" for i in range(20)]
    assert [name in names for name in asked] == [name in every for name in asked]  # searches, then the walk
    names.add("scales")
    names -= ["a7"]
    assert "scales" in names and "a7" not in names
    assert core_graph.unique_name(names, "a8") == "a8__1" and "a8__1" in names


@pytest.mark.parametrize("prefix", ["scales", "a1", "w", "n", "x", "nowhere_", "a99999"])
def test_a_name_set_says_no_name_starts_with_a_prefix_only_when_none_does(prefix) -> None:
    graph = _big_graph(random.Random(6))
    every = core_graph.all_tensor_names(graph)
    names = core_graph.NameSet(graph)
    starts = any(name.startswith(prefix) for name in every)
    assert not (names.none_start_with(prefix) and starts)  # never a wrong "none"
    if prefix in ("scales", "nowhere_"):  # in none of the graph's bytes: certain
        assert names.none_start_with(prefix)
        names.add(f"{prefix}_7")
        assert not names.none_start_with(prefix)  # an added name counts


def _model_with_names_outside_its_graph(big: bool) -> onnx.ModelProto:
    """The big graph in a model whose other fields spell names the graph lacks (metadata, a function, the
    producer); ``big``: one initializer over the weightless threshold (left out of the bytes, declared as
    an input of the same name there)."""
    inits = [numpy_helper.from_array(np.zeros(WEIGHTLESS_THRESHOLD // 4 + 1, np.float32), "huge")] if big else []
    graph = _big_graph(random.Random(7), inits=inits)
    function = helper.make_function("local", "Only", ["fx"], ["fy"], [helper.make_node("Relu", ["fx"], ["fy"])], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], functions=[function])
    helper.set_model_props(model, {"scales": "scales_0", "a99999": "n_1"})
    model.producer_name = "w_producer"
    return model


@pytest.mark.parametrize("big", [False, True])
def test_a_name_set_searching_the_models_bytes_answers_as_the_graphs_names(big: bool) -> None:
    model = _model_with_names_outside_its_graph(big)
    every = core_graph.all_tensor_names(model.graph)
    asked = ["x", "y", "a7", "n12", "w3", "huge", "scales", "scales_0", "a99999", "n_1", "fx", "fy", "local"]
    asked += ["w_producer", "nowhere"] + [f"a{i}" for i in range(20)]
    from_model = core_graph.NameSet(model.graph, weightless_bytes(model))
    assert [name in from_model for name in asked] == [name in every for name in asked]
    for prefix in ("scales", "a9999", "fx", "nowhere_", "huge"):
        starts = any(name.startswith(prefix) for name in every)
        assert not (core_graph.NameSet(model.graph, weightless_bytes(model)).none_start_with(prefix) and starts)
