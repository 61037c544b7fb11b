"""`onnxtool doctor [--json]`: the CLI face of :func:`graphsurgeon_tools.runtime.environment.doctor`.

Prints versions, which kernel backs the torch op and which runs DynamicTRTResize in ONNX Runtime,
where things are built, and one fix command per missing piece. Builds nothing; exit 0 whatever it
finds (the JSON's ``ok`` says whether anything is missing).
"""

from typing import Any

import typer

from graphsurgeon_tools.cli._app import JsonOption, emit


def _sha(entry: dict[str, Any]) -> str:
    return f" (sha256 {entry['sha256']})" if entry.get("sha256") else ""


def _torch_op_line(op: dict[str, Any]) -> str:
    state = op.get("state")
    if state == "compiled":
        return f"compiled C++ op {op.get('path')}{_sha(op)}"
    if state == "built on first use":
        return f"not built yet: built on first use into {op.get('build_dir')} (now: {op.get('fix')})"
    return f"unavailable: {op.get('reason')}"  # the reason ends with the command that fixes it


def _kernel_line(entry: dict[str, Any]) -> str:
    if entry.get("kind") == "compiled-library":
        if entry.get("state") == "built on first use":
            return f"onnxtool's compiled ONNX Runtime library, built on first use into {entry.get('build_dir')}"
        return f"onnxtool's compiled ONNX Runtime library {entry.get('path')}{_sha(entry)}"
    if entry.get("backend") == "cpp":
        return f"onnxruntime-extensions bridge -> C++ op {entry.get('path') or '(built on first use)'}{_sha(entry)}"
    return "onnxruntime-extensions bridge -> onnx.reference fallback (pure Python, slow)"


def _human(report: dict[str, Any]) -> str:
    found = report["versions"]
    kernel = report["plugin_kernel"]
    runs = kernel["runs"]
    lines = [
        f"onnxtool {found['onnxtool']} (python {found['python']}) in {report['locations']['package']}",
        "versions   "
        + ", ".join(
            f"{name} {version or 'not installed'}"
            for name, version in found.items()
            if name not in ("onnxtool", "python")
        ),
    ]
    lines.append(f"torch op   {_torch_op_line(report['torch_op'])}")
    lines.append(f"DynamicTRTResize in ONNX Runtime: {_kernel_line(runs)}")
    if runs.get("kind") != "compiled-library" and runs.get("reason"):
        lines.append(f"           because {runs['reason']}")
    elif runs.get("state") == "built on first use" and runs.get("fix"):
        lines.append(f"           (or build it now: {runs['fix']})")
    if runs.get("kind") == "compiled-library":
        lines.append(f"           fallback: {_kernel_line(kernel['bridge'])}")
    if runs.get("slow") or (runs.get("kind") != "compiled-library" and kernel["bridge"].get("slow")):
        lines.append("warning    plugin models run on the slow onnx.reference fallback")
    lines.append(
        "built in   "
        + "; ".join(f"{name}: {where}" for name, where in report["locations"].items() if where and name != "package")
    )
    for item in report["missing"]:
        lines.append(f"missing    {item['what']}: {item['fix']}")
    if not report["missing"]:
        lines.append("nothing missing")
    return "\n".join(lines)


def doctor(as_json: JsonOption = False) -> None:
    """Say what is installed, which kernels run the resize op and the plugin node, where compiled
    parts are built and cached, and the command that provides each missing piece. Builds nothing."""
    from graphsurgeon_tools.runtime.environment import doctor as run_doctor

    emit(run_doctor().to_dict(), as_json=as_json, human=_human)


def register(app: typer.Typer) -> None:
    """Add ``onnxtool doctor`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("doctor")(doctor)
