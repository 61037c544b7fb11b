"""Where onnxtool's two compiled parts are built, cached and found, and when a cached one is trusted.

The parts: the ONNX Runtime custom-op library (:mod:`graphsurgeon_tools.runtime.ort_library`)
and the torch op (:mod:`exporters.build`). One setting covers both::

    build_root()      $ONNXTOOL_BUILD_DIR                      ("env")
                      <clone>/.build   inside a source checkout ("clone")
                      ${XDG_CACHE_HOME:-~/.cache}/onnxtool     installed from a wheel/sdist ("cache")
    sources_dir()     <package>/_csrc  (shipped in the wheel)  or <clone>/csrc
    shipped_library() <package>/_lib/NAME (compiled when the wheel was built)

A library is trusted only through its record (``NAME.record.json`` beside it: the build key,
size and sha256 written when it was built): :func:`check_record` re-reads the file and
compares, so a truncated or replaced library is never handed to ``dlopen`` (which would
die of SIGBUS on a short file, with nothing on stderr).

Requires: the standard library and :mod:`graphsurgeon_tools.io.files` only (``setup.py``
imports this module in a bare build environment, without numpy or onnx).
Ensures: reading (status, checks) never creates, opens for writing or locks anything;
:func:`writable_reason` is the one test of a build folder before a build.
Does NOT build anything, fetch anything, or decide the build key (each part does).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PACKAGE_DIR",
    "BuildStatus",
    "build_root",
    "check_record",
    "file_sha256",
    "shipped_library",
    "sources_dir",
    "writable_reason",
    "write_record",
]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_DIR.parent
# What setup.py copies into the wheel: the kernel sources (csrc/, csrc/ort/) and the compiled ORT library.
SHIPPED_SOURCES = PACKAGE_DIR / "_csrc"
SHIPPED_LIBRARIES = PACKAGE_DIR / "_lib"
RECORD_SUFFIX = ".record.json"


@dataclass(frozen=True)
class BuildStatus:
    """One compiled part as it stands, read without building or loading anything.

    ``available``: a verified library is there (it would be loaded as it is). ``source``: where
    it comes from or would be built: "wheel" (shipped), "cache" (the per-user cache), "clone"
    (``<repo>/.build``), "env" (``$ONNXTOOL_BUILD_DIR``), or "none" (cannot be had here).
    ``reason``: why it is unavailable, ending with the one command that fixes it ("" when
    available). ``buildable``: a build would be attempted on first use (sources, a compiler and
    a writable build folder are here). ``sources``: the folder the part is (or would be) built from.
    """

    available: bool
    path: Path | None
    sha256: str | None
    build_dir: Path
    source: str
    reason: str
    buildable: bool = False
    sources: Path | None = None

    @classmethod
    def unavailable(
        cls, build_dir: Path, source: str, reason: str, *, buildable: bool = False, sources: Path | None = None
    ) -> "BuildStatus":
        """No verified library: ``reason`` says why and ends with the command that fixes it."""
        return cls(False, None, None, build_dir, source, reason, buildable, sources)


def _in_clone() -> bool:
    # A source checkout (or an editable install of one): the sources sit beside the package.
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "csrc" / "resize_kernel.h").is_file()


def sources_dir() -> Path | None:
    """The kernel sources (``resize_kernel.h``, the torch op's ``*.cpp``, ``ort/``); None when absent."""
    for candidate in (SHIPPED_SOURCES, REPO_ROOT / "csrc"):
        if (candidate / "resize_kernel.h").is_file():
            return candidate
    return None


def build_root() -> tuple[Path, str]:
    """``(folder, origin)``: where both compiled parts are built (see the module docstring)."""
    env = os.environ.get("ONNXTOOL_BUILD_DIR")
    if env:
        return Path(env).expanduser().resolve(), "env"
    if _in_clone() and not SHIPPED_SOURCES.exists():
        return REPO_ROOT / ".build", "clone"
    cache = os.environ.get("XDG_CACHE_HOME") or ""
    base = Path(cache).expanduser() if Path(cache).is_absolute() else Path.home() / ".cache"
    return base / "onnxtool", "cache"


def shipped_library(name: str) -> Path | None:
    """The library ``name`` as the wheel shipped it, if this install has one."""
    path = SHIPPED_LIBRARIES / name
    return path if path.is_file() else None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _record_path(library: Path) -> Path:
    return library.with_name(library.name + RECORD_SUFFIX)


def write_record(library: Path, key: str) -> str:
    """Record ``library``'s build key, size and sha256 beside it (atomically); returns the sha256."""
    sha = file_sha256(library)
    data = {"key": key, "size": library.stat().st_size, "sha256": sha}
    fd, tmp = tempfile.mkstemp(prefix=f".{library.name}.", suffix=".tmp", dir=library.parent)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
    os.replace(tmp, _record_path(library))
    return sha


def check_record(library: Path, key: str | None = None) -> tuple[str, str | None]:
    """``("", sha256)`` when ``library`` is what its record says (and was built for ``key``, when
    given); otherwise ``(why, None)`` in a few words ("not built", "damaged: ...", "stale ...")."""
    if not library.is_file():
        return "not built", None
    try:
        data = json.loads(_record_path(library).read_text())
        size, sha, built_for = int(data["size"]), str(data["sha256"]), str(data["key"])
    except (OSError, ValueError, KeyError, TypeError):
        return "without a valid build record", None
    if key is not None and built_for != key:
        return "stale (built from other sources, flags, compiler or torch)", None
    actual = library.stat().st_size
    if actual != size:
        return f"damaged: {actual} bytes where its build recorded {size}", None
    if file_sha256(library) != sha:
        return "damaged: its sha256 differs from the one its build recorded", None
    return "", sha


def writable_reason(folder: Path, *, create: bool = True) -> str:
    """ "" when a build can write into ``folder`` (created if missing, unless ``create=False``);
    else why, in a few words."""
    probe = folder
    while not probe.exists():  # the nearest existing ancestor decides whether the folder can be made
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"the build folder {folder} is not writable"
    if not create:
        return ""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"the build folder {folder} cannot be created ({exc.strerror or exc})"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the build folder {folder} is not writable"
    return ""
