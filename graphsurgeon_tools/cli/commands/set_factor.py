"""`onnxtool set-factor MODEL`: the CLI face of :func:`graphsurgeon_tools.passes.set_factor.set_factor`
(``--site`` -> ``sites``, ``--all`` -> ``every``, ``--original`` -> ``original``); the file handling is
:func:`graphsurgeon_tools.cli.rewrite.run_rewrite`'s.
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
    OptimizedFigureOption,
    OutputOption,
    ProfileOption,
    check_lines,
    profile_lines,
)
from graphsurgeon_tools.cli.rewrite import run_rewrite
from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.io.names import derived_name

#: Suffixes make-dynamic-scale (and this command) write; the default output replaces them.
_DYNAMIC_SUFFIXES = ("dynamic", "factor", "sizes", "static")


def default_output(model: Path) -> Path:
    """``m.dynamic.onnx`` (``.factor``, ``.sizes``) -> ``m.static.onnx``;
    ``m.plugin.onnx`` -> ``m.plugin.static.onnx``."""
    return derived_name(model, "static", replaces=_DYNAMIC_SUFFIXES)


def _numbers(text: str, flag: str) -> tuple[float, ...]:
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        raise UsageError(f"{flag}: the factor must be numbers separated by commas (3 or 2,2), got {text!r}") from None


def parse_sites(items: Optional[list[str]]) -> dict[str, Optional[tuple[float, ...]]]:
    """``--site up=3 --site down=2,2 --site mid`` -> ``{"up": (3.0,), "down": (2.0, 2.0), "mid": None}``."""
    sites: dict[str, Optional[tuple[float, ...]]] = {}
    for item in items or []:
        name, equals, value = item.rpartition("=")
        if not equals:
            name, value = item, ""
        if not name:
            raise UsageError(f"--site {item!r}: give NAME=FACTOR (a node, its output or a dynamic input)")
        sites[name] = _numbers(value, f"--site {item}") if value else None
    return sites


def _values(values: Any) -> str:
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def _human(report: dict[str, Any]) -> str:
    lines = []
    for site in report["rewritten"]:
        fed = ", ".join(f"{name} ({kind})" for name, kind in site["kinds"].items())
        lines.append(
            f"baked {site['node'] or '<unnamed>'} ({site['op_type']}): factor {_values(site['factor'])} -> "
            f"scales {_values(site['scales'])} (read {fed}; {site['source']})"
        )
    lines.extend(f"removed input {name}" for name in report["removed_inputs"])
    for site in report["skipped"]:
        lines.append(f"skipped {site['node'] or '<unnamed>'} ({site['op_type']}): {site['reason']} [{site['code']}]")
    lines.extend(f"note: {text}" for text in report["notes"])
    if not report["rewritten"]:
        lines.append("nothing to bake: no selected site reads a dynamic factor")
    lines.extend(check_lines(report["check"], _check_headline))
    if report["output"]:
        lines.append(f"wrote {report['output']}")
    lines.extend(profile_lines(report))
    return "\n".join(lines)


def _check_headline(check: dict[str, Any], worst: float) -> str:
    return (
        f"check passed at {check['level']}: {len(check['outputs'])} output(s) and "
        f"{len(check['sites'])} site output(s) identical to MODEL fed the factor(s) in ONNX Runtime "
        f"(inputs {check['input_shapes']}, max |diff| {worst:g})"
    )


def set_factor(
    model: ModelArgument,
    output: OutputOption = None,
    in_place: InPlaceOption = False,
    site: Annotated[
        Optional[list[str]],
        typer.Option(
            "--site",
            help="NAME=FACTOR: bake this site at FACTOR (3: every spatial axis; 2,3: one per "
            "spatial axis). NAME is a Resize/plugin node, its output or the dynamic input it "
            "reads (exact or glob); NAME alone: its recorded original value. Repeatable.",
        ),
    ] = None,
    every: Annotated[
        Optional[str],
        typer.Option("--all", help="FACTOR for every dynamic site not named by --site (3 or 2,3)."),
    ] = None,
    original: Annotated[
        bool,
        typer.Option(
            "--original",
            help="Every dynamic site not named by --site at the value make-dynamic-scale or "
            "swap-plugin recorded (onnxtool.original_values).",
        ),
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check",
            help="Compare the written model with MODEL fed the factor(s) in ONNX "
            "Runtime (default on; plugin nodes through onnxtool's kernel).",
        ),
    ] = True,
    check_dims: CheckDimsOption = None,
    optimized_figure: OptimizedFigureOption = False,
    custom_op_lib: CustomOpLibOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Bake a chosen factor back into a dynamic or plugin model: the reverse of make-dynamic-scale.

    Each selected site (Resize, Upsample or DynamicTRTResize whose scales/sizes come from a graph
    input) reads constant scales afterwards; an input nothing reads any more is removed. Writes
    MODEL.static.onnx (replacing a .dynamic/.factor/.sizes suffix) unless -o or --in-place. Exit
    codes: 0 done (also when nothing needed baking), 1 the built-in check found a difference
    (nothing is written), 2 usage (nothing selected, a NAME that matches nothing, a factor that is
    not positive), 3 invalid model or every requested site refused (each site's reason and code).
    """
    from graphsurgeon_tools.passes.set_factor import SetFactor, SetFactorOptions  # deferred: onnx (--help stays fast)

    sites = parse_sites(site)
    factor = _numbers(every, f"--all {every}") if every is not None else None

    def make_pass(dims: Optional[dict[str, int]]) -> SetFactor:
        return SetFactor(
            SetFactorOptions(
                sites=sites,
                every=factor,
                original=original,
                check=check,
                check_dims=dims,
                custom_op_libs=custom_op_lib,
                optimized_figure=optimized_figure,
            )
        )

    run_rewrite(
        model,
        make_pass,
        output=output,
        in_place=in_place,
        default_output=default_output,
        human=_human,
        as_json=as_json,
        profile=profile,
        check=check,
        check_dims=check_dims,
        write_unchanged_in_place=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``onnxtool set-factor`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("set-factor")(set_factor)
