"""Why a node is NOT swapped: the check half of swap-plugin's rules.

Each function returns the :class:`~graphsurgeon_tools.refusal.Refusal` (a skip in the report) or None,
except :func:`raise_if_bad_attributes`, which refuses a node no rewrite can make loadable (InvalidModelError).

Requires: sites from ``find_resize_sites``, nodes of the main graph. Does NOT change the model.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import numpy as np

from graphsurgeon_tools.errors import InvalidModelError
from graphsurgeon_tools.plugins import PluginSpec
from graphsurgeon_tools.refusal import Fix, Refusal
from graphsurgeon_tools.resize.plugin_dtypes import dtype_refusal as refusal_of
from graphsurgeon_tools.resize.semantics import PLUGIN_CTMS, attribute_problems, is_legacy
from graphsurgeon_tools.resize.sites import ValueSource, in_function

__all__ = [
    "attribute_conditions_hold",
    "dtype_refusal",
    "name_matches",
    "raise_if_bad_attributes",
    "rank_refusal",
    "resize_refusal",
    "scope_refusal",
    "site_semantics",
    "sizes_or_scales_refusal",
]


def raise_if_bad_attributes(node: Any, version: int, label: str, rename: Optional[dict[str, str]] = None) -> None:
    """InvalidModelError for a Resize/Upsample/plugin node whose attributes are missing a value,
    mistyped or out of range (:func:`graphsurgeon_tools.resize.semantics.attribute_problems`):
    swapping it would write a node ONNX Runtime cannot load."""
    problems = attribute_problems(node, version, rename)
    if problems:
        name = node.name or (node.output[0] if node.output else node.op_type)
        raise InvalidModelError(f"{label}: node {name!r} ({node.op_type}): {problems[0]}")


def site_semantics(site: Any) -> dict[str, Any]:
    """The Resize attributes a spec's rules and match conditions read."""
    return {
        "mode": site.mode,
        "coordinate_transformation_mode": site.coordinate_transformation_mode,
        "cubic_coeff_a": float(site.cubic_coeff_a),
        "exclude_outside": int(site.exclude_outside),
        "nearest_mode": site.nearest_mode,
        "antialias": int(site.antialias),
        "extrapolation_value": float(site.extrapolation_value),
        "keep_aspect_ratio_policy": site.keep_aspect_ratio_policy,
    }


#: The fixes a swap-plugin refusal can name (the CLI spells them as commands).
INLINE_FUNCTIONS = Fix("swap_plugin", (("inline_functions", True),))
SIZE_TENSOR = Fix("swap_plugin", (("signature", "size-tensor"),))
FROM_SIZES_FIRST = Fix("make_dynamic_scale", (("from_sizes", True),), then=Fix("swap_plugin"))
SCALES_SIGNATURE = Fix("swap_plugin", (("signature", "scales"),))
SIMPLIFY_FIRST = Fix("make_dynamic_scale", (("from_sizes", True), ("simplify", True)), then=Fix("swap_plugin"))


def scope_refusal(site: Any) -> Refusal:
    """Why a site outside the main graph is not swapped (it always is refused)."""
    if in_function(site):
        return Refusal(
            "in-function",
            f"inside {site.scope}: swap-plugin swaps main-graph sites only "
            "(inline_functions=True inlines the function first)",
            INLINE_FUNCTIONS,
        )
    return Refusal(
        "in-body", f"inside {site.scope}: swap-plugin swaps main-graph sites only, not sites in control-flow bodies"
    )


def name_matches(spec: PluginSpec, name: str) -> bool:
    """The spec's own name patterns ([match] names); no patterns: every name."""
    import fnmatch

    return not spec.match.name_patterns or any(fnmatch.fnmatchcase(name, p) for p in spec.match.name_patterns)


def attribute_conditions_hold(spec: PluginSpec, attrs: dict[str, Any]) -> Optional[Refusal]:
    """None when the spec's [match.attributes] conditions hold, else the refusal."""
    for name, allowed in spec.match.attributes.items():
        if attrs.get(name) not in allowed:
            return Refusal("spec-attributes-differ", "the spec's [match.attributes] conditions do not hold")
    return None


def sizes_or_scales_refusal(site: Any, signature: str, keep_constant: bool, sources: Any = None) -> Optional[Refusal]:
    """A sizes-driven site that the scales signature cannot take (a site with neither input is
    refused before, by resize.sanity). ``sources``: a resize.shape_source.SourceNotes, asked where
    run-time sizes come from (added to the reason) only for a site refused here."""
    if signature == "scales" and site.scales_source == ValueSource.ABSENT and (keep_constant or site.sizes is None):
        sizes_source = sources.of_site(site).get("sizes") if sources is not None else None
        reason = (
            'driven by sizes, not scales: use signature="size-tensor" '
            "(or make_dynamic_scale with from_sizes=True first)"
        )
        text = f"{reason}; its sizes are {sizes_source}" if sizes_source else reason
        if sizes_source and "simplify=True" in sizes_source:  # static shape arithmetic: onnxsim folds it
            return Refusal("static-shape-source", text, SIMPLIFY_FIRST)
        return Refusal("sizes-driven", text, SIZE_TENSOR if site.sizes is None or keep_constant else FROM_SIZES_FIRST)
    return None


def dtype_refusal(site: Any, types: dict[str, Any], op_type: str) -> Optional[Refusal]:
    """A site whose X element type x mode (x antialias) the plugin's compiled kernel does not run
    (resize.kernel_dtypes, the one table): refused here, before anything changes, so no run (checked
    or not) writes a plugin node that ONNX Runtime cannot load or run. An op_type with no kernel here
    is the user's plugin: not judged. X of unknown type is taken as float32 (what the exporters write).
    Antialias on a type the kernel runs is left to resize_refusal (code ``antialias``)."""
    x_type = types.get(site.input_name)
    elem = x_type.tensor_type.elem_type if x_type is not None and x_type.HasField("tensor_type") else 0
    return _refusal_of(elem, op_type, site.mode)


@functools.lru_cache(maxsize=256)
def _refusal_of(elem: int, op_type: str, mode: str) -> Optional[Refusal]:
    """resize.plugin_dtypes.dtype_refusal (pure; a Refusal is frozen): worked out once per kind of site."""
    return refusal_of(elem, op_type, mode=mode)


def rank_refusal(site: Any, rank: Optional[int], signature: str) -> Optional[Refusal]:
    """What needs the input's rank and lacks it: the size tensor, and expanding ``axes`` in-graph."""
    if rank is None and signature == "size-tensor":
        return Refusal(
            "unknown-rank",
            "the input's rank is unknown (X has no shape and no scales/sizes length fixes "
            "it); the size tensor needs it",
        )
    if site.axes is None:
        return None
    if rank is None:
        return Refusal(
            "axes-unknown-rank",
            f"axes={list(site.axes)} on an input of unknown rank: the full scales cannot be built in-graph",
        )
    normal = sorted({a % rank for a in site.axes})
    if signature == "size-tensor" and any(a < rank - 2 for a in normal):
        return Refusal(
            "size-tensor-leading-axis",
            f"axes={list(site.axes)} include a leading axis; the size-tensor signature resizes only the last two",
            SCALES_SIGNATURE,
        )
    return None


def resize_refusal(site: Any, signature: str) -> Optional[Refusal]:
    """Why a Resize site cannot become a DynamicTRTResize node (None: it can). A Resize-18 site
    with ``axes`` comes here as its full-rank view (site_facts.full_rank_view)."""
    if site.antialias:
        return Refusal("antialias", "antialias=1: DynamicTRTResize has no antialias field")
    if site.keep_aspect_ratio_policy != "stretch":
        return Refusal(
            "keep-aspect-ratio", f"keep_aspect_ratio_policy={site.keep_aspect_ratio_policy!r} is not supported"
        )
    if site.coordinate_transformation_mode == "tf_crop_and_resize":
        return Refusal(
            "tf-crop-and-resize", "tf_crop_and_resize needs roi and extrapolation_value, which the plugin does not take"
        )
    if site.coordinate_transformation_mode not in PLUGIN_CTMS:
        return Refusal(
            "ctm-without-kernel",
            (
                f"coordinate_transformation_mode={site.coordinate_transformation_mode!r} (dropped from ONNX in "
                "opset 13) has no kernel behind the plugin"
            ),
        )
    if (
        is_legacy(site.op_type, site.op_version)
        and site.mode == "nearest"
        and site.scales is not None
        and any(s < 1 for s in site.scales)
    ):
        return Refusal(
            "legacy-nearest-downsample",
            f"{site.op_type}-10/Upsample nearest downsampling rounds up, which no Resize-11+ nearest_mode reproduces",
        )
    if signature == "size-tensor":
        return _size_tensor_refusal(site)
    return None


def _size_tensor_refusal(site: Any) -> Optional[Refusal]:
    rank = site.input_rank
    if site.opset < 9:
        return Refusal(
            "size-tensor-opset",
            f"the size-tensor signature needs ConstantOfShape (opset >= 9); the model imports opset {site.opset}",
            SCALES_SIGNATURE,
        )
    if rank is not None and rank != 4:
        # MMDeploy's plugin: getOutputDimensions builds 4 dims from (in0.d0, in0.d1, in1.d2, in1.d3)
        return Refusal(
            "size-tensor-rank",
            f"the size-tensor signature is 4-D only (N, C, H, W), this input has rank {rank}",
            SCALES_SIGNATURE,
        )
    if site.scales is not None and any(float(s) != 1.0 for s in site.scales[:-2]):
        return Refusal(
            "size-tensor-leading-axis",
            "the size-tensor signature resizes only the last two axes; this node scales others",
            SCALES_SIGNATURE,
        )
    shape = site.input_shape
    if site.scales is not None:
        dims = list(shape[-2:]) if shape is not None and len(shape) >= 2 else [None, None]
        for dim, scale in zip(dims, site.scales[-2:]):
            if isinstance(dim, int) and dim > 0:
                if (np.float32(dim) * np.float32(scale)) % 1 != 0:
                    return Refusal(
                        "size-tensor-inexact",
                        (
                            f"input size {dim} x scale {scale} is not a whole number: a size tensor carries only "
                            "the output size, so the plugin would resize with scale out/in instead"
                        ),
                        SCALES_SIGNATURE,
                    )
            elif float(scale) % 1 != 0:
                # unknown size: exact for some sizes only, and nothing at run time would say so
                return Refusal(
                    "size-tensor-inexact",
                    (
                        f"scale {scale} on an input dim of unknown size: in x scale is whole only for some "
                        'sizes, and a size tensor carries only the output size; use signature="scales"'
                    ),
                    SCALES_SIGNATURE,
                )
    if site.sizes is not None:
        leading = list(shape[:-2]) if shape is not None else [None] * (len(site.sizes) - 2)
        for axis, (dim, size) in enumerate(zip(leading, site.sizes[:-2])):
            if dim != size:
                known = f"{dim}" if isinstance(dim, int) else "of unknown size"
                return Refusal(
                    "size-tensor-leading-axis",
                    (
                        f"sizes fix axis {axis} to {size} while the input's is {known}; the size-tensor "
                        "signature resizes only the last two axes"
                    ),
                )
    return None
