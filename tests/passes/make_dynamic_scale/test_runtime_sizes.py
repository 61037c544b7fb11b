"""Run-time sizes round(dim * constant): real torch exports with dynamic axes and recompute_scale_factor=True.

``F.interpolate(x, scale_factor=f, recompute_scale_factor=True)`` exported with dynamic axes by the
TorchScript exporter (opset 17) and the dynamo exporter (opset 18), 2-D and 3-D, and a kornia-style
``size=`` computed from another tensor's shape times a constant. For each:

* ``inspect`` shows the recognised pattern (the constants, the rounding);
* make-dynamic-scale rewrites it in every layout: the built-in check passes bit-exact, and the
  rewritten model fed the original factor equals the original at an input size where in*f is NOT
  whole (scales/factor layouts: the same arithmetic; sizes: fed the original's own output size);
* fed another factor it equals the module's own export at that factor (PyTorch's
  recompute_scale_factor semantics, output floor(in*f) resized by out/in);
* swap-plugin's size-tensor and sizes forms swap it; ``--reverse`` gives the outputs back.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from graphsurgeon_tools.inspection import inspect_model
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.runtime import make_session

torch = pytest.importorskip("torch", reason="the exports need torch (pip install -e '.[torch]')")

EXPORTS = (("torchscript", 17), ("dynamo", 18))


def _module(spatial: int, factor: float):
    import torch.nn.functional as F

    torch.manual_seed(0)  # the same weights for every factor
    conv = (torch.nn.Conv2d if spatial == 2 else torch.nn.Conv3d)(2, 3, 3, padding=1)
    mode = "bilinear" if spatial == 2 else "trilinear"

    class Up(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = conv

        def forward(self, x):
            return F.interpolate(
                self.conv(x), scale_factor=factor, mode=mode, align_corners=False, recompute_scale_factor=True
            )

    return Up().eval()


def _export(module, spatial: int, exporter: str, opset: int, path) -> onnx.ModelProto:
    example = torch.randn(1, 2, *([6] * spatial))
    names = ["d", "h", "w"][-spatial:]
    kwargs: dict = {}
    if exporter == "dynamo":
        dims = {axis + 2: torch.export.Dim(name, min=2, max=64) for axis, name in enumerate(names)}
        kwargs["dynamic_shapes"] = {"x": dims}
    else:
        kwargs["dynamic_axes"] = {"input": {axis + 2: name for axis, name in enumerate(names)}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (example,),
            str(path),
            dynamo=exporter == "dynamo",
            opset_version=opset,
            input_names=["input"],
            output_names=["output"],
            **kwargs,
        )
    return onnx.load(str(path))


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """(spatial, factor, exporter) -> (ONNX model, the module, export at factor 3 for the other-factor check)."""
    folder = tmp_path_factory.mktemp("runtime_sizes")
    made = {}
    for spatial, factor in ((2, 2.0), (2, 1.5), (3, 1.5)):
        for exporter, opset in EXPORTS:
            path = folder / f"up{spatial}d_{factor}_{exporter}.onnx"
            made[(spatial, factor, exporter)] = _export(_module(spatial, factor), spatial, exporter, opset, path)
    for exporter, opset in EXPORTS:
        made[(2, 3.0, exporter)] = _export(_module(2, 3.0), 2, exporter, opset, folder / f"up2d_3_{exporter}.onnx")
    return made


def _run(model: onnx.ModelProto, feeds: dict) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


CASES = [(s, f, e) for s, f in ((2, 2.0), (2, 1.5), (3, 1.5)) for e, _ in EXPORTS]


@pytest.mark.parametrize(("spatial", "factor", "exporter"), CASES, ids=[f"{s}d-x{f:g}-{e}" for s, f, e in CASES])
def test_inspect_shows_the_recognised_pattern(exports, spatial: int, factor: float, exporter: str) -> None:
    report = inspect_model(exports[(spatial, factor, exporter)], freedom=False).to_dict()
    (site,) = report["sites"]
    pattern = site["runtime_sizes"]
    assert pattern["factors"] == [factor] * spatial
    assert pattern["roundings"] == [("floor" if exporter == "torchscript" else "trunc")] * spatial
    assert any("a constant factor of data shapes" in note for note in site["notes"])


@pytest.mark.parametrize("layout", ["scales", "factor", "sizes"])
@pytest.mark.parametrize(("spatial", "factor", "exporter"), CASES, ids=[f"{s}d-x{f:g}-{e}" for s, f, e in CASES])
def test_every_layout_is_bit_exact_at_the_original_factor(
    exports, spatial: int, factor: float, exporter: str, layout: str
) -> None:
    original = exports[(spatial, factor, exporter)]
    if layout == "factor" and not factor.is_integer():
        from graphsurgeon_tools.errors import RefusedRequestError

        with pytest.raises(RefusedRequestError, match="not-whole-factor"):
            make_dynamic_scale(original, layout=layout)
        return
    result = make_dynamic_scale(original, layout=layout)
    assert result.check.passed is True and all(o.max_abs_diff == 0.0 for o in result.check.outputs)
    (site,) = result.to_dict()["rewritten"]
    assert site["source"] == "runtime-sizes" and site["original_scales"][2:] == [factor] * spatial
    (new,) = result.new_inputs
    assert new.shape == [spatial]
    onnx.checker.check_model(result.model, full_check=True)
    # an input size where in*f is not whole (7 * 1.5): the original's own arithmetic, bit for bit
    x = np.random.default_rng(spatial).standard_normal([1, 2] + [7] * spatial).astype(np.float32)
    want = _run(original, {"input": x})
    if layout == "sizes":
        feed = np.array(want.shape[2:], dtype=np.int64)
    else:
        feed = np.array([factor] * spatial, dtype=np.float32 if layout == "scales" else np.int64)
    np.testing.assert_array_equal(_run(result.model, {"input": x, new.name: feed}), want)


@pytest.mark.parametrize("exporter", [e for e, _ in EXPORTS])
def test_fed_another_factor_it_equals_the_export_at_that_factor(exports, exporter: str) -> None:
    result = make_dynamic_scale(exports[(2, 2.0, exporter)], layout="scales")
    x = np.random.default_rng(5).standard_normal([1, 2, 5, 9]).astype(np.float32)
    got = _run(result.model, {"input": x, "scales": np.array([3.0, 3.0], dtype=np.float32)})
    np.testing.assert_array_equal(got, _run(exports[(2, 3.0, exporter)], {"input": x}))


@pytest.mark.parametrize("exporter", [e for e, _ in EXPORTS])
@pytest.mark.parametrize("signature", ["size-tensor", "sizes"])
def test_swap_plugin_takes_it_and_reverses(exports, exporter: str, signature: str) -> None:
    original = exports[(2, 2.0, exporter)]
    result = swap_plugin(original, signature=signature)
    assert len(result.swapped) == 1 and result.check.passed is True
    x = np.random.default_rng(6).standard_normal([1, 2, 7, 9]).astype(np.float32)
    want = _run(original, {"input": x})
    feeds = {"input": x}
    if signature == "sizes":
        feeds["sizes"] = np.array([14, 18], dtype=np.int64)
    (got,) = make_session(result.model).run(None, feeds)
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    back = swap_plugin(result.model, reverse=True)
    np.testing.assert_array_equal(_run(back.model, feeds), want)


def test_sizes_from_another_tensors_shape_times_a_constant() -> None:
    """kornia-style: the output size is int(ref.shape * 0.5) of ANOTHER input; the constant is the factor."""
    ref = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,H,W] x, float[1,1,P,Q] ref) => (float[1,3,?,?] y) <float half = {0.5}, int64[1] two = {2}> {
  sh = Shape <start = 2> (ref)
  f = Cast <to = 1> (sh)
  m = Mul (f, half)
  hw = Cast <to = 7> (m)
  lead = Shape <end = 2> (x)
  sizes = Concat <axis = 0> (lead, hw)
  y = Resize <mode = "nearest"> (x, , , sizes)
}""")
    (site,) = inspect_model(ref, freedom=False).to_dict()["sites"]
    assert site["runtime_sizes"]["factors"] == [0.5, 0.5] and site["runtime_sizes"]["reads"] == ["ref"]
    result = make_dynamic_scale(ref, layout="scales")
    assert result.check.passed is True and result.new_inputs[0].value == [0.5, 0.5]
    x = np.random.default_rng(7).standard_normal([1, 3, 4, 6]).astype(np.float32)
    r = np.zeros([1, 1, 9, 11], dtype=np.float32)
    want = _run(ref, {"x": x, "ref": r})
    np.testing.assert_array_equal(
        _run(result.model, {"x": x, "ref": r, "scales": np.array([0.5, 0.5], np.float32)}), want
    )
