"""Node-by-node localisation against an ONNX reference of the same graph (validation.localise)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.validation import validate
from graphsurgeon_tools.validation.localise import localise_nodes
from graphsurgeon_tools.validation.references import OnnxModelReference
from graphsurgeon_tools.validation.runner import OnnxRunner


def _f32(name, values):
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


def _model(nodes, inits, out_shape) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _chain(second: float) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Mul", ["x", "c"], ["a"], name="scale_in"),
        helper.make_node("Relu", ["a"], ["b"], name="relu"),
        helper.make_node("Mul", ["b", "d"], ["m"], name="scale_mid"),
        helper.make_node("Sigmoid", ["m"], ["y"], name="squash"),
    ]
    return _model(nodes, [_f32("c", 2.0), _f32("d", second)], [1, 2, 4, 4])


def _upsampling(first: float) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Mul", ["x", "c"], ["a"], name="pre"),
        helper.make_node("Add", ["a", "k"], ["b"], name="shift"),
        helper.make_node("Resize", ["b", "", "s"], ["r"], name="up", mode="nearest"),
        helper.make_node("Relu", ["r"], ["y"], name="post"),
    ]
    return _model(nodes, [_f32("c", first), _f32("k", 0.5), _f32("s", [1, 1, 2, 2])], [1, 2, 8, 8])


def _feeds() -> list[tuple[str, np.ndarray]]:
    return [("x", np.random.default_rng(0).uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32))]


def test_a_nudged_mul_constant_is_named(tmp_path) -> None:
    runner = OnnxRunner(_chain(3.0), "candidate")
    reference = OnnxModelReference(_chain(3.01), "reference")
    data = _feeds()
    found = localise_nodes(runner, reference, None, data, dict(data), atol=1e-5, rtol=1e-5)
    assert found is not None
    assert (found.node, found.op_type, found.output) == ("scale_mid", "Mul", "m")
    assert found.inputs_agreed and found.differing_weights == ["d"] and found.max_abs_error > 1e-3
    assert "first differing node: scale_mid (Mul)" in found.message
    assert runner.exposed == [] and reference.runner.exposed == []  # exposure restored


def test_a_difference_upstream_of_a_resize_names_the_upstream_node(tmp_path) -> None:
    candidate, original = tmp_path / "c.onnx", tmp_path / "r.onnx"
    onnx.save(_upsampling(1.5), candidate)
    onnx.save(_upsampling(1.6), original)
    report = validate(str(candidate), str(original), diagnose=False)
    assert not report.passed
    notes = [n for n in report.notes if n.startswith("first differing node")]
    assert len(notes) == 1 and notes[0].startswith("first differing node: pre (Mul), output 'a'"), report.notes
    assert "weights differ (c)" in notes[0]
    assert "first differing node" in report.to_dict()["notes"][-1] or any(
        "first differing node" in n for n in report.to_dict()["notes"]
    )


def test_identical_sides_name_nothing() -> None:
    runner = OnnxRunner(_chain(3.0), "candidate")
    reference = OnnxModelReference(_chain(3.0), "reference")
    data = _feeds()
    assert localise_nodes(runner, reference, None, data, dict(data), atol=1e-5, rtol=1e-5) is None


class _Counting(OnnxRunner):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.chunks: list[int] = []

    def run(self, feeds):
        self.chunks.append(len(self.exposed))
        return super().run(feeds)


def _long_chain(last: float, length: int = 12) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Add", ["x" if i == 0 else f"t{i - 1}", "k"], [f"t{i}"], name=f"add{i}") for i in range(length)
    ]
    nodes.append(helper.make_node("Mul", [f"t{length - 1}", "d"], ["y"], name="last"))
    return _model(nodes, [_f32("k", 0.25), _f32("d", last)], [1, 2, 4, 4])


def test_the_chunk_limit_is_respected() -> None:
    runner = _Counting(_long_chain(2.0), "candidate")
    reference = OnnxModelReference(_long_chain(2.5), "reference")
    data = _feeds()
    found = localise_nodes(runner, reference, None, data, dict(data), atol=1e-5, rtol=1e-5, max_tensors=5)
    assert found is not None and found.node == "last"
    assert runner.chunks == [1, 5, 5, 1]  # a probe, then 5 a run; the graph output comes with every run
    assert found.runs == 4 and found.compared == 13


def test_the_byte_budget_shrinks_chunks() -> None:
    runner = _Counting(_long_chain(2.0), "candidate")
    reference = OnnxModelReference(_long_chain(2.5), "reference")
    data = _feeds()
    one = 1 * 2 * 4 * 4 * 4  # bytes of one float32 tensor of the chain
    found = localise_nodes(
        runner, reference, None, data, dict(data), atol=1e-5, rtol=1e-5, max_tensors=8, max_bytes=3 * one
    )
    assert found is not None and found.node == "last"
    # the first run knows no sizes yet (one tensor), then three tensors fit the budget
    assert runner.chunks[0] == 1 and max(runner.chunks) <= 3


def test_a_reference_side_defect_is_named(monkeypatch) -> None:
    """onnx.reference's BatchNormalization-9 with momentum (unpatched) uses batch statistics: the node is named."""
    from graphsurgeon_tools.validation import references

    monkeypatch.setattr(references, "_needs_inference_batch_norm", lambda model: False)
    nodes = [
        helper.make_node("Mul", ["x", "c"], ["a"], name="pre"),
        helper.make_node("BatchNormalization", ["a", "g", "bb", "mu", "var"], ["n"], name="bn", momentum=0.9),
        helper.make_node("Relu", ["n"], ["y"], name="post"),
    ]
    inits = [
        _f32("c", 2.0),
        _f32("g", [1.0, 1.5]),
        _f32("bb", [0.1, -0.2]),
        _f32("mu", [3.0, -2.0]),
        _f32("var", [4.0, 0.25]),
    ]
    model = _model(nodes, inits, [1, 2, 4, 4])
    runner = OnnxRunner(model, "candidate")
    reference = references.EvaluatorReference(model)
    data = _feeds()
    found = localise_nodes(runner, reference, None, data, dict(data), atol=1e-4, rtol=1e-3)
    assert found is not None and (found.node, found.op_type) == ("bn", "BatchNormalization")
    assert found.inputs_agreed and not found.differing_weights
