"""The one flow every model-rewriting command shares (make-dynamic-scale, swap-plugin, set-factor).

::

    resolve the output (exit 2 before any work) -> profile/check-dims flags -> load once
        -> refuse a data file of the input as target -> run the pass (errors name the file)
        -> a failed built-in check: exit 1, nothing written -> TensorRT profile -> save -> emit

A command parses its own flags into the pass's ONE options object and hands :func:`run_rewrite`
``make_pass(dims) -> Pass`` (``dims``: the parsed ``--check-dims``); everything else about files,
reports and exit codes is here, once: the pass object is built (its usage errors, exit 2) before
the model is loaded, and called with the file's name as its label.

Requires: typer-level parsing done by the command. Ensures: nothing is written when the
pass raises or its check fails; the report holds ``input`` and ``output`` (None when nothing
was written). Does NOT import onnx or onnxruntime at module level (``onnxtool --help`` stays
fast) and does NOT know any pass's flags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Collection, Optional, Sequence

from graphsurgeon_tools.cli._app import (
    check_profile_option,
    emit,
    naming,
    note,
    parse_check_dims,
    refuse_data_file_target,
    resolve_output,
)

__all__ = ["run_rewrite"]


def run_rewrite(
    model: Path,
    make_pass: Callable[[Optional[dict[str, int]]], Any],
    *,
    output: Optional[Path],
    in_place: bool,
    default_output: Callable[[Path], Path],
    human: Callable[[dict[str, Any]], str],
    as_json: bool,
    unread: Collection[str] = (),
    profile: Optional[str] = None,
    check: bool = True,
    check_dims: Optional[list[str]] = None,
    also_named: Sequence[Optional[Path]] = (),
    notes: Sequence[str] = (),
    after_run: Optional[Callable[[Any], None]] = None,
    write_unchanged_in_place: bool = True,
    share_data: bool = False,
    paths_first: bool = True,
) -> tuple[Any, dict[str, Any]]:
    """Run one rewrite command end to end; returns (the pass result, the report emitted).

    ``make_pass(dims)`` builds the pass object from the flags (``dims``: ``--check-dims`` or None).
    ``notes``: remarks printed once the flags are known good. ``after_run(result)``: remarks
    that need the result (before anything is written). ``write_unchanged_in_place=False``:
    with ``--in-place``, a model the pass did not change is not rewritten. ``share_data``:
    external data referenced instead of copied (``save_model``'s keyword, as given). ``paths_first``:
    ``input``/``output`` lead the report (else they follow the pass's keys). ``unread``: the report's
    keys ``human`` never reads (:func:`graphsurgeon_tools.cli._app.emit`; the JSON holds them all).
    """
    from graphsurgeon_tools.io import load_model, save_model
    from graphsurgeon_tools.passes.base import collector_paused

    with collector_paused():  # load, pass, save, report: one burst of small allocations, few cycles
        target = resolve_output(model, output, in_place, default_output)
        check_profile_option(profile)
        dims = parse_check_dims(check_dims, check=check)
        for text in notes:
            note(text)
        run = make_pass(dims or None)  # the options' usage errors (exit 2) before any loading
        proto = load_model(model)  # weights stay on disk; loaded once, here
        refuse_data_file_target(proto, model, target)
        with naming(model, *also_named):
            result = run(proto, label=str(model))
            result.raise_if_failed()  # a failed built-in check: exit 1, nothing written
        if after_run is not None:
            after_run(result)
        report: dict[str, Any] = {"input": str(model), "output": None} if paths_first else {}
        report.update(result.to_dict())
        if profile is not None:
            from graphsurgeon_tools.profiles import profile_report

            report["profile"] = profile_report(result.model, profile)  # before writing: a refusal leaves no file
        written = None
        if result.changed or not in_place or write_unchanged_in_place:
            # checked: every model a pass returns passed the ONNX checker (passes.model_check.ModelCheck)
            written = str(save_model(result.model, target, share_data=share_data, in_place=in_place, checked=True))
        if not paths_first:
            report["input"] = str(model)
        report["output"] = written
        emit(report, as_json=as_json, human=human, unread=unread)
        return result, report
