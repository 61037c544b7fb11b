"""A failed built-in check names each responsible site: the differing site outputs
whose input does not depend on another differing site."""

from __future__ import annotations

import golden
import onnx
import onnx.parser

from graphsurgeon_tools.check.compare import OutputComparison
from graphsurgeon_tools.check.equivalence import CheckResult, compare_models
from graphsurgeon_tools.passes.base import PassResult
from graphsurgeon_tools.passes.responsible import responsible_sites


def _broken(model: onnx.ModelProto, node_name: str) -> onnx.ModelProto:
    """A copy whose node ``node_name`` maps coordinates differently (a wrong rewrite of that site)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    node = next(n for n in copy.graph.node if n.name == node_name)
    for attr in node.attribute:
        if attr.name == "coordinate_transformation_mode":
            attr.s = b"align_corners"
    return copy


def test_independent_sites_are_each_blamed_and_downstream_ones_are_not() -> None:
    chain = onnx.parser.parse_model(
        '< ir_version: 8, opset_import: ["" : 13] >'
        + """
    chain (float[1,1,4,4] x) => (float[1,1,16,16] y, float[1,1,8,8] z)
    <float[4] scales = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}>
    {
        a = Resize <mode = "linear"> (x, roi, scales)
        r = Relu (a)
        y = Resize <mode = "linear"> (r, roi, scales)
        z = Resize <mode = "linear"> (x, roi, scales)
    }
    """
    )
    for node in chain.graph.node:
        node.name = f"resize_{node.output[0]}" if node.op_type == "Resize" else node.output[0]
    assert responsible_sites(chain, ["a", "y", "z"]) == [("resize_a", "a"), ("resize_z", "z")]
    assert responsible_sites(chain, ["y"]) == [("resize_y", "y")]


def test_the_failure_message_says_where_the_difference_starts() -> None:
    model = golden.fpn_model(13, factors=(2.0, 4.0), mode="linear", coordinate_transformation_mode="half_pixel")
    rewritten = _broken(model, "resize_0")
    check = compare_models(model, rewritten)
    assert check.passed is False
    message = PassResult(model=rewritten, rewritten=[object()], check=check).failure_message()
    assert message.startswith("the written model differs from your input model in ONNX Runtime: output 'y'")
    assert "the difference starts at site 'resize_0' (its output 'up_0': max |diff| " in message
    assert "resize_1" not in message


def test_a_difference_only_at_site_outputs_is_named_without_crashing() -> None:
    model = golden.resize_model(13)
    site = OutputComparison(
        output="resized",
        reference_output="resized",
        candidate_shape=(1, 3, 16, 16),
        reference_shape=(1, 3, 16, 16),
        passed=False,
        max_abs_error=0.5,
        mismatched=3,
    )
    same = OutputComparison(
        output="y", reference_output="y", candidate_shape=(1, 3, 16, 16), reference_shape=(1, 3, 16, 16), passed=True
    )
    check = CheckResult(passed=False, outputs=[same], sites=[site])
    message = PassResult(model=model, rewritten=[object()], check=check).failure_message()
    assert message == (
        "the written model differs from your input model in ONNX Runtime at Resize site outputs; "
        "the difference starts at site 'resize' (its output 'resized': max |diff| 0.5)"
    )
