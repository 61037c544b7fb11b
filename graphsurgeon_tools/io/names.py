"""File names as bytes, as text, and as the names onnxtool derives from them.

A POSIX file name is bytes; Python hands one that is not UTF-8 over as a ``str`` with lone
surrogates (``os.fsdecode``, "surrogateescape"), and gives the same bytes back with
``os.fsencode``. Such a ``str`` opens the right file, but it cannot go where text must be
UTF-8: a protobuf string (an external-data ``location``), JSON read by a strict parser, a
strict stream. This module is the one place that turns names into text.

* :func:`printable`: any text with undecodable bytes written as ``\\xNN`` (how a shell's
  ``$'...'`` spells them) - reports, messages, JSON. Lossless for display, never for opening.
* :func:`shell_quote`: a name as a shell word that names the same bytes when pasted (``$'..\\xff..'``
  where a byte is not UTF-8, ``shlex.quote`` otherwise) - the commands onnxtool suggests.
* :func:`utf8_file_name`: a file name onnxtool *creates* from a user's name (a model's data
  file ``OUT.data``) that can be recorded in the model: undecodable bytes become ``%NN``.
* :func:`derived_name`: ``model.onnx`` -> ``model.<suffix>.onnx`` beside it, replacing a
  suffix onnxtool wrote before instead of stacking (``m.dynamic.onnx`` -> ``m.sizes.onnx``).

Requires: the standard library only (the CLI imports this at start-up).
Does NOT touch the file system.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Iterable, Union

__all__ = ["derived_name", "printable", "shell_quote", "utf8_file_name"]

PathLike = Union[str, "os.PathLike[str]"]

#: Lone surrogates U+DC80..U+DCFF stand for the undecodable bytes 0x80..0xFF.
_LOW, _HIGH = 0xDC80, 0xDCFF


def _escape(text: str, template: str) -> str:
    if text.isascii():  # nearly every name: no walk
        return text
    return "".join(template % (ord(c) - 0xDC00) if _LOW <= ord(c) <= _HIGH else c for c in text)


def printable(text: Union[str, PathLike]) -> str:
    """``text`` (or a path) with each undecodable byte written ``\\xNN``; valid UTF-8 always."""
    text = os.fspath(text) if not isinstance(text, str) else text
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    escaped = _escape(text, "\\x%02x")
    try:
        escaped.encode("utf-8")
    except UnicodeEncodeError:  # other lone surrogates (not from a file name): escape them as code points
        escaped = escaped.encode("utf-8", "backslashreplace").decode("utf-8")
    return escaped


def utf8_file_name(name: str) -> str:
    """A name that is valid UTF-8 (so a model can record it): undecodable bytes become ``%NN``."""
    return _escape(name, "%%%02X")


def derived_name(model: PathLike, suffix: str, replaces: Iterable[str] = ()) -> Path:
    """``DIR/NAME.onnx`` -> ``DIR/NAME.<suffix>.onnx``, where a trailing ``.<s>`` of NAME with ``s`` in
    ``replaces`` (a suffix an earlier onnxtool command wrote) is replaced instead of stacked.

    When the replaced name would be ``model`` itself (re-running a command on its own output), the
    suffix is appended to the full name: the output is never the input.
    """
    path = Path(model)
    stem = path.name[: -len(".onnx")] if path.name.endswith(".onnx") else path.name
    base = stem
    for old in sorted(set(replaces) | {suffix}, key=len, reverse=True):
        if stem.endswith(f".{old}") and len(stem) > len(old) + 1:
            base = stem[: -len(old) - 1]
            break
    candidate = path.with_name(f"{base}.{suffix}.onnx")
    if candidate.name == path.name:
        candidate = path.with_name(f"{stem}.{suffix}.onnx")
    return candidate


def shell_quote(path: PathLike) -> str:
    """``path`` as one POSIX shell word for the same bytes: ``shlex.quote`` when it is valid UTF-8,
    else bash's ``$'...'`` with ``\\xNN`` for each byte that is not (so a pasted command opens that file)."""
    text = os.fspath(path)
    text = os.fsdecode(text) if isinstance(text, bytes) else text
    if printable(text) == text:
        return shlex.quote(text)
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + _escape(escaped, "\\x%02x") + "'"
