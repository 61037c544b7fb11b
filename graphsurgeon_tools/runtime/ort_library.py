"""The compiled ONNX Runtime custom-op library for DynamicTRTResize: find it, build it, cache it.

``library_path(allow_build=True) -> Path | None`` and ``unavailable_reason() -> str``;
``status() -> BuildStatus`` (read only: what is there and what would run, for ``onnxtool doctor``);
``python -m graphsurgeon_tools.runtime.ort_library build`` (``make setup`` runs it);
``compile_library(out_dir, fetch=...)`` (``setup.py`` runs it when the wheel is built);
``register(sess_options, path)`` (any library, once per SessionOptions object) and
``user_libraries(paths)`` (the ``custom_op_libs=`` check).

The library (sources ``csrc/ort/`` + the shared kernel ``csrc/resize_kernel.h``) registers
DynamicTRTResize in the domain ``trt.plugins`` through ONNX Runtime's C API only, so one build
serves every onnxruntime at or above its API version. Where it comes from, in order:

1. the wheel: ``graphsurgeon_tools/_lib/`` (compiled when the wheel was built);
2. the build folder ``<build_root>/ort_ops/`` (:func:`graphsurgeon_tools.runtime.build_cache.build_root`:
   ``$ONNXTOOL_BUILD_DIR``, ``<clone>/.build`` or the per-user cache), built with the system
   ``g++`` and reused while its record matches a hash of the sources, the flags, the headers'
   version and the compiler.

Either is loaded only after its record (size and sha256, written at build time) is checked.

ONNX Runtime's C API headers come from :mod:`graphsurgeon_tools.runtime.ort_headers`
(``$ONNXRUNTIME_INCLUDE_DIR``, an earlier fetch, or - only with ``fetch=True``, the ``build``
command and the wheel build - a fetch of Debian's ``libonnxruntime-dev``).

Requires: the sources (shipped in the wheel, or a clone's ``csrc/``), g++ to build.
Ensures: a returned path is a verified library (built from the current sources when a compiler
is here to check that); finding a current library opens nothing for writing and takes no lock.
Does NOT: make sessions (runtime.session does), copy headers into the repository, or fail when
it cannot build: ``library_path`` then returns None and ``unavailable_reason()`` says why in one
line (the onnxruntime-extensions path stays).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional, Union

from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.io.files import exclusive_lock
from graphsurgeon_tools.runtime.build_cache import (
    REPO_ROOT,
    BuildStatus,
    build_root,
    check_record,
    shipped_library,
    sources_dir,
    writable_reason,
    write_record,
)
from graphsurgeon_tools.runtime.ort_headers import BUILD_COMMAND, api_version, find_headers, header_dir, headers_dir

__all__ = [
    "DOMAIN",
    "LIBRARY_NAME",
    "build",
    "build_dir",
    "compile_library",
    "header_dir",
    "library_path",
    "register",
    "status",
    "unavailable_reason",
    "user_libraries",
]

DOMAIN = "trt.plugins"
LIBRARY_NAME = "libonnxtool_ort_ops.so"
# -O3 and baseline x86-64 (no -march): the cached build stays valid on another CPU.
# -fopenmp-simd only for the `omp simd` loops: threads are ORT's own pool.
CXXFLAGS = ["-std=c++17", "-O3", "-fopenmp-simd", "-DNDEBUG", "-fPIC", "-fvisibility=hidden", "-Wall"]

_reason: list[str] = [""]


def build_dir() -> Path:
    """Where this library is built: ``<build_root>/ort_ops``."""
    return build_root()[0] / "ort_ops"


def _csrc() -> Path:
    # A missing tree reads as a folder with no sources (the callers say so).
    return sources_dir() or REPO_ROOT / "csrc"


def _sources() -> list[Path]:
    # csrc/*.h: the shared kernel (resize_kernel.h, resize_passes.h, resize_plan.h) and
    # the torch op's headers, which cost a rebuild at most.
    csrc = _csrc()
    return sorted(
        [*(csrc / "ort").glob("*.cpp"), *(csrc / "ort").glob("*.h"), *(csrc / "ort").glob("*.map"), *csrc.glob("*.h")]
    )


def _compiler() -> Optional[str]:
    return os.environ.get("CXX") or shutil.which("g++")


def _build_key(include: Path, compiler: str) -> str:
    digest = hashlib.sha256()
    for path in _sources():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        version = compiler
    digest.update(repr((CXXFLAGS, api_version(include), version.splitlines()[:1])).encode())
    return digest.hexdigest()


def _headers(fetch: bool) -> Optional[Path]:
    """:func:`~graphsurgeon_tools.runtime.ort_headers.find_headers`, its reason kept for :func:`unavailable_reason`."""
    include, why = find_headers(fetch)
    if include is None:
        _reason[0] = why
    return include


def compile_library(out_dir: Path, *, fetch: bool = False, include: Optional[Path] = None) -> Optional[Path]:
    """Compile the library into ``out_dir`` (with its record) from the current sources; None
    (see :func:`unavailable_reason`) when it cannot. ``setup.py`` calls it for the wheel."""
    _reason[0] = ""
    compiler = _compiler()
    if not (_csrc() / "ort" / "dynamic_trt_resize.cpp").is_file():
        _reason[0] = f"the library's sources are not in {_csrc() / 'ort'}; reinstall onnxtool"
        return None
    if compiler is None:
        _reason[0] = "no C++ compiler (g++) to build the ONNX Runtime library: apt-get install g++"
        return None
    include = include or _headers(fetch)
    if include is None:
        return None
    return _compile(out_dir, include, compiler, _build_key(include, compiler))


def _compile(out_dir: Path, include: Path, compiler: str, key: str) -> Optional[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / LIBRARY_NAME
    tmp = out_dir / f"{LIBRARY_NAME}.{os.getpid()}"
    csrc = _csrc()
    command = [
        compiler,
        *CXXFLAGS,
        "-shared",
        f"-I{include}",
        str(csrc / "ort" / "dynamic_trt_resize.cpp"),
        "-o",
        str(tmp),
        f"-Wl,--version-script={csrc / 'ort' / 'exports.map'}",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        _reason[0] = f"compiling the ONNX Runtime library failed: {exc}"
        return None
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines() or ["?"]
        _reason[0] = f"compiling the ONNX Runtime library failed: {errors[0][:200]}"
        tmp.unlink(missing_ok=True)
        return None
    # Replace, never overwrite: a process that has the old file mapped keeps it. The record
    # follows the library; a crash in between leaves a record that does not match (rebuilt).
    os.replace(tmp, out)
    write_record(out, key)
    return out


def _current(out: Path, compiler: Optional[str], include: Optional[Path]) -> tuple[str, Optional[str]]:
    """check_record for the build folder's library: against the current key when it can be
    computed (a compiler and headers), else only size and sha256 (built earlier, nothing to
    check the sources with)."""
    if compiler is not None and include is not None:
        return check_record(out, _build_key(include, compiler))
    return check_record(out)


def _shipped() -> tuple[Optional[Path], str]:
    """The wheel's library when its record holds; else (None, why it is not used)."""
    shipped = shipped_library(LIBRARY_NAME)
    if shipped is None:
        return None, ""
    why, _ = check_record(shipped)
    if why:
        return None, f"the library shipped in the wheel ({shipped}) is {why}"
    return shipped, ""


def build(*, fetch: bool = True) -> Optional[Path]:
    """Build the library in the build folder unless the one there is current; None (see
    unavailable_reason) if it cannot. A verified library shipped in the wheel is used as it is.

    ``fetch=True`` may download the headers (network); ``fetch=False`` only uses headers
    already here. Takes the build lock only when it has to build.
    """
    _reason[0] = ""
    shipped, damaged = _shipped()
    if shipped is not None:
        return shipped
    try:
        built = _build_in_folder(fetch)
    except (OSError, TimeoutError) as exc:  # the lock or the folder: an environment problem, said in one line
        _reason[0] = f"building the ONNX Runtime library in {build_dir()} failed: {exc}"
        built = None
    if built is None and damaged:  # say first why the wheel's own library was not used
        _reason[0] = f"{damaged}; {_reason[0]}"
    return built


def _build_in_folder(fetch: bool) -> Optional[Path]:
    if not (_csrc() / "ort" / "dynamic_trt_resize.cpp").is_file():
        _reason[0] = f"the library's sources are not in {_csrc() / 'ort'}; reinstall onnxtool"
        return None
    out = build_dir() / LIBRARY_NAME
    compiler = _compiler()
    include = _headers(fetch=False)
    if include is None and os.environ.get("ONNXRUNTIME_INCLUDE_DIR"):
        return None  # the headers asked for are not there: said, rather than quietly ignored
    if not _current(out, compiler, include)[0]:
        return out
    if compiler is None:
        _reason[0] = "no C++ compiler (g++) to build the ONNX Runtime library: apt-get install g++"
        return None
    unwritable = writable_reason(build_dir())
    if unwritable:
        _reason[0] = f"{unwritable}: set ONNXTOOL_BUILD_DIR to a writable folder and run `{BUILD_COMMAND}`"
        return None
    with exclusive_lock(build_dir() / "build.lock", timeout=900):  # fetch-build-record, one process at a time
        include = _headers(fetch)
        if include is None:
            return None
        key = _build_key(include, compiler)
        if not check_record(out, key)[0]:  # another process built it while we waited
            return out
        out.unlink(missing_ok=True)  # a damaged or stale one is never loaded, only replaced
        return _compile(build_dir(), include, compiler, key)


def status() -> BuildStatus:
    """What :func:`library_path` would hand out, read without building, fetching or locking."""
    shipped, damaged = _shipped()
    origin = build_root()[1]
    where = build_dir()
    if shipped is not None:
        _, sha = check_record(shipped)
        return BuildStatus(True, shipped, sha, where, "wheel", "", False, sources_dir())
    out = where / LIBRARY_NAME
    compiler = _compiler()
    include = header_dir()
    why, sha = _current(out, compiler, include)
    if not why:
        return BuildStatus(True, out, sha, where, origin, "", True, sources_dir())
    if sources_dir() is None:
        return BuildStatus.unavailable(
            where,
            "none",
            damaged or "the library's sources are not installed: pip install --force-reinstall onnxtool",
        )
    prefix = f"{damaged}; " if damaged else ""
    if compiler is None:
        return BuildStatus.unavailable(
            where,
            origin,
            f"{prefix}the ONNX Runtime library is {why} and there is no C++ compiler: apt-get install g++",
            sources=sources_dir(),
        )
    unwritable = writable_reason(where, create=False)
    if unwritable:
        return BuildStatus.unavailable(
            where,
            origin,
            f"{prefix}{unwritable}: set ONNXTOOL_BUILD_DIR to a writable folder",
            sources=sources_dir(),
        )
    fix = "" if include is not None else " (its headers are fetched from Debian)"
    return BuildStatus.unavailable(
        where,
        origin,
        f"{prefix}the ONNX Runtime library is {why} in {where}: run `{BUILD_COMMAND}`{fix}",
        buildable=include is not None,
        sources=sources_dir(),
    )


_cached: dict[str, Optional[Path]] = {}


def library_path(*, allow_build: bool = True) -> Optional[Path]:
    """The verified library's path, building it from headers already here when stale or missing.

    Looked up once per process (the answer is cached; a build takes ~10 s). Never goes to
    the network; ``allow_build=False`` only looks. Returns None when the library cannot be had
    (see :func:`unavailable_reason`).
    """
    if "path" not in _cached:
        if allow_build:
            _cached["path"] = build(fetch=False)
        else:
            found = status()
            _cached["path"] = found.path if found.available else None
            _reason[0] = found.reason
    return _cached["path"]


def unavailable_reason() -> str:
    """Why :func:`library_path` returned None, in one line ("" when it did not)."""
    return _reason[0]


# Libraries registered per SessionOptions object: ORT refuses a second registration of the
# same library on one options object ("Domain already set in registry" / "Conflicting with a
# registered kernel"), and callers reuse their options across make_session calls.
_registered: "weakref.WeakKeyDictionary[Any, set[str]]" = weakref.WeakKeyDictionary()
_registered_lock = threading.Lock()


def register(sess_options: Any, path: Union[str, Path]) -> None:
    """``sess_options.register_custom_ops_library(path)`` once per options object and library.

    Raises UsageError naming the library when ONNX Runtime cannot load it (not a shared
    library, no ``RegisterCustomOps``, built for an incompatible ONNX Runtime).
    """
    from onnxruntime.capi import onnxruntime_pybind11_state as state  # deferred: onnxruntime (wheel hook)

    key = str(Path(path).resolve())
    with _registered_lock:
        done = _registered.setdefault(sess_options, set())
        if key in done:
            return
        try:
            sess_options.register_custom_ops_library(key)
        except (state.Fail, state.InvalidArgument, state.RuntimeException) as exc:
            raise UsageError(
                f"custom_op_libs=[{str(path)!r}]: ONNX Runtime cannot load it: {str(exc).splitlines()[0]}"
            ) from None
        done.add(key)


def user_libraries(paths: Optional[Iterable[Union[str, Path]]]) -> list[Path]:
    """The users' own op libraries (``custom_op_libs=``), checked to be files; UsageError otherwise."""
    if paths is None:
        return []
    if isinstance(paths, (str, Path)):  # one path, not an iterable of characters
        paths = [paths]
    found = []
    for item in paths:
        path = Path(item).expanduser()
        if not path.is_file():
            raise UsageError(
                f"custom_op_libs=[{str(item)!r}]: no such file (a shared library exporting RegisterCustomOps)"
            )
        found.append(path)
    return found


def _main(argv: list[str]) -> int:
    if argv != ["build"]:
        print("usage: python -m graphsurgeon_tools.runtime.ort_library build", file=sys.stderr)
        return 2
    start = time.perf_counter()
    path = build(fetch=True)
    if path is None:
        # Not an error for `make setup`: plugin models keep running through onnxruntime-extensions.
        print(
            f"onnxtool ORT library not built: {unavailable_reason()} (plugin models run through onnxruntime-extensions)"
        )
        return 0
    source = headers_dir() / "include" / "SOURCE"
    via = os.environ.get("ONNXRUNTIME_INCLUDE_DIR") or (source.read_text().strip() if source.is_file() else "?")
    via = "shipped in the wheel" if path == shipped_library(LIBRARY_NAME) else f"headers: {via}"
    print(f"onnxtool ORT library ready: {path} ({time.perf_counter() - start:.2f} s; {via})")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
