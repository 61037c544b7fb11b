"""`onnxtool validate CANDIDATE --reference REF`: the CLI face of :func:`graphsurgeon_tools.validate`."""

import shutil
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from graphsurgeon_tools.cli._app import CustomOpLibOption, JsonOption, emit, note, parse_factors_option


def _parse_inputs(values: Optional[list[str]]) -> dict[str, Path]:
    from graphsurgeon_tools.errors import UsageError

    inputs: dict[str, Path] = {}
    for value in values or []:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--input {value!r}: expected NAME=FILE.npy")
        inputs[name] = Path(path)
    return inputs


def validate(
    candidate: Annotated[Path, typer.Argument(help="The ONNX model to check (run in ONNX Runtime; never modified).")],
    reference: Annotated[
        str,
        typer.Option(
            "--reference",
            "-r",
            help="What to compare against: an ONNX model, torch:srcnn, python:MODULE:CALLABLE (MODULE may be a "
            ".py file; CALLABLE() returns the user's unmodified nn.Module, its interpolate calls routed "
            "through the C++ op at each site's factor), python-scales:MODULE:CALLABLE (a module written "
            "as module(x, scales)), or onnx-reference (onnx's reference evaluator on the candidate).",
        ),
    ],
    factors: Annotated[
        Optional[list[str]],
        typer.Option(
            "--factors",
            "-f",
            help="Upscale factors to sweep, e.g. 2,3,4 (default: the static side's baked factor, else 2,3,4).",
        ),
    ] = None,
    sites: Annotated[
        Optional[list[str]],
        typer.Option(
            "--site",
            help="Sweep chosen sites instead of --factors: SITE=F[,F...] (repeatable; SITE is a "
            "node name, #k in graph order, or a PyTorch module scope); the other sites "
            "stay at their original factors.",
        ),
    ] = None,
    scales_argument: Annotated[
        bool,
        typer.Option(
            "--scales-argument",
            help="The python: module takes the scales tensor as its second argument "
            "(today's convention) instead of being routed.",
        ),
    ] = False,
    inputs: Annotated[
        Optional[list[str]],
        typer.Option(
            "--input", "-i", help="NAME=FILE.npy for a graph input (repeatable); others get seeded random data."
        ),
    ] = None,
    atol: Annotated[
        Optional[float],
        typer.Option(
            help="Absolute tolerance: |a - b| <= atol + rtol * |b|. Default: dtype-aware (ulps of each output's "
            "dtype at its magnitude, at least 1e-4 absolute and 1e-3 relative)."
        ),
    ] = None,
    rtol: Annotated[
        Optional[float], typer.Option(help="Relative tolerance (default: dtype-aware, see --atol).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random inputs.")] = 0,
    input_size: Annotated[int, typer.Option(help="Size given to symbolic spatial dims of random inputs.")] = 32,
    diagnose: Annotated[
        bool, typer.Option("--diagnose/--no-diagnose", help="On a mismatch, look for the Resize setting behind it.")
    ] = True,
    junit: Annotated[
        Optional[Path], typer.Option("--junit", help="Also write the result as JUnit XML to this file.")
    ] = None,
    custom_op_lib: CustomOpLibOption = None,
    certify_profile: Annotated[
        Optional[str],
        typer.Option(
            "--certify",
            help="Also certify the candidate's sites over this profile SIZES:FACTORS (e.g. "
            "16..512:1,2,3,4; see onnxtool certify): the certificate joins the JSON and "
            "JUnit reports and its verdict the exit code.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> int:
    """Run CANDIDATE in ONNX Runtime against a reference over a sweep of factors.

    Exit code 0 when every compared output is within tolerance, 1 otherwise
    (or when nothing could be compared), 3 for unreadable models, .npy files
    that do not fit, or an unknown reference.
    """
    from graphsurgeon_tools.validation import check_junit_path, render_report, write_junit
    from graphsurgeon_tools.validation import validate as run_validate

    if junit is not None:
        check_junit_path(junit, inputs=[candidate, Path(reference)])  # a "torch:..." reference is no file
    certificate = None
    if certify_profile is not None:
        from graphsurgeon_tools.certify import certify, parse_certify_profile

        certificate = certify(candidate, reference, profile=parse_certify_profile(certify_profile))

    show_progress = not as_json and sys.stderr.isatty()
    if show_progress:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        task = bar.add_task("loading", total=None)

        def progress(step: str, done: int, total: int) -> None:
            bar.update(task, description=step, completed=done, total=total)

        bar.start()
    else:
        progress = None  # type: ignore[assignment]
    try:
        report = run_validate(
            candidate,
            reference,
            factors=parse_factors_option(factors),
            sites=sites or None,
            scales_argument=scales_argument,
            inputs=_parse_inputs(inputs),
            atol=atol,
            rtol=rtol,
            seed=seed,
            input_size=input_size,
            diagnose=diagnose,
            progress=progress,
            custom_op_libs=custom_op_lib,
            certificate=certificate,
        )
    finally:
        if show_progress:
            bar.stop()
    data = report.to_dict()
    if junit is not None:
        write_junit(data, junit)
    # A terminal's width (COLUMNS wins) only on a terminal; a log gets the table at full width.
    tty = sys.stdout.isatty()
    width = shutil.get_terminal_size().columns if tty else None
    emit(data, as_json=as_json, human=lambda d: render_report(d, color=tty, width=width))
    if junit is not None and not as_json:
        note(f"JUnit report written to {junit}")
    return 0 if report.passed else 1


def register(app: typer.Typer) -> None:
    """Add ``onnxtool validate`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("validate")(validate)
