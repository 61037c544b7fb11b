"""Library calls print nothing: an onnx_graphsurgeon.Graph through the passes leaves stdout and
stderr empty (onnx-graphsurgeon's logger prints its warnings and errors on stdout)."""

from __future__ import annotations

import golden
import pytest

from graphsurgeon_tools import find_resize_sites, make_dynamic_scale, swap_plugin

gs = pytest.importorskip("onnx_graphsurgeon")


@pytest.mark.parametrize("call", [make_dynamic_scale, swap_plugin, find_resize_sites])
def test_a_gs_graph_through_the_api_prints_nothing(capfd: pytest.CaptureFixture[str], call) -> None:
    graph = gs.import_onnx(golden.resize_model(opset=17, mode="linear"))
    capfd.readouterr()
    result = call(graph)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    if call is not find_resize_sites:
        assert type(result.model).__name__ == "Graph"  # given back in the kind given


def test_the_logger_is_left_as_it_was(capfd: pytest.CaptureFixture[str]) -> None:
    from onnx_graphsurgeon.logger import G_LOGGER

    before = G_LOGGER.severity
    make_dynamic_scale(gs.import_onnx(golden.resize_model(opset=17)))
    assert G_LOGGER.severity == before
