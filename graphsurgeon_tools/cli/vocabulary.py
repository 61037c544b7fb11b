"""The CLI's flag vocabulary: API keywords in library messages become the flags a user typed.

The library speaks in API keywords (``from_sizes=True``, ``nodes=[...]``,
``signature="size-tensor"``); a command-line user should read the flag that sets it
(``--from-sizes``, ``--nodes``, ``--signature size-tensor``). :func:`to_flags` rewrites one
message; :func:`report_to_flags` every string of a report, adding beside each refusal that
carries a fix (:class:`graphsurgeon_tools.refusal.Fix`, an API call) the command line that
applies it (:func:`fix_hint`: ``make_dynamic_scale(layout="sizes")`` ->
``make-dynamic-scale --layout sizes``). A public function ``f_g`` is the command ``f-g``.

Requires: messages that name keywords as ``keyword=value`` (value: True/False/None, a quoted
string, a ``[...]`` list, a bare token, or nothing).

Ensures: only keywords listed in :data:`FLAGS` are rewritten, and only where the keyword is
not part of a longer name or a path (``full_check=True`` and ``/tmp/check=1/m.onnx`` stay).
A hint is derived from the refusal's own fix, so a new pass's refusals need no entry here
(tests/passes/test_refusal_codes.py checks each fix's keywords have flags here).

Does NOT import anything beyond the standard library (the CLI start-up path), and does not
know which command is running: a keyword means the same flag in every command.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Mapping, NamedTuple, Optional

__all__ = ["FLAGS", "Flag", "command_name", "fix_hint", "report_to_flags", "spell_flags", "to_flags"]


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
    "optimized_figure": Flag("--optimized-figure"),
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

_VALUE = r"""(?P<value>True|False|None|"[^"]*"|'[^']*'|\[[^\]]*\]|[^\s,;:()\[\]]*[^\s,;:()\[\].])?"""


@functools.lru_cache(maxsize=None)
def _keyword_pattern() -> re.Pattern[str]:
    """The keyword=value pattern, compiled when a message first holds a "=": most commands never
    rewrite one, and compiling this alternation of every keyword costs 0.5 ms of every start."""
    return re.compile(r"(?<![\w./\\\-])(?P<keyword>" + "|".join(sorted(FLAGS, key=len, reverse=True)) + r")=" + _VALUE)


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
    spelled = _SPELLED.get(message)
    if spelled is None:
        spelled = _keyword_pattern().sub(_spell, message)
        if len(_SPELLED) < 4096:
            _SPELLED[message] = spelled
    return spelled


#: to_flags' answers (a pure function of the text): a report of many like sites repeats its texts.
_SPELLED: dict[str, str] = {}


#: Values a report walk gives back as they are, checked by exact type first (a report of thousands
#: of sites holds ~100,000 values, most of them numbers).
_PLAIN = frozenset({int, float, bool, type(None)})


def report_to_flags(report: Any, printable: Optional[Callable[[str], str]] = None) -> Any:
    """A copy of a JSON-able report with every string rewritten by :func:`to_flags`, and a
    ``hint`` (:func:`fix_hint`) added beside each ``code`` whose ``fix`` names a call.

    ``printable``: the same walk also passes every non-ASCII string (dict keys and hints included)
    through it and makes every tuple a list: what the CLI prints, in one walk instead of two.
    Other objects (a Path, a result with ``to_dict``) are given back as they are."""
    return _walker(printable)(report)


def _walker(printable: Optional[Callable[[str], str]]) -> Callable[[Any], Any]:
    """One :func:`report_to_flags` walk. Numbers and strings, nearly every value of a big report, are
    handled inside the container loops (a function call per value was most of the walk's time)."""
    plain = _PLAIN

    def text(message: str) -> str:
        if "=" in message:
            message = to_flags(message)
        return message if printable is None or message.isascii() else printable(message)

    def walk(value: Any) -> Any:
        kind = type(value)
        if kind in plain:
            return value
        if kind is str or isinstance(value, str):
            return text(value)
        if isinstance(value, dict):
            return mapping(value)
        if isinstance(value, list) or (printable is not None and isinstance(value, tuple)):
            return items(value)
        if isinstance(value, tuple):
            return tuple(walk(item) for item in value)
        return value

    def items(values: Any) -> list[Any]:
        out: list[Any] = []
        append = out.append
        for item in values:
            kind = type(item)
            if kind in plain:
                append(item)
            elif kind is str:
                # text()'s own test for a string it gives back unchanged, without the call
                append(item if "=" not in item and (printable is None or item.isascii()) else text(item))
            elif kind is dict:  # what walk() does with an exact dict or list, without its dispatch
                append(mapping(item))
            elif kind is list:
                append(items(item))
            else:
                append(walk(item))
        return out

    def mapping(report: dict[Any, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        keys_as_they_are = printable is None or _ascii_keys(report)
        for key, item in report.items():
            if not keys_as_they_are and isinstance(key, str) and not key.isascii():
                key = printable(key)  # type: ignore[misc]  # keys_as_they_are is True without printable
            kind = type(item)
            if kind in plain:
                out[key] = item
            elif kind is str:
                out[key] = item if "=" not in item and (printable is None or item.isascii()) else text(item)
            elif kind is dict:
                out[key] = mapping(item)
            elif kind is list:
                out[key] = items(item)
            else:
                out[key] = walk(item)
        if isinstance(report.get("code"), str):
            fix = report.get("fix")
            if isinstance(fix, dict) and "hint" not in out:
                hint = fix_hint(fix)
                out["hint"] = (
                    hint if printable is None or not isinstance(hint, str) or hint.isascii() else printable(hint)
                )
        return out

    return walk


def _ascii_keys(mapping: dict[Any, Any]) -> bool:
    """Every str key ASCII only (one C-level join for the usual report dict, whose keys are all str)."""
    try:
        return "".join(mapping).isascii()
    except TypeError:  # a key that is not a str
        return all(not isinstance(key, str) or key.isascii() for key in mapping)


def command_name(call: str) -> str:
    """The command of a public function: ``"make_dynamic_scale"`` -> ``"make-dynamic-scale"``."""
    return call.replace("_", "-")


def spell_flags(keywords: Mapping[str, Any]) -> str:
    """API keywords as flags: ``{"layout": "sizes", "only_free": False}`` -> ``--layout sizes without --only-free``."""
    words = []
    for key, value in keywords.items():
        flag = FLAGS.get(key)
        if value is False and flag is not None and flag.off is None:
            words.append(f"without {flag.on}")  # "no --only-free" reads as a flag of its own in a command line
        else:
            words.append(to_flags(f"{key}={value!r}".replace("'", '"')))
    return " ".join(words)


def fix_hint(fix: Optional[Mapping[str, Any]]) -> Optional[str]:
    """A refusal's fix (``Fix.to_dict()``) as the commands that apply it, or None::

        {"call": "make_dynamic_scale", "keywords": {"layout": "sizes"},
         "then": {"call": "swap_plugin", "keywords": {"signature": "sizes"}}}
        -> "make-dynamic-scale --layout sizes, then swap-plugin --signature sizes"

    Each step's ``note`` (what it must be applied to) follows it in parentheses, in flags.
    """
    steps = []
    step = fix
    while step:
        flags = spell_flags(step.get("keywords") or {})
        note = f" ({to_flags(step['note'])})" if step.get("note") else ""
        steps.append(command_name(step["call"]) + (f" {flags}" if flags else "") + note)
        step = step.get("then")
    return ", then ".join(steps) or None
