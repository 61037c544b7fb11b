"""`onnxtool inspect MODEL`: list the Resize/Upsample sites and where their scales come from.

The CLI face of :func:`graphsurgeon_tools.inspection.inspect_model`. Reads the model (weights
stay on disk), never writes anything.
"""

from typing import Any

import typer

from graphsurgeon_tools.cli._app import JsonOption, ModelArgument, NodesOption, emit, naming, split_csv


def _values(values: Any) -> str:
    if values is None:
        return "-"
    return "[" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values) + "]"


def _human(report: dict[str, Any]) -> str:
    lines = [f"{report['model']}: opset {report['opset']}, {len(report['sites'])} Resize/Upsample site(s)"]
    for site in report["sites"]:
        name = site["node_name"] or f"#{site['node_index']} ({site['output_name']})"
        lines.append(
            f"  {name}: {site['op_type']}-{site['op_version']} mode={site['mode']} "
            f"coord={site['coordinate_transformation_mode']}"
        )
        if site.get("scope", "main graph") != "main graph":
            lines.append(f"    in {site['scope']}")
        details = []
        if site["mode"] == "nearest":
            details.append(f"nearest_mode={site['nearest_mode']}")
        if site["mode"] == "cubic":
            details.append(f"cubic_coeff_a={site['cubic_coeff_a']:g} exclude_outside={site['exclude_outside']}")
        if site["antialias"]:
            details.append("antialias=1")
        if site["axes"] is not None:
            details.append(f"axes={_values(site['axes'])}")
        if site["keep_aspect_ratio_policy"] != "stretch":
            details.append(f"keep_aspect_ratio_policy={site['keep_aspect_ratio_policy']}")
        if details:
            lines.append("    " + " ".join(details))
        if site["scales_source"] != "absent" or site["sizes_source"] == "absent":
            where = f" ({site['scales_tensor']})" if site["scales_tensor"] else ""
            lines.append(f"    scales {_values(site['scales'])} from {site['scales_source']}{where}")
        if site["sizes_source"] != "absent":
            lines.append(f"    sizes {_values(site['sizes'])} from {site['sizes_source']} ({site['sizes_tensor']})")
        if site["input_shape"] is not None:
            lines.append(f"    input {site['input_name']} shape {_values(site['input_shape'])}")
        if site.get("free") is True:
            lines.append("    factor: free (any factor gives a valid graph)")
        elif site.get("free") is False:
            lines.append(f"    factor: pinned by {site['pinned_by']}")
        elif site.get("freedom_note"):
            lines.append(f"    factor: undecided ({site['freedom_note']})")
        lines.extend(f"    note: {text}" for text in site["notes"])
    return "\n".join(lines)


def inspect(model: ModelArgument, nodes: NodesOption = None, as_json: JsonOption = False) -> None:
    """List the Resize/Upsample sites of MODEL: mode, attributes, scales or sizes, and their source.

    Sources: initializer, constant (a Constant node), identity (of one), folded (a constant
    subgraph), graph_input (already dynamic), runtime (computed from data), attribute
    (Upsample-7). Exit codes: 0 listed (also when there are none), 2 usage, 3 unreadable model,
    a model the ONNX checker rejects, or nonsense scales/sizes.
    """
    from graphsurgeon_tools.inspection import inspect_model

    with naming(model):
        report = inspect_model(model, nodes=split_csv(nodes))
    emit(report.to_dict(), as_json=as_json, human=_human)


def register(app: typer.Typer) -> None:
    """Add ``onnxtool inspect`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("inspect")(inspect)
