"""validate reads every make-dynamic-scale layout and the V3 plugin form: the SRCNN export with
the shipped weights, rewritten, then swept against the PyTorch reference at factors 2, 3 and 4."""

from __future__ import annotations

import pytest

from graphsurgeon_tools.io import save_model
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.validation.ports import model_ports


@pytest.fixture(scope="module")
def shipped_srcnn(tmp_path_factory):
    pytest.importorskip("torch")
    from graphsurgeon_tools import extensions

    path = tmp_path_factory.mktemp("srcnn") / "srcnn.onnx"
    extensions.command("export-srcnn")(
        path,
        variant="static",
        signature="scales",
        align_corners=False,
        exporter="torchscript",
        opset=None,
        factor=3.0,
        compare=False,
    )
    return path


@pytest.mark.parametrize("form", ["factor", "sizes", "v3"])
def test_validate_sweeps_integer_layouts_against_pytorch(shipped_srcnn, tmp_path, form):
    from graphsurgeon_tools.validation.api import validate

    if form == "v3":
        model = swap_plugin(shipped_srcnn, signature="sizes").model
    else:
        model = make_dynamic_scale(shipped_srcnn, layout=form).model
    path = save_model(model, tmp_path / f"srcnn.{form}.onnx")
    (port,) = model_ports(model).scale_inputs
    assert (port.layout, str(port.dtype)) == ({"factor": "pair"}.get(form, "sizes"), "int64")
    report = validate(path, "torch:srcnn", factors=[2, 3, 4])
    assert report.passed, report.to_dict()


def test_a_fractional_factor_for_a_whole_factor_input_is_refused(shipped_srcnn, tmp_path):
    from graphsurgeon_tools.errors import InvalidScalesError
    from graphsurgeon_tools.validation.api import validate

    path = save_model(make_dynamic_scale(shipped_srcnn, layout="factor").model, tmp_path / "f.onnx")
    with pytest.raises(InvalidScalesError, match="not whole"):
        validate(path, "torch:srcnn", factors=[2.5])
