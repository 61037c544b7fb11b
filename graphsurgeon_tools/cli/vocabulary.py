"""The CLI's flag vocabulary: API keywords in library messages become the flags a user typed.

The library speaks in API keywords (``from_sizes=True``, ``nodes=[...]``,
``signature="size-tensor"``); a command-line user should read the flag that sets it
(``--from-sizes``, ``--nodes``, ``--signature size-tensor``). :func:`to_flags` rewrites one
message; :func:`report_to_flags` every string of a report; :func:`flag_hint` turns a skip
reason code into the flag that would change the outcome.

Requires: messages that name keywords as ``keyword=value`` (value: True/False/None, a quoted
string, a ``[...]`` list, a bare token, or nothing).

Ensures: only keywords listed in :data:`FLAGS` are rewritten, and only where the keyword is
not part of a longer name or a path (``full_check=True`` and ``/tmp/check=1/m.onnx`` stay).

Does NOT import anything beyond the standard library (the CLI start-up path), and does not
know which command is running: a keyword means the same flag in every command.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Optional

__all__ = ["FLAGS", "REASON_HINTS", "Flag", "flag_hint", "report_to_flags", "to_flags"]


class Flag(NamedTuple):
    """How an API keyword is spelled on the command line."""

    on: str  # the flag; for booleans, the one that sets True
    off: Optional[str] = None  # the flag that sets False, where there is one


#: API keyword -> flag. One table for every command (the flags are shared, see cli/_app.py).
FLAGS: dict[str, Flag] = {
    # make-dynamic-scale
    "nodes": Flag("--nodes"),
    "shared": Flag("--shared"),
    "input_name": Flag("--input-name"),
    "factor": Flag("--factor"),
    "keep_default": Flag("--keep-default"),
    "from_sizes": Flag("--from-sizes"),
    "layout": Flag("--layout"),
    "simplify": Flag("--simplify"),
    "inline_functions": Flag("--inline-functions"),
    "only_free": Flag("--only-free"),
    "freedom": Flag("--freedom", "--no-freedom"),
    "check": Flag("--check", "--no-check"),
    "check_dims": Flag("--check-dims"),
    "share_data": Flag("--share-data"),
    "strict": Flag("--strict"),
    # swap-plugin
    "plugin": Flag("--plugin"),
    "signature": Flag("--signature"),
    "domain": Flag("--domain"),
    "reverse": Flag("--reverse"),
    "spec": Flag("--spec"),
    "list_specs": Flag("--list-specs"),
    "keep_constant": Flag("--keep-constant"),
    "size_input": Flag("--size-input"),
    "qdq_form": Flag("--qdq-form"),
    # set-factor
    "every": Flag("--all"),
    "original": Flag("--original"),
    # validate
    "reference": Flag("--reference"),
    "factors": Flag("--factors"),
    "inputs": Flag("--input"),
    "atol": Flag("--atol"),
    "rtol": Flag("--rtol"),
    "seed": Flag("--seed"),
    "input_size": Flag("--input-size"),
    "diagnose": Flag("--diagnose", "--no-diagnose"),
    "junit": Flag("--junit"),
    "sites": Flag("--site"),
    "scales_argument": Flag("--scales-argument"),
    "custom_op_libs": Flag("--custom-op-lib"),
    # shared by the model-writing commands
    "output": Flag("--output"),
    "in_place": Flag("--in-place"),
    # demo
    "out": Flag("--out"),
    # lint, and the TensorRT profile of the model-writing commands
    "target": Flag("--target"),
    "profile": Flag("--profile"),
    # certify (and validate --certify)
    "certify": Flag("--certify"),
    "verify": Flag("--verify"),
}

#: Refusal code (graphsurgeon_tools.refusal.Refusal, produced by the passes) -> the flags that
#: would change the outcome. The CLI adds the hint beside each skipped site (JSON ``hint``, text
#: ``hint:``); tests/passes/test_refusal_codes.py makes a pass produce every code listed here.
_SCALES_LAYOUT = "--layout scales (a float scales input expresses any factor)"
_SCALES_SIGNATURE = "swap-plugin --signature scales (the plugin reads the scales themselves)"
REASON_HINTS: dict[str, str] = {
    "sizes-driven": "--from-sizes (converts it when a scale reproduces the sizes exactly) "
                    "or swap-plugin --signature size-tensor",
    "in-function": "--inline-functions (inlines model-local functions first)",
    "static-shape-source": "make-dynamic-scale --simplify (folds the static shape arithmetic to a constant first)",
    "not-free": "drop --only-free (a pinned site is exact at its original factor)",
    "layout-in-body": _SCALES_LAYOUT,
    "layout-needs-resize-11": _SCALES_LAYOUT,
    "layout-axes": _SCALES_LAYOUT,
    "layout-tf-crop-and-resize": _SCALES_LAYOUT,
    "layout-no-spatial-axes": _SCALES_LAYOUT,
    "layout-non-spatial": _SCALES_LAYOUT,
    "not-whole-factor": "--layout sizes or --layout scales",
    "size-tensor-opset": _SCALES_SIGNATURE,
    "size-tensor-rank": _SCALES_SIGNATURE,
    "size-tensor-leading-axis": _SCALES_SIGNATURE,
    "size-tensor-inexact": _SCALES_SIGNATURE,
    "sizes-not-hw": "make-dynamic-scale --layout sizes first, then swap-plugin --signature sizes",
}

_VALUE = r"""(?P<value>True|False|None|"[^"]*"|'[^']*'|\[[^\]]*\]|[^\s,;:()\[\]]*[^\s,;:()\[\].])?"""
_KEYWORD = re.compile(
    r"(?<![\w./\\\-])(?P<keyword>" + "|".join(sorted(FLAGS, key=len, reverse=True)) + r")=" + _VALUE
)
#: Keywords whose values are a fixed set of words: written bare (``--signature size-tensor``);
#: other string values keep quotes, since they are names or patterns a reader must see exactly.
_CHOICES = {"signature", "layout", "target"}
_QUOTED_ITEM = re.compile(r"""'([^']*)'|"([^"]*)\"""")


def _spell(match: "re.Match[str]") -> str:
    flag = FLAGS[match.group("keyword")]
    value = match.group("value")
    if value is None or value in ("True", "[...]", "..."):
        return flag.on
    if value == "False":
        return flag.off or f"no {flag.on}"
    if value == "None":
        return f"no {flag.on}"
    if value[0] in "\"'":
        text = value[1:-1]
        return f"{flag.on} {text}" if match.group("keyword") in _CHOICES else f"{flag.on} {text!r}"
    if value[0] == "[":
        items = [a or b for a, b in _QUOTED_ITEM.findall(value)]
        return f"{flag.on} {','.join(items)!r}" if items else flag.on
    return f"{flag.on} {value}"


def to_flags(message: str) -> str:
    """``'shared=True needs equal scales'`` -> ``'--shared needs equal scales'``."""
    if "=" not in message:  # most report strings: skip the regex
        return message
    return _KEYWORD.sub(_spell, message)


def report_to_flags(report: Any) -> Any:
    """A copy of a JSON-able report with every string rewritten by :func:`to_flags`, and a
    ``hint`` added beside each ``code`` that :data:`REASON_HINTS` knows."""
    if isinstance(report, str):
        return to_flags(report)
    if isinstance(report, dict):
        out = {key: report_to_flags(value) for key, value in report.items()}
        hint = flag_hint(report.get("code")) if isinstance(report.get("code"), str) else None
        if hint and "hint" not in out:
            out["hint"] = hint
        return out
    if isinstance(report, list):
        return [report_to_flags(item) for item in report]
    if isinstance(report, tuple):
        return tuple(report_to_flags(item) for item in report)
    return report


def flag_hint(code: Optional[str]) -> Optional[str]:
    """The flag hint for a reason code, or None."""
    return REASON_HINTS.get(code) if code else None
