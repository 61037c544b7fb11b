"""swap-plugin's built-in check (passes/swap_plugin/check.py): the one compare_models, run with
the plugin nodes through make_session; forward (three signatures), reverse, skips, failures, CLI."""

from __future__ import annotations

from pathlib import Path

import golden
import numpy as np
import onnx
import pytest

from graphsurgeon_tools.errors import CheckFailedError, UsageError
from graphsurgeon_tools.passes.swap_plugin import check as swap_check
from graphsurgeon_tools.passes.swap_plugin import swap_plugin

SIGNATURES = ("scales", "size-tensor", "sizes")
SPECS = Path(__file__).resolve().parents[3] / "graphsurgeon_tools" / "plugins" / "specs"  # package data


@pytest.mark.parametrize("signature", SIGNATURES)
def test_forward_check_is_exact_for_nearest_and_compares_the_site(signature) -> None:
    result = swap_plugin(golden.resize_model(13), signature=signature)
    check = result.check
    assert check is not None and check.passed is True and check.skipped is None
    assert check.atol == 0.0 and check.level == "ORT_ENABLE_EXTENDED"
    assert [o.name for o in check.outputs] == ["y"]
    assert [s.name for s in check.sites] == ["resized"]  # the plugin node's output, compared
    assert check.optimized == {} and check.levels == ["ORT_ENABLE_EXTENDED"]  # one session per model
    assert result.to_dict()["check"]["passed"] is True
    asked = swap_plugin(golden.resize_model(13), signature=signature, optimized_figure=True).check
    assert asked.optimized["level"] == "ORT_ENABLE_ALL" and asked.optimized["max_abs_diff"] == 0.0
    assert asked.levels == ["ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL"]


@pytest.mark.parametrize("signature", SIGNATURES)
def test_interpolating_plugins_are_compared_within_the_kernel_tolerance(signature) -> None:
    result = swap_plugin(golden.resize_model(13, mode="linear"), signature=signature)
    assert result.check.passed is True
    # 64 float32 ulps at the output's magnitude (random inputs in [0, 1): max(1, |ref|) is 1)
    assert result.check.atol == pytest.approx(swap_check.KERNEL_ULPS["float32"] * 2.0**-23)
    assert "64 ulps of float32" in result.check.tolerance
    assert any(n.startswith("check tolerance: dtype-aware default") for n in result.notes)


def test_size_input_is_fed_zeros_of_the_original_output_shape() -> None:
    result = swap_plugin(golden.resize_model(13), signature="size-tensor", size_input="out_size")
    assert result.check.passed is True
    assert result.check.sites and result.check.sites[0].name == "resized"


def test_sizes_signature_with_symbolic_dims_feeds_the_size_at_the_check_shapes() -> None:
    model = golden.resize_model(13, shape=(1, 3, None, None))
    result = swap_plugin(model, signature="sizes", check_dims=None)
    assert result.changed and result.pending_sizes  # the (h, w) depends on the input size
    assert result.check.passed is True
    assert "pending_sizes" not in result.to_dict()  # internal, not reported


def test_keep_constant_and_owned_models_are_checked(tmp_path) -> None:
    assert swap_plugin(golden.resize_model(13), keep_constant=True).check.passed is True
    path = tmp_path / "m.onnx"
    onnx.save(golden.resize_model(13), path)
    assert swap_plugin(str(path)).check.passed is True  # the pass owns the proto: original kept as bytes


def test_check_false_runs_no_check() -> None:
    result = swap_plugin(golden.resize_model(13), check=False)
    assert result.changed and result.check is None


def test_nothing_swapped_runs_no_check() -> None:
    plugin = swap_plugin(golden.resize_model(13)).model
    assert swap_plugin(plugin).check is None  # no Resize left


def test_generic_spec_skips_the_check_with_the_reason() -> None:
    from onnx import parser

    model = parser.parse_model("""
<ir_version: 8, opset_import: ["" : 16]>
g (float[N,3,8,8] x, float[N,4,5,2] grid) => (float[N,3,4,5] y) {
  s = GridSample <mode="bilinear"> (x, grid)
  y = Relu(s)
}
""")
    result = swap_plugin(model, spec=SPECS / "gridsample.toml")
    assert result.changed and result.check.passed is None
    assert "no ONNX Runtime kernel for grid_sampler" in result.check.skipped
    assert any(n.startswith("check skipped:") for n in result.notes)
    assert not result.failed


def test_a_plugin_op_type_without_kernel_skips_the_check() -> None:
    result = swap_plugin(golden.resize_model(13), plugin="MyResize")
    assert result.check.passed is None and "'MyResize'" in result.check.skipped


def test_a_difference_is_returned_and_raise_if_failed_names_the_site(monkeypatch) -> None:
    real = swap_check._forward_feeds

    def wrong_factor(*args, **kwargs):
        feeds = real(*args, **kwargs)
        return {k: np.asarray([1.0, 1.0, 1.0, 1.0], dtype=np.float32) for k in feeds}

    monkeypatch.setattr(swap_check, "_forward_feeds", wrong_factor)
    result = swap_plugin(golden.resize_model(13))
    assert result.failed and result.check.passed is False
    with pytest.raises(CheckFailedError, match="differs from your input model"):
        result.raise_if_failed()


def test_custom_op_libs_must_be_files(tmp_path) -> None:
    with pytest.raises(UsageError):
        swap_plugin(golden.resize_model(13), custom_op_libs=[tmp_path / "missing.so"])


# --------------------------------------------------------------------------- CLI


def test_the_plugin_model_runs_through_make_session_and_the_original_does_not(monkeypatch) -> None:
    from graphsurgeon_tools.runtime import session

    seen = []
    real = session.make_session

    def counting(model, **kwargs):
        seen.append(sorted({n.op_type for n in model.graph.node}))
        return real(model, **kwargs)

    monkeypatch.setattr(session, "make_session", counting)
    assert swap_plugin(golden.resize_model(13)).check.passed is True
    assert seen and all("DynamicTRTResize" in ops and "Resize" not in ops for ops in seen)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the fallback's one "slow kernel" warning
def test_the_extensions_fallback_kernel_passes_the_check_too(monkeypatch) -> None:
    monkeypatch.setenv("ONNXTOOL_RUNTIME_FALLBACK", "1")
    for mode in ("nearest", "linear"):
        assert swap_plugin(golden.resize_model(13, mode=mode), signature="size-tensor").check.passed is True


def test_sizes_the_shape_inference_cannot_give_come_from_one_run_of_the_original(monkeypatch) -> None:
    from graphsurgeon_tools.passes.make_dynamic_scale import layouts

    monkeypatch.setattr(layouts, "sizes_feeds", lambda *a, **k: {})  # as on DPT: inference stops at a Reshape
    model = golden.resize_model(13, shape=(1, 3, None, None), scales=(1.0, 1.0, 1.5, 2.0))
    result = swap_plugin(model, signature="sizes")
    assert result.pending_sizes and result.check.passed is True
    assert list(result.check.sites[0].shape[-2:]) == [48, 64]  # the check's 32x32 input at x1.5, x2
