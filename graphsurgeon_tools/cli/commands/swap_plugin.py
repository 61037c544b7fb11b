"""`onnxtool swap-plugin MODEL`: the CLI face of :func:`graphsurgeon_tools.passes.swap_plugin.swap_plugin`."""

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from graphsurgeon_tools.cli._app import (
    CheckDimsOption,
    CustomOpLibOption,
    InPlaceOption,
    JsonOption,
    NodesOption,
    OptimizedFigureOption,
    OutputOption,
    ProfileOption,
    check_lines,
    emit,
    note,
    profile_lines,
    split_csv,
)
from graphsurgeon_tools.cli.rewrite import run_rewrite


def _default_output(model: Path, reverse: bool) -> Path:
    """``m.onnx`` -> ``m.plugin.onnx`` (``m.resize.onnx`` with --reverse); one direction's suffix
    replaces the other's: ``m.plugin.onnx --reverse`` -> ``m.resize.onnx``."""
    from graphsurgeon_tools.io.names import derived_name

    return derived_name(model, "resize" if reverse else "plugin", replaces=("plugin", "resize"))


def _check_headline(check: dict[str, Any], worst: float) -> str:
    within = (
        "identical"
        if not check["atol"]
        else ("within tolerance" if check.get("tolerance") else f"within atol {check['atol']:g}")
    )
    return (
        f"check passed at {check['level']}: {len(check['outputs'])} output(s) and {len(check['sites'])} site "
        f"output(s) {within} in ONNX Runtime (inputs {check['input_shapes']}, max |diff| {worst:g})"
    )


#: The report's keys :func:`_human` never reads (bulky on big graphs: not rewritten for it;
#: ``rewritten`` is ``swapped`` under the name every pass's report has).
_UNREAD = (
    "rewritten",
    "declared_inputs",
    "removed_nodes",
    "timings",
    "swapped.attributes",
    "swapped.scales_before",
    "swapped.domain_after",
    "new_inputs.value",
    "new_inputs.default",
)


def _human(report: dict[str, Any]) -> str:
    lines = []
    verb = "restored" if report["reverse"] else "swapped"
    for item in report["swapped"]:
        lines.append(
            f"{verb} {item['node'] or '<unnamed>'}: {item['op_type_before']} -> {item['op_type_after']}"
            f" ({item['signature']}; inputs {', '.join(item['inputs'])})"
        )
        lines.extend(f"  note: {text}" for text in item.get("notes", []))
        if item.get("free") is False:  # factor freedom (resize.freedom)
            lines.append(f"  not free: {item['pinned_by']}")
    for item in report["skipped"]:
        lines.append(f"skipped {item['node'] or '<unnamed>'} ({item['op_type']}): {item['reason']}")
        if item.get("hint"):
            lines.append(f"  hint: {item['hint']}")
    for item in report["new_inputs"]:
        lines.append(f"new input {item.get('name')}: {item.get('dtype', '')} {item.get('shape', '')}".rstrip())
    lines.extend(f"note: {text}" for text in report.get("notes", []) if not text.startswith("check skipped:"))
    if not report["swapped"]:
        lines.append("nothing to " + ("restore" if report["reverse"] else "swap"))
    lines.extend(check_lines(report.get("check"), _check_headline))
    lines.append(f"wrote {report['output']}")
    lines.extend(profile_lines(report))
    return "\n".join(lines)


def _list_specs(as_json: bool) -> None:
    """``--list-specs``: the built-in specs, their plugin and what they match, where they are installed."""
    from graphsurgeon_tools.plugins import builtin_spec, builtin_specs

    rows = []
    for name, path in builtin_specs().items():
        spec = builtin_spec(name)
        rows.append(
            {
                "name": name,
                "plugin": spec.op_type,
                "domain": spec.domain,
                "handler": spec.handler,
                "matches": list(spec.match.op_types),
                "path": str(path),
            }
        )

    def human(report: dict[str, Any]) -> str:
        return (
            "\n".join(
                f"{r['name']:<17} {'/'.join(r['matches'])} -> {r['plugin']} ({r['domain']})  {r['path']}"
                for r in report["specs"]
            )
            + "\nuse one by name: onnxtool swap-plugin MODEL --spec NAME"
        )

    emit({"specs": rows}, as_json=as_json, human=human)


def swap_plugin(
    model: Annotated[Optional[Path], typer.Argument(help="The ONNX model to read (never modified).")] = None,
    output: OutputOption = None,
    in_place: InPlaceOption = False,
    plugin: Annotated[
        Optional[str],
        typer.Option(
            "--plugin",
            help="op_type of the plugin node to emit (or, with --reverse, to turn back). "
            "Default: the spec's, DynamicTRTResize for the built-in spec.",
        ),
    ] = None,
    signature: Annotated[
        str,
        typer.Option(
            "--signature",
            help="Inputs of DynamicTRTResize: 'scales' (X, scales), 'size-tensor' "
            "(X, size_tensor: MMDeploy's plugin) or 'sizes' (X, sizes: int64 output "
            "[h, w] values, a TensorRT IPluginV3 shape input). Built-in/resize specs only.",
        ),
    ] = "scales",
    domain: Annotated[
        Optional[str],
        typer.Option(
            "--domain", help="Domain of the plugin node (TensorRT ignores it). Default: the spec's, trt.plugins."
        ),
    ] = None,
    nodes: NodesOption = None,
    reverse: Annotated[
        bool, typer.Option("--reverse", help="Turn plugin nodes (any signature) back into standard Resize.")
    ] = False,
    spec: Annotated[
        Optional[Path],
        typer.Option(
            "--spec",
            help="A TOML plugin spec file, or a built-in spec's name (--list-specs: "
            "gridsample, nms); default: the built-in DynamicTRTResize spec.",
        ),
    ] = None,
    list_specs: Annotated[
        bool, typer.Option("--list-specs", help="List the built-in plugin specs (usable as --spec NAME) and exit.")
    ] = False,
    keep_constant: Annotated[
        bool,
        typer.Option("--keep-constant", help="Keep constant scales as constants instead of making them graph inputs."),
    ] = False,
    size_input: Annotated[
        Optional[str],
        typer.Option(
            "--size-input",
            help="With --signature size-tensor: make the size tensor a graph input of this "
            "name (MMDeploy's layout; TensorRT-friendly) instead of computing it "
            "from the scales.",
        ),
    ] = None,
    inline_functions: Annotated[
        bool,
        typer.Option(
            "--inline-functions",
            help="Inline model-local functions first (onnx.inliner) so the Resize "
            "sites inside them are swapped too (skipped otherwise).",
        ),
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check",
            help="Compare the plugin model (plugin nodes through onnxtool's "
            "kernel) with the original in ONNX Runtime at the original "
            "factors (default on; --reverse: the Resize model with the "
            "plugin model).",
        ),
    ] = True,
    check_dims: CheckDimsOption = None,
    optimized_figure: OptimizedFigureOption = False,
    qdq_form: Annotated[
        str,
        typer.Option(
            "--qdq-form",
            help="Quantized sites (DequantizeLinear -> Resize -> QuantizeLinear): 'inside' "
            "(default: the float plugin between DQ and Q) or 'integer' (one plugin node "
            "on the quantized tensors, where the kernel takes int8/uint8).",
        ),
    ] = "inside",
    custom_op_lib: CustomOpLibOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Swap Resize/Upsample nodes for DynamicTRTResize plugin nodes (or any op for any plugin, with --spec).

    Writes MODEL.plugin.onnx (MODEL.resize.onnx with --reverse) unless -o or --in-place.
    Exit codes: 0 done (also when nothing matched), 1 the built-in check found a difference
    (nothing is written), 2 usage, 3 unreadable model, invalid spec, or a --signature that can
    swap none of the matched sites (each site's reason in the message).
    """
    from graphsurgeon_tools.errors import UsageError
    from graphsurgeon_tools.passes.swap_plugin import SwapPlugin, SwapPluginOptions

    if list_specs:
        return _list_specs(as_json)
    if model is None:
        raise UsageError("Missing argument 'MODEL' (or --list-specs)")

    def make_pass(dims: Optional[dict[str, int]]) -> SwapPlugin:
        return SwapPlugin(
            SwapPluginOptions(
                plugin=plugin,
                signature=signature,
                domain=domain,
                nodes=split_csv(nodes),
                reverse=reverse,
                spec=spec,
                keep_constant=keep_constant,
                size_input=size_input,
                inline_functions=inline_functions,
                check=check,
                check_dims=dims,
                qdq_form=qdq_form,
                custom_op_libs=custom_op_lib,
                optimized_figure=optimized_figure,
            )
        )

    def after_run(result: Any) -> None:
        if result.signature == "generic" and signature != "scales":
            note(f"--signature has no effect with the generic spec {result.spec_source}")

    run_rewrite(
        model,
        make_pass,
        output=output,
        in_place=in_place,
        default_output=lambda path: _default_output(path, reverse),
        human=_human,
        as_json=as_json,
        unread=_UNREAD,
        profile=profile,
        check=check,
        check_dims=check_dims,
        also_named=(spec,),
        notes=["--keep-constant has no effect with --reverse"] if reverse and keep_constant else [],
        after_run=after_run,
        paths_first=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``onnxtool swap-plugin`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("swap-plugin")(swap_plugin)
