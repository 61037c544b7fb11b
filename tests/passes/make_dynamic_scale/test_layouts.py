"""make-dynamic-scale layouts: scales | factor | sizes.

Each layout is bit-exact in ONNX Runtime at the original factors (the pass's own check and
a second input size), equals PyTorch at other whole factors (SRCNN) and the re-baked
original at other whole factors (PP-OCRv4, a real model nobody here wrote), and every
model written with a TensorRT layout passes ``lint_model(target="tensorrt")``.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest
from realmodels.fixtures import real_models  # noqa: F401 - the session fixture

from graphsurgeon_tools.lint import lint_model
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
from graphsurgeon_tools.profiles import tensorrt_profile

TRT_LAYOUTS = ("factor", "sizes")


def _model(opset: int, mode: str, scales: str = "1.0, 1.0, 2.0, 3.0", x: str = "float[1,3,5,7]") -> onnx.ModelProto:
    roi = ", float[0] roi = {}" if opset < 13 else ""
    inputs = "X, roi, s" if opset < 13 else "X, , s"
    return onnx.parser.parse_model(f"""
<ir_version: 8, opset_import: ["" : {opset}]>
g ({x} X) => (float[?,?,?,?] Y) <float[4] s = {{{scales}}}{roi}> {{
  Y = Resize <mode="{mode}"> ({inputs})
}}""")


def _run(model: onnx.ModelProto, feeds: dict) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("layout", ["scales", "factor", "sizes"])
def test_every_layout_is_bit_exact_at_the_original_factor(opset: int, mode: str, layout: str) -> None:
    original = _model(opset, mode)
    result = make_dynamic_scale(original, layout=layout)
    assert result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0
    (new,) = result.new_inputs
    assert (new.dtype, new.shape) == (("float32", [4]) if layout == "scales" else ("int64", [2]))
    assert new.value == {"scales": [1.0, 1.0, 2.0, 3.0], "factor": [2, 3], "sizes": [10, 21]}[layout]
    onnx.checker.check_model(result.model, full_check=True)
    report = lint_model(result.model, "tensorrt")
    assert report.failed is (layout == "scales"), report.to_dict()
    (site,) = result.to_dict()["rewritten"]
    assert site["layout"] == layout and site["onnxruntime"].startswith("equal")


@pytest.mark.parametrize("layout", TRT_LAYOUTS)
def test_integer_layouts_with_symbolic_dims_feed_the_size_for_the_check_shapes(layout: str) -> None:
    result = make_dynamic_scale(_model(13, "linear", x="float[1,3,H,W]"), layout=layout)
    assert result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0


def _resize10() -> onnx.ModelProto:
    return onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 10]>
g (float[1,3,5,7] X) => (float[?,?,?,?] Y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> { Y = Resize <mode="linear"> (X, s) }""")


@pytest.mark.parametrize(
    ("layout", "build", "reason"),
    [
        ("factor", lambda: _model(13, "linear", "1.0, 1.0, 1.5, 2.0"), "not a whole factor"),
        ("factor", lambda: _model(13, "linear", "1.0, 2.0, 2.0, 2.0"), "non-spatial"),
        ("sizes", _resize10, "Resize-11 or later"),
    ],
)
def test_layouts_refuse_what_they_cannot_express_with_the_reason(layout: str, build, reason: str) -> None:
    """A layout that can express no site fails the request (exit 3) with each site's reason."""
    from graphsurgeon_tools.errors import UnsupportedModelError

    with pytest.raises(UnsupportedModelError, match=reason) as raised:
        make_dynamic_scale(build(), layout=layout)
    assert raised.value.exit_code == 3


def test_the_report_says_where_tensorrt_departs_for_float_scales() -> None:
    result = make_dynamic_scale(_model(13, "linear", "1.0, 1.0, 1.5, 2.0"), layout="scales")
    (site,) = result.to_dict()["rewritten"]
    assert "7*1.5" not in site["tensorrt"] and "out/in" in site["tensorrt"]
    odd = make_dynamic_scale(_model(13, "linear", "1.0, 1.0, 1.5, 1.5"), layout="sizes")
    (site,) = odd.to_dict()["rewritten"]
    assert site["onnxruntime"].startswith("differs") and "7*1.5" in site["onnxruntime"]


@pytest.mark.parametrize("label", ["torchscript-11", "torchscript-17", "dynamo"])
@pytest.mark.parametrize("layout", TRT_LAYOUTS)
def test_srcnn_integer_layouts_match_pytorch_at_other_whole_factors(
    srcnn_exports, label: str, layout: str, tmp_path
) -> None:
    torch = pytest.importorskip("torch")
    from exporters.models import StaticSRCNN
    from graphsurgeon_tools.io import save_model

    result = make_dynamic_scale(srcnn_exports[label], layout=layout)
    assert result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0
    assert not lint_model(result.model, "tensorrt").failed
    out = save_model(result.model, tmp_path / "srcnn.int.onnx")
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    name = result.new_inputs[0].name
    x = np.random.default_rng(2).uniform(0, 1, size=(1, 3, 16, 16)).astype(np.float32)
    for factor in (2, 4):
        torch.manual_seed(0)  # the fixture built its model right after the same seed: same weights
        reference = StaticSRCNN(upscale_factor=float(factor)).eval()
        with torch.no_grad():
            want = reference(torch.from_numpy(x)).numpy()
        value = [factor, factor] if layout == "factor" else [16 * factor, 16 * factor]
        (got,) = session.run(None, {"input": x, name: np.array(value, dtype=np.int64)})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layout", TRT_LAYOUTS)
def test_ppocr_integer_layouts_are_bit_exact_at_its_factors_and_another_input_size(ppocr_det_path, layout: str) -> None:
    result = make_dynamic_scale(ppocr_det_path, layout=layout)
    assert len(result.rewritten) == 6 and result.check.passed is True
    assert result.check.outputs[0].max_abs_diff == 0.0
    assert not lint_model(result.model, "tensorrt").failed
    # its FPN concatenates the resized maps: only the original factors (2, 2, 2, 8, 4, 2) fit together
    x = np.random.default_rng(3).uniform(0, 1, size=(1, 3, 64, 96)).astype(np.float32)
    want = _run(onnx.load(str(ppocr_det_path)), {"x": x})
    if layout == "factor":
        feeds = result.feeds()
    else:
        from graphsurgeon_tools.passes.make_dynamic_scale.layouts import sizes_feeds
        from graphsurgeon_tools.resize import find_resize_sites

        sites = find_resize_sites(str(ppocr_det_path))
        feeds = sizes_feeds(
            onnx.load(str(ppocr_det_path)),
            [(i.name, s.input_name, tuple(s.scales[-2:])) for i, s in zip(result.new_inputs, sites)],
            {"x": [1, 3, 64, 96]},
        )
    np.testing.assert_array_equal(_run(result.model, {"x": x, **feeds}), want)


@pytest.mark.parametrize("layout", TRT_LAYOUTS)
def test_a_real_pytorch_model_matches_pytorch_at_other_whole_factors(real_models, layout: str, monkeypatch) -> None:
    """diffusers' VAE decoder (Upsample2D: F.interpolate(scale_factor=2.0, mode="nearest")), exported by
    the TorchScript exporter: rewritten, then fed factor 3 and 1 against PyTorch with that factor."""
    torch = pytest.importorskip("torch")
    from realmodels import builders

    path = real_models.path("vae_decoder/torchscript-17")
    result = make_dynamic_scale(path, layout=layout)
    # Exact at the check's optimisation level (ORT_ENABLE_EXTENDED); with ORT_ENABLE_ALL a dynamic
    # output size makes ONNX Runtime pick other convolution kernels downstream (3.6e-7, every layout).
    assert result.rewritten and result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0
    assert not lint_model(result.model, "tensorrt").failed
    model = builders.BUILDERS["vae_decoder"]()
    name = next(i.name for i in onnx.load(str(path)).graph.input)
    latents = model.example.numpy()
    interpolate = torch.nn.functional.interpolate
    for factor in (3, 1):

        def scaled(x, size=None, scale_factor=None, **kwargs):  # noqa: ANN001, ANN202 - torch's signature
            return interpolate(x, size=size, scale_factor=None if size is not None else factor, **kwargs)

        monkeypatch.setattr(torch.nn.functional, "interpolate", scaled)
        with torch.no_grad():
            want = model.module(model.example).numpy()
        monkeypatch.setattr(torch.nn.functional, "interpolate", interpolate)
        if layout == "factor":
            feeds = {i.name: np.array([factor, factor], dtype=np.int64) for i in result.new_inputs}
        else:  # one site per decoder up block: its input is the previous block's output
            sizes, side = {}, latents.shape[-1]
            for new in result.new_inputs:
                side = side * factor if sizes else side
                sizes[new.name] = np.array([side * factor, side * factor], dtype=np.int64)
            feeds = sizes
        got = _run(result.model, {name: latents, **feeds})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_profile_for_a_written_model_lists_its_new_inputs_as_shape_values(ppocr_det_path) -> None:
    result = make_dynamic_scale(ppocr_det_path, layout="factor", check=False)
    profile = tensorrt_profile(result.model, sizes=(32, 64, 128), factors=(1, 2, 4))
    names = {i.name: i.role for i in profile.inputs}
    assert names == {"x": "data", **{f"factor_{i}": "factor" for i in range(6)}}
    assert "factor_3:4x4" in profile.trtexec()[2]


def test_each_rewritten_site_reports_every_layout_expressible_or_why_not() -> None:
    result = make_dynamic_scale(_model(13, "linear", "1.0, 1.0, 1.5, 2.0", x="float[1,3,6,7]"))
    (site,) = result.to_dict()["rewritten"]
    table = site["layouts"]
    assert set(table) == {"scales", "factor", "sizes"}
    assert table["scales"]["expressible"] and "refuses a float32" in table["scales"]["tensorrt"]
    assert not table["factor"]["expressible"] and "not a whole factor" in table["factor"]["reason"]
    assert table["sizes"]["expressible"] and table["sizes"]["tensorrt"].startswith("equal to ONNX Runtime")
    assert table["sizes"]["onnxruntime"].startswith("equal at the original input size (6x7)")
