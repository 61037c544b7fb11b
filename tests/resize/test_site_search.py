"""find_resize_sites with the structural check's bytes (``weightless``) finds what the walk finds: the
bytes only spare the walk where they prove it needless (no Resize/Upsample, no body), never wrongly,
on the nested models and on seeded random ones, chance matches in names and tensors included; and
from an index of the inference that another reader shares (swap-plugin's type table) what it finds alone."""

from __future__ import annotations

import random

import numpy as np
import onnx
import pytest
from hostile import nested
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.core.checker import check_model_structure, inferred_copy, weightless_bytes
from graphsurgeon_tools.core.graph import scopes, subgraphs
from graphsurgeon_tools.resize import find_resize_sites, semantics, site_nodes
from graphsurgeon_tools.resize.site_inputs import ValueInfoIndex

#: Bytes that look like a Resize op_type and like a GRAPH-typed attribute: in a name, a string attribute
#: and a tensor's raw data they are chance matches, which must only make the walk happen.
_LOOKS_LIKE_RESIZE = '"\x06Resize'
_LOOKS_LIKE_BODY = b"\xa0\x01\x05\xa0\x01\x0a\x00\x00"


def _resize(x: str, scales: str, out: str, name: str) -> onnx.NodeProto:
    return helper.make_node("Resize", [x, "", scales], [out], name=name, mode="nearest")


def _branch(kind: str, x: str, out: str, scales: str, tag: str) -> onnx.GraphProto:
    node = _resize(x, scales, out, f"{tag}_resize") if kind == "resize" else helper.make_node("Relu", [x], [out])
    return helper.make_graph([node], tag, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 3, 4, 4])])


def random_model(seed: int) -> onnx.ModelProto:
    """A chain over x of Relu, Resize (scale 1: the shape stays), If (a Relu or a Resize in each branch),
    Constant/Identity carrying chance-match bytes, and a string attribute of look-alike bytes."""
    rng = random.Random(seed)
    previous, nodes = "x", []
    inits = [numpy_helper.from_array(np.ones(4, dtype=np.float32), "ones")]
    for i in range(rng.randint(0, 12)):
        out = f"t{i}"
        kind = rng.choice(["relu", "resize", "if", "constant", "odd_name"])
        if kind == "relu":
            nodes.append(helper.make_node("Relu", [previous], [out], name=f"relu_{i}"))
        elif kind == "resize":
            nodes.append(_resize(previous, "ones", out, f"resize_{i}"))
        elif kind == "if":
            then = _branch(rng.choice(["relu", "resize"]), previous, f"{out}_then", "ones", f"then_{i}")
            other = _branch(rng.choice(["relu", "resize"]), previous, f"{out}_else", "ones", f"else_{i}")
            nodes.append(helper.make_node("If", ["cond"], [out], name=f"if_{i}", then_branch=then, else_branch=other))
        elif kind == "constant":  # raw bytes holding both look-alikes
            value = helper.make_tensor(f"c{i}_value", TensorProto.FLOAT, [2], _LOOKS_LIKE_BODY, raw=True)
            nodes.append(helper.make_node("Constant", [], [f"c{i}"], name=f"const_{i}", value=value))
            nodes.append(helper.make_node("Identity", [previous], [out], name=f"id_{i}"))
        else:  # a name and a string attribute spelling the look-alikes
            node = helper.make_node("Relu", [previous], [out], name=f"{_LOOKS_LIKE_RESIZE}_{i}")
            node.doc_string = _LOOKS_LIKE_BODY.decode("latin-1")
            nodes.append(node)
        previous = out
    if not nodes or nodes[-1].output[0] != previous:
        nodes.append(helper.make_node("Identity", [previous], ["y"]))
    else:
        nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes,
        "random",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


NESTED = {
    "if": nested.if_model,
    "loop": nested.loop_model,
    "scan": nested.scan_model,
    "if_in_loop": nested.nested_if_in_loop_model,
    "function": nested.function_model,
    "upsample7_in_if": nested.upsample7_in_if_model,
}
SEEDS = range(60)


def _corpus():
    yield from ((name, build()) for name, build in NESTED.items())
    yield from ((f"random_{seed}", random_model(seed)) for seed in SEEDS)


def _described(model: onnx.ModelProto, nested_: bool, weightless=None) -> list[dict]:
    return [s.to_dict() for s in find_resize_sites(model, nested=nested_, weightless=weightless)]


@pytest.mark.parametrize("name,model", list(_corpus()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_checked_bytes_find_what_the_walk_finds(name: str, model: onnx.ModelProto) -> None:
    data = weightless_bytes(model)
    check_model_structure(data)  # what the bytes handed to find_resize_sites have passed
    for nested_ in (False, True):
        assert _described(model, nested_, data) == _described(model, nested_)


def _resize_nodes(model: onnx.ModelProto) -> int:
    return sum(semantics.is_resize_node(n) for s in scopes(model) for n in s.graph.node)


def _holds_body(model: onnx.ModelProto) -> bool:
    return any(next(subgraphs(n), None) is not None for s in scopes(model) for n in s.graph.node)


@pytest.mark.parametrize("name,model", list(_corpus()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_bytes_bound_the_sites_and_say_no_body_only_where_there_is_none(name: str, model: onnx.ModelProto) -> None:
    data = weightless_bytes(model)
    assert len(site_nodes._RESIZE_OP_TYPE.findall(data)) >= _resize_nodes(model)
    if site_nodes._no_body(model, data):
        assert not _holds_body(model)


def test_the_corpus_holds_both_answers_and_chance_matches() -> None:
    """The corpus is worth its name: the count is exact on some models, zero on some, above the sites
    by chance (look-alike bytes) on others; "no body" is said on some, and "walk" on some by chance."""
    counts, bodies = set(), set()
    for _, model in _corpus():
        data = weightless_bytes(model)
        found, there = len(site_nodes._RESIZE_OP_TYPE.findall(data)), _resize_nodes(model)
        counts.add("none" if not found else "exact" if found == there else "chance")
        no_body = site_nodes._no_body(model, data)
        bodies.add("none" if no_body else "body" if _holds_body(model) else "chance")
    assert counts == {"none", "exact", "chance"} and bodies == {"none", "body", "chance"}


def _counting_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = semantics.is_resize_node
    monkeypatch.setattr(semantics, "is_resize_node", lambda node: asked.append(node.op_type) or real(node))
    return asked


def _chain(ops: list[str]) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.ones(4, dtype=np.float32), "ones")]
    nodes = [
        _resize(f"a{i}", "ones", f"a{i + 1}", f"n{i}")
        if op == "Resize"
        else helper.make_node(op, [f"a{i}"], [f"a{i + 1}"])
        for i, op in enumerate(ops)
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("a0", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info(f"a{len(ops)}", TensorProto.FLOAT, [1, 1, 2, 2])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_bytes_proving_no_site_spare_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _chain(["Relu"] * 50)
    asked = _counting_calls(monkeypatch)
    assert find_resize_sites(model, nested=True, weightless=weightless_bytes(model)) == []
    assert asked == []
    assert find_resize_sites(model, nested=True) == []  # without the bytes: walked, the same answer
    assert len(asked) == 50


def test_the_walk_stops_at_the_last_site_the_bytes_allow(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _chain(["Relu"] * 40 + ["Resize"] + ["Relu"] * 5 + ["Resize", "Relu"])
    asked = _counting_calls(monkeypatch)
    found = find_resize_sites(model, nested=True, weightless=weightless_bytes(model))
    assert [s.node_index for s in found] == [40, 46]
    assert len(asked) == 8  # from the last node back to the second Resize, not the 40 Relu before it
    assert [s.to_dict() for s in find_resize_sites(model, nested=True)] == [s.to_dict() for s in found]


def test_an_ir_1_model_is_walked_for_bodies() -> None:
    """Before IR 2 the checker does not require an attribute's type: the bytes cannot prove "no body"."""
    model = nested.if_model()
    data = weightless_bytes(model)
    model.ir_version = 1
    assert not site_nodes._no_body(model, b"")
    model.ir_version = 8
    assert site_nodes._no_body(model, b"")
    assert not site_nodes._no_body(model, data)


@pytest.mark.parametrize("name,model", list(_corpus()), ids=lambda v: v if isinstance(v, str) else "")
def test_sites_read_off_a_shared_index_are_the_same(name: str, model: onnx.ModelProto) -> None:
    inferred = inferred_copy(model)
    for nested_ in (False, True):
        index = ValueInfoIndex(inferred.graph)
        shared = find_resize_sites(model, nested=nested_, inferred=inferred, inferred_infos=index)
        assert [s.to_dict() for s in shared] == _described(model, nested_)
