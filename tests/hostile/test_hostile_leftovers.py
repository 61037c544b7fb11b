"""The hostile round's three leftovers, through the real console script (a subprocess, as a user runs it).

1. An output path that is not valid UTF-8 (``-o $'out/x\\xff.onnx'``): make-dynamic-scale and
   swap-plugin write it (external data beside it under a name the model can record), and every
   report and message shows the name with ``\\xNN`` escapes (valid UTF-8, JSON included).
2. A generic spec whose ``graph_input`` extra input is named like a tensor of the model: exit 3,
   one line, before anything is written.
3. Upsample-9 / Resize with float64 or int64 scales (the schemas allow float32 only): exit 3 from
   every command that judges sites, one line naming the op version and the type.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import pytest
from onnx import TensorProto

from hostile import models
from hostile.harness import run_subprocess, snapshot

NON_UTF8 = os.fsdecode(b"x\xff")  # how Python holds the bytes of such a name: a lone surrogate
SHOWN = "x\\xff"  # how onnxtool prints them


def _external(folder: Path) -> Path:
    model = models.weighted_model()
    raw = models.externalize(model, "w", "weights.bin")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "weights.bin").write_bytes(raw)
    return models.write(model, folder / "model.onnx")


@pytest.mark.parametrize("command", ["make-dynamic-scale", "swap-plugin"])
def test_a_non_utf8_output_name_is_written_and_shown_escaped(command, tmp_path):
    source = _external(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    target = out / f"{NON_UTF8}.onnx"
    result = run_subprocess([command, str(source), "-o", str(target), "--json"], {})
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)  # the subprocess decoded stdout as strict UTF-8 already
    assert report["output"] == str(out / f"{SHOWN}.onnx")
    assert "\\udc" not in result.stdout  # no lone surrogate in the JSON either
    # the file has the exact bytes asked for; its data file a name the model can record
    assert sorted(os.listdir(os.fsencode(out))) == [b"x%FF.onnx.data", b"x\xff.onnx"]
    header = onnx.load(str(target), load_external_data=False)
    weight = next(t for t in header.graph.initializer if t.name == "w")
    assert [e.value for e in weight.external_data if e.key == "location"] == ["x%FF.onnx.data"]
    written = onnx.load(str(target))  # loads its external data through the recorded location
    assert float(onnx.numpy_helper.to_array(next(t for t in written.graph.initializer if t.name == "w"))[0, 0]) == -1.0
    onnx.checker.check_model(written, full_check=True)

    human = run_subprocess([command, str(source), "-o", str(out / f"{NON_UTF8}2.onnx"), "--no-check"], {})
    assert human.code == 0 and f"wrote {out}/{SHOWN}2.onnx" in human.stdout, human.stdout + human.stderr


def test_an_error_about_a_non_utf8_name_is_one_escaped_line(tmp_path):
    missing = tmp_path / f"{NON_UTF8}.onnx"
    result = run_subprocess(["make-dynamic-scale", str(missing)], {})
    assert result.code == 3
    assert result.stderr.count("\n") == 1 and f"{SHOWN}.onnx" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("y", "the output of node"),  # the graph output (and the Resize's output)
        ("scales", "an initializer"),
        ("x", "a graph input of another type"),
    ],
)
def test_a_generic_spec_extra_input_named_like_a_model_tensor_exits_3_before_writing(tmp_path, name, what):
    model = models.write(models.resize_model(), tmp_path / "in" / "model.onnx")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[plugin]\nop_type = "MyResize"\n[match]\nop_type = "Resize"\n'
        f'[[inputs.extra]]\nname = "{name}"\nkind = "graph_input"\ndtype = "float32"\nshape = [1]\n'
    )
    before = snapshot(tmp_path)
    result = run_subprocess(["swap-plugin", str(model), "--spec", str(spec), "-o", str(tmp_path / "o.onnx")], {})
    assert result.code == 3, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"[[inputs.extra]] name {name!r} is already {what}" in result.stderr, result.stderr
    assert str(spec) in result.stderr
    assert snapshot(tmp_path) == before  # nothing written


def test_a_generic_spec_extra_input_with_a_fresh_name_still_swaps(tmp_path):
    model = models.write(models.resize_model(), tmp_path / "model.onnx")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[plugin]\nop_type = "MyResize"\n[match]\nop_type = "Resize"\n'
        '[[inputs.extra]]\nname = "k"\nkind = "graph_input"\ndtype = "float32"\nshape = [1]\n'
    )
    result = run_subprocess(
        ["swap-plugin", str(model), "--spec", str(spec), "-o", str(tmp_path / "o.onnx"), "--no-check", "--json"], {}
    )
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["new_inputs"] == [{"name": "k", "dtype": "float32", "shape": [1]}]


def _upsample9(dtype: int) -> onnx.ModelProto:
    model = models.resize_model(opset=9, scales_dtype=dtype)
    model.graph.node[-1].op_type = "Upsample"
    del model.graph.node[-1].input[:]
    model.graph.node[-1].input.extend(["x", "scales"])
    return model


@pytest.mark.parametrize(
    ("label", "build", "expected"),
    [
        ("upsample9-float64", lambda: _upsample9(TensorProto.DOUBLE), "Upsample-9 takes scales as float32"),
        ("upsample9-int64", lambda: _upsample9(TensorProto.INT64), "Upsample-9 takes scales as float32"),
        (
            "resize13-float64",
            lambda: models.resize_model(scales_dtype=TensorProto.DOUBLE),
            "Resize-13 takes scales as float32",
        ),
    ],
)
@pytest.mark.parametrize("command", ["make-dynamic-scale", "swap-plugin", "inspect"])
def test_scales_of_a_type_the_op_version_refuses_exit_3(tmp_path, label, build, expected, command):
    model = build()
    assert (
        model.graph.input[0].name == "x"
        and np.dtype(onnx.helper.tensor_dtype_to_np_dtype(model.graph.initializer[0].data_type)) != np.float32
    )
    path = models.write(model, tmp_path / f"{label}.onnx")
    before = snapshot(tmp_path)
    writes = ["-o", str(tmp_path / "o.onnx")] if command != "inspect" else []
    result = run_subprocess([command, str(path), *writes], {})
    assert result.code == 3, (result.code, result.stderr)
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr and "Traceback" not in result.stderr
    if command == "inspect":  # its full ONNX checker (type constraints) refuses the model before the site judge
        assert "scales" in result.stderr and "float" in result.stderr, result.stderr
    else:
        assert expected in result.stderr, result.stderr
    assert snapshot(tmp_path) == before
