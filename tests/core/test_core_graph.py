"""core.graph: maps, names, and remove_unused as a linear worklist with the old semantics."""

from __future__ import annotations

import random

import onnx
from onnx import TensorProto, helper

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core.graph import consumers, downstream_tensors, producers, remove_unused, unique_name


def _chain_model(length: int, dead_tail: bool = True) -> onnx.GraphProto:
    """x -> Relu chain (length nodes) -> y, plus a dead side chain of the same length hanging off x."""
    nodes = [helper.make_node("Relu", [f"a{i}" if i else "x"], [f"a{i + 1}"], name=f"a{i}") for i in range(length)]
    nodes.append(helper.make_node("Identity", [f"a{length}"], ["y"], name="out"))
    if dead_tail:
        nodes += [helper.make_node("Relu", [f"d{i}" if i else "x"], [f"d{i + 1}"], name=f"d{i}") for i in range(length)]
    return helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )


def test_a_20k_node_dead_chain_is_removed_whole_and_nothing_else() -> None:
    graph = _chain_model(10_000)
    removed = remove_unused(graph, [f"d{10_000}"])
    assert len(removed) == 10_000
    assert [n.name for n in graph.node] == [f"a{i}" for i in range(10_000)] + ["out"]


def test_remove_unused_visits_each_node_a_bounded_number_of_times(monkeypatch) -> None:
    calls = {"reads": 0, "count_maps": 0}
    real_reads, real_counts = core_graph._reads, core_graph._scan

    def counting_reads(node):
        calls["reads"] += 1
        return real_reads(node)

    def counting_counts(graph):
        calls["count_maps"] += 1
        return real_counts(graph)

    monkeypatch.setattr(core_graph, "_reads", counting_reads)
    monkeypatch.setattr(core_graph, "_scan", counting_counts)
    graph = _chain_model(5_000)
    candidates = [f"d{i}" for i in range(1, 5_001)]  # every tensor of the dead chain, as a pass would pass them
    remove_unused(graph, candidates)
    assert calls["count_maps"] == 1  # the map is built once, not once per candidate
    assert calls["reads"] <= 5_000  # once per removed node, never a rescan


def _naive_remove_unused(graph: onnx.GraphProto, candidates: list[str]) -> list[str]:
    """The pre-issue-9 algorithm (maps rebuilt per name): the semantics remove_unused keeps."""
    outputs = {o.name for o in graph.output}
    removed: list[str] = []
    pending = [name for name in candidates if name]
    while pending:
        name = pending.pop()
        if name in outputs or consumers(graph).get(name):
            continue
        prod = producers(graph).get(name)
        if prod is not None:
            node = graph.node[prod]
            if any(out in outputs or consumers(graph).get(out) for out in node.output if out and out != name):
                continue
            del graph.node[prod]
            removed.extend(out for out in node.output if out)
            pending.extend(i for i in node.input if i)
            continue
        for index, init in enumerate(graph.initializer):
            if init.name == name:
                if name not in {i.name for i in graph.input}:
                    del graph.initializer[index]
                    removed.append(name)
                break
    return removed


def _random_graph(rng: random.Random) -> onnx.GraphProto:
    tensors = ["x", "w0", "w1"]
    nodes = []
    for index in range(30):
        reads = rng.sample(tensors, k=min(len(tensors), rng.choice([1, 2])))
        outs = [f"t{index}_{k}" for k in range(rng.choice([1, 1, 2]))]
        nodes.append(helper.make_node("Sum" if len(reads) > 1 else "Relu", reads, outs, name=f"n{index}"))
        tensors += outs
    inits = [helper.make_tensor(name, TensorProto.FLOAT, [1], [1.0]) for name in ("w0", "w1")]
    outputs = rng.sample(tensors[3:], k=2)
    return helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [1]) for o in outputs],
        inits,
    )


def test_remove_unused_removes_what_the_per_name_rescan_removed() -> None:
    rng = random.Random(7)
    for _ in range(200):
        graph = _random_graph(rng)
        # cut one edge the way a pass does: re-point a reader, then hand over the old tensor
        victim = rng.choice(list(graph.node))
        old = victim.input[0]
        victim.input[0] = "x"
        expected_graph = onnx.GraphProto()
        expected_graph.CopyFrom(graph)
        candidates = [old] + rng.sample([o for n in graph.node for o in n.output], k=3)
        expected = _naive_remove_unused(expected_graph, list(candidates))
        got = remove_unused(graph, list(candidates))
        assert sorted(got) == sorted(expected)
        assert graph.SerializeToString() == expected_graph.SerializeToString()


def test_remove_unused_of_repeated_candidates_equals_each_once_at_its_last_repeat() -> None:
    # swap-plugin hands over every name it replaced once, where it was last replaced (2,000 sites
    # reading one roi: one candidate): the same removals, in the same order, as the full list
    rng = random.Random(11)
    for _ in range(200):
        graph = _random_graph(rng)
        candidates = []
        for node in rng.sample(list(graph.node), k=6):
            candidates.append(node.input[0])
            node.input[0] = "x"
        candidates += rng.choices([o for n in graph.node for o in n.output] + ["w0", "w1"], k=6)
        once: dict[str, None] = {}
        for name in candidates:
            once.pop(name, None)
            once[name] = None
        deduped = onnx.GraphProto()
        deduped.CopyFrom(graph)
        assert remove_unused(deduped, list(once)) == remove_unused(graph, candidates)
        assert deduped.SerializeToString() == graph.SerializeToString()


def test_subgraph_reads_keep_outer_tensors_alive() -> None:
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["o"])],
        "body",
        [],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1])],
    )
    nodes = [
        helper.make_node("Relu", ["x"], ["c"], name="make_c"),
        helper.make_node("If", ["cond"], ["y"], name="if", then_branch=body, else_branch=body),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    assert remove_unused(graph, ["c"]) == []
    assert consumers(graph)["c"] == [1]
    assert downstream_tensors(graph, ["x"]) == {"x", "c", "y"}


def test_unique_name_counts_up_and_reserves() -> None:
    taken = {"a", "a__1"}
    assert unique_name(taken, "a") == "a__2" and "a__2" in taken
    assert unique_name(taken, "b") == "b"
