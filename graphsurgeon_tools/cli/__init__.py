"""``onnxtool``: the command line, a thin layer over the graphsurgeon_tools API.

:func:`main` is the console-script entry point. It is the one place that maps
exceptions to exit codes: a user error (:class:`OnnxToolError`, or a bad command
line) prints one line on stderr, its API keywords spelled as flags
(:func:`graphsurgeon_tools.cli.vocabulary.to_flags`: ``shared=True`` -> ``--shared``);
anything else is a bug, exit code 4, with the traceback only when ``ONNXTOOL_DEBUG=1``.

Every command runs inside one write-guard scope
(:func:`graphsurgeon_tools.io.guard.tracking_reads`): whatever the library reads during the
command (models, data files, specs, arrays) no write of the same command may replace. Python
warnings (numpy's RuntimeWarnings and the like) are kept off stderr (``ONNXTOOL_DEBUG=1`` shows
them), and text that cannot be encoded (a file name that is not UTF-8) is written with
backslash escapes instead of failing.

Requires: typer only at import (commands import heavy libraries inside their bodies).
Ensures: exactly one line on stderr per failure; the exit code of the error class.
Does NOT catch bugs as user errors: an unexpected exception is reported as internal (exit 4).
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from contextlib import contextmanager
from typing import Iterator, Optional, Sequence

import typer

from graphsurgeon_tools.cli._app import app
from graphsurgeon_tools.cli.vocabulary import to_flags
from graphsurgeon_tools.errors import ExitCode, OnnxToolError
from graphsurgeon_tools.io.guard import tracking_reads

try:  # typer >= 0.25 vendors click; older releases depend on it
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import ClickException, NoArgsIsHelpError

# Importing a command module registers its command on `app`.
# Keep these imports cheap: command modules import heavy libraries inside their bodies.
from graphsurgeon_tools.cli import commands as _commands  # noqa: F401,E402

__all__ = ["app", "main"]


def _debug() -> bool:
    return os.environ.get("ONNXTOOL_DEBUG", "") not in ("", "0", "false", "no")


def _one_line(text: str) -> str:
    from graphsurgeon_tools.io.names import printable  # a file name's undecodable bytes as \xNN

    return printable(" ".join(str(text).split()))


@contextmanager
def _escaping_streams() -> Iterator[None]:
    """stdout/stderr write what they cannot encode as backslash escapes while a command runs.

    A file name that is not UTF-8 reaches Python as lone surrogates; printing it in a report
    or an error must not become a UnicodeEncodeError (exit 4)."""
    changed = []
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure") and getattr(stream, "errors", None) == "strict":
            stream.reconfigure(errors="backslashreplace")
            changed.append(stream)
    try:
        yield
    finally:
        for stream in changed:
            stream.reconfigure(errors="strict")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI and return (and, as a script, exit with) its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    with _escaping_streams(), warnings.catch_warnings():
        if not _debug():  # one line on error is the contract: library warnings are not lines
            warnings.simplefilter("ignore")
        code = _run(args)
    if argv is None:
        sys.exit(code)
    return int(code)


def _run(args: list[str]) -> int:
    try:
        with tracking_reads():
            result = app(args=args, prog_name="onnxtool", standalone_mode=False)
        code = int(result) if isinstance(result, int) else ExitCode.OK
    except typer.Exit as exc:
        code = exc.exit_code
    except NoArgsIsHelpError as exc:  # bare `onnxtool`: show the help, as click would
        exc.show()
        code = ExitCode.USAGE
    except typer.Abort:
        sys.stderr.write("onnxtool: aborted\n")
        code = 130
    except ClickException as exc:  # bad options, missing arguments, bad values
        sys.stderr.write(f"onnxtool: error: {_one_line(exc.format_message())}\n")
        code = ExitCode.USAGE
    except OnnxToolError as exc:
        if _debug():
            traceback.print_exc()
        sys.stderr.write(f"onnxtool: error: {_one_line(to_flags(str(exc)))}\n")
        code = exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("onnxtool: interrupted\n")
        code = 130
    except Exception as exc:  # a bug: keep the traceback for whoever debugs it
        if _debug():
            traceback.print_exc()
        sys.stderr.write(
            f"onnxtool: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
            "(set ONNXTOOL_DEBUG=1 for the traceback)\n"
        )
        code = ExitCode.INTERNAL
    return int(code)
