"""resize.semantics.attribute_problems: the one judge of Resize/Upsample/plugin attributes."""

from __future__ import annotations

import pytest
from onnx import AttributeProto, helper

from graphsurgeon_tools.resize.semantics import attribute_problems


def _node(op: str = "Resize", **attrs):
    node = helper.make_node(op, ["x", "", "s"], ["y"], name="n")
    for key, value in attrs.items():
        node.attribute.append(AttributeProto(name=key) if value is None else helper.make_attribute(key, value))
    return node


@pytest.mark.parametrize(
    ("attrs", "version", "expected"),
    [
        ({"mode": "bogus"}, 13, "'mode' is 'bogus', not one of nearest, linear, cubic"),
        ({"mode": "Linear"}, 13, "'mode' is 'Linear'"),
        ({"mode": 2}, 13, "'mode' must be STRING, got INT"),
        ({"nearest_mode": "round"}, 13, "'nearest_mode' is 'round'"),
        ({"coordinate_transformation_mode": "half_pixel_symmetric"}, 13, "exists from Resize-19"),
        ({"keep_aspect_ratio_policy": "fit"}, 18, "'keep_aspect_ratio_policy' is 'fit'"),
        ({"exclude_outside": 2}, 13, "'exclude_outside' is 2, not one of 0, 1"),
        ({"antialias": -1}, 18, "'antialias' is -1"),
        ({"cubic_coeff_a": float("nan")}, 13, "not a finite number"),
        ({"axes": [2, 2]}, 18, "repeats an axis"),
        ({"cubic_coeff_a": None}, 13, "'cubic_coeff_a' has no value"),
    ],
)
def test_refused(attrs: dict, version: int, expected: str) -> None:
    problems = attribute_problems(_node(**attrs), version)
    assert len(problems) == 1 and expected in problems[0], problems


@pytest.mark.parametrize(
    ("op", "attrs", "version"),
    [
        ("Resize", {"mode": "cubic", "coordinate_transformation_mode": "tf_half_pixel_for_nn"}, 13),
        ("Resize", {"coordinate_transformation_mode": "half_pixel_symmetric"}, 19),
        ("Resize", {"keep_aspect_ratio_policy": "not_larger", "antialias": 1, "axes": [2, 3]}, 18),
        ("Upsample", {"mode": "bilinear"}, 9),
        ("Resize", {"some_future_attribute": "anything"}, 19),  # unknown attributes are not judged
    ],
)
def test_accepted(op: str, attrs: dict, version: int) -> None:
    assert attribute_problems(_node(op, **attrs), version) == []


def test_plugin_attributes_are_read_through_the_spec_renames() -> None:
    node = helper.make_node("DynamicTRTResize", ["x", "s"], ["y"], domain="trt", interp="bogus", align_corners=2)
    problems = attribute_problems(node, 0, {"mode": "interp"})
    assert sorted(problems) == [
        "attribute 'align_corners' is 2, not one of 0, 1",
        "attribute 'interp (mode)' is 'bogus', not one of nearest, linear, cubic",
    ]
