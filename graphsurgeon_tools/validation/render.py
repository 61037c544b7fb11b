"""The report (``ValidationReport.to_dict()``) as a terminal table: :func:`render_report`.

Requires: the report dict. Ensures: text (rich markup rendered, colour only when asked) in which
no figure is ever cut: without a ``width`` (stdout is not a terminal: a CI log) the table has its
full natural width; with one narrower than the table, each row is written as plain
``name value`` lines instead of eliding numbers. The evidence record (versions, the plugin kernel
that ran, the models' sha256) closes the report, with a warning line when the slow fallback ran.
Does NOT print: the caller writes the text where it wants.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from graphsurgeon_tools.runtime.provenance import evidence_lines

__all__ = ["render_report"]


def _fmt(value: Any, spec: str = ".3g") -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return format(value, spec)


def _point_label(factor: Any) -> str:
    return factor if isinstance(factor, str) else f"x{factor:g}"


_COLUMNS = [
    ("factor", "left"),
    ("output", "left"),
    ("shape", "left"),
    ("max abs", "right"),
    ("mean abs", "right"),
    ("max rel", "right"),
    ("out of tol", "right"),
    ("passing atol", "right"),
    ("PSNR dB", "right"),
    ("result", "left"),
]
# Wide enough for any table this report makes: "no width" means nothing is ever shrunk.
_UNLIMITED = 1 << 16


def render_report(report: Mapping[str, Any], *, color: bool = False, width: Optional[int] = None) -> str:
    """The report (``ValidationReport.to_dict()``) as a terminal table, returned as text.

    ``width``: the terminal's width, or None (not a terminal) for the table at its full width."""
    import io

    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        width=width or _UNLIMITED,
        highlight=False,
        soft_wrap=width is not None,
    )
    reference = report["reference"]
    console.print(f"candidate  {report['candidate']}")
    console.print(f"reference  {reference.get('label')} ({reference.get('kind')})")
    inputs = ", ".join(f"{i['name']}{i['shape']} {i['source']}" for i in report["inputs"])
    console.print(f"inputs     {inputs}")
    scale_inputs = report["candidate_ports"]["scale_inputs"]
    if scale_inputs:
        console.print("factor via " + ", ".join(f"{s['name']} ({s['layout']})" for s in scale_inputs))
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column, justify in _COLUMNS:
        table.add_column(column, justify=justify, no_wrap=True)
    rows: list[tuple[str, ...]] = []
    for point in report["factors"]:
        label = _point_label(point["factor"])
        if point["status"] in ("skipped", "error") and not point["outputs"]:
            style = "yellow" if point["status"] == "skipped" else "red"
            rows.append((label, "-", "-", "", "", "", "", "", "", f"[{style}]{point['status'].upper()}[/{style}]"))
            continue
        for out in point["outputs"]:
            share = out["mismatch_share"]
            if not out["passed"]:
                result = "[red]FAIL[/red]"
            elif out.get("vacuous"):  # passes anything: not evidence (see check.compare)
                result = "[yellow]vacuous[/yellow]"
            else:
                result = "[green]ok[/green]"
            shape = (
                out["candidate_shape"]
                if out["candidate_shape"] == out["reference_shape"]
                else f"{out['candidate_shape']} vs {out['reference_shape']}"
            )
            name = f"site {out['output']}" if out.get("kind") == "site" else out["output"]
            rows.append(
                (
                    label,
                    name,
                    "x".join(map(str, shape)) if isinstance(shape, list) else str(shape),
                    _fmt(out["max_abs_error"]),
                    _fmt(out["mean_abs_error"]),
                    _fmt(out["max_rel_error"]),
                    "-" if share is None else f"{100 * share:.2f}%",
                    _fmt(out["passing_atol"]),
                    _fmt(out["psnr_db"], ".1f"),
                    result,
                )
            )
    for row in rows:
        table.add_row(*row)
    # The table's natural width, measured on a console that never shrinks it.
    if width is not None and Console(file=io.StringIO(), width=_UNLIMITED).measure(table).maximum > width:
        _print_plain(console, rows)  # a narrow terminal: every figure whole, one per line
    else:
        console.print(table)
    for point in report["factors"]:
        if point["reason"]:
            label = _point_label(point["factor"])
            console.print(f"  {label} {point['status']}: {point['reason']}")
    for note in report.get("notes", []):
        console.print(f"  note: {note}")
    diagnosis = report.get("diagnosis")
    if diagnosis:
        console.print(
            f"[bold]diagnosis[/bold] ({diagnosis['output']} at "
            f"{_point_label(diagnosis['factor'])}): "
            f"{diagnosis['summary']}"
        )
    from rich.markup import escape

    for line in evidence_lines(report.get("evidence")):
        console.print(escape(line), style="yellow" if line.startswith("warning:") else None)
    verdict = "green" if report["passed"] else "red"
    console.print(f"[bold {verdict}]{report['summary']}[/bold {verdict}]")
    return buffer.getvalue()


def _print_plain(console: Any, rows: list[tuple[str, ...]]) -> None:
    """The table's rows as ``factor output: result`` then one ``column value`` line per figure."""
    for row in rows:
        console.print(f"{row[0]} {row[1]}: {row[-1]}")
        for (column, _), value in zip(_COLUMNS[2:-1], row[2:-1]):
            if value:
                console.print(f"    {column:<13}{value}")
