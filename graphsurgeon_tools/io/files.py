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
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Union

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


def open_regular(
    path: PathLike, what: str, error: type[OnnxToolError] = InvalidModelError, *, info: os.stat_result | None = None
) -> BinaryIO:
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


def read_regular(
    path: PathLike, what: str, error: type[OnnxToolError] = InvalidModelError, *, limit: int | None = None
) -> bytes:
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
def exclusive_lock(
    path: PathLike, *, timeout: float | None = None, waiting: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created with its folder) for the block: one
    process at a time builds and stamps a cached library (pytest workers, parallel sessions).

    A ``flock`` dies with its owner, so a build killed with ``kill -9`` leaves no stale lock: the
    next process gets it at once (the file itself may stay; it is never read as "locked"). The
    owner writes its pid into the file, so a waiter can say whom it waits for: ``waiting(text)``
    is called once after a few seconds of waiting. ``timeout`` (seconds) bounds the wait:
    ``TimeoutError`` naming the owner. Not POSIX: no lock is taken.
    """
    lock = Path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    # Opened without truncating: the pid inside belongs to the owner until we hold the lock.
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    with os.fdopen(fd, "r+") as handle:
        try:
            import fcntl
        except ImportError:
            yield
            return
        _acquire(handle, fcntl, lock, timeout, waiting)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _acquire(
    handle: object, fcntl: object, lock: Path, timeout: float | None, waiting: Callable[[str], None] | None
) -> None:
    start = time.monotonic()
    told = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[attr-defined]
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - start
        if not told and waiting is not None and waited > 3.0:
            told = True
            waiting(f"waiting for {_owner(lock)} to finish with {lock}")
        if timeout is not None and waited > timeout:
            raise TimeoutError(f"{_owner(lock)} has held {lock} for more than {timeout:.0f} s")
        time.sleep(0.1)


def _owner(lock: Path) -> str:
    try:
        pid = lock.read_text().strip()
    except OSError:
        pid = ""
    return f"process {pid}" if pid.isdigit() else "another process"
