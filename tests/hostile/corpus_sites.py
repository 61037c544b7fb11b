"""Hostile cases for "no silent claims" and "every written model loads": sites outside the main
graph, attributes out of range, opset imports from the future, and validate on nothing.

Same :class:`~hostile.corpus.Case` shape as :mod:`hostile.corpus` (run by
tests/hostile/test_hostile_sites.py through :mod:`hostile.harness`). Groups:

* ``attributes``: a Resize node whose attributes are out of range (every reader refuses:
  they are in ``ResizeSite.problems``) or a DynamicTRTResize node (``--reverse``) whose
  attributes lack a value, are mistyped or out of range: exit 3, naming the node
  (``resize.semantics.attribute_problems``).
* ``opsets``: an opset import of a domain onnx defines, newer than it knows: every reader,
  exit 3 (``core.opsets.raise_if_unknown_opsets``).
* ``bodies``: nonsense scales inside an If/Loop body: refused like main-graph ones.
* ``evidence``: validate fed NaN data (``--input x=nan.npy``): nothing would be compared,
  exit 3 (``validation.evidence.refuse_nan_input``).

``CLAIMS`` are valid models with sites outside the main graph: a command must exit 0 and
account for every site in its JSON report (rewritten, or skipped with a reason) - never
"nothing skipped" while a site stays baked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper

from hostile import models, nested
from hostile.corpus import READERS, Built, Case, registrar
from hostile.models import write

INVALID = 3
SWAP = frozenset({"swap-plugin"})
VALIDATE = frozenset({"validate"})

CASES: list[Case] = []
case = registrar(CASES)


def _built(tmp: Path, model: onnx.ModelProto, name: str = "model.onnx", extra: tuple[str, ...] = ()) -> Built:
    path = write(model, tmp / "in" / name)
    return Built(path, (name,), extra=extra)


# --------------------------------------------------------------------------- attributes (forward)


def _resize_with(**attrs) -> onnx.ModelProto:
    model = models.resize_model()
    node = model.graph.node[-1]
    kept = [a for a in node.attribute if a.name not in attrs]
    del node.attribute[:]
    node.attribute.extend(kept)
    node.attribute.extend(helper.make_attribute(k, v) for k, v in attrs.items())
    return model


def _forward_case(name: str, problem: str, **attrs) -> None:
    # Every reader: the one nonsense gate (ResizeSite.problems) holds attribute problems too.
    case(name, "attributes", INVALID, problem, commands=READERS)(lambda tmp: _built(tmp, _resize_with(**attrs)))


_forward_case("resize_mode_bogus", r"mode.*bogus", mode="bogus")
_forward_case("resize_nearest_mode_bogus", r"nearest_mode.*bogus", nearest_mode="bogus")
_forward_case("resize_exclude_outside_2", r"exclude_outside.*not one of", exclude_outside=2)
_forward_case(
    "resize_coordinate_mode_bogus", r"coordinate_transformation_mode.*bogus", coordinate_transformation_mode="bogus"
)
_forward_case("resize_cubic_coeff_nan", r"cubic_coeff_a.*finite", mode="cubic", cubic_coeff_a=float("nan"))


# --------------------------------------------------------------------------- attributes (--reverse)


def _plugin_model(**attrs) -> onnx.ModelProto:
    """A DynamicTRTResize node as swap-plugin writes it (scales input), then ``attrs`` set;
    an attribute given as None is left without a value."""
    scales = helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])
    node = helper.make_node(
        "DynamicTRTResize",
        ["x", "scales"],
        ["y"],
        name="plugin",
        domain="trt.plugins",
        mode="nearest",
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
        cubic_coeff_a=-0.75,
        exclude_outside=0,
        plugin_version="1",
        plugin_namespace="",
    )
    kept = [a for a in node.attribute if a.name not in attrs]
    del node.attribute[:]
    node.attribute.extend(kept)
    for key, value in attrs.items():
        if value is None:
            node.attribute.append(AttributeProto(name=key))  # a name, no type, no value
        else:
            node.attribute.append(helper.make_attribute(key, value))
    graph = helper.make_graph(
        [node],
        "plugin_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(models.X_SHAPE)), scales],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "c", "h", "w"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("trt.plugins", 1)])
    model.ir_version = 8
    return model


def _reverse_case(name: str, problem: str, **attrs) -> None:
    case(name, "attributes", INVALID, problem, commands=SWAP)(
        lambda tmp: _built(tmp, _plugin_model(**attrs), extra=("--reverse",))
    )


_reverse_case("plugin_mode_bogus", r"mode.*bogus", mode="bogus")
_reverse_case("plugin_mode_mistyped_int", r"mode.*must be STRING", mode=1)
_reverse_case("plugin_align_corners_string", r"align_corners.*must be INT", align_corners="yes")
_reverse_case("plugin_exclude_outside_7", r"exclude_outside.*not one of", exclude_outside=7)
_reverse_case("plugin_cubic_coeff_inf", r"cubic_coeff_a.*finite", cubic_coeff_a=float("inf"))
# (the structural checker already refuses an attribute without a type: it names the field)
_reverse_case("plugin_nearest_mode_no_value", r"nearest_mode.*no value|'type' of 'attr' is required", nearest_mode=None)
_reverse_case(
    "plugin_coordinate_mode_floats",
    r"coordinate_transformation_mode.*must be STRING",
    coordinate_transformation_mode=[1.0, 2.0],
)


# --------------------------------------------------------------------------- opsets from the future


def _with_opset(domain: str, version: int) -> onnx.ModelProto:
    model = models.resize_model()
    model.opset_import.append(helper.make_opsetid(domain, version))
    return model


OPSET = r"opset.*newer|newer.*opset"

case("opset_ai_onnx_ml_99", "opsets", INVALID, OPSET, commands=READERS)(
    lambda tmp: _built(tmp, _with_opset("ai.onnx.ml", 99))
)
case("opset_preview_training_99", "opsets", INVALID, OPSET, commands=READERS)(
    lambda tmp: _built(tmp, _with_opset("ai.onnx.preview.training", 99))
)


@case("opset_future_in_a_function", "opsets", INVALID, OPSET, commands=READERS)
def _(tmp: Path) -> Built:
    model = nested.function_model()
    model.functions[0].opset_import.append(helper.make_opsetid("ai.onnx.ml", 42))
    return _built(tmp, model)


# --------------------------------------------------------------------------- nonsense inside bodies


case("body_if_scales_zero", "bodies", INVALID, r"then_resize.*(zero|positive|> ?0)", commands=READERS)(
    lambda tmp: _built(tmp, nested.if_model(then_scales=(1, 1, 0, 2)))
)
case("body_loop_scales_nan", "bodies", INVALID, r"loop_resize.*nan", commands=READERS)(
    lambda tmp: _built(tmp, nested.loop_model(scales=(1, 1, float("nan"), 2)))
)
case("body_deep_scales_negative", "bodies", INVALID, r"deep_resize.*(negative|positive)", commands=READERS)(
    lambda tmp: _built(tmp, nested.nested_if_in_loop_model(scales=(1, 1, -2, 2)))
)


# --------------------------------------------------------------------------- validate on nothing


def _nan_input_case(name: str, fill) -> None:
    def build(tmp: Path) -> Built:
        model = write(models.resize_model(), tmp / "in" / "model.onnx")
        npy = tmp / "data" / "x.npy"
        npy.parent.mkdir(parents=True, exist_ok=True)
        np.save(npy, fill(np.zeros(models.X_SHAPE, np.float32)))
        return Built(model, ("x.npy",), extra=("--input", f"x={npy}"))

    case(name, "evidence", INVALID, r"NaN.*compare nothing", commands=VALIDATE)(build)


_nan_input_case("input_all_nan", lambda a: a + np.nan)
_nan_input_case("input_one_nan", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 7, np.nan, a))


# --------------------------------------------------------------------------- claims on valid models


@dataclass(frozen=True)
class Claim:
    """A valid model with sites outside the main graph and what a command must report.

    ``rewritten``/``skipped``: node names the JSON report must list there (skips with a
    reason matching ``reason``). ``scopes``: inspect's scope per site, in order.
    """

    name: str
    build: Callable[[], onnx.ModelProto]
    command: str
    args: tuple[str, ...] = ()
    rewritten: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    reason: str = ""
    scopes: tuple[str, ...] = field(default=())


CLAIMS = [
    Claim("if_bodies_rewritten", nested.if_model, "make-dynamic-scale", rewritten=("else_resize", "then_resize")),
    Claim(
        "loop_body_rewritten_factor", nested.loop_model, "make-dynamic-scale", ("--factor",), rewritten=("loop_resize",)
    ),
    Claim("scan_body_rewritten", nested.scan_model, "make-dynamic-scale", rewritten=("scan_resize",)),
    Claim(
        "if_in_loop_rewritten_shared",
        nested.nested_if_in_loop_model,
        "make-dynamic-scale",
        ("--shared",),
        rewritten=("deep_resize_else", "deep_resize"),
    ),
    Claim(
        "function_skipped",
        nested.function_model,
        "make-dynamic-scale",
        skipped=("fn_resize",),
        reason=r"function 'local\.Up'.*inline",
    ),
    Claim(
        "function_inlined",
        lambda: nested.function_model(calls=2),
        "make-dynamic-scale",
        ("--inline-functions",),
        rewritten=("fn_resize__1", "fn_resize__2"),
    ),
    Claim(
        "swap_skips_if_bodies",
        nested.if_model,
        "swap-plugin",
        skipped=("else_resize", "then_resize"),
        reason=r"inside If 'branch'.*main-graph sites only",
    ),
    Claim(
        "swap_skips_function",
        nested.function_model,
        "swap-plugin",
        skipped=("fn_resize",),
        reason=r"function 'local\.Up'",
    ),
    Claim(
        "swap_inlines_function",
        lambda: nested.function_model(calls=2),
        "swap-plugin",
        ("--inline-functions",),
        rewritten=("fn_resize__1", "fn_resize__2"),
    ),
    Claim(
        "inspect_lists_scopes",
        nested.nested_if_in_loop_model,
        "inspect",
        scopes=("Loop 'steps' body / If 'inner' else_branch", "Loop 'steps' body / If 'inner' then_branch"),
    ),
]

CASE_NAMES = [c.name for c in CASES] + [c.name for c in CLAIMS]
assert len(set(CASE_NAMES)) == len(CASE_NAMES), "duplicate case names"
