"""The write guard: no command writes over a file it reads.

Every reader in onnxtool records what it opened (:func:`note_read`: the input model and its
external data files in :func:`~graphsurgeon_tools.io.load_model`, plugin specs, ``.npy``
inputs, a reference model); every writer (:func:`~graphsurgeon_tools.io.save_model` for a model
and its data files, :func:`~graphsurgeon_tools.io.write_bytes_atomic` for reports) calls
:func:`check_writes` with ALL its targets before it writes anything. A target that is, by
any path, symlink or hard link (same ``st_dev``/``st_ino``), a file read is refused:
:class:`UsageError`, exit 2, one line naming both. Data files never get a silent new name:
a collision is the user's to resolve, and the message says which file it is.

Reads are recorded in the innermost :func:`tracking_reads` scope (the CLI opens one per
command; an API user opens one around a load-edit-save sequence); a nested scope's reads
also count in the scopes around it. Outside any scope nothing is remembered, and
:func:`check_writes` checks only the ``reads=`` the writer passes itself (save_model passes
the model's own data files, so a save can never overwrite the weights it copies).

Requires: paths (str or PathLike). Ensures: a refusal happens before any byte is written; a
record whose path no longer names the same file (deleted, replaced by a rename) no longer
counts. Does NOT lock files: a file swapped in by another process between check and write is
not detected.
"""

from __future__ import annotations

import errno
import os
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence, Union

from graphsurgeon_tools.errors import UsageError

__all__ = ["FileRecord", "ReadSet", "check_writes", "note_read", "tracking_reads", "write_target_stat"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class FileRecord:
    """One file a command read: where, which inode, and what it was to the command."""

    path: Path
    dev: int
    ino: int
    what: str  # "the input model", "an external data file of model.onnx", "plugin spec", ...

    def still_there(self) -> bool:
        """The path still names the file that was read (not deleted, not replaced by a rename)."""
        try:
            info = os.stat(self.path)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == (self.dev, self.ino)


class ReadSet:
    """The files one command read, by identity (st_dev, st_ino)."""

    def __init__(self) -> None:
        self._by_id: dict[tuple[int, int], FileRecord] = {}

    def add(self, record: FileRecord) -> None:
        self._by_id.setdefault((record.dev, record.ino), record)

    def __iter__(self) -> Iterator[FileRecord]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)


_SCOPES: ContextVar[tuple[ReadSet, ...]] = ContextVar("onnxtool_read_scopes", default=())


@contextmanager
def tracking_reads() -> Iterator[ReadSet]:
    """Record every file read inside (by onnxtool's readers) so writes inside can be checked."""
    reads = ReadSet()
    token = _SCOPES.set(_SCOPES.get() + (reads,))
    try:
        yield reads
    finally:
        _SCOPES.reset(token)


def record(path: PathLike, what: str, info: Optional[os.stat_result] = None) -> Optional[FileRecord]:
    """A FileRecord for ``path`` (``info``: its stat, if the caller has it), or None if it is gone."""
    try:
        info = info or os.stat(path)
    except OSError:
        return None
    return FileRecord(Path(path), info.st_dev, info.st_ino, what)


def note_read(path: PathLike, what: str, info: Optional[os.stat_result] = None) -> None:
    """Record that the running command reads ``path`` (no-op outside :func:`tracking_reads`)."""
    scopes = _SCOPES.get()
    if not scopes:
        return
    entry = record(path, what, info)
    if entry is not None:
        for reads in scopes:
            reads.add(entry)


def write_target_stat(path: Path, what: str) -> Optional[os.stat_result]:
    """``os.stat`` of a write target (following symlinks), None if nothing is there yet.

    A symlink loop, or a path through a file, is refused here as the user's error (exit 2),
    not left to surface as an OSError (or Python's RuntimeError from ``Path.resolve``)."""
    try:
        return os.stat(path)
    except FileNotFoundError:  # nothing there yet (or a dangling link, which the rename replaces)
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{what} {path}: too many levels of symbolic links (a symlink loop)") from None
        if exc.errno == errno.ENOTDIR:
            raise UsageError(f"{what} {path}: a folder on the way is a file, not a folder") from None
        raise UsageError(f"{what} {path}: {exc.strerror or exc}") from None


def check_writes(
    targets: Sequence[tuple[PathLike, str]], *, reads: Iterable[FileRecord] = (), allow: Iterable[PathLike] = ()
) -> None:
    """Refuse (UsageError, exit 2) before any write when a target is a file this command reads.

    Args:
        targets: ``(path, what)`` for every file the write will create or replace: the model,
            each data file, a report. ``what`` names it in the message ("output", "data file").
        reads: records the writer knows of itself (save_model: the model's own data files);
            the files recorded in the open :func:`tracking_reads` scopes are always checked.
        allow: targets that may replace a file read (``in_place``: the input model itself).
    """
    known: dict[tuple[int, int], FileRecord] = {}
    for entry in list(reads) + [r for scope in _SCOPES.get() for r in scope]:
        known.setdefault((entry.dev, entry.ino), entry)
    allowed = set()
    for path in allow:
        try:
            info = os.stat(path)
        except OSError:
            continue
        allowed.add((info.st_dev, info.st_ino))
    for path, what in targets:
        info = write_target_stat(Path(path), what)
        if info is None or not stat.S_ISREG(info.st_mode):
            continue  # nothing there (or a folder/FIFO: check_destination refuses those)
        key = (info.st_dev, info.st_ino)
        if key in allowed or key not in known or not known[key].still_there():
            continue
        hit = known[key]
        same = "" if Path(path) == hit.path else f" ({hit.path})"
        raise UsageError(
            f"{what} {path} is {hit.what}{same}, which this command reads; writing it would destroy "
            "that input: choose another output name"
        )
