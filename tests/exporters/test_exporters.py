"""exporters: the SRCNN family, export() in both torch exporters, the weights.

The `onnxtool export srcnn` command around them: tests/cli/test_export_command.py.

Every (variant x exporter) that can work is exported once per session (lazily, so
an xdist worker only pays for the ones its tests use) and run in ONNX Runtime
against the PyTorch model; the dynamic variants at factors 2, 3 and 4, on a
square and a non-square, batch-2 input. Plugin exports are checked for the
structure TensorRT's parser reads, and run through onnxtool's plugin runtime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")

from exporters import export, srcnn  # noqa: E402
from exporters.models import PluginSRCNN, scales_tensor  # noqa: E402
from exporters.symbolic import PLUGIN_DOMAIN, PLUGIN_OP_TYPE  # noqa: E402
from graphsurgeon_tools.errors import CheckFailedError, ExitCode, UsageError  # noqa: E402

RTOL = ATOL = 1e-4
FACTORS = (2.0, 3.0, 4.0)
SHAPES = ((1, 8, 8), (2, 5, 7))  # (batch, height, width): square, and odd non-square
DYNAMIC = [("new-interpolate", "torchscript"), ("cxx-op", "torchscript"), ("cxx-op", "dynamo")]
PLUGINS = [(s, e) for s in ("scales", "size-tensor") for e in ("torchscript", "dynamo")]


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """``get(variant, exporter, signature="scales") -> (model, ExportResult, ModelProto)``, cached."""
    folder = tmp_path_factory.mktemp("exports")
    cache: dict = {}

    def get(variant: str, exporter: str, signature: str = "scales"):
        key = (variant, signature, exporter)
        if key not in cache:
            model = srcnn(variant, signature=signature)
            path = folder / f"{variant}_{signature}_{exporter}.onnx"
            result = export(model, model.example_inputs(3), path, exporter=exporter)
            cache[key] = (model, result, onnx.load(path))
        return cache[key]

    return get


def _session(proto: onnx.ModelProto):
    import onnxruntime as ort

    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


def _assert_matches(session, model, args, names) -> None:
    with torch.no_grad():
        want = model(*args).numpy()
    got = session.run(None, {n: a.numpy() for n, a in zip(names, args)})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# --- ONNX Runtime == PyTorch -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_static_variant_matches_pytorch(exported, exporter: str) -> None:
    model, result, proto = exported("static", exporter)
    assert result.ort_checked and result.ort_max_abs_diff < ATOL
    resize = [n for n in proto.graph.node if n.op_type == "Resize"]
    assert len(resize) == 1
    session = _session(proto)
    for batch, height, width in SHAPES:
        (x,) = model.example_inputs(batch=batch, height=height, width=width, seed=batch)
        _assert_matches(session, model, (x,), ["input"])
        assert session.run(None, {"input": x.numpy()})[0].shape == (batch, 3, 3 * height, 3 * width)


@pytest.mark.slow
@pytest.mark.parametrize("variant,exporter", DYNAMIC)
def test_dynamic_variant_matches_pytorch_at_factors_2_3_4(exported, variant: str, exporter: str) -> None:
    model, result, proto = exported(variant, exporter)
    # The factor really is an input: Resize reads the graph input "scales" directly.
    (resize,) = [n for n in proto.graph.node if n.op_type == "Resize"]
    assert resize.input[2] == "scales"
    assert [i.name for i in proto.graph.input] == ["input", "scales"]
    session = _session(proto)
    for factor in FACTORS:
        for batch, height, width in SHAPES:
            args = model.example_inputs(factor, batch=batch, height=height, width=width, seed=batch)
            _assert_matches(session, model, args, ["input", "scales"])
            out = session.run(None, {"input": args[0].numpy(), "scales": args[1].numpy()})[0]
            assert out.shape == (batch, 3, int(height * factor), int(width * factor))


def test_variants_compute_the_same_function() -> None:
    """Same weights, same bicubic: every variant equals the static model at factor 3 in eager mode."""
    static = srcnn("static")
    (x,) = static.example_inputs(batch=2, height=6, width=9)
    with torch.no_grad():
        want = static(x)
        for variant in ("new-interpolate", "cxx-op"):
            torch.testing.assert_close(srcnn(variant)(x, scales_tensor(3)), want, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(srcnn("plugin")(x, scales_tensor(3)), want, rtol=1e-5, atol=1e-5)
        size = torch.zeros(1, 1, 18, 27)
        torch.testing.assert_close(srcnn("plugin", signature="size-tensor")(x, size), want, rtol=1e-5, atol=1e-5)


# --- the plugin variant -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("signature,exporter", PLUGINS)
def test_plugin_export_has_the_node_tensorrt_reads(exported, signature: str, exporter: str) -> None:
    _, result, proto = exported("plugin", exporter, signature)
    assert not result.ort_checked and "custom-domain" in result.ort_skipped_reason
    onnx.checker.check_model(proto, full_check=True)
    (node,) = [n for n in proto.graph.node if n.op_type == PLUGIN_OP_TYPE]
    assert node.domain == PLUGIN_DOMAIN
    assert not [n for n in proto.graph.node if n.op_type in ("Resize", "Upsample")]
    assert {o.domain: o.version for o in proto.opset_import}[PLUGIN_DOMAIN] == 1
    second = "scales" if signature == "scales" else "size_tensor"
    assert list(node.input) == ["input", second]  # straight from the graph inputs, in this order
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attrs["plugin_version"] == b"1" and attrs["plugin_namespace"] == b""
    assert attrs["mode"] == b"cubic" and attrs["cubic_coeff_a"] == pytest.approx(-0.75)
    assert attrs["align_corners"] == 0 and attrs["exclude_outside"] == 0
    # Shape inference does not stop at the plugin: the model output keeps type and rank.
    out = proto.graph.output[0].type.tensor_type
    assert out.elem_type == onnx.TensorProto.FLOAT and len(out.shape.dim) == 4
    if signature == "size-tensor":
        size_dims = [d.dim_param for d in proto.graph.input[1].type.tensor_type.shape.dim]
        assert [d.dim_param for d in out.shape.dim][2:] == size_dims[2:]


@pytest.mark.slow
@pytest.mark.parametrize("signature,exporter", [("scales", "dynamo"), ("size-tensor", "torchscript")])
def test_plugin_export_runs_in_onnxtool_runtime(exported, signature: str, exporter: str) -> None:
    from graphsurgeon_tools.runtime import make_session

    model, _, proto = exported("plugin", exporter, signature)
    session = make_session(proto)
    names = ["input", "scales" if signature == "scales" else "size_tensor"]
    for factor in FACTORS:
        args = model.example_inputs(factor, batch=2, height=5, width=7, seed=3)
        _assert_matches(session, model, args, names)


def test_size_tensor_signature_gives_exactly_the_requested_size() -> None:
    """out/in ratios that are not exact in float32 (10/7, 13/9) must still land on the size asked for."""
    import torch.nn.functional as F

    x = torch.rand(1, 3, 7, 9)
    for align_corners in (False, True):
        model = PluginSRCNN("size-tensor", align_corners=align_corners)
        out = torch.ops.onnxtool_plugin.dynamic_trt_resize_size(x, torch.zeros(1, 1, 10, 13), align_corners)
        assert out.shape == (1, 3, 10, 13)
        want = F.interpolate(x, size=(10, 13), mode="bicubic", align_corners=align_corners)
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
        assert model.input_names == ("input", "size_tensor")


# --- what cannot work, and failures -------------------------------------------------------


def test_new_interpolate_with_dynamo_is_refused_with_the_reason(tmp_path: Path) -> None:
    model = srcnn("new-interpolate")
    with pytest.raises(UsageError, match="symbolic") as info:
        export(model, model.example_inputs(3), tmp_path / "x.onnx", exporter="dynamo")
    assert info.value.exit_code == ExitCode.USAGE
    assert not (tmp_path / "x.onnx").exists()


class _DriftingModel(torch.nn.Module):
    """Eager output changes after the first call: the trace records x*1, eager then gives x*2."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * float(self.calls)


def test_mismatch_raises_and_leaves_the_destination_untouched(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"previous output")
    with pytest.raises(CheckFailedError, match="ONNX Runtime differs from PyTorch") as info:
        export(_DriftingModel(), (torch.ones(2, 3),), path, dynamic=False)
    assert info.value.exit_code == ExitCode.CHECK_FAILED
    assert path.read_bytes() == b"previous output"
    assert [p.name for p in tmp_path.iterdir()] == ["model.onnx"]  # no temp file left behind


def test_srcnn_factory_rejects_nonsense(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="variant"):
        srcnn("dynamic")
    with pytest.raises(ValueError, match="plugin variant only"):
        srcnn("cxx-op", signature="size-tensor")
    with pytest.raises(FileNotFoundError, match="train_srcnn"):
        srcnn("static", weights=tmp_path / "missing.pt")


# --- the shipped weights --------------------------------------------------------------------


def test_shipped_weights_beat_bicubic_on_a_held_out_image() -> None:
    from exporters.train_srcnn import HELD_OUT, TRAIN, downscale, load_image, psnr

    assert not set(HELD_OUT) & set(TRAIN) and "cat" not in TRAIN  # cat is chelsea
    hr = load_image("astronaut")[..., 150:270, 180:300]  # 120x120: face and helmet, never trained on
    lr = downscale(hr)
    model = srcnn("static")
    with torch.no_grad():
        bicubic = torch.nn.functional.interpolate(lr, scale_factor=3, mode="bicubic", align_corners=False)
        gain = psnr(model(lr), hr) - psnr(bicubic, hr)
    assert gain > 0.1, f"SRCNN is only {gain:+.2f} dB over bicubic"
    assert sum(p.numel() for p in model.parameters()) < 30_000
