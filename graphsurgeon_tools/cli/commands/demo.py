"""`onnxtool demo [--out DIR]`: export, rewrite, validate, swap in the plugin, and draw pictures.

The implementation is the PyTorch side's, registered as ``"demo"`` in
:mod:`graphsurgeon_tools.extensions`; without it the command exits 5 with one line saying
what to install (an environment problem).
"""

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from graphsurgeon_tools.cli._app import JsonOption, emit, parse_factors_option


def _fmt_report(name: str, report: dict[str, Any]) -> str:
    worst = report["counts"]["worst_max_abs_error"]
    figure = "bit-exact" if worst == 0 else (f"worst max abs error {worst:.2g}" if worst is not None else "")
    verdict = "PASSED" if report["passed"] else "FAILED"
    compared = ", ".join(
        (f["factor"] if isinstance(f["factor"], str) else f"x{f['factor']:g}")
        for f in report["factors"]
        if f["status"] != "skipped"
    )
    reference = str(report["reference"]["label"])
    reference = Path(reference).name if reference.endswith(".onnx") else reference
    line = f"{name:<20} vs {reference:<22} at {compared:<12} {verdict} ({figure})"
    if not report["passed"]:
        line += f"\n{'':<29}{report['summary']}"
        if report.get("diagnosis"):
            line += f"\n{'':<29}diagnosis: {report['diagnosis']['summary']}"
    return line


def _human(result: dict[str, Any]) -> str:
    out = Path(result["out_dir"])
    files = {name: Path(path).name for name, path in result["files"].items()}
    lines = [
        f"onnxtool demo: {'PASSED' if result['passed'] else 'FAILED'} in {result['seconds']:.1f} s; "
        f"everything is in {out}/"
    ]
    lines.append(f"  models   {files['static_model']:<22}(exported, scales baked at x3)")
    lines.append(f"           {files['dynamic_model']:<22}(make-dynamic-scale: the factor is an input)")
    lines.append(f"           {files['plugin_model']:<22}(swap-plugin: DynamicTRTResize for TensorRT)")
    names = {
        "dynamic_vs_torch": files["dynamic_model"],
        "dynamic_vs_static": files["dynamic_model"],
        "plugin_vs_torch": files["plugin_model"],
    }
    for key, report in result["validations"].items():
        lines.append(
            ("  checks   " if key == next(iter(result["validations"])) else "           ")
            + _fmt_report(names.get(key, key), report)
        )
    images = [name for key, name in files.items() if name.endswith(".png")]
    lines.append(f"  images   {', '.join(images)}")
    lines.append(f"           (input: {result['image_source']})")
    psnr = result["psnr_db"]
    if "srcnn_x3" in psnr:
        lines.append(
            f"           x3 PSNR vs ground truth: bicubic {psnr['bicubic_x3']:.2f} dB, SRCNN {psnr['srcnn_x3']:.2f} dB"
        )
    from graphsurgeon_tools.runtime.provenance import evidence_lines

    lines.extend(f"  {line}" for line in evidence_lines(result.get("evidence")))
    lines.append(f"  report   {files['report']}")
    lines.append(
        f"  next     onnxtool validate {out / files['dynamic_model']} --reference torch:srcnn --factors 1.5,2,5"
    )
    return "\n".join(lines)


def demo(
    out: Annotated[Path, typer.Option("--out", help="Folder for the models, images and report.json.")] = Path(
        "demo_out"
    ),
    factors: Annotated[
        Optional[list[str]], typer.Option("--factors", help="Factors to validate and draw (default 2,3,4).")
    ] = None,
    as_json: JsonOption = False,
) -> int:
    """Export the built-in SRCNN, make its scale dynamic, validate it against PyTorch, swap in the
    TensorRT plugin node and validate that too, then write pictures and a JSON report.

    Exit code 0 when every validation passed, 1 otherwise.
    """
    from graphsurgeon_tools import extensions
    from graphsurgeon_tools.errors import InvalidScalesError

    parsed = parse_factors_option(factors)
    sweep = tuple(parsed) if parsed else None  # None: the demo's own sweep
    if sweep and max(sweep) >= 1e3:  # the demo draws an image per factor
        raise InvalidScalesError(f"--factors {','.join(factors or [])}: the demo's factors must be below 1000")
    run_demo = extensions.command("demo")
    show = not as_json and sys.stderr.isatty()
    if show:
        from rich.console import Console

        console = Console(stderr=True)
        with console.status("onnxtool demo") as status:
            result = run_demo(out, factors=sweep, progress=lambda text: status.update(f"onnxtool demo: {text}"))
    else:
        result = run_demo(out, factors=sweep)
    emit(result.to_dict(), as_json=as_json, human=_human)
    return 0 if result.passed else 1


def register(app: typer.Typer) -> None:
    """Add ``onnxtool demo`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("demo")(demo)
