"""graphsurgeon_tools.runtime.make_session: ONNX Runtime sessions that run DynamicTRTResize.

Every numeric check compares against stock ONNX Runtime running the equivalent standard
Resize node on the same seeded inputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from graphsurgeon_tools.runtime import make_session, resize_kernel

OPSET = 19


def _plugin_model(
    second_shape, *, x_type=TensorProto.FLOAT, second_type=TensorProto.FLOAT, domain="trt.plugins", **attrs
):
    node = helper.make_node(
        "DynamicTRTResize",
        ["X", "S"],
        ["Y"],
        name="plugin",
        domain=domain,
        plugin_version="1",
        plugin_namespace="",
        **attrs,
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("X", x_type, ["N", "C", "H", "W"]),
            helper.make_tensor_value_info("S", second_type, second_shape),
        ],
        [helper.make_tensor_value_info("Y", x_type, ["N", "C", "H2", "W2"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(domain, 1)])


def _ort_resize(x, *, scales=None, sizes=None, **attrs):
    inputs = ["X", "", "S"] if sizes is None else ["X", "", "", "S"]
    s = scales if sizes is None else np.asarray(sizes, dtype=np.int64)
    node = helper.make_node("Resize", inputs, ["Y"], **attrs)
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph(
        [node],
        "r",
        [
            helper.make_tensor_value_info("X", elem, None),
            helper.make_tensor_value_info("S", helper.np_dtype_to_tensor_dtype(s.dtype), None),
        ],
        [helper.make_tensor_value_info("Y", elem, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x, "S": s})[0]


ATTRS = [
    dict(mode="nearest"),
    dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    dict(mode="linear"),
    dict(mode="linear", coordinate_transformation_mode="align_corners"),
    dict(mode="cubic"),
    dict(mode="cubic", coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.5, exclude_outside=1),
]


@pytest.mark.parametrize("attrs", ATTRS, ids=lambda a: "-".join(str(v) for v in a.values()))
@pytest.mark.parametrize("factor", [2.0, 3.0, 0.5])
def test_scales_signature_matches_ort_resize(attrs, factor):
    rng = np.random.default_rng(0)
    x = rng.random((2, 3, 6, 8), dtype=np.float32)
    scales = np.array([1, 1, factor, factor], dtype=np.float32)
    session = make_session(_plugin_model([4], **attrs))
    got = session.run(None, {"X": x, "S": scales})[0]
    want = _ort_resize(x, scales=scales, **attrs)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs", ATTRS[2:5], ids=lambda a: "-".join(str(v) for v in a.values()))
@pytest.mark.parametrize("out_hw", [(18, 24), (7, 5), (13, 29)])
def test_size_tensor_signature_resizes_to_its_last_two_dims(attrs, out_hw):
    rng = np.random.default_rng(1)
    x = rng.random((1, 3, 6, 8), dtype=np.float32)
    size_tensor = np.zeros((1, 1, *out_hw), dtype=np.float32)  # values never read
    session = make_session(_plugin_model([1, 1, "OH", "OW"], **attrs))
    got = session.run(None, {"X": x, "S": size_tensor})[0]
    want = _ort_resize(x, sizes=[1, 3, *out_hw], **attrs)
    assert got.shape == (1, 3, *out_hw)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_size_tensor_values_are_ignored():
    x = np.random.default_rng(2).random((1, 1, 4, 4), dtype=np.float32)
    session = make_session(_plugin_model([1, 1, "OH", "OW"], mode="linear"))
    a = session.run(None, {"X": x, "S": np.zeros((1, 1, 9, 7), np.float32)})[0]
    b = session.run(None, {"X": x, "S": np.full((1, 1, 9, 7), 123.0, np.float32)})[0]
    np.testing.assert_array_equal(a, b)


def test_int64_size_tensor_and_float64_input():
    x = np.random.default_rng(3).random((1, 2, 5, 5))  # float64
    model = _plugin_model([1, 1, "OH", "OW"], x_type=TensorProto.DOUBLE, second_type=TensorProto.INT64, mode="cubic")
    got = make_session(model).run(None, {"X": x, "S": np.zeros((1, 1, 10, 15), np.int64)})[0]
    assert got.dtype == np.float64 and got.shape == (1, 2, 10, 15)
    # ORT's Resize has no float64 kernel: onnx's reference evaluator is the yardstick here
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="cubic")
    graph = helper.make_graph(
        [node],
        "r",
        [
            helper.make_tensor_value_info("X", TensorProto.DOUBLE, None),
            helper.make_tensor_value_info("S", TensorProto.INT64, None),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)],
    )
    reference = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]))
    want = reference.run(None, {"X": x, "S": np.array([1, 2, 10, 15], np.int64)})[0]
    # the acceptance tolerance: scale = out/in is carried in float32 on one side
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_missing_attributes_take_onnx_resize_defaults():
    # a bare node (no attributes at all) is nearest / half_pixel / round_prefer_floor
    node = helper.make_node("DynamicTRTResize", ["X", "S"], ["Y"], domain="other.domain")
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("S", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("other.domain", 1)]
    )
    x = np.random.default_rng(4).random((1, 1, 3, 5), dtype=np.float32)
    scales = np.array([1, 1, 1.7, 2.3], np.float32)
    got = make_session(model).run(None, {"X": x, "S": scales})[0]
    np.testing.assert_array_equal(got, _ort_resize(x, scales=scales))


def test_the_callers_model_is_not_modified():
    model = _plugin_model([4], mode="linear")
    before = model.SerializeToString()
    make_session(model)
    assert model.SerializeToString() == before
    assert model.graph.node[0].domain == "trt.plugins"


def test_path_input_with_external_data(tmp_path):
    # a Conv after the plugin whose weight lives in an external data file next to the model
    weight = np.random.default_rng(5).random((2, 2, 3, 3), dtype=np.float32)
    model = _plugin_model([4], mode="linear")
    model.graph.output[0].name = "R"
    model.graph.node[0].output[0] = "R"
    model.graph.initializer.append(numpy_helper.from_array(weight, "w"))
    model.graph.node.append(helper.make_node("Conv", ["R", "w"], ["Y"], pads=[1, 1, 1, 1]))
    model.graph.output[0].name = "Y"
    path = tmp_path / "ext.onnx"
    onnx.save(
        model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="ext.data", size_threshold=0
    )
    assert (tmp_path / "ext.data").is_file()
    x = np.random.default_rng(6).random((1, 2, 4, 4), dtype=np.float32)
    scales = np.array([1, 1, 2, 2], np.float32)
    got = make_session(path).run(None, {"X": x, "S": scales})[0]
    resized = _ort_resize(x, scales=scales, mode="linear")
    conv = ReferenceEvaluator(
        helper.make_model(
            helper.make_graph(
                [helper.make_node("Conv", ["R", "w"], ["Y"], pads=[1, 1, 1, 1])],
                "c",
                [helper.make_tensor_value_info("R", TensorProto.FLOAT, None)],
                [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                [numpy_helper.from_array(weight, "w")],
            ),
            opset_imports=[helper.make_opsetid("", OPSET)],
        )
    )
    np.testing.assert_allclose(got, conv.run(None, {"R": resized})[0], rtol=1e-4, atol=1e-5)


def test_model_without_plugin_nodes_from_path(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["X"], ["Y"])],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    )
    path = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), path)
    out = make_session(path).run(None, {"X": np.array([-1.0, 2.0], np.float32)})[0]
    np.testing.assert_array_equal(out, [0.0, 2.0])


def test_missing_file_is_a_user_error(tmp_path):
    from graphsurgeon_tools.errors import InvalidModelError

    with pytest.raises(InvalidModelError, match="not found"):
        make_session(tmp_path / "nope.onnx")


def test_wrong_scales_length_fails_the_run_with_the_reason():
    session = make_session(_plugin_model([3], mode="linear"))
    x = np.zeros((1, 1, 2, 2), np.float32)
    with pytest.raises(Exception, match="one entry per input dimension"):
        session.run(None, {"X": x, "S": np.ones(3, np.float32)})


def test_kernel_accepts_read_only_and_non_contiguous_arrays():
    base = np.random.default_rng(7).random((1, 2, 8, 10), dtype=np.float32)
    view = base[:, :, ::2, 1::2]  # non-contiguous
    view.setflags(write=False)
    scales = np.array([1, 1, 2, 3], np.float32)
    scales.setflags(write=False)
    got = resize_kernel(view, scales, mode="cubic")
    np.testing.assert_allclose(
        got, _ort_resize(np.ascontiguousarray(view), scales=scales, mode="cubic"), rtol=1e-4, atol=1e-5
    )
    assert not view.flags.writeable  # the caller's array is left as it was


def test_numpy_fallback_warns_once_and_matches(tmp_path):
    # A fresh interpreter with the fallback forced: the C++ op is not loaded at all.
    script = textwrap.dedent(
        """
        import warnings, numpy as np
        warnings.simplefilter("always")
        from onnx import helper, TensorProto
        from graphsurgeon_tools import runtime
        node = helper.make_node("DynamicTRTResize", ["X", "S"], ["Y"], domain="trt.plugins", mode="linear")
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", 1, None),
            helper.make_tensor_value_info("S", 1, [4])], [helper.make_tensor_value_info("Y", 1, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid("trt.plugins", 1)])
        x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
        s = runtime.make_session(m)
        a = s.run(None, {"X": x, "S": np.array([1, 1, 2, 2], np.float32)})[0]
        b = s.run(None, {"X": x, "S": np.array([1, 1, 3, 1.5], np.float32)})[0]
        np.save(r"%s", a)
        print("backend", runtime.kernel_backend(), a.shape, b.shape)
        """
        % (tmp_path / "a.npy")
    )
    env = dict(os.environ, ONNXTOOL_RUNTIME_FALLBACK="1")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "backend reference (1, 1, 6, 8) (1, 1, 9, 6)" in proc.stdout
    warning_lines = [line for line in proc.stderr.splitlines() if "ONNX reference implementation" in line]
    assert len(warning_lines) == 1, proc.stderr
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    want = _ort_resize(x, scales=np.array([1, 1, 2, 2], np.float32), mode="linear")
    np.testing.assert_allclose(np.load(tmp_path / "a.npy"), want, rtol=1e-5, atol=1e-6)


def test_exported_plugin_srcnn_runs(tmp_path):
    """The exporters' PluginSRCNN (both signatures) runs through make_session like the eager model."""
    torch = pytest.importorskip("torch")
    from exporters import models, symbolic

    symbolic.register_torchscript_symbolics()
    for signature in ("scales", "size-tensor"):
        net = models.PluginSRCNN(signature=signature).eval()
        x, second = net.example_inputs(3.0, height=6, width=5)
        path = tmp_path / f"plugin_{signature}.onnx"
        torch.onnx.export(
            net,
            (x, second),
            str(path),
            dynamo=False,
            opset_version=17,
            input_names=["input", "second"],
            output_names=["output"],
        )
        got = make_session(path).run(None, {"input": x.numpy(), "second": second.numpy()})[0]
        with torch.no_grad():
            want = net(x, second).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("attrs", "shape", "scales"),
    [
        # ORT (and PyTorch, MMDeploy) map align_corners through the integer output size, the
        # ONNX reference through the fractional in*scale: the kernel must side with ORT
        (dict(mode="linear", coordinate_transformation_mode="align_corners"), (1, 1, 2, 4), (1, 1, 0.6, 0.6)),
        (dict(mode="cubic", coordinate_transformation_mode="align_corners"), (1, 1, 4, 4), (1, 1, 0.8, 1.7)),
        (
            dict(mode="nearest", coordinate_transformation_mode="align_corners", nearest_mode="floor"),
            (1, 1, 3, 5),
            (1, 1, 1.5, 1.3),
        ),
        # pytorch_half_pixel with an output length of 1 maps to 0 in ORT
        (dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), (1, 1, 2, 4), (1, 1, 0.75, 1.5)),
        # float32 vs float64 output size: 0.7f * 10 = 6.99999988 -> ORT says 7 (float32 product)
        (dict(mode="linear"), (1, 1, 10, 10), (1, 1, 0.7, 0.7)),
    ],
)
def test_kernel_reproduces_ort_where_ort_departs_from_the_onnx_reference(attrs, shape, scales):
    x = np.random.default_rng(8).random(shape, dtype=np.float32)
    s = np.array(scales, np.float32)
    want = _ort_resize(x, scales=s, **attrs)
    got = make_session(_plugin_model([4], **attrs)).run(None, {"X": x, "S": s})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
