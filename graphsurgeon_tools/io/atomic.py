"""Atomic file writes: temp file in the destination folder, then rename; kernel-side copies.

Temp files are named ``.<final name>.onnxtool-tmp-<pid>-<random>``: hidden, recognisably
ours, and saying whose they are. Three ways a temp file could outlive its writer, and what
covers each:

* an exception (including KeyboardInterrupt): the writer's ``finally`` calls :func:`remove_temps`;
* SIGTERM or SIGHUP: :func:`removing_temps_on_signal` removes this process's temps, then
  lets the signal kill the process as it would have (same exit status);
* SIGKILL (nothing runs): the next write into the same folder calls :func:`sweep_dead_temps`,
  which removes temps whose pid no longer runs.

Requires: the destination folder exists and is writable (:func:`check_destination` says so
before any work, as a UsageError).

Ensures: a reader of the destination sees the old file or the new one, never a partial one.

Does NOT fsync: atomic against crashes of the process, not of the machine. Inputs are
guarded by :mod:`graphsurgeon_tools.io.guard` (:func:`write_bytes_atomic` calls it; save_model
calls it with all its targets at once).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Union

from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.io.guard import FileRecord, check_writes, write_target_stat

__all__ = [
    "check_destination",
    "copy_file",
    "write_bytes_atomic",
]

PathLike = Union[str, "os.PathLike[str]"]

# A new file made by mkstemp is 0600; outputs should get the usual permissions.
_UMASK = os.umask(0)
os.umask(_UMASK)

TEMP_MARK = "onnxtool-tmp"
_TEMP_RE = re.compile(r"^\..+\." + TEMP_MARK + r"-(\d+)-[A-Za-z0-9_]+$")

# Temps of this process not yet renamed or removed: what a SIGTERM handler must delete.
_ACTIVE: set[Path] = set()


def temp_path(folder: Path, name: str) -> Path:
    """A new, empty temp file for ``name`` in ``folder`` (registered for signal cleanup)."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.{TEMP_MARK}-{os.getpid()}-", suffix="")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)
    _ACTIVE.add(Path(tmp))
    return Path(tmp)


def commit(tmp: Path, dest: Path) -> None:
    """Rename a finished temp file onto its destination (atomic on one file system)."""
    os.replace(tmp, dest)
    _ACTIVE.discard(tmp)


def remove_temps(made: Iterable[Path]) -> None:
    """Delete the temps in ``made`` that still exist (renamed ones are gone already)."""
    for tmp in made:
        _ACTIVE.discard(tmp)
        try:
            tmp.unlink()
        except OSError:  # gone already, or not removable now: the next sweep of the folder retries
            pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def sweep_dead_temps(folder: Path) -> None:
    """Remove temp files of onnxtool writers that died mid-write (their pid no longer runs).

    A reused pid keeps a stale temp alive a little longer; that is harmless. Files that do
    not match our naming are never touched."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        match = _TEMP_RE.match(entry.name)
        if match is None or int(match.group(1)) == os.getpid() or _pid_alive(int(match.group(1))):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
        except OSError:
            pass


@contextmanager
def removing_temps_on_signal() -> Iterator[None]:
    """While inside, SIGTERM/SIGHUP first delete this process's temps, then kill it as usual.

    Installed only from the main thread and only over the default handler: a program that
    set its own handler keeps it (and then owns the cleanup)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, object] = {}

    def handler(signum: int, frame: object) -> None:
        remove_temps(list(_ACTIVE))
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)  # type: ignore[arg-type]


def open_temp(path: Path) -> BinaryIO:
    """Open a fresh (empty) temp file for writing WITHOUT O_TRUNC.

    Truncating an existing file, even an empty one, makes ext4 (auto_da_alloc) flush the
    whole file to disk on close: a second or more per GiB that a plain ``open(new, "wb")``
    of a file that did not exist never pays."""
    return os.fdopen(os.open(path, os.O_WRONLY), "wb")


def write_temp(folder: Path, name: str, data: bytes, made: list[Path]) -> Path:
    """Write ``data`` to a fresh temp file for ``name`` in ``folder``; ``made`` records it for cleanup."""
    tmp = temp_path(folder, name)
    made.append(tmp)
    with open_temp(tmp) as handle:
        handle.write(data)
    return tmp


# copy_file_range cannot serve these (EXDEV: another file system on kernels before 5.3;
# ENOSYS/EOPNOTSUPP: a kernel or file system without it; EINVAL: special files; EPERM: container
# seccomp filters that refuse unknown syscalls); sendfile, then a user-space loop, can.
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM}
_CHUNK = 1 << 30


def copy_file(source: Path, dest: Path) -> None:
    """Copy ``source`` into the existing empty file ``dest`` at the kernel's speed, like ``cp``.

    ``os.copy_file_range`` first (in the kernel, no user-space buffer; reflinks where the file
    system can), looped until the whole file is copied; on EXDEV/ENOSYS/EINVAL/EOPNOTSUPP/EPERM
    ``os.sendfile``, then ``shutil.copyfileobj``. Constant memory. Other OSErrors (disk full,
    I/O error) propagate.
    """
    with open(source, "rb") as src, open_temp(dest) as dst:
        size = os.fstat(src.fileno()).st_size
        if hasattr(os, "posix_fadvise"):  # as cp does: read-ahead for one sequential pass
            os.posix_fadvise(src.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
        for copier in (_copy_file_range, _sendfile):
            try:
                copier(src.fileno(), dst.fileno(), size)
                break
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                os.lseek(src.fileno(), 0, os.SEEK_SET)
                os.ftruncate(dst.fileno(), 0)
                os.lseek(dst.fileno(), 0, os.SEEK_SET)
        else:
            shutil.copyfileobj(src, dst, 16 * 1024 * 1024)
    os.chmod(dest, 0o666 & ~_UMASK)


def _copy_file_range(src: int, dst: int, size: int) -> None:
    if not hasattr(os, "copy_file_range"):
        raise OSError(errno.ENOSYS, "os.copy_file_range is not available")
    done = 0
    while done < size:
        step = os.copy_file_range(src, dst, min(size - done, _CHUNK))
        if step == 0:  # the source shrank under us: copy what is there, as cp does
            break
        done += step


def _sendfile(src: int, dst: int, size: int) -> None:
    if not hasattr(os, "sendfile"):
        raise OSError(errno.ENOSYS, "os.sendfile is not available")
    done = 0
    while done < size:
        step = os.sendfile(dst, src, None, min(size - done, _CHUNK))
        if step == 0:
            break
        done += step


def check_destination(path: Path) -> None:
    """Refuse (UsageError, exit 2) a destination that cannot take a new file, before any work.

    A symlink loop or a path through a file is refused too (not an OSError later), and so is
    an existing FIFO, device or socket: the rename would replace it (``-o /dev/null`` as root
    would replace the device node itself)."""
    info = write_target_stat(path, "output path")
    if info is not None and not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        raise UsageError(f"output path is not a regular file (a FIFO, device or socket): {path}")
    if path.is_dir():
        raise UsageError(f"output path is a directory: {path}")
    if not path.parent.is_dir():
        raise UsageError(f"output folder does not exist: {path.parent}")
    if not os.access(path.parent, os.W_OK):
        raise UsageError(f"output folder is not writable: {path.parent}")


def write_bytes_atomic(data: bytes, path: PathLike, *, what: str = "output", reads: Iterable[FileRecord] = ()) -> Path:
    """Write a small file (a report, an image) the way save_model writes a model.

    Temp file in the destination folder, then rename: a crash leaves any old file intact, and
    the temp of a killed writer is swept by the next write into that folder. Raises
    :class:`UsageError` for an unusable destination and for a file the command reads (the
    write guard, :func:`graphsurgeon_tools.io.guard.check_writes`; ``what`` names the target,
    ``reads`` adds files read outside the open scope, e.g. those a validation report recorded).
    """
    path = Path(path)
    check_destination(path)
    check_writes([(path, what)], reads=reads)
    sweep_dead_temps(path.parent)
    made: list[Path] = []
    try:
        with removing_temps_on_signal():
            commit(write_temp(path.parent, path.name, data, made), path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        remove_temps(made)
    return path
