"""core.graphs: the API takes a ModelProto, a path or an onnx_graphsurgeon.Graph and gives back the kind given."""

from __future__ import annotations

import subprocess
import sys

import golden
import onnx
import pytest

from graphsurgeon_tools.core.graphs import as_model, is_gs_graph
from graphsurgeon_tools.resize import find_resize_sites


def test_a_model_proto_passes_through_uncopied() -> None:
    model = golden.resize_model(13)
    proto, give_back = as_model(model)
    assert proto is model and give_back(proto) is model


def test_a_path_is_loaded(tmp_path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(golden.resize_model(13), path)
    proto, give_back = as_model(path)
    assert isinstance(proto, onnx.ModelProto) and len(find_resize_sites(proto)) == 1
    assert give_back(proto) is proto


def test_a_gs_graph_comes_back_as_a_gs_graph() -> None:
    gs = pytest.importorskip("onnx_graphsurgeon")
    graph = gs.import_onnx(golden.resize_model(13))
    assert is_gs_graph(graph) and not is_gs_graph(golden.resize_model(13))
    proto, give_back = as_model(graph)
    assert isinstance(proto, onnx.ModelProto)
    (site,) = find_resize_sites(proto)
    assert find_resize_sites(graph) == [site]  # the public API takes the Graph itself
    back = give_back(proto)
    assert isinstance(back, gs.Graph)
    assert [n.op for n in back.nodes] == [n.op for n in graph.nodes]


def test_anything_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="onnx_graphsurgeon.Graph"):
        as_model(42)


def test_core_imports_no_onnx_graphsurgeon_until_a_graph_is_passed() -> None:
    code = (
        "import sys, graphsurgeon_tools.core.graphs as g, graphsurgeon_tools.resize;"
        "assert 'onnx_graphsurgeon' not in sys.modules and 'torch' not in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
