"""``onnxtool``: the command line, a thin layer over the graphsurgeon_tools API.

:func:`main` is the console-script entry point. It is the one place that maps
exceptions to exit codes: a user error (:class:`OnnxToolError`, or a bad command
line) prints one line on stderr, its API keywords spelled as flags
(:func:`graphsurgeon_tools.cli.vocabulary.to_flags`: ``shared=True`` -> ``--shared``);
anything else is a bug, exit code 4, with the traceback only when ``ONNXTOOL_DEBUG=1``.

The report goes to stdout through :class:`_ReportStream`: a closed stdout (``>&-``), a full one
(``/dev/full``) or a broken pipe is an :class:`OutputIOError` (exit 6, one line on stderr), for
every command, whether it fails while the command writes or when the buffered report is flushed
at the end. An environment problem that surfaces as a bare exception (``import torch`` failing,
the C++ op's build error) is exit 5 with the install command
(:func:`graphsurgeon_tools.extensions.environment_problem`), never exit 4.

Every command runs inside one write-guard scope
(:func:`graphsurgeon_tools.io.guard.tracking_reads`): whatever the library reads during the
command (models, data files, specs, arrays) no write of the same command may replace. Python
warnings (numpy's RuntimeWarnings and the like) are kept off stderr (``ONNXTOOL_DEBUG=1`` shows
them), and text that cannot be encoded (a file name that is not UTF-8) is written with
backslash escapes instead of failing. As a script (``main()`` without argv), the cyclic garbage
collector stays off for the command (its passes cost tens of milliseconds and free nothing a one-shot
command needs freed), and the process ends without the interpreter's teardown once the atexit
functions have run and the standard streams are flushed (:func:`_end_process`).

Requires: typer only at import (commands import heavy libraries inside their bodies).
Ensures: exactly one line on stderr per failure; the exit code of the error class.
Does NOT catch bugs as user errors: an unexpected exception is reported as internal (exit 4).
"""

from __future__ import annotations

import atexit
import errno
import gc
import io
import os
import sys
import threading
import traceback
import warnings
from contextlib import contextmanager
from typing import Any, Iterator, NoReturn, Optional, Sequence

import typer

from graphsurgeon_tools.cli._app import app
from graphsurgeon_tools.cli.vocabulary import to_flags
from graphsurgeon_tools.errors import ExitCode, OnnxToolError, OutputIOError
from graphsurgeon_tools.io.guard import tracking_reads

try:  # typer >= 0.25 vendors click; older releases depend on it
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import ClickException, NoArgsIsHelpError

from graphsurgeon_tools.cli.commands import register_all  # noqa: E402

# Every module of cli/commands/ adds its command here (cheap: they import heavy libraries inside
# their bodies); a new command module needs no edit of this file or of cli/commands/__init__.py.
register_all(app)

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
            try:
                stream.reconfigure(errors="strict")  # flushes first: a full stdout was already reported
            except (OSError, ValueError):
                pass


class _ClosedStream(io.StringIO):
    """What stdout is when the process started with it closed (``>&-``): every write fails."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")

    def flush(self) -> None:
        pass


class _ReportStream:
    """``sys.stdout`` while a command runs: a write or flush that fails is :class:`OutputIOError`.

    Everything else is the real stream's (``isatty``, ``encoding``, ``fileno``...)."""

    def __init__(self, stream: Any) -> None:
        self.stream = _ClosedStream() if stream is None else stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except (OSError, ValueError) as exc:  # ValueError: "I/O operation on closed file"
            raise _output_error(exc) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except (OSError, ValueError) as exc:
            raise _output_error(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _output_error(exc: BaseException) -> OutputIOError:
    if isinstance(exc, BrokenPipeError):
        why = "the reader closed the pipe"
    elif isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        why = "no space left on device"
    elif isinstance(exc, OSError) and exc.strerror:
        why = exc.strerror[0].lower() + exc.strerror[1:]
    else:
        why = str(exc) or type(exc).__name__
    return OutputIOError(f"cannot write the report to stdout: {why}")


@contextmanager
def _report_stdout() -> Iterator[_ReportStream]:
    original = sys.stdout
    stream = _ReportStream(original)
    sys.stdout = stream  # type: ignore[assignment]
    try:
        yield stream
    finally:
        sys.stdout = original


def _discard_stdout() -> None:
    """After a failed report: point fd 1 at /dev/null so the interpreter's last flush of what is
    still buffered cannot fail again (which would print a second message and exit 120)."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):  # not a real file (tests' capture)
        pass


def _say(line: str) -> None:
    """One line on stderr, if there is a stderr at all (``2>&-`` leaves none)."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(line)
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI and return (and, as a script, exit with) its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:
        # A console process runs one command and ends. Its cyclic collector would walk the objects the
        # command's imports make (onnx, numpy, protobuf, the pass: ~100,000) again and again while they
        # load, and all it allocated once more when a pass resumes it, some 10-15 ms of a 0.35 s
        # rewrite, to free almost nothing: what a command leaves is freed by reference counting or by
        # the exit. So it stays off until the exit (see below). In-process callers (argv given: tests,
        # scripts) keep their collector as it was.
        gc.disable()
    with _escaping_streams(), warnings.catch_warnings():
        if not _debug():  # one line on error is the contract: library warnings are not lines
            warnings.simplefilter("ignore")
        with _report_stdout() as stdout:
            code = _run(args, stdout)
        if code == ExitCode.OUTPUT_IO:
            _discard_stdout()
    if argv is None:
        _end_process(int(code))
    return int(code)


def _end_process(code: int) -> NoReturn:
    """End the console process with ``code`` as a normal exit does, less the interpreter's teardown.

    A normal exit waits for the other threads, runs the atexit functions, flushes the standard
    streams, then frees every module and object one by one (~15 ms after a 2,000-site rewrite, for
    memory the operating system takes back at once) and collects what is left. Here the first three
    steps run and the process ends. With another thread still running, the exit is the normal one,
    the objects the imports made frozen out of its last collection's sight (~45,000: 20-50 ms). So it
    is under a profiler or tracer (``python -m cProfile``/``trace`` write their results after the
    script returns, and coverage tools stop theirs at exit)."""
    # CPython's own hook for "run the atexit functions now" (private, stable for decades): where an
    # interpreter lacks it, the exit is the normal one too.
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if (
        run_exit_functions is None
        or threading.active_count() > 1
        or sys.getprofile() is not None
        or sys.gettrace() is not None
    ):
        gc.freeze()
        sys.exit(code)
    run_exit_functions()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a report that cannot be written was exit 6 already
            pass
    os._exit(code)


def _run(args: list[str], stdout: _ReportStream) -> int:
    try:
        with tracking_reads():
            result = app(args=args, prog_name="onnxtool", standalone_mode=False)
        code = int(result) if isinstance(result, int) else ExitCode.OK
        stdout.flush()  # a report still buffered must reach its reader now, or be exit 6
    except typer.Exit as exc:
        code = exc.exit_code
    except NoArgsIsHelpError as exc:  # bare `onnxtool`: show the help, as click would
        exc.show()
        code = ExitCode.USAGE
    except typer.Abort:
        _say("onnxtool: aborted\n")
        code = 130
    except ClickException as exc:  # bad options, missing arguments, bad values
        _say(f"onnxtool: error: {_one_line(exc.format_message())}\n")
        code = ExitCode.USAGE
    except OnnxToolError as exc:
        code = _user_error(exc)
    except KeyboardInterrupt:
        _say("onnxtool: interrupted\n")
        code = 130
    except Exception as exc:
        from graphsurgeon_tools.extensions import environment_problem

        problem = environment_problem(exc)  # torch missing, the op cannot be built: not a bug
        if problem is not None:
            code = _user_error(problem, exc)
        else:  # a bug: keep the traceback for whoever debugs it
            if _debug():
                traceback.print_exc()
            _say(
                f"onnxtool: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
                "(set ONNXTOOL_DEBUG=1 for the traceback)\n"
            )
            code = ExitCode.INTERNAL
    if code != ExitCode.OUTPUT_IO:
        try:  # help text and reports typer wrote itself (--help), flushed while stdout is ours
            stdout.flush()
        except OutputIOError as exc:
            code = _user_error(exc)
    return int(code)


def _user_error(exc: OnnxToolError, cause: Optional[BaseException] = None) -> int:
    if _debug():
        traceback.print_exception(cause or exc)
    _say(f"onnxtool: error: {_one_line(to_flags(str(exc)))}\n")
    return int(exc.exit_code)
