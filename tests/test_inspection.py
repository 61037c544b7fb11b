"""graphsurgeon_tools.inspection.inspect_model: the checks `onnxtool inspect` runs, as an API."""

from __future__ import annotations

import golden
import pytest

from graphsurgeon_tools.errors import InvalidModelError, InvalidScalesError
from graphsurgeon_tools.inspection import InspectionReport, inspect_model


def test_inspect_model_lists_sites_of_a_proto_and_of_a_path(save_model_file) -> None:
    model = golden.fpn_model(factors=(2.0, 4.0))
    report = inspect_model(model)
    assert isinstance(report, InspectionReport) and report.model is None and report.opset == 13
    assert [site.node_name for site in report.sites] == ["resize_0", "resize_1"]
    path = save_model_file(model)
    data = inspect_model(path, nodes=["resize_1"]).to_dict()
    assert data["model"] == str(path) and [s["node_name"] for s in data["sites"]] == ["resize_1"]
    assert inspect_model(model, nodes=["nothing*"]).sites == ()  # no match: empty, not an error


def test_inspect_model_refuses_a_model_the_checker_rejects() -> None:
    model = golden.fpn_model(factors=(2.0, 4.0))
    next(node for node in model.graph.node if node.input).input[0] = "dangling"
    with pytest.raises(InvalidModelError, match="fails the ONNX checker"):
        inspect_model(model)


def test_inspect_model_refuses_nonsense_scales() -> None:
    model = golden.resize_model(13, scales=(1.0, 1.0, -2.0, 2.0))
    with pytest.raises(InvalidScalesError, match="node "):
        inspect_model(model)
