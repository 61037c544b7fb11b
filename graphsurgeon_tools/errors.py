"""The two exception trees: user errors (one line, a documented exit code) and bugs.

Everything a user can cause - a missing file, a model that is not ONNX, unsafe
external data, nonsense scales, a failed check - raises a subclass of
:class:`OnnxToolError`. The CLI prints ``str(error)`` as one line and exits with
``error.exit_code``. Any other exception is a bug in onnxtool: exit code 4, and
its traceback is shown when ``ONNXTOOL_DEBUG=1``.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ContextManager, Optional


class ExitCode(IntEnum):
    """Exit codes shared by every ``onnxtool`` command (documented in the README)."""

    OK = 0
    CHECK_FAILED = 1  # a built-in check or a validation found a mismatch (or --strict found nothing)
    USAGE = 2  # bad command line: unknown option, conflicting flags, bad output path
    INVALID_INPUT = 3  # unreadable, not ONNX, checker errors, unsafe external data, nonsense scales
    INTERNAL = 4  # a bug in onnxtool
    ENVIRONMENT = 5  # a missing dependency (torch, a compiler) or a compiled part that cannot be built/loaded
    OUTPUT_IO = 6  # the report or the output could not be written: stdout closed or full, disk full


class OnnxToolError(Exception):
    """Base of every error a user can cause. The message is one line naming the problem and the file."""

    exit_code: ExitCode = ExitCode.INVALID_INPUT


class UsageError(OnnxToolError):
    """The request itself is wrong: conflicting options, an output path that cannot be used."""

    exit_code = ExitCode.USAGE


class InvalidModelError(OnnxToolError):
    """The input is not a usable ONNX model: unreadable, not ONNX, truncated, fails the checker."""

    exit_code = ExitCode.INVALID_INPUT


class UnsupportedModelError(InvalidModelError):
    """A valid model that onnxtool cannot handle (an opset or construct it does not know)."""


class RefusedRequestError(UnsupportedModelError):
    """A requested form (make-dynamic-scale ``layout``, swap-plugin ``signature``) that can rewrite none
    of the matched sites: a refusal, never reported as success. ``skipped`` holds each site's Skip
    (node, op_type and its Refusal: code, text, fix)."""

    def __init__(self, message: str, skipped: tuple = ()) -> None:
        super().__init__(message)
        self.skipped = list(skipped)


class UnsafeExternalDataError(InvalidModelError):
    """External data whose location escapes the model's folder, or is missing, short or absurd."""


class InvalidScalesError(InvalidModelError):
    """Scales that make no sense: NaN, infinite, zero, negative, wrong length, absurdly large."""


class ResourceLimitError(InvalidModelError):
    """A requested run would exceed a configured limit (output size, memory)."""


class InvalidInputError(OnnxToolError):
    """A user-given input other than the model that cannot be used: an input array (missing file,
    not .npy, wrong shape or dtype, NaN), or a Python reference that fails when it is built."""

    exit_code = ExitCode.INVALID_INPUT


class CheckFailedError(OnnxToolError):
    """A built-in check or a validation found outputs that differ."""

    exit_code = ExitCode.CHECK_FAILED


class PreconditionError(OnnxToolError):
    """A pass refused the model before changing it (its ``requires`` hook failed)."""

    exit_code = ExitCode.INVALID_INPUT


class EnvironmentProblemError(OnnxToolError):
    """The environment lacks what a command needs: torch, a compiler, a loadable compiled op.

    Never a difference (exit 1) and never a bug (exit 4); the message names the one command
    that provides the missing piece.
    """

    exit_code = ExitCode.ENVIRONMENT


class OutputIOError(OnnxToolError):
    """Writing the report or an output failed: stdout closed or full, no space left."""

    exit_code = ExitCode.OUTPUT_IO


class PostconditionError(Exception):
    """A pass produced a model that breaks its own guarantees. This is a bug (exit code 4)."""


def naming(where: Optional[object], *also: Optional[object]) -> ContextManager[None]:
    """Make every user error raised inside name ``where`` (a file, a flag): the one home of
    "prefix the message with what it is about".

    A message that already names ``where`` or one of ``also`` (e.g. a ``--spec`` file) is left
    as it is, so an error passing through two of these is named once. ``where=None``: nothing
    to name. The error keeps its class (and so its exit code).
    """
    return _Naming(where, also)


class _Naming:
    def __init__(self, where: Optional[object], also: tuple[Optional[object], ...]) -> None:
        self.names = [str(w) for w in (where, *also) if w is not None]
        self.where = str(where) if where is not None else None

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type, exc: Optional[BaseException], tb: object) -> bool:
        if self.where is None or not isinstance(exc, OnnxToolError):
            return False
        text = str(exc)
        if any(name in text for name in self.names):
            return False
        named = type(exc)(f"{self.where}: {text}")
        named.__dict__.update(exc.__dict__)  # what the error carries (e.g. RefusedRequestError.skipped)
        raise named from None
