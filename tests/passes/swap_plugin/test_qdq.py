"""swap-plugin on quantized Resize sites (DequantizeLinear -> Resize -> QuantizeLinear) and integer Resize.

Models are written from text the way onnxruntime.quantization writes the QDQ form (Resize is
one of its direct 8-bit ops: the output Q takes the input DQ's scale and zero point) and the
way a per-channel quantizer writes it (1-D scale, axis=1). The checks run in ONNX Runtime with
the compiled plugin library; tests/realmodels/test_deploy_forms_qdq.py does the same on models
quantized by onnxruntime.quantization.quantize_static.
"""

from __future__ import annotations

import golden
import numpy as np
import onnx
import onnx.parser
import pytest

from graphsurgeon_tools import swap_plugin
from graphsurgeon_tools.resize.original_values import original_feeds
from graphsurgeon_tools.resize.plugin_dtypes import DTYPE_CODE, KERNEL_DTYPES, kernel_takes
from graphsurgeon_tools.resize.qdq import UNFUSED_LEVEL, qdq_sites
from graphsurgeon_tools.runtime import make_session


def _qdq_model(
    mode: str = "linear",
    per_channel: bool = False,
    same: bool = True,
    channels: int = 4,
    dequantize_output: bool = True,
) -> onnx.ModelProto:
    """x (float) -> Q -> DQ -> Resize x2 -> Q -> DQ -> y: the quantizer's QDQ form around a Resize."""
    if per_channel:
        scale = "float[%d] s = {%s}" % (channels, ", ".join(f"{0.02 + 0.01 * i:g}" for i in range(channels)))
        zero = "int8[%d] z = {%s}" % (channels, ", ".join("0" for _ in range(channels)))
        out_scale = scale.replace("s =", "s2 =") if same else scale.replace("s =", "s2 =").replace("0.02", "0.05")
        out_zero = zero.replace("z =", "z2 =")
        axis = "<axis = 1>"
    else:
        scale, zero = "float s = {0.02}", "int8 z = {3}"
        out_scale, out_zero = ("float s2 = {0.02}", "int8 z2 = {3}") if same else ("float s2 = {0.03}", "int8 z2 = {0}")
        axis = ""
    tail = "yq = QuantizeLinear%s(r, s2, z2)\n    y = DequantizeLinear%s(yq, s2, z2)" % (axis, axis)
    out = "float[1,%d,16,16] y" % channels
    if not dequantize_output:
        tail = "y = QuantizeLinear%s(r, s2, z2)" % axis
        out = "int8[1,%d,16,16] y" % channels
    text = f"""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,{channels},8,8] x) => ({out})
    <{scale}, {zero}, {out_scale}, {out_zero}, float[4] k = {{1.0, 1.0, 2.0, 2.0}}> {{
        xq = QuantizeLinear{axis}(x, s, z)
        xd = DequantizeLinear{axis}(xq, s, z)
        r = Resize<mode = "{mode}">(xd, , k)
        {tail}
    }}"""
    return onnx.parser.parse_model(text)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
def test_qdq_sites_are_recognised_with_their_parameters(per_channel: bool) -> None:
    sites = qdq_sites(_qdq_model(per_channel=per_channel))
    (site,) = sites.values()
    assert site.full and site.dq and site.q and site.same_parameters is True
    assert site.per_channel is per_channel and site.axis == (1 if per_channel else None)
    assert "DequantizeLinear -> Resize -> QuantizeLinear" in site.describe()
    other = qdq_sites(_qdq_model(per_channel=per_channel, same=False))
    assert next(iter(other.values())).same_parameters is False


def test_a_plain_resize_is_not_a_qdq_site() -> None:
    import golden

    assert qdq_sites(golden.resize_model(13, mode="linear")) == {}


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
def test_the_float_plugin_inside_the_qdq_pair_passes_the_check_like_with_like(mode: str, per_channel: bool) -> None:
    model = _qdq_model(mode=mode, per_channel=per_channel)
    asked = mode == "cubic"  # the fused figure is opt-in: one more session per model
    result = swap_plugin(model, optimized_figure=asked)
    assert [s.op_type_after for s in result.rewritten] == ["DynamicTRTResize"]
    check = result.check
    assert check.passed is True, check.summary
    assert check.level == UNFUSED_LEVEL  # both models compute the same float function there
    assert "QLinearConv" in check.figures["qdq"]["text"] and "ORT_ENABLE_EXTENDED" in check.figures["qdq"]["text"]
    if asked:
        assert check.optimized["max_abs_diff"] is not None  # the fused difference: a figure
        assert check.levels == [UNFUSED_LEVEL, "ORT_ENABLE_ALL"]
        assert "the fused difference is the ORT_ENABLE_ALL figure" in check.figures["qdq"]["text"]
    else:
        assert check.optimized == {} and check.levels == [UNFUSED_LEVEL]
        assert "the fused difference is not measured" in check.figures["qdq"]["text"]
    # the plugin sits between the DQ and the Q the quantizer wrote: the deployable "inside" form
    nodes = {n.op_type: n for n in result.model.graph.node}
    plugin = nodes["DynamicTRTResize"]
    producer = {o: n.op_type for n in result.model.graph.node for o in n.output}
    assert producer[plugin.input[0]] == "DequantizeLinear"
    assert [n.op_type for n in result.model.graph.node if plugin.output[0] in n.input] == ["QuantizeLinear"]
    # and it runs at every ORT level
    feeds = {
        "x": np.random.default_rng(1).standard_normal((1, 4, 8, 8)).astype(np.float32),
        "scales": np.array([1, 1, 2, 2], np.float32),
    }
    assert make_session(result.model).run(None, feeds)[0].shape == (1, 4, 16, 16)


def test_the_requantized_rule_passes_only_within_one_step() -> None:
    """requantized.judge on a hand-made CheckResult: one step apart passes, two does not."""
    from graphsurgeon_tools.check.compare import compare_arrays
    from graphsurgeon_tools.check.equivalence import CheckResult
    from graphsurgeon_tools.check.tolerance import UlpTolerance
    from graphsurgeon_tools.passes.swap_plugin import requantized

    model = _qdq_model(mode="linear")
    plugin = swap_plugin(model, check=False).model
    sites = qdq_sites(model)
    tolerance = UlpTolerance({"float32": 64.0})
    feeds = {"scales": np.array([1, 1, 2, 2], np.float32)}

    def session_with_shift(shift: int):
        from graphsurgeon_tools.check.sessions import plugin_or_cpu_session as _session

        def factory(blob, options):
            inner = _session(blob, options)
            proto = onnx.ModelProto.FromString(blob)
            plugin_model = any(n.op_type == "DynamicTRTResize" for n in proto.graph.node)

            class Shifted:
                def get_inputs(self):
                    return inner.get_inputs()

                def get_outputs(self):
                    return inner.get_outputs()

                def run(self, names, feed, *args):
                    values = inner.run(names, feed, *args)
                    if plugin_model and shift:  # move one quantized element by ``shift`` steps
                        values = [v.copy() for v in values]
                        for v in values:
                            if v.dtype == np.int8:
                                v.flat[0] = np.clip(int(v.flat[0]) + shift, -128, 127)
                    return values

            return Shifted()

        return factory

    for shift, verdict in ((1, True), (2, False)):
        checked = CheckResult(passed=False, level=UNFUSED_LEVEL)
        checked.sites = [
            compare_arrays(np.ones(3, np.float32), np.ones(3, np.float32), atol=0, rtol=0, name="r", kind="site")
        ]
        checked.outputs = [compare_arrays(np.ones(3, np.float32), np.zeros(3, np.float32), atol=0, rtol=0, name="y")]
        requantized.judge(checked, model, plugin, feeds, sites, None, session_with_shift(shift), tolerance)
        assert checked.passed is verdict, (shift, checked.figures)
        assert "qdq" in checked.figures
        assert ("requantized" in checked.figures) is verdict


def test_a_float_site_that_differs_is_still_a_failure() -> None:
    from graphsurgeon_tools.check.compare import compare_arrays
    from graphsurgeon_tools.check.equivalence import CheckResult
    from graphsurgeon_tools.check.sessions import plugin_or_cpu_session as _session
    from graphsurgeon_tools.check.tolerance import UlpTolerance
    from graphsurgeon_tools.passes.swap_plugin import requantized

    model = _qdq_model(mode="linear")
    plugin = swap_plugin(model, check=False).model
    checked = CheckResult(passed=False, level=UNFUSED_LEVEL)
    checked.sites = [
        compare_arrays(np.ones(3, np.float32), np.zeros(3, np.float32), atol=0, rtol=0, name="r", kind="site")
    ]
    requantized.judge(
        checked,
        model,
        plugin,
        {"scales": np.array([1, 1, 2, 2], np.float32)},
        qdq_sites(model),
        None,
        _session,
        UlpTolerance({"float32": 64.0}),
    )
    assert checked.passed is False and "requantized" not in checked.figures


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_an_integer_resize_is_swapped_and_runs_in_the_library_as_ort_does(dtype: str, mode: str) -> None:
    """The one table (resize.kernel_dtypes) says the library runs integer nearest/linear: swapped, loaded
    in make_session with the compiled library, and equal to ORT's own integer Resize bit for bit."""
    model = golden.typed_resize_model(dtype, mode)
    result = swap_plugin(model, check=False)
    assert not result.skipped and [n.op_type for n in result.model.graph.node] == ["DynamicTRTResize"]
    info = np.iinfo(dtype)
    x = np.random.default_rng(7).integers(max(info.min, -1000), min(info.max, 1000) + 1, (1, 2, 4, 4)).astype(dtype)
    plugin = make_session(result.model)
    got = plugin.run(None, {**original_feeds(result.model), "x": x})[0]
    want = make_session(model).run(None, {"x": x})[0]
    assert got.dtype == want.dtype == np.dtype(dtype) and len(np.unique(want)) > 4
    np.testing.assert_array_equal(got, want)
    checked = swap_plugin(model)  # the built-in check agrees
    assert checked.check.passed is True, checked.check.summary


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32"])
@pytest.mark.parametrize("check", [True, False], ids=["check", "no-check"])
def test_an_integer_cubic_resize_is_refused_up_front(dtype: str, check: bool) -> None:
    from graphsurgeon_tools.resize.kernel_dtypes import kernel_dtype_problem

    model = golden.typed_resize_model(dtype, "cubic")
    result = swap_plugin(model, check=check)
    assert not result.rewritten and not result.new_inputs and result.check is None
    (skip,) = result.skipped
    assert skip.code == DTYPE_CODE and f"X is {dtype}" in skip.reason
    assert kernel_dtype_problem(dtype, "cubic") in skip.reason  # the reason is the one table's
    assert result.model.graph.node[0].op_type == "Resize"  # nothing written that make_session cannot run


def test_the_plugin_table_is_the_kernel_table() -> None:
    """plugin_dtypes derives from resize.kernel_dtypes (one home): the same types, per mode."""
    from graphsurgeon_tools.resize import kernel_dtypes

    assert KERNEL_DTYPES["DynamicTRTResize"] == {e.onnx_elem for e in kernel_dtypes.KERNEL_DTYPES.values()}
    for entry in kernel_dtypes.KERNEL_DTYPES.values():
        for mode in ("nearest", "linear", "cubic"):
            assert kernel_takes(entry.onnx_elem, mode=mode) is (mode in entry.modes)


def test_the_kernel_table_names_the_types_the_library_runs() -> None:
    """The one table against the compiled library: every listed type runs."""
    from onnx import TensorProto, helper

    for elem in sorted(KERNEL_DTYPES["DynamicTRTResize"]):
        x = helper.make_tensor_value_info("x", elem, [1, 1, 2, 2])
        s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])
        y = helper.make_tensor_value_info("y", elem, None)
        node = helper.make_node(
            "DynamicTRTResize",
            ["x", "s"],
            ["y"],
            domain="trt.plugins",
            mode="nearest",
            plugin_version="1",
            plugin_namespace="",
        )
        model = helper.make_model(
            helper.make_graph([node], "g", [x, s], [y]),
            opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("trt.plugins", 1)],
        )
        session = make_session(model)
        if elem == TensorProto.BFLOAT16:  # numpy has no bfloat16: the session loading it is what is asked here
            assert session.get_inputs()[0].type == "tensor(bfloat16)"
            continue
        dtype = helper.tensor_dtype_to_np_dtype(elem)
        out = session.run(
            None, {"x": np.arange(4, dtype=dtype).reshape(1, 1, 2, 2), "s": np.array([1, 1, 2, 2], np.float32)}
        )[0]
        assert out.shape == (1, 1, 4, 4) and out.dtype == dtype
        np.testing.assert_array_equal(out[0, 0, ::2, ::2], np.arange(4, dtype=dtype).reshape(2, 2))


def test_the_integer_form_swaps_one_int8_plugin_node_and_checks() -> None:
    result = swap_plugin(_qdq_model(mode="nearest"), qdq_form="integer")
    assert result.check.passed is True, result.check.summary
    ops = [n.op_type for n in result.model.graph.node]
    assert ops == ["QuantizeLinear", "DynamicTRTResize", "DequantizeLinear"]
    make_session(result.model)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
def test_the_integer_form_refuses_linear_up_front_because_the_pair_rounds(per_channel: bool) -> None:
    """An integer linear node truncates its blend (ORT's integer Resize); the pair rounds it: one step apart.
    Refused in the pass with the reason, never through the check; the inside form passes it."""
    from graphsurgeon_tools.errors import RefusedRequestError

    for check in (True, False):
        with pytest.raises(RefusedRequestError, match="qdq_form='integer'") as refused:
            swap_plugin(_qdq_model(mode="linear", per_channel=per_channel), qdq_form="integer", check=check)
        (skip,) = refused.value.skipped
        assert skip.code == "qdq-integer-rounding" and "truncates" in skip.reason and 'qdq_form="inside"' in skip.reason
    inside = swap_plugin(_qdq_model(mode="linear", per_channel=per_channel))
    assert inside.check.passed is True, inside.check.summary


def test_the_integer_form_folds_dq_and_q_into_one_plugin_node() -> None:
    result = swap_plugin(_qdq_model(mode="nearest"), qdq_form="integer", check=False)
    ops = [n.op_type for n in result.model.graph.node]
    assert ops == ["QuantizeLinear", "DynamicTRTResize", "DequantizeLinear"]
    plugin = result.model.graph.node[1]
    assert plugin.input[0] == "xq" and plugin.output[0] == "yq"  # consumes and produces the quantized tensors
    assert any('qdq_form="integer"' in note for note in result.rewritten[0].notes)
    onnx.checker.check_model(result.model, full_check=True)
    # parameters that differ cannot be one integer node; integer cubic has no kernel
    from graphsurgeon_tools.errors import RefusedRequestError

    with pytest.raises(RefusedRequestError) as refused:
        swap_plugin(_qdq_model(mode="nearest", same=False), qdq_form="integer", check=False)
    assert [s.code for s in refused.value.skipped] == ["qdq-parameters-differ"]
    with pytest.raises(RefusedRequestError, match="qdq_form='integer'") as refused:
        swap_plugin(_qdq_model(mode="cubic"), qdq_form="integer", check=False)
    (skip,) = refused.value.skipped  # the one table's reason first: no integer cubic kernel at all
    assert skip.code == DTYPE_CODE and 'qdq_form="integer"' in skip.reason and "mode 'cubic' on int8" in skip.reason


def test_the_integer_form_on_a_model_quantized_by_quantize_static(tmp_path) -> None:
    """Conv -> Resize -> Conv quantized per-tensor by onnxruntime.quantization: the quantizer writes
    DQ -> Resize -> Q with equal parameters; the integer form folds it, loads, and checks."""
    mode = "nearest"
    from onnx import TensorProto, helper, numpy_helper

    quantization = pytest.importorskip("onnxruntime.quantization")
    rng = np.random.default_rng(3)
    weights = [
        numpy_helper.from_array(rng.standard_normal((4, c, 3, 3)).astype(np.float32) * 0.3, f"w{i}")
        for i, c in enumerate((3, 4))
    ]
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "k")
    nodes = [
        helper.make_node("Conv", ["input", "w0"], ["a"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a"], ["b"]),
        helper.make_node("Resize", ["b", "", "k"], ["r"], mode=mode),
        helper.make_node("Conv", ["r", "w1"], ["output"], pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "net",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 16, 16])],
        weights + [scales],
    )
    source, target = tmp_path / "float.onnx", tmp_path / "int8.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), source)

    class Calibration(quantization.CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([{"input": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)} for _ in range(2)])

        def get_next(self):  # noqa: ANN201 - ORT's protocol
            return next(self.batches, None)

    quantization.quantize_static(
        str(source),
        str(target),
        Calibration(),
        quant_format=quantization.QuantFormat.QDQ,
        per_channel=False,
        activation_type=quantization.QuantType.QInt8,
        weight_type=quantization.QuantType.QInt8,
    )
    quantized = onnx.load(target)
    (site,) = [s for s in qdq_sites(quantized).values() if s.full]
    assert site.same_parameters is True and not site.per_channel
    result = swap_plugin(quantized, qdq_form="integer")
    assert result.check.passed is True, result.check.summary
    ops = [n.op_type for n in result.model.graph.node]
    assert "Resize" not in ops and ops.count("DynamicTRTResize") == 1
    plugin = next(n for n in result.model.graph.node if n.op_type == "DynamicTRTResize")
    assert plugin.input[0] == site.quantized_input and plugin.output[0] in site.quantized_outputs
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    out = make_session(result.model).run(None, {**original_feeds(result.model), "input": x})[0]
    assert out.shape == (1, 4, 16, 16) and np.ptp(out) > 0


def test_an_unknown_qdq_form_is_a_usage_error() -> None:
    from graphsurgeon_tools.errors import UsageError

    with pytest.raises(UsageError, match="qdq_form"):
        swap_plugin(_qdq_model(), qdq_form="fused")


def test_inspect_says_a_site_is_quantized() -> None:
    from graphsurgeon_tools.inspection import inspect_model

    (site,) = inspect_model(_qdq_model(per_channel=True)).sites
    assert any(n.startswith("quantized: DequantizeLinear -> Resize -> QuantizeLinear (per-channel") for n in site.notes)


def _chain() -> onnx.ModelProto:
    """Two quantized sites in a row, with different DQ and Q parameters (as ModelOpt writes them)."""
    return onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,4,4] x) => (float[1,2,16,16] y)
    <float a = {0.02}, int8 z = {0}, float b = {0.03}, float c = {0.05}, float[4] k = {1.0, 1.0, 2.0, 2.0}> {
        xq = QuantizeLinear(x, a, z)
        xd = DequantizeLinear(xq, a, z)
        r1 = Resize<mode = "linear">(xd, , k)
        q1 = QuantizeLinear(r1, b, z)
        d1 = DequantizeLinear(q1, b, z)
        r2 = Resize<mode = "linear">(d1, , k)
        q2 = QuantizeLinear(r2, c, z)
        y = DequantizeLinear(q2, c, z)
    }""")


def _moved(shifts: dict[str, float]):
    """A session factory whose plugin-model runs return ``shifts`` added to the named outputs: what a
    rounding flip upstream looks like downstream (the rule is judged on these values)."""
    from graphsurgeon_tools.check.sessions import plugin_or_cpu_session as _session

    def factory(blob, options):
        inner = _session(blob, options)
        proto = onnx.ModelProto.FromString(blob)  # the whole plugin model (not one site cut out of it)
        plugin_model = proto.graph.name != "site" and any(n.op_type == "DynamicTRTResize" for n in proto.graph.node)

        class Moved:
            def get_inputs(self):
                return inner.get_inputs()

            def get_outputs(self):
                return inner.get_outputs()

            def run(self, names, feed, *args):
                values = inner.run(names, feed, *args)
                if not plugin_model:
                    return values
                out = []
                for name, value in zip(names or [o.name for o in inner.get_outputs()], values):
                    if name in shifts:
                        value = value.copy()
                        value.flat[0] = value.flat[0] + np.asarray(shifts[name]).astype(value.dtype)
                    out.append(value)
                return out

        return Moved()

    return factory


@pytest.mark.parametrize(
    ("shifts", "verdict"),
    [
        ({"q1": 1, "q2": 3, "r2": 0.1, "y": 0.15}, True),  # q1 flips one step; everything after it follows
        ({"q1": 2, "q2": 3, "r2": 0.1, "y": 0.15}, False),  # the first move is two steps: not a rounding flip
        ({"r1": 0.1, "q2": 1, "y": 0.05}, False),  # the first site's own float output differs: a real failure
    ],
)
def test_a_chain_is_judged_from_its_first_requantization_flip(shifts, verdict) -> None:
    from graphsurgeon_tools.check.equivalence import compare_models
    from graphsurgeon_tools.check.tolerance import UlpTolerance
    from graphsurgeon_tools.passes.swap_plugin import requantized

    model = _chain()
    plugin = swap_plugin(model, check=False).model
    feeds = {i.name: np.array([1, 1, 2, 2], np.float32) for i in plugin.graph.input if i.name.startswith("scales")}
    assert len(feeds) == 2
    tolerance = UlpTolerance({"float32": 64.0})
    session = _moved(shifts)
    checked = compare_models(model, plugin, feeds, session_factory=session, level=UNFUSED_LEVEL, tolerance=tolerance)
    assert checked.passed is False  # the shifted values differ
    requantized.judge(checked, model, plugin, feeds, qdq_sites(model), None, session, tolerance)
    assert checked.passed is verdict, checked.figures
    if verdict:
        assert checked.figures["requantized"]["roots"] == ["q1"]
        assert set(checked.figures["requantized"]["per_site"]) == {"r1", "r2"}


def test_different_dq_and_q_parameters_swap_inside_the_pair() -> None:
    result = swap_plugin(_qdq_model(mode="linear", same=False))
    assert result.check.passed is True, result.check.summary
    assert "different scale/zero point" in result.check.figures["qdq"]["text"]


def test_modelopts_float16_form_is_checked_in_float16_ulps() -> None:
    """ModelOpt's INT8 ONNX PTQ with its default high_precision_dtype="fp16": opset 19, float16 scales on
    DQ/Q with different parameters on each side, float32 graph I/O cast at the boundary."""
    model = onnx.parser.parse_model("""
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[1,4,8,8] x) => (float[1,4,32,32] y)
    <float a = {0.02}, int8 z = {0}, float b = {0.03}, float c = {0.05}, float[4] k = {1.0, 1.0, 2.0, 2.0}> {
        h = Cast<to = 10>(x)
        xq = QuantizeLinear(h, a, z)
        xd = DequantizeLinear(xq, a, z)
        r1 = Resize<mode = "linear", coordinate_transformation_mode = "align_corners">(xd, , k)
        q1 = QuantizeLinear(r1, b, z)
        d1 = DequantizeLinear(q1, b, z)
        r2 = Resize<mode = "linear", coordinate_transformation_mode = "align_corners">(d1, , k)
        q2 = QuantizeLinear(r2, c, z)
        d2 = DequantizeLinear(q2, c, z)
        y = Cast<to = 1>(d2)
    }""")
    from onnx import numpy_helper

    for index, init in enumerate(model.graph.initializer):  # the scales as ModelOpt stores them: float16
        if init.name in ("a", "b", "c"):
            model.graph.initializer[index].CopyFrom(
                numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name)
            )
    onnx.checker.check_model(model, full_check=True)
    sites = qdq_sites(model)
    assert len(sites) == 2 and all(s.full and s.same_parameters is False for s in sites.values())
    result = swap_plugin(model)
    assert len(result.rewritten) == 2
    check = result.check
    assert check.passed is True, check.summary
    assert check.level == UNFUSED_LEVEL and "ulps of float16" in check.tolerance


def test_a_requantization_flip_is_judged_in_the_checks_own_two_sessions(monkeypatch) -> None:
    """swap-plugin's check on a quantized model (compare, then judge) inside its reuse scope: the
    quantized tensors and each site's input come from the two sessions the comparison kept, so each
    whole model gets ONE session; only the sites run alone are (small) models of their own."""
    from collections import Counter

    from onnxruntime.capi import onnxruntime_inference_collection as ort_collection

    from graphsurgeon_tools.check.equivalence import compare_models
    from graphsurgeon_tools.check.reuse import reuse_sessions
    from graphsurgeon_tools.check.tolerance import UlpTolerance
    from graphsurgeon_tools.passes.swap_plugin import requantized

    built: Counter = Counter()
    real = ort_collection.InferenceSession._create_inference_session

    def counting(self, *args, **kwargs):
        proto = onnx.ModelProto.FromString(self._model_bytes)
        plugin_nodes = any(n.op_type.startswith("DynamicTRTResize") for n in proto.graph.node)
        built["site" if proto.graph.name == "site" else "plugin" if plugin_nodes else "original"] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ort_collection.InferenceSession, "_create_inference_session", counting)
    model = _chain()
    plugin = swap_plugin(model, check=False).model
    feeds = {i.name: np.array([1, 1, 2, 2], np.float32) for i in plugin.graph.input if i.name.startswith("scales")}
    tolerance = UlpTolerance({"float32": 64.0})
    session = _moved({"q1": 1, "q2": 3, "r2": 0.1, "y": 0.15})
    sites = qdq_sites(model)
    with reuse_sessions():
        kept = requantized.kept_tensors(sites, plugin, "DynamicTRTResize")
        checked = compare_models(
            model, plugin, feeds, session_factory=session, level=UNFUSED_LEVEL, tolerance=tolerance, expose=kept
        )
        assert checked.passed is False
        requantized.judge(checked, model, plugin, feeds, sites, None, session, tolerance, reference=model)
    assert checked.passed is True and checked.figures["requantized"]["roots"] == ["q1"]
    assert built == {"original": 1, "plugin": 1, "site": 2}, built
