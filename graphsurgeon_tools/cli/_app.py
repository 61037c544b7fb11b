"""The typer application and what every command shares: options, report output, exit codes.

Command modules (``cli/commands/``) add their command to :data:`app` in ``register(app)``,
called by :func:`graphsurgeon_tools.cli.commands.register_all`. They stay thin: parse options,
make one call into the library, hand the result's ``to_dict()`` to :func:`emit`.

Requires: typer and the standard library at import time.
Ensures: options shared by several commands are declared once (their spelling never drifts);
reports go to stdout (JSON or human), remarks to stderr; output paths are refused (exit 2)
before any work when unusable or when they are the input or one of its data files.
Does NOT import onnx, onnxruntime or torch at module level, so ``onnxtool --help`` is fast;
does not map exceptions to exit codes (that is :func:`graphsurgeon_tools.cli.main`).
"""

from __future__ import annotations

import math
import sys
from json.encoder import encode_basestring_ascii as _quoted
from pathlib import Path
from typing import Annotated, Any, Callable, Collection, Optional

import typer

app = typer.Typer(
    name="onnxtool",
    help=(
        "ONNX graph surgery for Resize/Upsample: make baked-in scale factors dynamic, "
        "swap Resize for a DynamicTRTResize plugin node, and validate the result in "
        "ONNX Runtime against a PyTorch reference.\n\n"
        "Exit codes: 0 success, 1 a check or validation failed, 2 usage error, "
        "3 invalid or unsupported input, 4 internal error (ONNXTOOL_DEBUG=1 shows tracebacks), "
        "5 environment problem (torch missing, the C++ op cannot be built: see onnxtool doctor), "
        "6 the report could not be written (stdout closed or full)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help text: option help mentions literal shapes such as [h, w], which rich markup would eat.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Options shared by several commands, declared once so their spelling never drifts.
JsonOption = Annotated[bool, typer.Option("--json", help="Print one machine-readable JSON report on stdout.")]
OutputOption = Annotated[
    Optional[Path],
    typer.Option("--output", "-o", help="Where to write the result (default: beside the input)."),
]
InPlaceOption = Annotated[
    bool, typer.Option("--in-place", help="Overwrite the input model instead of writing a new file.")
]
NodesOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--nodes",
        help="Only these nodes: exact names or glob patterns (repeat or comma-separate).",
    ),
]
ProfileOption = Annotated[
    Optional[str],
    typer.Option(
        "--profile",
        help="TensorRT optimisation profile SIZES:FACTORS for the written model, e.g. 32,256,512:1,2,4 "
        "(sizes L, HxW or DxHxW, or one int for every spatial axis; min,opt,max): prints the trtexec, "
        "polygraphy and ONNX Runtime spellings.",
    ),
]
CustomOpLibOption = Annotated[
    Optional[list[Path]],
    typer.Option(
        "--custom-op-lib",
        help="An ONNX Runtime custom-op library of your own (a .so exporting RegisterCustomOps, e.g. "
        "MMDeploy's ORT ops) for every ONNX Runtime session of the command (repeatable).",
    ),
]
ModelArgument = Annotated[Path, typer.Argument(help="The ONNX model to read (never modified).")]


def split_csv(values: Optional[list[str]]) -> Optional[list[str]]:
    """``--nodes a,b --nodes c`` -> ``["a", "b", "c"]``; ``None`` stays ``None``."""
    if not values:
        return None
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


OptimizedFigureOption = Annotated[
    bool,
    typer.Option(
        "--optimized-figure",
        help="The check also runs both models at ORT_ENABLE_ALL and reports their "
        "difference there as a figure (never a verdict; one more ONNX Runtime "
        "session per model). Default: one session per model, at the verdict's "
        "level.",
    ),
]

CheckDimsOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--check-dims",
        help="Sizes for named input dims in the check, e.g. height=64,width=96 "
        "(default: 1 for the first dim, 32 for the others).",
    ),
]


def parse_check_dims(items: Optional[list[str]], *, check: bool) -> dict[str, int]:
    """``--check-dims height=64,width=96`` -> ``{"height": 64, "width": 96}``; says when --no-check makes it moot."""
    from graphsurgeon_tools.errors import UsageError

    dims: dict[str, int] = {}
    for item in split_csv(items) or []:
        name, _, value = item.partition("=")
        if not name.strip() or not value.strip().isdigit() or int(value) <= 0:
            raise UsageError(f"--check-dims wants NAME=SIZE with a positive integer size, got {item!r}")
        dims[name.strip()] = int(value)
    if dims and not check:
        note("--check-dims has no effect with --no-check")
    return dims


def parse_factors_option(values: Optional[list[str]]) -> Optional[list[float]]:
    """``--factors 2,3 --factors x4`` -> ``[2.0, 3.0, 4.0]``; None when not given.

    The one factor parser is the library's (validation.sweep.parse_factors); its errors
    gain the flag's name here, so a user reads which option was wrong."""
    if not values:
        return None
    from graphsurgeon_tools.errors import naming
    from graphsurgeon_tools.validation.sweep import parse_factors

    with naming(f"--factors {','.join(values)}"):
        return parse_factors(split_csv(values) or [])


def check_profile_option(text: Optional[str]) -> None:
    """Refuse (exit 2) a malformed ``--profile`` before any work is done."""
    if text is not None:
        from graphsurgeon_tools.profiles import parse_profile

        parse_profile(text)


def profile_lines(report: dict[str, Any]) -> list[str]:
    """Human lines for a report's ``profile`` entry (none when ``--profile`` was not given)."""
    profile = report.get("profile")
    if not profile:
        return []
    lines = [f"trtexec    {profile['trtexec']}", f"polygraphy {profile['polygraphy']}"]
    lines += [f"onnxruntime {key}={value}" for key, value in profile["onnxruntime"].items()]
    lines += [f"note: {text}" for text in profile.get("notes", [])]
    return lines


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


_JSON_WORDS = {True: "true", False: "false", None: "null"}


def _json_key(key: Any) -> str:
    """A dict key as JSON writes it (json.dumps' rules: true/false/null, floats as repr or NaN)."""
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, float):
        if math.isfinite(key):
            return float.__repr__(key)
        return "NaN" if key != key else ("Infinity" if key > 0 else "-Infinity")
    if key is True or key is False or key is None:
        return _JSON_WORDS[key]
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _json_ready(value: Any) -> Any:
    """``value`` as plain JSON data (dict with str keys, list, str, int, float, bool, None): what
    ``json.loads(json.dumps(value, default=_json_default))`` gives, with each non-finite float as its
    text (JSON has no NaN/Infinity: "nan", "inf", "-inf" rather than invalid JSON), in one walk."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else str(value)
    if kind is list:
        return [item if type(item) is str or type(item) is int else _json_ready(item) for item in value]
    if kind is dict and all(type(key) is str for key in value):
        return {
            key: item if type(item) is str or type(item) is int else _json_ready(item) for key, item in value.items()
        }
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool is exact above; an int subclass (IntEnum) is written as its number
        return int.__int__(value)
    if isinstance(value, float):  # numpy's float64 too
        number = float.__float__(value)
        return number if math.isfinite(number) else str(number)
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[_json_key(key)] = _json_ready(item)  # keys that become equal text: the last value wins
        return out
    return _json_ready(_json_default(value))


def _json_text(value: Any, margin: str = "\n") -> str:
    """``json.dumps(_json_ready(value), indent=2)``, written directly: json's own writer with an indent
    is pure Python, yielding a piece per value; this one joins each container's items at once. The
    usual kinds are handled here; anything else goes through :func:`_json_ready` first."""
    kind = type(value)
    if kind is str:
        return _quoted(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    if kind is bool or value is None:
        return _JSON_WORDS[value]
    inner = margin + "  "
    if kind is list:
        if not value:
            return "[]"
        items = [_quoted(item) if type(item) is str else _json_text(item, inner) for item in value]
        return "[" + inner + ("," + inner).join(items) + margin + "]"
    if kind is dict and all(type(key) is str for key in value):
        if not value:
            return "{}"
        pairs = [
            _quoted(key) + ": " + (_quoted(item) if type(item) is str else _json_text(item, inner))
            for key, item in value.items()
        ]
        return "{" + inner + ("," + inner).join(pairs) + margin + "}"
    return _json_text(_json_ready(value), margin)


def emit(
    report: dict[str, Any],
    *,
    as_json: bool,
    human: Callable[[dict[str, Any]], str],
    unread: Collection[str] = (),
) -> None:
    """Print the report: JSON on stdout with ``--json``, otherwise ``human(report)``.

    Library text in the report (skip reasons, notes) names API keywords; both forms show the
    flags instead (:func:`graphsurgeon_tools.cli.vocabulary.report_to_flags`), and every string
    as valid UTF-8: a file name's undecodable bytes as ``\\xNN`` (:func:`graphsurgeon_tools.io.names.printable`),
    so no strict JSON parser or stream chokes; both in one walk over the report.

    ``unread``: what ``human`` never reads (the bulky parts of a big graph's report: every declared
    input, every site's layout table): a top-level key (``"declared_inputs"``), or a key of each entry
    of a list (``"rewritten.layouts"``). They are left out of what ``human`` is handed, not rewritten
    for it: a renderer that reads one fails (KeyError) instead of printing library text. The JSON
    always holds everything."""
    from graphsurgeon_tools.cli.vocabulary import report_to_flags
    from graphsurgeon_tools.io.names import printable

    if as_json:
        sys.stdout.write(_json_text(report_to_flags(report, printable)) + "\n")
    else:
        text = human(report_to_flags(_shown(report, unread) if unread else report, printable))
        if text:
            sys.stdout.write(text.rstrip("\n") + "\n")
    sys.stdout.flush()


def _shown(report: dict[str, Any], unread: Collection[str]) -> dict[str, Any]:
    """``report`` without the keys in ``unread`` (``"key"``, or ``"key.inner"`` in each entry of a list)."""
    inner: dict[str, set[str]] = {}
    for path in unread:
        key, _, entry_key = path.partition(".")
        inner.setdefault(key, set()).add(entry_key)
    shown = {}
    for key, value in report.items():
        drop = inner.get(key)
        if drop is None or not isinstance(value, list):
            if drop is None or "" not in drop:
                shown[key] = value
        elif "" not in drop:  # only some keys of each entry
            shown[key] = [
                {k: v for k, v in entry.items() if k not in drop} if isinstance(entry, dict) else entry
                for entry in value
            ]
    return shown


def resolve_output(model: Path, output: Optional[Path], in_place: bool, default: Callable[[Path], Path]) -> Path:
    """Where a model-writing command writes, refused (exit 2) before any work if unusable.

    Args:
        model: the input model path.
        output: ``-o``, or None.
        in_place: ``--in-place`` (excludes ``-o``).
        default: names the output from the input when neither is given.

    ``default(model)`` names the output when neither ``-o`` nor ``--in-place`` is given. The
    input is never the target unless ``--in-place`` (any spelling, symlink or hard link of it:
    same st_dev/st_ino); an output that is one of the input's external data files is refused
    later, by :func:`refuse_data_file_target`, once the model is loaded. Both are early,
    before-any-work forms of what the write guard (:mod:`graphsurgeon_tools.io.guard`) checks
    again, with every target, when the model is saved.
    """
    import os

    from graphsurgeon_tools.errors import UsageError
    from graphsurgeon_tools.io import check_destination

    if in_place and output is not None:
        raise UsageError("--in-place and --output exclude each other")
    target = model if in_place else (output or default(model))
    check_destination(target)  # a symlink loop or a folder is refused before samefile looks at it
    if not in_place and target.exists() and model.is_file() and os.path.samefile(target, model):
        raise UsageError(f"output {target} is the input model; pass --in-place to overwrite it")
    return target


def refuse_data_file_target(proto: Any, model: Path, target: Path) -> None:
    """Refuse (exit 2) an output path that is one of ``model``'s external data files.

    Writing the new model there would destroy the weights both models read.
    """
    import os

    from graphsurgeon_tools.errors import UsageError
    from graphsurgeon_tools.io import external_data_dir, external_tensor_refs

    if external_data_dir(proto) is None:  # load_model records a folder exactly when there is external data
        return
    if target.exists() and any(os.path.samefile(target, ref.path) for ref in external_tensor_refs(proto)):
        raise UsageError(
            f"output {target} is an external data file of {model}; writing it would destroy the input's weights"
        )


def naming(model: Path, *also: Optional[Path]) -> Any:
    """Make every user error raised inside name the file it is about (errors.naming)."""
    from graphsurgeon_tools import errors

    return errors.naming(model, *also)


def check_lines(check: Optional[dict[str, Any]], headline: Callable[[dict[str, Any], float], str]) -> list[str]:
    """A rewrite command's built-in check in text: nothing when it did not run, the skip reason, or
    ``headline(check, worst)`` (each command says in its own words what it compared; ``worst`` is the
    largest |diff| over the outputs) followed by :func:`check_detail_lines`. A failed check never
    gets here: it exits 1."""
    if check is None:
        return []
    if check["skipped"]:
        return [f"check skipped: {check['skipped']}"]
    worst = max((o["max_abs_diff"] for o in check["outputs"]), default=0.0)
    return [headline(check, worst), *check_detail_lines(check)]


def check_detail_lines(check: dict[str, Any]) -> list[str]:
    """What every rewrite command prints under its check's headline (the headline says what was
    compared, in each command's words): the models and steps, the optimized-level figure, figures
    measured beside the verdict, and the evidence of what ran."""
    from graphsurgeon_tools.runtime.provenance import evidence_lines

    lines = check_step_lines(check)
    optimized = check.get("optimized") or {}
    if optimized.get("max_abs_diff") is not None:  # None: nothing compared
        drift = optimized.get("original_drift")
        lines.append(
            f"  at {optimized['level']} max |diff| {optimized['max_abs_diff']:g}"
            + (f" (the original differs from itself by {drift:g} between the levels)" if drift else "")
        )
    elif optimized.get("note"):  # asked for, and why it is missing
        lines.append(f"  at {optimized['level']}: {optimized['note']}")
    lines.extend(session_lines(check))
    for key, figure in (check.get("figures") or {}).items():  # measured beside the verdict, never one
        lines.append(f"  {key}: {figure['text'] if isinstance(figure, dict) else figure}")
    return lines + evidence_lines(check.get("evidence"))


def session_lines(check: dict[str, Any]) -> list[str]:
    """Which ONNX Runtime sessions the check opened, per model and level (what the check cost)."""
    sessions = check.get("sessions") or []
    if not sessions:
        return []
    per_model = {entry["model"]: 0 for entry in sessions}
    for entry in sessions:
        per_model[entry["model"]] += 0 if entry.get("reused") else 1
    counts = sorted(set(per_model.values()))
    each = (
        f"{counts[0]} per model"
        if len(counts) == 1
        else ", ".join(f"{count} for the {model}" for model, count in per_model.items())
    )
    levels = check.get("levels") or sorted({entry["level"] for entry in sessions})
    text = f"  ONNX Runtime sessions: {each}, at {' and '.join(levels)}"
    reused = sum(1 for entry in sessions if entry.get("reused"))
    if reused:
        text += f" ({reused} run(s) in a session this check had opened already)"
    if "ORT_ENABLE_ALL" not in levels:
        text += " (--optimized-figure adds the ORT_ENABLE_ALL figure: one more session per model)"
    steps = [entry for step in check.get("steps") or () for entry in step.get("sessions") or ()]
    if steps:  # each intermediate model measured against yours: its own session; yours is reused
        text += (
            f"; the step model(s): {sum(1 for e in steps if not e.get('reused'))} more, your model's "
            f"session reused {sum(1 for e in steps if e.get('reused'))} time(s)"
        )
    return [text]


def check_step_lines(check: Optional[dict[str, Any]]) -> list[str]:
    """The check's models and intermediate steps in text, when more than two models are involved
    (a pass that ran onnxsim, inlining or a relayout first): every figure names its two models."""
    if not check or not check.get("steps"):
        return []
    models = check.get("models") or {}

    def name(ref: dict[str, Any]) -> str:
        return f"{ref.get('role')} (sha256 {str(ref.get('sha256'))[:12]})"

    lines = []
    if models:
        lines.append(f"  the figures above: {name(models['candidate'])} against {name(models['reference'])}")
    for step in check["steps"]:
        changes = ", ".join(f"{key.replace('_', ' ')} {value}" for key, value in step.get("changes", {}).items())
        if step.get("skipped"):
            figure = f"not measured: {step['skipped']}"
        else:
            figure = f"max |diff| {step['max_abs_diff']:g}" if step.get("max_abs_diff") is not None else "no figure"
            if step.get("sites_max_abs_diff") is not None:
                figure += f" (site outputs: {step['sites_max_abs_diff']:g})"
            if step.get("passed") is False:
                figure += f" (beyond atol {step['atol']:g}, rtol {step['rtol']:g})"
        lines.append(
            f"  step {step['step']}"
            + (f" ({changes})" if changes else "")
            + f": {name(step['candidate'])} against {name(step['reference'])}: {figure}"
        )
    return lines


def note(message: str) -> None:
    """A one-line remark for humans (warnings, hints); goes to stderr so --json stays clean."""
    from graphsurgeon_tools.cli.vocabulary import to_flags
    from graphsurgeon_tools.io.names import printable

    sys.stderr.write(f"onnxtool: {printable(to_flags(message))}\n")
