"""`onnxtool export srcnn`: the built-in SRCNN example in each export style.

The implementation is the PyTorch side's, registered as ``"export-srcnn"`` in
:mod:`graphsurgeon_tools.extensions` (graphsurgeon_tools never imports it). Without the
PyTorch side (``pip install 'onnxtool[torch]'``), or when the C++ op a variant needs cannot be built,
the command exits 5 (an environment problem) with one line naming what to install.
"""

import enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from graphsurgeon_tools.cli._app import JsonOption, ProfileOption, check_profile_option, emit, profile_lines

export_app = typer.Typer(
    name="export",
    help="Export a built-in PyTorch example model to ONNX (checked by onnx.checker and ONNX Runtime).",
    no_args_is_help=True,
)


class VariantChoice(str, enum.Enum):
    static = "static"
    new_interpolate = "new-interpolate"
    cxx_op = "cxx-op"
    plugin = "plugin"


class SignatureChoice(str, enum.Enum):
    scales = "scales"
    size_tensor = "size-tensor"


class ExporterChoice(str, enum.Enum):
    torchscript = "torchscript"
    dynamo = "dynamo"


def _human(report: dict) -> str:
    ort = report["ort"]
    if ort["checked"]:
        proof = f"ONNX Runtime matches PyTorch on {ort['cases']} inputs (max |diff| {ort['max_abs_diff']:.2g})"
    else:
        proof = f"ONNX Runtime check skipped: {ort['skipped_reason']}"
    inputs = ", ".join(f"{i['name']} {i['shape']}" for i in report["inputs"])
    ops = ", ".join(f"{op} x{count}" if count > 1 else op for op, count in report["op_types"].items())
    return "\n".join(
        [
            f"wrote {report['path']} ({report['exporter']} exporter, opset {report['opset']}, {report['seconds']:.1f} s)",
            f"  inputs: {inputs}\n  nodes:  {ops}\n  onnx.checker: {report['checker']}\n  {proof}",
            *profile_lines(report),
        ]
    )


@export_app.command("srcnn")
def srcnn(
    output: Annotated[
        Optional[Path],
        typer.Option("--output", "-o", help="Where to write the model (default: ./srcnn_<variant>.onnx)."),
    ] = None,
    variant: Annotated[
        VariantChoice, typer.Option(help="How the upsampling is written: the export style to produce.")
    ] = VariantChoice.static,
    signature: Annotated[
        SignatureChoice,
        typer.Option(help="Plugin variant only: DynamicTRTResize inputs (X, scales) or MMDeploy's (X, size_tensor)."),
    ] = SignatureChoice.scales,
    align_corners: Annotated[
        bool,
        typer.Option(
            "--align-corners", help="Plugin variant, size-tensor signature only: the align_corners attribute."
        ),
    ] = False,
    exporter: Annotated[
        ExporterChoice, typer.Option(help="torch.onnx.export's TorchScript exporter or its dynamo (torch.export) one.")
    ] = ExporterChoice.torchscript,
    opset: Annotated[
        Optional[int], typer.Option(help="ONNX opset (default: 17 for torchscript, 18 for dynamo).", min=7)
    ] = None,
    factor: Annotated[
        float, typer.Option(help="Upscale factor: baked into the static variant; the traced example for the others.")
    ] = 3.0,
    compare: Annotated[
        Optional[bool],
        typer.Option(
            "--compare/--no-compare",
            help="Run the export in ONNX Runtime against PyTorch (default: yes, except plugin graphs; "
            "--compare runs those through onnxtool's plugin kernels).",
        ),
    ] = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Export the SRCNN super-resolution example with the shipped x3 weights.

    Every export passes onnx.checker (full check) and, unless skipped, matches
    the PyTorch model in ONNX Runtime (dynamic variants at factors 2, 3 and 4)
    before the file is written. Exit code 1 on a mismatch, 2 for a combination
    that cannot work (new-interpolate with --exporter dynamo), 3 when torch
    cannot export.
    """
    from graphsurgeon_tools import extensions

    check_profile_option(profile)
    result = extensions.command("export-srcnn")(
        output,
        variant=variant.value,
        signature=signature.value,
        align_corners=align_corners,
        exporter=exporter.value,
        opset=opset,
        factor=factor,
        compare="auto" if compare is None else compare,
    )
    report = result.to_dict()
    if profile is not None:
        from graphsurgeon_tools.profiles import profile_report

        report["profile"] = profile_report(report["path"], profile)
    emit(report, as_json=as_json, human=_human)


def register(app: typer.Typer) -> None:
    """Add the ``onnxtool export`` group (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.add_typer(export_app, name="export")
