"""Each known departure is found by certify on a model built to contain it, at exactly the lengths where
it occurs (cross-checked by running the engines there directly), as a counterexample with its cause.

The `onnxtool certify` command (its report, JUnit, usage errors): tests/cli/test_certify_command.py."""

from __future__ import annotations

import certify_models as cm
import numpy as np
import pytest

from graphsurgeon_tools.certify import certify


def _pair(certificate, a: str, b: str) -> dict:
    (site,) = certificate.to_dict()["sites"]
    return next(p for p in site["pairs"] if (p["a"], p["b"]) == (a, b))


def _lengths(pair: dict, axis: str, cause: str) -> set[int]:
    found = set()
    for group in pair["counterexamples"]:
        if group["axis"] == axis:
            assert group["cause"] == cause, group
            found |= {v for low, high in group["lengths"] for v in range(low, high + 1)}
    return found


def _direct(lengths, run_a, run_b, atol: float = 0.0) -> set[int]:
    """Lengths where the two engines, run directly on one random row each, disagree."""
    rng = np.random.default_rng(0)
    found = set()
    for length in lengths:
        x = rng.uniform(0.5, 1.5, (1, 1, 1, length)).astype(np.float32)
        if cm.differ(run_a(x), run_b(x), atol):
            found.add(length)
    return found


def test_ort_nearest_at_a_fractional_ratio_picks_other_pixels_than_pytorch_where_it_does():
    torch = pytest.importorskip("torch")
    model = cm.resize_model("nearest", "asymmetric", "floor")  # what interpolate(mode="nearest") exports
    cert = certify(model, profile="10..30:2.4", whole_model=False, onnx_reference_budget_s=0.5)
    pair = _pair(cert, "onnxruntime", "torch-interpolate")
    claimed = _lengths(pair, "w", "ort-nearest-fractional-ratio")
    direct = _direct(
        range(10, 31),
        lambda x: cm.run_ort(model, x, 2.4),
        lambda x: torch.nn.functional.interpolate(torch.from_numpy(x), scale_factor=(1.0, 2.4), mode="nearest").numpy(),
    )
    assert claimed == direct and 10 not in claimed and 30 in claimed  # some lengths agree, some do not
    assert _lengths(pair, "h", "ort-nearest-fractional-ratio") == direct  # the other axis alike
    first = pair["counterexamples"][0]["first"]
    assert len(first["a"]) == len(first["b"]) == 1 and first["a"][0][0] != first["b"][0][0]


def test_pytorch_half_pixel_at_output_length_one_departs_from_pytorch_exactly_there():
    torch = pytest.importorskip("torch")
    model = cm.resize_model("linear", "pytorch_half_pixel")
    cert = certify(model, profile="2..12:0.25", whole_model=False, onnx_reference_budget_s=0.5)
    pair = _pair(cert, "onnxruntime", "torch-interpolate")
    claimed = _lengths(pair, "w", "torch-pytorch-half-pixel-length-one")
    direct = _direct(
        range(4, 13),
        lambda x: cm.run_ort(model, x, 0.25),
        lambda x: torch.nn.functional.interpolate(
            torch.from_numpy(x), scale_factor=(1.0, 0.25), mode="bilinear", align_corners=False
        ).numpy(),
        1e-4,
    )
    assert claimed == direct == {4, 5, 6, 7}  # output length 1; 2 and 3 make no output at all
    assert {2, 3} <= {v for g in pair["not_run"] for low, high in g["lengths"] for v in range(low, high + 1)}


def test_cubic_pytorch_half_pixel_at_output_length_one_departs_from_the_reference_exactly_there():
    model = cm.resize_model("cubic", "pytorch_half_pixel")
    cert = certify(model, profile="4..12:0.25", whole_model=False, onnx_reference_budget_s=5.0, torch=False)
    pair = _pair(cert, "onnxruntime", "onnx-reference")
    claimed = _lengths(pair, "w", "ort-cubic-pytorch-half-pixel-length-one")
    direct = _direct(
        range(4, 13), lambda x: cm.run_ort(model, x, 0.25), lambda x: cm.run_reference(model, x, 0.25), 1e-4
    )
    assert claimed == direct == {4, 5, 6, 7}


def test_tensorrt_out_over_in_scale_departs_where_in_times_scale_is_not_whole():
    model = cm.resize_model("linear", "half_pixel")
    cert = certify(model, profile="20..30:2.5", whole_model=False, onnx_reference_budget_s=0.5, torch=False)
    pair = _pair(cert, "candidate", "tensorrt-model")
    claimed = _lengths(pair, "w", "trt-scale-arithmetic")
    # the arithmetic TensorRT's layer gets (output floor(in*scale), resized by out/in) is ONNX Runtime's
    # Resize given sizes: run both forms directly
    sized = cm.resize_model("linear", "half_pixel", param="sizes")
    direct = _direct(
        range(20, 31), lambda x: cm.run_ort(model, x, 2.5), lambda x: cm.run_ort(sized, x, 2.5, sizes=True), 1e-4
    )
    assert claimed == direct == {21, 23, 25, 27, 29}
    implementations = {i["name"]: i for i in cert.to_dict()["sites"][0]["implementations"]}
    trt = implementations["tensorrt-model"]
    assert trt["kind"] == "model" and "not a run" in trt["note"]


def test_align_corners_with_a_fractional_output_length_departs_between_ort_and_the_reference():
    model = cm.resize_model("linear", "align_corners")
    cert = certify(model, profile="5..12:2.5", whole_model=False, onnx_reference_budget_s=5.0, torch=False)
    pair = _pair(cert, "onnxruntime", "onnx-reference")
    claimed = _lengths(pair, "w", "align-corners-fractional-length")
    direct = _direct(range(5, 13), lambda x: cm.run_ort(model, x, 2.5), lambda x: cm.run_reference(model, x, 2.5), 1e-4)
    assert claimed == direct == {5, 7, 9, 11}
    assert cert.certified  # advisory pairs do not decide: the candidate equals ONNX Runtime's Resize


def test_a_candidate_with_one_coordinate_mode_changed_is_refused_with_the_first_counterexample(tmp_path):
    import onnx

    reference = cm.resize_model("linear", "half_pixel")
    mutated = cm.resize_model("linear", "asymmetric")
    onnx.save(reference, tmp_path / "reference.onnx")
    onnx.save(mutated, tmp_path / "mutated.onnx")
    cert = certify(
        tmp_path / "mutated.onnx",
        tmp_path / "reference.onnx",
        profile="16..40:1,2",
        whole_model=False,
        torch=False,
        onnx_reference_budget_s=0.2,
    )
    assert not cert.certified
    first = cert.first_counterexample()
    assert (first["length"], first["factor"], first["pair"]) == (16, 2.0, ["candidate", "onnxruntime"])
    assert "at height 16 -> 32 (x2)" in first["text"] and "weighs inputs" in first["text"]


def test_a_candidate_fed_sizes_is_refused_where_out_over_in_is_not_the_scale(tmp_path):
    import onnx

    reference = cm.resize_model("linear", "half_pixel")
    sized = cm.resize_model("linear", "half_pixel", param="sizes")  # what a sizes layout feeds the node
    onnx.save(reference, tmp_path / "reference.onnx")
    cert = certify(
        sized,
        tmp_path / "reference.onnx",
        profile="20..30:2,2.5",
        whole_model=False,
        torch=False,
        onnx_reference_budget_s=0.2,
    )
    assert not cert.certified
    pair = _pair(cert, "candidate", "onnxruntime")
    assert pair["gating"] and _lengths(pair, "w", "sizes-out-over-in") == {21, 23, 25, 27, 29}
    assert {g["factor"] for g in pair["identical"]} == {2.0, 2.5}  # x2, and the even lengths at x2.5


def test_sites_in_bodies_are_listed_as_skipped_and_nothing_certified_is_no_pass():
    from hostile import nested

    cert = certify(nested.if_model(), profile="8..10:2", whole_model=False, torch=False)
    skipped = {s["site"]: s["reason"] for s in cert.to_dict()["skipped_sites"]}
    assert set(skipped) == {"then_resize", "else_resize"} and all("If 'branch'" in r for r in skipped.values())
    assert not cert.certified and cert.summary_line().startswith("nothing certified")
