"""`onnxtool lint MODEL --target tensorrt|onnxruntime`: offline target rules, exit 1 when one fails.

The CLI face of :func:`graphsurgeon_tools.lint.lint_model`. Reads the model (weights stay on
disk), writes nothing. Each finding's fix (API calls lint tried on this very model) is spelled
as the onnxtool command line that makes it from the file named, ready to paste, with the file
it writes (JSON ``command``, ``writes``).
"""

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from graphsurgeon_tools.cli._app import JsonOption, ModelArgument, emit, naming


def _step_output(call: str, keywords: dict[str, Any], model: Path) -> Path:
    """Where ``onnxtool <call> MODEL`` writes by default (the commands' own naming)."""
    from graphsurgeon_tools.cli.commands.make_dynamic_scale import default_output
    from graphsurgeon_tools.cli.commands.swap_plugin import _default_output

    if call == "make_dynamic_scale":
        return default_output(model, keywords.get("layout", "scales"))
    return _default_output(model, bool(keywords.get("reverse")))


def fix_command(fix: Optional[dict[str, Any]], model: str) -> tuple[Optional[str], Optional[str]]:
    """``{"call": "make_dynamic_scale", "keywords": {"layout": "sizes"}}`` -> (the command line, the file it writes).

        Each call of the chain (``then``) reads the file the one before wrote; every file is a new one
        (never the model linted, never one the chain already wrote), named as the command would name it
        (``-o`` only where that name is taken). Paths are shell words for their exact bytes (a name that is
    not UTF-8 as ``$'..\\xff..'``), so the line pastes as it is.
    """
    from graphsurgeon_tools.cli.vocabulary import command_name, spell_flags, to_flags
    from graphsurgeon_tools.io.names import printable, shell_quote

    if not fix:
        return None, None
    current, used, parts = Path(model), {Path(model)}, []
    step: Optional[dict[str, Any]] = fix
    while step:
        flags = spell_flags(step["keywords"])
        target = default = _step_output(step["call"], step["keywords"], current)
        while target in used:  # e.g. reverse then forward: the forward default is the model linted
            target = target.with_name(target.name[: -len(".onnx")] + ".fixed.onnx")
        text = f"onnxtool {command_name(step['call'])} {shell_quote(current)}"
        text += f" {flags}" if flags else ""
        text += f" -o {shell_quote(target)}" if target != default else ""
        parts.append(text)
        used.add(target)
        current, step = target, step.get("then")
    note = f"  ({to_flags(fix['note'])})" if fix.get("note") else ""
    return " && ".join(parts) + note, printable(current)


def _human(report: dict[str, Any]) -> str:
    counts = report["counts"]
    verdict = "FAILED" if report["failed"] else "passed"
    lines = [
        f"{report['model']}: lint --target {report['target']} {verdict}: {report['sites']} Resize/Upsample "
        f"site(s), {report['plugin_nodes']} plugin node(s); {counts['error']} error(s), "
        f"{counts['warning']} warning(s), {counts['info']} note(s)"
    ]
    for finding in report["findings"]:
        where = finding["node"] or "model"
        lines.append(f"  {finding['severity']}: {finding['rule']} [{where}] {finding['reason']}")
        lines.append(f"    source: {finding['source']}")
        if finding.get("command"):
            lines.append(f"    fix: {finding['command']}    (writes {finding['writes']})")
    return "\n".join(lines)


def lint(
    model: ModelArgument,
    target: Annotated[
        str,
        typer.Option(
            "--target",
            help="Whose rules: 'tensorrt' (TensorRT's ONNX parser, "
            "emulated offline) or 'onnxruntime' (where ORT's Resize "
            "departs from the ONNX reference or PyTorch).",
        ),
    ] = "tensorrt",
    as_json: JsonOption = False,
) -> None:
    """Check MODEL against a target's rules offline; no TensorRT is needed or run.

    Each finding names the rule, its source (repository file or issue), the node, and the
    command that rewrites the model into a layout that passes. Errors fail the lint,
    warnings (what a run-time factor may reach) and notes do not. Exit codes: 0 passed,
    1 a rule failed, 2 usage, 3 unreadable or invalid model.
    """
    from graphsurgeon_tools.lint import lint_model

    with naming(model):
        report = lint_model(model, target=target)
    data = report.to_dict()
    data["model"] = str(model)
    for finding in data["findings"]:
        finding["command"], finding["writes"] = fix_command(finding["fix"], str(model))
    emit(data, as_json=as_json, human=_human)
    if report.failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``onnxtool lint`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("lint")(lint)
