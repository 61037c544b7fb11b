"""`onnxtool lint MODEL --target tensorrt|onnxruntime`: offline target rules, exit 1 when one fails.

The CLI face of :func:`graphsurgeon_tools.lint.lint_model`. Reads the model (weights stay on
disk), writes nothing. Each finding's fix (an API call) is spelled as the onnxtool command
that makes it.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from graphsurgeon_tools.cli._app import JsonOption, ModelArgument, app, emit, naming


def fix_command(fix: Optional[dict[str, Any]], model: str) -> Optional[str]:
    """``{"call": "make_dynamic_scale", "keywords": {"layout": "sizes"}}`` -> the onnxtool command line."""
    from graphsurgeon_tools.cli.vocabulary import to_flags

    if not fix:
        return None
    args = " ".join(f"{key}={value!r}".replace("'", '"') for key, value in fix["keywords"].items())
    text = f"onnxtool {fix['call'].replace('_', '-')} {model}" + (f" {to_flags(args)}" if args else "")
    if fix.get("then"):
        text += " && " + (fix_command(fix["then"], "OUT.onnx") or "")
    if fix.get("note"):
        text += f"  ({to_flags(fix['note'])})"
    return text


def _human(report: dict[str, Any]) -> str:
    counts = report["counts"]
    verdict = "FAILED" if report["failed"] else "passed"
    lines = [f"{report['model']}: lint --target {report['target']} {verdict}: {report['sites']} Resize/Upsample "
             f"site(s), {report['plugin_nodes']} plugin node(s); {counts['error']} error(s), "
             f"{counts['warning']} warning(s), {counts['info']} note(s)"]
    for finding in report["findings"]:
        where = finding["node"] or "model"
        lines.append(f"  {finding['severity']}: {finding['rule']} [{where}] {finding['reason']}")
        lines.append(f"    source: {finding['source']}")
        if finding.get("command"):
            lines.append(f"    fix: {finding['command']}")
    return "\n".join(lines)


@app.command()
def lint(
    model: ModelArgument,
    target: Annotated[str, typer.Option("--target", help="Whose rules: 'tensorrt' (TensorRT's ONNX parser, "
                                                         "emulated offline) or 'onnxruntime' (where ORT's Resize "
                                                         "departs from the ONNX reference or PyTorch).")] = "tensorrt",
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
        finding["command"] = fix_command(finding["fix"], str(model))
    emit(data, as_json=as_json, human=_human)
    if report.failed:
        raise typer.Exit(1)
