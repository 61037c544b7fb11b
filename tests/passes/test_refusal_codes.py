"""Every refusal code a pass produces, each from a small model that triggers it.

A refused site is a ``Skip`` carrying a :class:`graphsurgeon_tools.refusal.Refusal` with a
stable kebab-case code, and a plain string is no longer a refusal. Where the refusal carries a
fix (an API call), the CLI's hint beside it is that call spelled as a command
(``cli.vocabulary.fix_hint``); each fix here names a command ``onnxtool --help`` lists and only
keywords that have a flag, so a new pass's refusals need no hint table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import onnx.parser
import pytest
from hostile import nested
from onnx import TensorProto, helper

from graphsurgeon_tools import make_dynamic_scale, set_factor, swap_plugin
from graphsurgeon_tools.cli import app
from graphsurgeon_tools.cli.vocabulary import FLAGS, command_name, fix_hint, report_to_flags
from graphsurgeon_tools.errors import RefusedRequestError
from graphsurgeon_tools.passes.base import Skip
from graphsurgeon_tools.plugins import parse_spec
from graphsurgeon_tools.refusal import Fix, Refusal

SPECS = Path(__file__).resolve().parents[2] / "graphsurgeon_tools" / "plugins" / "specs"  # package data


def _parse(text: str) -> onnx.ModelProto:
    model = onnx.parser.parse_model(text)
    for index, node in enumerate(model.graph.node):
        node.name = node.name or f"n{index}_{node.op_type}"
    return model


#: A tensor of unknown rank (the checker wants a shape on graph inputs): x reshaped to a run-time shape.
UNKNOWN_RANK = "x = Reshape (x0, shp)\n"
UNKNOWN_RANK_INPUTS = "float[1,3,8,8] x0, int64[K] shp"


def _resize(opset: int, body: str, x: str = "float[1,3,8,8] x", extra: str = "", inits: str = "") -> onnx.ModelProto:
    rank = x.split("]")[0].count(",") + 1 if "[" in x else 4
    return _parse(
        f'<ir_version: 8, opset_import: ["" : {opset}]>\n'
        f"g ({x}{extra}) => (float[{','.join('?' * rank)}] y) {inits} {{ {body} }}"
    )


SCALES_2X = "<float[4] s = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}>"


def _scales(
    opset: int = 13, attrs: str = 'mode = "nearest"', scales: str = "1.0, 1.0, 2.0, 2.0", x: str = "float[1,3,8,8] x"
) -> onnx.ModelProto:
    count = scales.count(",") + 1
    return _resize(
        opset, f"y = Resize <{attrs}> (x, roi, s)", x=x, inits=f"<float[{count}] s = {{{scales}}}, float[0] roi = {{}}>"
    )


def _sizes(
    sizes: str = "1, 3, 16, 16", x: str = "float[1,3,8,8] x", attrs: str = 'mode = "nearest"', opset: int = 13
) -> onnx.ModelProto:
    count = sizes.count(",") + 1
    return _resize(opset, f"y = Resize <{attrs}> (x, , , z)", x=x, inits=f"<int64[{count}] z = {{{sizes}}}>")


def _pinned() -> onnx.ModelProto:
    return _parse(
        '<ir_version: 8, opset_import: ["" : 13]>'
        + """
    two (float[1,4,8,8] x, float[1,4,16,16] lateral) => (float[1,8,16,16] pinned_y)
    <float[4] scales = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}>
    {
        up = Resize <mode = "nearest"> (x, roi, scales)
        pinned_y = Concat <axis = 1> (up, lateral)
    }"""
    )


def _plugin(
    opset: int, second: str, inputs: str = "x, s", x: str = "float[1,3,8,8] x", body: str = ""
) -> onnx.ModelProto:
    return _parse(
        f'<ir_version: 8, opset_import: ["" : {opset}, "trt.plugins" : 1]>\n'
        f"g ({x}, {second}) => (float[?,?,?,?] y) {{\n{body}"
        f'  y = trt.plugins.DynamicTRTResize <mode = "nearest", coordinate_transformation_mode = '
        f'"asymmetric", nearest_mode = "floor"> ({inputs})\n}}'
    )


def _grid_sample(spec_edit: Callable[[str], str], *, in_body: bool = False) -> tuple[onnx.ModelProto, Any]:
    spec = parse_spec(spec_edit((SPECS / "gridsample.toml").read_text()), source="edited.toml")
    if not in_body:
        return _parse("""<ir_version: 8, opset_import: ["" : 16]>
        g (float[1,3,8,8] x, float[1,8,8,2] grid) => (float[1,3,8,8] y) {
          y = GridSample <mode = "nearest"> (x, grid)
        }"""), spec
    body = helper.make_graph(
        [helper.make_node("GridSample", ["x", "grid"], ["b"], name="body_gs")],
        "b",
        [],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 3, 8, 8])],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=body, else_branch=body)],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
            helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, 8, 8, 2]),
            nested.COND,
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    return model, spec


def _generic(model_spec: tuple[onnx.ModelProto, Any]) -> Any:
    model, spec = model_spec
    return swap_plugin(model, spec=spec)


DYNAMIC_SCALES = _resize(13, 'y = Resize <mode = "nearest"> (x, , s)', extra=", float[4] s")

NMS_RUNTIME_IOU = """<ir_version: 8, opset_import: ["" : 13]>
g (float[1,6,4] boxes, float[1,1,6] scores, float[1] iou) => (int64[K,3] selected) {
  selected = NonMaxSuppression (boxes, scores, "", iou)
}"""

#: (code, how a pass produces it). Several codes come from both passes; one case each suffices.
CASES: list[tuple[str, str, Callable[[], Any]]] = [
    # make-dynamic-scale: plan.check_site
    ("in-function", "mds", lambda: make_dynamic_scale(nested.function_model(), check=False)),
    ("upsample7-in-body", "mds", lambda: make_dynamic_scale(nested.upsample7_in_if_model(), check=False)),
    ("opset-bump-blocked", "mds", lambda: make_dynamic_scale(nested.upsample7_in_if_model(), check=False)),
    (
        "already-dynamic",
        "mds",
        lambda: make_dynamic_scale(
            _resize(13, 'y = Resize <mode = "nearest"> (x, , s)', extra=", float[4] s"), check=False
        ),
    ),
    (
        "runtime-scales",
        "mds",
        lambda: make_dynamic_scale(
            _resize(13, 'a = Abs (s)\n y = Resize <mode = "nearest"> (x, , a)', extra=", float[4] s"), check=False
        ),
    ),
    (
        "runtime-sizes",
        "mds",
        lambda: make_dynamic_scale(
            _resize(13, 'a = Abs (z)\n y = Resize <mode = "nearest"> (x, , , a)', extra=", int64[4] z"),
            from_sizes=True,
            check=False,
        ),
    ),
    (
        "static-shape-source",
        "mds",
        lambda: make_dynamic_scale(
            _resize(
                13,
                'sh = Shape (x)\n z = Mul (sh, two)\n y = Resize <mode = "nearest"> (x, , , z)',
                inits="<int64[4] two = {1, 1, 2, 2}>",
            ),
            check=False,
        ),
    ),
    (
        "static-shape-source",
        "swap",
        lambda: swap_plugin(
            _resize(
                13,
                'sh = Shape (x)\n z = Mul (sh, two)\n y = Resize <mode = "nearest"> (x, , , z)',
                inits="<int64[4] two = {1, 1, 2, 2}>",
            ),
            check=False,
        ),
    ),
    ("sizes-driven", "mds", lambda: make_dynamic_scale(_sizes(), check=False)),
    (
        "sizes-not-exact",
        "mds",
        lambda: make_dynamic_scale(_sizes("1, 3, 7, 7", x="float[1,3,3,3] x"), from_sizes=True, check=False),
    ),
    # make-dynamic-scale: the integer layouts (layouts.gate)
    ("layout-in-body", "mds", lambda: make_dynamic_scale(nested.if_model(), layout="sizes", check=False)),
    (
        "layout-needs-resize-11",
        "mds",
        lambda: make_dynamic_scale(
            _resize(9, 'y = Upsample <mode = "nearest"> (x, s)', inits="<float[4] s = {1.0, 1.0, 2.0, 2.0}>"),
            layout="sizes",
            check=False,
        ),
    ),
    (
        "layout-axes",
        "mds",
        lambda: make_dynamic_scale(
            _resize(18, 'y = Resize <mode = "nearest", axes = [2, 3]> (x, , s)', inits="<float[2] s = {2.0, 2.0}>"),
            layout="sizes",
            check=False,
        ),
    ),
    (
        "layout-tf-crop-and-resize",
        "mds",
        lambda: make_dynamic_scale(
            _resize(
                13,
                'y = Resize <mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"> (x, roi, s)',
                inits="<float[4] s = {1.0, 1.0, 2.0, 2.0}, float[8] roi = {0., 0., 0., 0., 1., 1., 1., 1.}>",
            ),
            layout="sizes",
            check=False,
        ),
    ),
    (
        "layout-no-spatial-axes",
        "mds",
        lambda: make_dynamic_scale(
            _resize(13, 'y = Resize <mode = "nearest"> (x, , s)', x="float[8,8] x", inits="<float[2] s = {2.0, 2.0}>"),
            layout="sizes",
            check=False,
        ),
    ),
    (
        "layout-non-spatial",
        "mds",
        lambda: make_dynamic_scale(_scales(scales="1.0, 2.0, 2.0, 2.0"), layout="sizes", check=False),
    ),
    (
        "not-whole-factor",
        "mds",
        lambda: make_dynamic_scale(_scales(scales="1.0, 1.0, 1.5, 1.5"), layout="factor", check=False),
    ),
    ("not-free", "mds", lambda: make_dynamic_scale(_pinned(), only_free=True, check=False)),
    # swap-plugin: forward (refusals.py, shape_input.py)
    ("in-body", "swap", lambda: swap_plugin(nested.if_model(), check=False)),
    (
        "unknown-rank",
        "swap",
        lambda: swap_plugin(
            _resize(
                13, UNKNOWN_RANK + 'y = Resize <mode = "nearest"> (x, , s)', x=UNKNOWN_RANK_INPUTS, extra=", float[N] s"
            ),
            signature="size-tensor",
            check=False,
        ),
    ),
    (
        "axes-unknown-rank",
        "swap",
        lambda: swap_plugin(
            _resize(
                18,
                UNKNOWN_RANK + 'y = Resize <mode = "nearest", axes = [2, 3]> (x, , s)',
                x=UNKNOWN_RANK_INPUTS,
                extra=", float[2] s",
            ),
            check=False,
        ),
    ),
    ("antialias", "swap", lambda: swap_plugin(_scales(18, 'mode = "linear", antialias = 1'), check=False)),
    (
        "keep-aspect-ratio",
        "swap",
        lambda: swap_plugin(
            _sizes(attrs='mode = "nearest", keep_aspect_ratio_policy = "not_larger"', opset=18),
            signature="size-tensor",
            check=False,
        ),
    ),
    (
        "tf-crop-and-resize",
        "swap",
        lambda: swap_plugin(
            _resize(
                13,
                'y = Resize <mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"> (x, roi, s)',
                inits="<float[4] s = {1.0, 1.0, 2.0, 2.0}, float[8] roi = {0., 0., 0., 0., 1., 1., 1., 1.}>",
            ),
            check=False,
        ),
    ),
    (
        "ctm-without-kernel",
        "swap",
        lambda: swap_plugin(
            _scales(11, 'mode = "nearest", coordinate_transformation_mode = "tf_half_pixel_for_nn"'), check=False
        ),
    ),
    (
        "legacy-nearest-downsample",
        "swap",
        lambda: swap_plugin(
            _resize(10, 'y = Resize <mode = "nearest"> (x, s)', inits="<float[4] s = {1.0, 1.0, 0.5, 0.5}>"),
            check=False,
        ),
    ),
    (
        "size-tensor-opset",
        "swap",
        lambda: swap_plugin(
            _resize(8, 'y = Upsample <mode = "nearest", scales = [1.0, 1.0, 2.0, 2.0]> (x)'),
            signature="size-tensor",
            check=False,
        ),
    ),
    (
        "size-tensor-rank",
        "swap",
        lambda: swap_plugin(_scales(scales="1.0, 1.0, 2.0", x="float[1,3,8] x"), signature="size-tensor", check=False),
    ),
    (
        "size-tensor-leading-axis",
        "swap",
        lambda: swap_plugin(_scales(scales="1.0, 2.0, 2.0, 2.0"), signature="size-tensor", check=False),
    ),
    (
        "size-tensor-inexact",
        "swap",
        lambda: swap_plugin(
            _scales(scales="1.0, 1.0, 1.5, 1.5", x="float[1,3,5,5] x"), signature="size-tensor", check=False
        ),
    ),
    (
        "sizes-not-hw",
        "swap",
        lambda: swap_plugin(
            _resize(13, 'y = Resize <mode = "linear"> (x, , s)', extra=", float[4] s"), signature="sizes", check=False
        ),
    ),
    (
        "plugin-dtype-unsupported",
        "swap",
        lambda: swap_plugin(
            _parse(
                '<ir_version: 8, opset_import: ["" : 13]>\ng (uint8[1,3,8,8] x) => (uint8[1,3,16,16] y) '
                '<float[4] s = {1.0, 1.0, 2.0, 2.0}, float[0] roi = {}> { y = Resize <mode = "cubic"> (x, roi, s) }'
            ),
            check=False,
        ),
    ),  # integer cubic: no kernel (resize.kernel_dtypes); integer nearest/linear are swapped
    (
        "qdq-integer-rounding",
        "swap",
        lambda: swap_plugin(
            _parse(
                '<ir_version: 8, opset_import: ["" : 17]>\ng (int8[1,2,4,4] xq) => (int8[1,2,8,8] yq) '
                "<float s = {0.1}, int8 z = {0}, float[4] k = {1.0, 1.0, 2.0, 2.0}> { x = DequantizeLinear (xq, s, z) "
                'y = Resize <mode = "linear"> (x, , k) yq = QuantizeLinear (y, s, z) }'
            ),
            qdq_form="integer",
            check=False,
        ),
    ),
    # swap-plugin: the generic spec engine
    (
        "spec-attributes-differ",
        "generic",
        lambda: _generic(
            _grid_sample(
                lambda t: t.replace('mode = ["bilinear", "linear", "nearest", "bicubic", "cubic"]', 'mode = "bilinear"')
            )
        ),
    ),
    (
        "spec-unknown-input",
        "generic",
        lambda: _generic(_grid_sample(lambda t: t.replace('order = ["X", "grid"]', 'order = ["X", "gird"]'))),
    ),
    ("spec-value-unmapped", "generic", lambda: _generic(_grid_sample(lambda t: t.replace("nearest = 1\n", "")))),
    ("input-not-constant", "generic", lambda: swap_plugin(_parse(NMS_RUNTIME_IOU), spec=SPECS / "nms.toml")),
    # swap-plugin: reverse
    (
        "plugin-arity",
        "reverse",
        lambda: swap_plugin(_plugin(13, "float[4] s, float[4] t", "x, s, t"), reverse=True, check=False),
    ),
    (
        "unknown-second-input",
        "reverse",
        lambda: swap_plugin(
            _plugin(13, "float[4] s0, int64[K] shp", "x, s", body="s = Reshape (s0, shp)\n"), reverse=True, check=False
        ),
    ),
    ("sizes-need-opset-11", "reverse", lambda: swap_plugin(_plugin(10, "int64[2] s"), reverse=True, check=False)),
    ("scales-need-opset-9", "reverse", lambda: swap_plugin(_plugin(7, "float[4] s"), reverse=True, check=False)),
    # set-factor: plan.plan_sites
    ("no-dynamic-input", "set", lambda: set_factor(_scales(), {"n0_Resize": 2}, check=False)),
    (
        "rank-unknown",
        "set",
        lambda: set_factor(
            _resize(
                13, UNKNOWN_RANK + 'y = Resize <mode = "nearest"> (x, , s)', x=UNKNOWN_RANK_INPUTS, extra=", float[4] s"
            ),
            every=2,
            check=False,
        ),
    ),
    ("no-recorded-value", "set", lambda: set_factor(DYNAMIC_SCALES, original=True, check=False)),
    ("factor-arity", "set", lambda: set_factor(DYNAMIC_SCALES, every=(2, 2, 2), check=False)),
    (
        "factor-not-whole",
        "set",
        lambda: set_factor(
            _resize(13, 'y = Resize <mode = "nearest"> (x, , , z)', extra=", int64[4] z"), every=1.5, check=False
        ),
    ),
    (
        "shared-input-factors-differ",
        "set",
        lambda: set_factor(
            _parse(
                '<ir_version: 8, opset_import: ["" : 13]>\ng (float[1,3,8,8] x, float[4] s) => (float[?,?,?,?] y, '
                'float[?,?,?,?] w) { y = Resize <mode = "nearest"> (x, , s) w = Resize <mode = "nearest"> (x, , s) }'
            ),
            {"n0_Resize": 2, "n1_Resize": 3},
            check=False,
        ),
    ),
]


#: The commands ``onnxtool --help`` lists.
COMMANDS = {info.name for info in app.registered_commands}


@pytest.mark.parametrize(("code", "where", "run"), CASES, ids=[f"{c[1]}:{c[0]}" for c in CASES])
def test_the_pass_refuses_with_this_code(code: str, where: str, run: Callable[[], Any]) -> None:
    try:
        result = run()
    except RefusedRequestError as refused:  # the requested form refused every site: the request failed
        assert f"[{code}]" in str(refused) and refused.exit_code == 3
        result = _Refused(refused.skipped)
    assert all(isinstance(s, Skip) and isinstance(s.refusal, Refusal) for s in result.skipped)
    codes = [s.code for s in result.skipped]
    assert code in codes, [(s.code, s.reason) for s in result.skipped]
    skip = result.skipped[codes.index(code)]
    assert skip.reason and skip.to_dict()["code"] == code
    # the CLI's report: a refusal's fix, spelled as the commands that apply it, sits beside it as its hint
    (flagged,) = [s for s in report_to_flags(result.to_dict())["skipped"] if s["code"] == code][:1]
    fix = skip.refusal.fix
    assert flagged.get("hint") == (fix_hint(fix.to_dict()) if fix else None)
    while fix is not None:  # every call is a command a user can reach, every keyword has a flag
        assert command_name(fix.call) in COMMANDS, (fix.call, sorted(COMMANDS))
        assert {key for key, _ in fix.keywords} <= set(FLAGS), fix.keywords
        fix = fix.then


class _Refused:
    """What a request that failed with RefusedRequestError reports: its skips."""

    def __init__(self, skipped: list) -> None:
        self.skipped = skipped

    def to_dict(self) -> dict:
        return {"skipped": [s.to_dict() for s in self.skipped]}


def test_the_fixes_hints_name_are_the_passes_commands() -> None:
    hints = {fix_hint(Fix(call).to_dict()) for call in ("make_dynamic_scale", "swap_plugin", "set_factor")}
    assert hints <= COMMANDS


def test_each_case_names_one_code_once() -> None:
    assert len({(c[0], c[1]) for c in CASES}) == len(CASES)


def test_sizes_driven_carries_the_from_sizes_fix() -> None:
    (skip,) = make_dynamic_scale(_sizes(), check=False).skipped
    assert skip.refusal.fix == Fix("make_dynamic_scale", (("from_sizes", True),))
    fixed = make_dynamic_scale(_sizes(), **dict(skip.refusal.fix.keywords), check=False)
    assert fixed.changed and not fixed.skipped  # the fix does what it says


def test_a_plain_string_is_not_a_refusal() -> None:
    with pytest.raises(TypeError, match="Refusal"):
        Skip("n", "Resize", "some reason")  # type: ignore[arg-type]


def test_swap_plugin_keeps_make_dynamic_scale_codes() -> None:
    # an inexact sizes-driven site: swap-plugin's scales signature converts through make-dynamic-scale
    with pytest.raises(RefusedRequestError) as refused:  # its only site refused: the request failed
        swap_plugin(_sizes("1, 3, 7, 7", x="float[1,3,3,3] x"), check=False)
    (skip,) = refused.value.skipped
    assert skip.code == "sizes-not-exact" and skip.reason.startswith("make-dynamic-scale: ")


def test_a_site_with_neither_scales_nor_sizes_is_refused_by_the_rule_itself() -> None:
    # the nonsense gate (resize.sanity) refuses such a model first; the rule still says why on its own
    import dataclasses

    from graphsurgeon_tools.passes.make_dynamic_scale.plan import check_site
    from graphsurgeon_tools.resize import find_resize_sites
    from graphsurgeon_tools.resize.sites import ValueSource

    (site,) = find_resize_sites(_scales())
    bare = dataclasses.replace(site, scales=None, scales_source=ValueSource.ABSENT, sizes_tensor="")
    plan, refusal = check_site(bare, from_sizes=True)
    assert plan is None and refusal.code == "no-scales-or-sizes"
