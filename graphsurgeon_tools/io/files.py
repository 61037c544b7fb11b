"""File arguments: refuse what is not a regular file before reading it, then read without blocking.

A FIFO given as a model, ``--spec`` or ``--input`` blocks ``open()`` forever; ``/dev/zero``
never ends; a folder fails somewhere deep. :func:`stat_regular` refuses them from ``os.stat``
alone, before anything is opened; :func:`open_regular` then opens with ``O_NONBLOCK`` and
checks ``fstat`` again, so a FIFO swapped in between the two cannot block either. Every file
opened here is recorded for the write guard (:func:`graphsurgeon_tools.io.guard.note_read`).

Requires: a path and the error class the caller's contract raises (InvalidModelError for a
model, InvalidSpecError for a spec, OnnxToolError for an array): every problem is exit 3.
Ensures: one-line messages naming ``what`` and the path. Does NOT parse anything.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Iterator, Optional, Union

from graphsurgeon_tools.errors import InvalidModelError, OnnxToolError
from graphsurgeon_tools.io.guard import note_read

__all__ = ["exclusive_lock", "open_regular", "read_regular", "stat_regular"]

PathLike = Union[str, "os.PathLike[str]"]


def stat_regular(path: PathLike, what: str, error: type[OnnxToolError] = InvalidModelError) -> os.stat_result:
    """``os.stat(path)`` when it is a regular file; ``error`` (one line) for anything else."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"cannot read {what} {path}: too many levels of symbolic links (a symlink loop)") from None
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    _refuse_special(info, path, what, error)
    return info


def _refuse_special(info: os.stat_result, path: PathLike, what: str, error: type[OnnxToolError]) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{what} {path} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{what} {path} is not a regular file (a FIFO, device or socket)")


def open_regular(path: PathLike, what: str, error: type[OnnxToolError] = InvalidModelError,
                 *, info: Optional[os.stat_result] = None) -> BinaryIO:
    """Open a regular file for reading (binary); never blocks on a FIFO. Records the read."""
    if info is None:
        stat_regular(path, what, error)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    opened = os.fstat(fd)
    try:
        _refuse_special(opened, path, what, error)
    except OnnxToolError:
        os.close(fd)
        raise
    os.set_blocking(fd, True)
    note_read(path, f"the {what}", opened)
    return os.fdopen(fd, "rb")


def read_regular(path: PathLike, what: str, error: type[OnnxToolError] = InvalidModelError,
                 *, limit: Optional[int] = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (``error`` above it)."""
    info = stat_regular(path, what, error)
    if limit is not None and info.st_size > limit:
        raise error(f"{what} {path} is {info.st_size} bytes, more than the {limit} such a file can be")
    try:
        with open_regular(path, what, error, info=info) as handle:
            return handle.read()
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def exclusive_lock(path: PathLike) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created with its folder) for the block: one
    process at a time builds and stamps a cached library (pytest workers, parallel sessions).
    Not POSIX: no lock is taken."""
    lock = Path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        try:
            import fcntl
        except ImportError:
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
