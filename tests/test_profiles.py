"""Profiles: the trtexec / Polygraphy / ORT TensorRT-provider strings, checked against the model's inputs."""

from __future__ import annotations

import re

import pytest
from lint import lint_models as m  # tests/lint/lint_models.py (tests/ is on sys.path, see conftest.py)

from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.profiles import tensorrt_profile

FACTOR_EXPANDED = (
    "shp = Shape <start=2> (X)\n  hw = Mul(shp, f)\n  nc = Constant <value = int64[2] {1, 3}> ()\n"
    "  sz = Concat <axis=0> (nc, hw)"
)


def _factor_model():
    return m.resize(
        x="float[N,3,H,W]", inputs="int64[2] f", opset=15, body_inputs="X, , , sz", extra_nodes=FACTOR_EXPANDED
    )


def _two_sizes_sites():
    """X -> Resize(sizes=a) -> Relu -> Resize(sizes=b): b's values depend on a's output."""
    return m.parse("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,?,?] X, int64[4] a, int64[4] b) => (float[?,?,?,?] Y) {
  U = Resize <mode="nearest"> (X, , , a)
  R = Relu(U)
  Y = Resize <mode="nearest"> (R, , , b)
}""")


def _parse_spec(spec: str) -> dict[str, list[int]]:
    return {name: [int(v) for v in dims.split("x")] for name, dims in (item.rsplit(":", 1) for item in spec.split(","))}


def test_a_factor_input_gets_its_values_and_the_data_input_its_shapes_in_every_spelling():
    profile = tensorrt_profile(
        _factor_model(), sizes=((32, 32), (64, 48), (128, 96)), factors=(1, 2, 4), batch=(1, 2, 8)
    )
    flags = profile.trtexec()
    assert [f.split("=")[0] for f in flags] == ["--minShapes", "--optShapes", "--maxShapes"]
    specs = [_parse_spec(f.split("=", 1)[1]) for f in flags]
    assert specs[0] == {"X": [1, 3, 32, 32], "f": [1, 1]}
    assert specs[1] == {"X": [2, 3, 64, 48], "f": [2, 2]}
    assert specs[2] == {"X": [8, 3, 128, 96], "f": [4, 4]}
    ort = profile.onnxruntime()
    assert ort == {f"trt_profile_{w}_shapes": f.split("=", 1)[1] for w, f in zip(("min", "opt", "max"), flags)}
    poly = profile.polygraphy()
    assert poly == [
        "--trt-min-shapes",
        "X:[1,3,32,32]",
        "f:[1,1]",
        "--trt-opt-shapes",
        "X:[2,3,64,48]",
        "f:[2,2]",
        "--trt-max-shapes",
        "X:[8,3,128,96]",
        "f:[4,4]",
    ]
    roles = {i.name: (i.role, i.values) for i in profile.inputs}
    assert roles == {"X": ("data", False), "f": ("factor", True)}


def test_every_dynamic_input_and_every_shape_input_of_the_model_is_listed_once():
    model = _factor_model()
    profile = tensorrt_profile(model, sizes=(16, 32, 64), factors=(1, 2, 3))
    names = [i.name for i in model.graph.input]
    listed = [i.name for i in profile.inputs]
    assert sorted(listed) == sorted(names) and len(set(listed)) == len(listed)
    for entry in profile.inputs:  # data shapes have the input's rank; shape values its length
        info = next(i for i in model.graph.input if i.name == entry.name)
        dims = info.type.tensor_type.shape.dim
        expected = len(dims) if entry.role == "data" else dims[0].dim_value
        assert len(entry.min) == len(entry.opt) == len(entry.max) == expected


def test_sizes_inputs_get_the_output_size_site_by_site():
    profile = tensorrt_profile(_two_sizes_sites(), sizes=(8, 16, 32), factors=(2, 2, 3))
    values = {i.name: (i.min, i.opt, i.max) for i in profile.inputs}
    assert values["a"] == ((1, 3, 16, 16), (1, 3, 32, 32), (1, 3, 96, 96))
    assert values["b"] == ((1, 3, 32, 32), (1, 3, 64, 64), (1, 3, 288, 288))
    assert re.search(r"--maxShapes=X:1x3x32x32,a:1x3x96x96,b:1x3x288x288$", " ".join(profile.trtexec()))


def test_a_float_scales_input_is_left_out_with_a_note():
    profile = tensorrt_profile(m.resize(x="float[1,3,?,?]", inputs="float[4] s"), sizes=(8, 8, 8), factors=(2, 2, 2))
    assert [i.name for i in profile.inputs] == ["X"]
    assert "layout=" in profile.notes[0] and "'s'" in profile.notes[0]


def test_static_inputs_need_no_entry():
    assert tensorrt_profile(m.constant_scales("1.0, 1.0, 2.0, 2.0"), sizes=(8, 8, 8), factors=(2, 2, 2)).inputs == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sizes": (64, 32, 128), "factors": (1, 2, 4)},
        {"sizes": (32, 64), "factors": (1, 2, 4)},
        {"sizes": (32, 64, 128), "factors": (1, (2, 2, 2), 4)},
    ],
)
def test_ranges_out_of_order_or_malformed_are_usage_errors(kwargs):
    with pytest.raises(UsageError):
        tensorrt_profile(_factor_model(), **kwargs)


def test_the_profile_text_of_the_cli_parses_into_sizes_and_factors():
    from graphsurgeon_tools.profiles import parse_profile, profile_report

    assert parse_profile("32x24,64,128x96:1,2x3,4") == (((32, 24), 64, (128, 96)), (1, (2, 3), 4))
    report = profile_report(_factor_model(), "32,64,128:1,2,4")
    assert report["trtexec"].startswith("--minShapes=X:1x3x32x32,f:1x1 ")
    assert set(report["onnxruntime"]) == {"trt_profile_min_shapes", "trt_profile_opt_shapes", "trt_profile_max_shapes"}
    for bad in ("32,64", "32,64,x:1,2,4", "32,64,128:0,1,2"):
        with pytest.raises(UsageError, match="profile="):
            parse_profile(bad)
    with pytest.raises(UsageError, match="factor/sizes inputs"):
        profile_report(_factor_model(), "32,64,128")
