"""Real models nobody here wrote: PaddleOCR's PP-OCRv4 detector (paddle2onnx) and the tutorial's
SRCNN exported by both PyTorch exporters; rewritten, checked in ONNX Runtime, saved and rerun."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from graphsurgeon_tools.io import load_model, save_model
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
from graphsurgeon_tools.resize import ValueSource, find_resize_sites

PPOCR_FACTORS = [2.0, 2.0, 2.0, 8.0, 4.0, 2.0]


def _session(path_or_model) -> ort.InferenceSession:
    source = path_or_model.SerializeToString() if isinstance(path_or_model, onnx.ModelProto) else str(path_or_model)
    return ort.InferenceSession(source, providers=["CPUExecutionProvider"])


def test_ppocr_detector_rewritten_and_checked(ppocr_det_path, tmp_path) -> None:
    before = ppocr_det_path.read_bytes()
    result = make_dynamic_scale(ppocr_det_path)
    assert len(result.rewritten) == 6 and not result.skipped
    assert [s.new_input for s in result.rewritten] == [f"scales_{i}" for i in range(6)]
    assert [s.original_scales[2:] for s in result.rewritten] == [[f, f] for f in PPOCR_FACTORS]
    assert result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0
    onnx.checker.check_model(result.model, full_check=True)
    # the paddle2onnx scales Constants are gone (their empty roi Constants stay: Resize-11 needs roi)
    sites = find_resize_sites(result.model)
    assert all(s.scales_source is ValueSource.GRAPH_INPUT for s in sites)
    out = save_model(result.model, tmp_path / "det.dynamic.onnx")
    assert ppocr_det_path.read_bytes() == before
    # an input size the built-in check did not use: still identical to the original
    x = np.random.default_rng(1).uniform(0, 1, size=(2, 3, 96, 160)).astype(np.float32)
    (want,) = _session(ppocr_det_path).run(None, {"x": x})
    (got,) = _session(out).run(None, {"x": x, **result.feeds()})
    np.testing.assert_array_equal(got, want)


def test_ppocr_factor_mode_shared_on_the_equal_sites(ppocr_det_path) -> None:
    result = make_dynamic_scale(ppocr_det_path, nodes=["p2o.Resize.[0125]"], shared=True, factor=True)
    assert [s.node for s in result.rewritten] == ["p2o.Resize.0", "p2o.Resize.1", "p2o.Resize.2", "p2o.Resize.5"]
    assert [(i.name, i.shape, i.value) for i in result.new_inputs] == [("scales", [2], [2.0, 2.0])]
    assert result.check.passed is True
    # the other two keep their constants
    untouched = {s.node_name: s for s in find_resize_sites(result.model)}
    assert untouched["p2o.Resize.3"].scales == (1.0, 1.0, 8.0, 8.0)
    assert untouched["p2o.Resize.3"].scales_source is ValueSource.CONSTANT
    # no output dim is left static where the factor decides it
    dims = result.model.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_value for d in dims] == [0, 1, 0, 0] and all(dims[i].dim_param for i in (0, 2, 3))


@pytest.mark.parametrize("label", ["torchscript-11", "torchscript-13", "torchscript-17", "dynamo"])
def test_srcnn_exports_become_dynamic_and_match_pytorch_at_a_new_factor(srcnn_exports, label: str, tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from exporters.models import StaticSRCNN

    path = srcnn_exports[label]
    result = make_dynamic_scale(path, factor=True)
    (site,) = result.rewritten
    assert site.original_scales == [1.0, 1.0, 3.0, 3.0] and site.mode == "cubic"
    assert result.new_inputs[0].shape == [2]
    assert result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0
    # the dynamo exporter keeps weights in a .data file: check (and run) the saved model by path
    out = save_model(result.model, tmp_path / "srcnn.dynamic.onnx")
    onnx.checker.check_model(str(out), full_check=True)
    # The point of the exercise: factor 2 without re-exporting, same numbers as PyTorch at factor 2.
    torch.manual_seed(0)  # the fixture built its model right after the same seed: same weights
    reference = StaticSRCNN(upscale_factor=2.0).eval()
    x = np.random.default_rng(2).uniform(0, 1, size=(1, 3, 16, 16)).astype(np.float32)
    with torch.no_grad():
        want = reference(torch.from_numpy(x)).numpy()
    (got,) = _session(out).run(None, {"input": x, "scales": np.array([2.0, 2.0], np.float32)})
    assert got.shape == (1, 3, 32, 32)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_srcnn_external_data_roundtrip(srcnn_exports, tmp_path) -> None:
    """The dynamo export saved with external weights: rewrite from the path, save elsewhere, run."""
    model = onnx.load(srcnn_exports["dynamo"])
    src = tmp_path / "src"
    src.mkdir()
    onnx.save(model, src / "srcnn.onnx", save_as_external_data=True, location="srcnn.onnx.data", size_threshold=256)
    result = make_dynamic_scale(load_model(src / "srcnn.onnx"), inplace=True)
    assert result.check.passed is True
    dst = tmp_path / "dst"
    dst.mkdir()
    out = save_model(result.model, dst / "srcnn.dynamic.onnx")
    assert (dst / "srcnn.dynamic.onnx.data").is_file()
    x = np.random.default_rng(3).uniform(0, 1, size=(1, 3, 16, 16)).astype(np.float32)
    (want,) = _session(srcnn_exports["dynamo"]).run(None, {"input": x})
    (got,) = _session(out).run(None, {"input": x, **result.feeds()})
    np.testing.assert_array_equal(got, want)
