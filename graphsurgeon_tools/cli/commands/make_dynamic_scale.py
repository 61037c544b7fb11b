"""`onnxtool make-dynamic-scale MODEL`: the CLI face of
:func:`graphsurgeon_tools.passes.make_dynamic_scale.make_dynamic_scale` (flags map 1:1 onto
its keywords) plus the file handling: where to write, never over the input unless asked.
"""

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from graphsurgeon_tools.cli._app import (
    CheckDimsOption,
    CustomOpLibOption,
    InPlaceOption,
    JsonOption,
    ModelArgument,
    NodesOption,
    OptimizedFigureOption,
    OutputOption,
    ProfileOption,
    check_lines,
    note,
    profile_lines,
    split_csv,
)
from graphsurgeon_tools.cli.rewrite import run_rewrite

#: The suffix of each layout's default output; one replaces another instead of stacking.
LAYOUT_SUFFIXES = {"scales": "dynamic", "factor": "factor", "sizes": "sizes"}


def default_output(model: Path, layout: str = "scales") -> Path:
    """``model.onnx`` -> ``model.dynamic.onnx`` beside it (``model.sizes.onnx`` / ``model.factor.onnx``
    for the integer layouts); ``model.dynamic.onnx --layout sizes`` -> ``model.sizes.onnx``."""
    from graphsurgeon_tools.io.names import derived_name

    return derived_name(model, LAYOUT_SUFFIXES.get(layout, "dynamic"), replaces=LAYOUT_SUFFIXES.values())


def _values(values: Any) -> str:
    # a list, not a generator: join makes one first anyway (4,000 calls on a 2,000-site report)
    return "[" + ", ".join([f"{v:g}" for v in values]) + "]"


#: The report's keys :func:`_human` never reads (bulky on big graphs: not rewritten for it).
_UNREAD = (
    "declared_inputs",
    "removed_nodes",
    "timings",
    "rewritten.layouts",
    "rewritten.fed_value",
    "rewritten.coordinate_transformation_mode",
)


def _human(report: dict[str, Any]) -> str:
    lines = []
    for site in report["rewritten"]:
        lines.append(
            f"rewrote {site['node']} ({site['op_type']}-{site['op_version']}, {site['mode']}): "
            f"scales {_values(site['original_scales'])} from {site['source']} -> input {site['new_input']}"
        )
        if site.get("free") is False:  # factor freedom: runs only at factors that keep this node's shapes
            lines.append(f"  not free: {site['pinned_by']}")
        if site.get("layout") and site["layout"] != "scales":  # the integer layouts: where they equal the original
            lines.append(f"  layout {site['layout']}: ONNX Runtime {site['onnxruntime']}; TensorRT {site['tensorrt']}")
    for item in report["new_inputs"]:
        default = f", default {_values(item['default'])}" if item["default"] is not None else ""
        value = _values(item["value"]) if item["value"] else "floor(in*scale): depends on the input size"
        lines.append(f"new input {item['name']}: {item['dtype']}{item['shape']} (original value {value}{default})")
    for site in report["skipped"]:
        lines.append(f"skipped {site['node']} ({site['op_type']}): {site['reason']}")
        if site.get("hint"):
            lines.append(f"  hint: {site['hint']}")
    lines.extend(f"note: {text}" for text in report["notes"])
    if not report["rewritten"]:
        lines.append("nothing to rewrite: no selected site has constant scales")
    lines.extend(check_lines(report["check"], _check_headline))
    if report["output"]:
        lines.append(f"wrote {report['output']}")
    lines.extend(profile_lines(report))
    return "\n".join(lines)


def _check_headline(check: dict[str, Any], worst: float) -> str:
    level = f" at {check['level']}" if check.get("level") else ""
    sites = f" and {len(check['sites'])} site output(s)" if check.get("sites") else ""
    within = "identical" if worst == 0 else f"within atol {check['atol']:g}"
    return (
        f"check passed{level}: {len(check['outputs'])} output(s){sites} {within} in ONNX Runtime "
        f"(the written model against your input model; inputs {check['input_shapes']}, "
        f"max |diff| {worst:g})"
    )


def make_dynamic_scale(
    model: ModelArgument,
    output: OutputOption = None,
    in_place: InPlaceOption = False,
    nodes: NodesOption = None,
    shared: Annotated[
        bool, typer.Option("--shared", help="One input for all selected sites (refused if their scales differ).")
    ] = False,
    input_name: Annotated[
        Optional[str],
        typer.Option("--input-name", help="Name of the new input (NAME_0, NAME_1... for several). Default: scales."),
    ] = None,
    layout: Annotated[
        str,
        typer.Option(
            "--layout",
            help="What the new input holds: 'scales' (float32 scales, default; ONNX "
            "Runtime), 'factor' (int64 whole factors, one per spatial axis: [l], [h, w] "
            "or [d, h, w]; expanded in-graph) or 'sizes' (int64 output size per spatial "
            "axis). The int64 layouts are what TensorRT takes (shape inputs must be "
            "integers; see onnxtool lint). A layout that can express none of the sites "
            "exits 3 with each site's reason.",
        ),
    ] = "scales",
    factor: Annotated[
        bool, typer.Option("--factor", help="The input holds only the spatial factors ([h, w]), expanded in-graph.")
    ] = False,
    keep_default: Annotated[
        bool,
        typer.Option(
            "--keep-default",
            help="Keep the original scales as the input's default (TensorRT then treats the input as a constant).",
        ),
    ] = False,
    from_sizes: Annotated[
        bool, typer.Option("--from-sizes", help="Convert sizes-driven sites when a scale reproduces the sizes exactly.")
    ] = False,
    only_free: Annotated[
        bool,
        typer.Option(
            "--only-free",
            help="Rewrite only sites whose factor can change alone (the report names the "
            "node that pins each other site).",
        ),
    ] = False,
    freedom: Annotated[
        bool,
        typer.Option(
            "--freedom/--no-freedom",
            help="Decide each site's factor freedom for the report (a bounded "
            "static shape flow; --no-freedom skips it on huge graphs).",
        ),
    ] = True,
    inline_functions: Annotated[
        bool,
        typer.Option(
            "--inline-functions",
            help="Inline model-local functions first (onnx.inliner) so the Resize "
            "sites inside them are rewritten too (skipped otherwise).",
        ),
    ] = False,
    simplify: Annotated[
        bool, typer.Option("--simplify", help="Run onnxsim first (folds constant subgraphs; slow to import).")
    ] = False,
    check: Annotated[
        bool,
        typer.Option("--check/--no-check", help="Compare original and rewritten model in ONNX Runtime (default on)."),
    ] = True,
    check_dims: CheckDimsOption = None,
    optimized_figure: OptimizedFigureOption = False,
    atol: Annotated[
        float,
        typer.Option(
            "--atol",
            help="The check's absolute tolerance: |a - b| <= atol + rtol * |b| between "
            "the written model and MODEL (default 0: exact).",
        ),
    ] = 0.0,
    rtol: Annotated[float, typer.Option("--rtol", help="The check's relative tolerance (default 0).")] = 0.0,
    share_data: Annotated[
        bool,
        typer.Option(
            "--share-data",
            help="External data: when the output is in the input's folder, reference the "
            "input's data files instead of copying them (no effect elsewhere).",
        ),
    ] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when there is nothing to rewrite.")] = False,
    profile: ProfileOption = None,
    custom_op_lib: CustomOpLibOption = None,
    as_json: JsonOption = False,
) -> None:
    """Turn constant Resize/Upsample scales into graph inputs.

    Writes MODEL.dynamic.onnx (MODEL.sizes.onnx, MODEL.factor.onnx for those layouts) beside MODEL
    unless -o or --in-place; on a model this command wrote with float scales, an integer --layout
    rewrites that input in place of stacking a second one. Exit codes: 0 done (also
    when nothing needed rewriting), 1 the built-in check found a difference (nothing is
    written) or --strict found nothing, 2 usage, 3 invalid model, nonsense scales, or a
    --layout that can express none of the sites that have constant scales.
    """
    from graphsurgeon_tools.errors import CheckFailedError
    from graphsurgeon_tools.passes.make_dynamic_scale import DynamicScaleOptions, MakeDynamicScale

    def make_pass(dims: Optional[dict[str, int]]) -> MakeDynamicScale:
        return MakeDynamicScale(
            DynamicScaleOptions(
                nodes=split_csv(nodes),
                shared=shared,
                input_name=input_name,
                factor=factor,
                layout=layout,
                keep_default=keep_default,
                from_sizes=from_sizes,
                inline_functions=inline_functions,
                only_free=only_free,
                freedom=freedom,
                simplify=simplify,
                check=check,
                check_dims=dims,
                custom_op_libs=custom_op_lib,
                atol=atol,
                rtol=rtol,
                optimized_figure=optimized_figure,
                inplace=True,  # the CLI owns this proto: no copy of a possibly huge model
            )
        )

    result, _ = run_rewrite(
        model,
        make_pass,
        output=output,
        in_place=in_place,
        default_output=lambda path: default_output(path, layout),
        human=_human,
        as_json=as_json,
        unread=_UNREAD,
        profile=profile,
        check=check,
        check_dims=check_dims,
        write_unchanged_in_place=False,
        share_data=share_data or in_place,
    )
    if not result.changed:
        if strict:
            raise CheckFailedError(f"{model}: nothing to rewrite (--strict)")
        if as_json:
            note(f"{model}: nothing to rewrite")


def register(app: typer.Typer) -> None:
    """Add ``onnxtool make-dynamic-scale`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("make-dynamic-scale")(make_dynamic_scale)
