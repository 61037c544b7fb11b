"""Build, verify and load the torch op's library (``onnxtool_ops.so``: ``torch.ops.onnxtool.*``).

``load_library() -> Path`` (build when needed, then load into this process), ``build()``,
``status() -> BuildStatus`` (read only, for ``onnxtool doctor``), ``library_path()``,
``build_directory()``; ``python -m exporters.build`` builds ahead of time (``make setup`` does).

Strategy: built on first use with ``torch.utils.cpp_extension.load`` from the kernel sources
(shipped in the wheel as ``graphsurgeon_tools/_csrc``, or a clone's ``csrc/``), against the torch
that is actually installed, with no build isolation that could pull another (CUDA) torch. Not
prebuilt in the wheel: a prebuilt op would tie the wheel to one torch release and C++ ABI.
The folder is ``<build_root>/torch_ext/torch-<version>-cxx11abi<0|1>-py<XY>-<compiler>``
(:func:`graphsurgeon_tools.runtime.build_cache.build_root`: ``$ONNXTOOL_BUILD_DIR``,
``<clone>/.build`` or ``${XDG_CACHE_HOME:-~/.cache}/onnxtool``; never site-packages), so
each torch build, ABI, Python and compiler gets its own library. A record beside the ``.so``
holds a hash of the sources and flags, its size and its sha256: a later process loads the
library without a compiler or ninja run, after checking both; a changed source rebuilds; a
damaged library is removed and rebuilt, never loaded.

Faults: one ``flock`` (``onnxtool_ops.lock``) serialises check-build-record across processes
and dies with its owner; torch's own ``lock`` file, which a killed build leaves behind and on
which the next ``cpp_extension.load`` would wait forever, is removed under that lock (no other
onnxtool build can be running there) by the next build, or by the next load where the killed build
got as far as a current library. A build folder that cannot be written is
:class:`OpsBuildError` at once, naming the folder and ``ONNXTOOL_BUILD_DIR``.

Requires: torch (imported inside the functions; importing this module imports no torch),
g++ and ninja to build. Does NOT register fakes or autograd (``exporters.ops`` does).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from graphsurgeon_tools.errors import EnvironmentProblemError
from graphsurgeon_tools.io.files import exclusive_lock
from graphsurgeon_tools.runtime.build_cache import (
    REPO_ROOT,
    BuildStatus,
    build_root,
    check_record,
    sources_dir,
    writable_reason,
    write_record,
)

__all__ = [
    "BUILD_COMMAND",
    "OpsBuildError",
    "build",
    "build_directory",
    "library_path",
    "load_library",
    "status",
]

LIBRARY_NAME = "onnxtool_ops"
BUILD_COMMAND = "python -m exporters.build"
TORCH_INSTALL = "pip install 'onnxtool[torch]'"
# -O3, plus -fopenmp-simd for the `omp simd` loops only: threading is the
# kernel's own pool (csrc/parallel.h), so the library links no OpenMP runtime
# that could clash with the libgomp torch ships. No -march=native: the cached
# build may be reused on another CPU, and baseline SSE2 already keeps the
# kernels memory-bound.
EXTRA_CFLAGS = ["-O3", "-fopenmp-simd", "-DNDEBUG"]
EXTRA_LDFLAGS: list[str] = []
# A first build takes about a minute on two cores; a wait past this is a hung build, said so.
LOCK_TIMEOUT_S = 1800.0

_BUILD_HINT = f"run `{BUILD_COMMAND}` (needs g++ and ninja)"


class OpsBuildError(ImportError, EnvironmentProblemError):
    """The C++ library is not built and could not be built or loaded here.

    An ImportError (the plugin kernel falls back to onnx.reference on it) and an environment
    problem (exit 5 wherever it ends a command, never "a difference" or "a bug")."""


def _csrc() -> Path:
    return sources_dir() or REPO_ROOT / "csrc"


def _sources() -> list[Path]:
    return sorted(_csrc().glob("*.cpp"))


def _compiler() -> str:
    return os.environ.get("CXX", "c++")  # what torch.utils.cpp_extension compiles with


@functools.lru_cache(maxsize=8)
def _compiler_version(compiler: str) -> str:
    """The compiler's first ``--version`` line ("" when it cannot run)."""
    try:
        done = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = done.stdout.splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else ""


def _folder_name(torch: Any) -> str:
    version_line = _compiler_version(_compiler())
    numbers = re.findall(r"\d+\.\d+(?:\.\d+)?", version_line)
    compiler = Path(_compiler()).name + (numbers[-1] if numbers else "")
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    name = f"torch-{torch.__version__}-cxx11abi{abi}-py{sys.version_info[0]}{sys.version_info[1]}-{compiler}"
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name)


def _torch() -> Any:
    try:
        import torch  # deferred: torch (optional); status() and the registrations read without it
    except ImportError as exc:
        raise OpsBuildError(f"torch is not installed ({exc}): {TORCH_INSTALL}") from exc
    return torch


def build_directory() -> Path:
    """Where the library is built: ``<build_root>/torch_ext/<torch, ABI, Python, compiler>``."""
    return build_root()[0] / "torch_ext" / _folder_name(_torch())


def library_path() -> Path:
    """Path of the compiled ``.so`` (it exists only after a build)."""
    return build_directory() / f"{LIBRARY_NAME}.so"


def _build_key(torch: Any) -> str:
    digest = hashlib.sha256()
    for path in sorted([*_sources(), *_csrc().glob("*.h")]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(
        repr(
            (
                EXTRA_CFLAGS,
                EXTRA_LDFLAGS,
                _folder_name(torch),
                _compiler_version(_compiler()),
                getattr(torch.version, "git_version", ""),
            )
        ).encode()
    )
    return digest.hexdigest()


def _is_loaded(torch: Any) -> bool:
    return hasattr(torch.ops.onnxtool, "resize") and hasattr(torch.ops.onnxtool, "my_add")


def _failure_reason(exc: BaseException) -> str:
    """The one line of a compiler/ninja failure worth showing (its full log is long)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    telling = [
        line
        for line in lines
        if re.search(r"error|not found|fatal|no such file|required", line, re.IGNORECASE)
        and not line.startswith("Error building extension")
    ]
    reason = (telling or lines or [type(exc).__name__])[0]
    return reason if len(reason) <= 200 else reason[:197] + "..."


def _say(text: str) -> None:
    # A first use may compile for a minute: say so on stderr rather than sit silent.
    print(f"onnxtool: {text}", file=sys.stderr, flush=True)


def _preflight() -> None:
    """Refuse at once what no build can fix: no sources, a build folder that cannot be written."""
    if not _sources():
        raise OpsBuildError(
            f"the C++ op's sources are not in {_csrc()}; reinstall onnxtool (pip install --force-reinstall onnxtool)"
        )
    unwritable = writable_reason(build_directory())
    if unwritable:
        raise OpsBuildError(
            f"cannot build the onnxtool C++ op: {unwritable}; set ONNXTOOL_BUILD_DIR "
            f"to a writable folder, then {_BUILD_HINT}"
        )


def _compile_and_load(torch: Any, verbose: bool) -> None:
    # Precondition: the build lock is held and the library is not loaded in this process.
    from torch.utils import cpp_extension  # deferred: torch (optional), only to compile

    folder = build_directory()
    # Left by a build killed inside cpp_extension.load (its FileBaton); we hold the flock, so
    # no onnxtool build is using it. Without this the next load waits for it forever.
    (folder / "lock").unlink(missing_ok=True)
    # A damaged or stale library newer than its objects would look up to date to ninja.
    library = folder / f"{LIBRARY_NAME}.so"
    library.unlink(missing_ok=True)
    # The key is taken before compiling: if a source changes mid-build, the record
    # will not match it and the next use rebuilds.
    key = _build_key(torch)
    try:
        cpp_extension.load(
            name=LIBRARY_NAME,
            sources=[str(p) for p in _sources()],
            build_directory=str(folder),
            extra_cflags=EXTRA_CFLAGS,
            extra_ldflags=EXTRA_LDFLAGS,
            is_python_module=False,
            verbose=verbose,
        )
    except Exception as exc:  # the compiler's failure surfaces as RuntimeError/OSError/CalledProcessError
        reason = _failure_reason(exc)
        raise OpsBuildError(f"building the onnxtool C++ ops from {_csrc()} failed ({reason}); {_BUILD_HINT}") from exc
    write_record(library, key)


def _drop_stale_baton() -> None:
    # A build killed after its link but before cpp_extension released its FileBaton leaves a current
    # library beside torch's lock file; no rebuild comes to remove it, and a later one would wait on
    # it. Under our flock no onnxtool build is running, so the file is stale: it goes on this use.
    with _locked():
        (build_directory() / "lock").unlink(missing_ok=True)


def _locked() -> Any:
    try:
        return exclusive_lock(build_directory() / f"{LIBRARY_NAME}.lock", timeout=LOCK_TIMEOUT_S, waiting=_say)
    except OSError as exc:
        raise OpsBuildError(
            f"cannot lock the build folder {build_directory()} ({exc.strerror or exc}); "
            "set ONNXTOOL_BUILD_DIR to a writable folder"
        ) from exc


def _build_if_needed(torch: Any, *, verbose: bool, force: bool = False) -> str:
    """Under the lock: build unless the recorded library is current and intact. "built" or "up to date"."""
    _preflight()
    try:
        with _locked():
            why, _ = check_record(library_path(), _build_key(torch))
            if not why and not force:
                return "up to date"
            if why != "not built":
                _say(f"the C++ op in {build_directory()} is {why}: rebuilding it")
            elif not verbose:
                _say(
                    f"building the C++ op once for torch {torch.__version__} into {build_directory()} (about a minute)"
                )
            _compile_and_load(torch, verbose)
            return "built"
    except TimeoutError as exc:
        raise OpsBuildError(f"the C++ op's build is stuck: {exc}; stop that process or remove the folder") from exc


def build(*, verbose: bool = False) -> Path:
    """Compile the library (ninja only recompiles what changed) and load it into this process.

    Must run in a process that has not loaded the library yet (``python -m exporters.build``
    does): a second load of a rebuilt library would register the ``onnxtool`` namespace twice.
    Raises :class:`OpsBuildError` with the compiler's reason when the build fails.
    """
    torch = _torch()
    if _is_loaded(torch):
        raise OpsBuildError(
            f"the onnxtool ops are already loaded in this process; run `{BUILD_COMMAND}` in a fresh one"
        )
    _build_if_needed(torch, verbose=verbose, force=True)
    return library_path()


def load_library(*, build: bool = True) -> Path | None:
    """Load the compiled ops into ``torch.ops.onnxtool``, building them only when missing, stale or damaged.

    Fast path: when the record beside the ``.so`` matches the current sources, flags, torch and
    compiler, and the file's size and sha256, the library is loaded without invoking the
    compiler or ninja. ``build=False``: only that fast path (None when it does not hold).
    Idempotent within a process. Fakes and autograd: ``exporters.ops.load``.
    """
    torch = _torch()
    path = library_path()
    if _is_loaded(torch):
        return path
    if check_record(path, _build_key(torch))[0]:
        if not build:
            return None
        _build_if_needed(torch, verbose=False)
    elif (path.parent / "lock").exists():
        _drop_stale_baton()
    if not _is_loaded(torch):
        try:
            torch.ops.load_library(str(path))
        except OSError as exc:
            raise OpsBuildError(f"cannot load {path} ({exc}); {_BUILD_HINT}") from exc
    if not _is_loaded(torch):
        raise OpsBuildError(f"{path} loaded but registered no onnxtool ops; {_BUILD_HINT}")
    return path


def status() -> BuildStatus:
    """The torch op's library as it stands, read without building, loading or locking.

    Imports torch (its version and C++ ABI name the build folder); without torch, or with a
    torch that cannot be imported, it is unavailable with the reason and the install command.
    """
    root, origin = build_root()
    if importlib.util.find_spec("torch") is None:
        return BuildStatus.unavailable(
            root / "torch_ext",
            "none",
            f"torch is not installed: {TORCH_INSTALL}",
            sources=sources_dir(),
        )
    try:
        torch = _torch()
        folder, path = build_directory(), library_path()
        why, sha = check_record(path, _build_key(torch))
    except Exception as exc:  # noqa: BLE001 - a broken torch is a status to report, not a crash
        return BuildStatus.unavailable(
            root / "torch_ext",
            "none",
            f"torch cannot be imported ({type(exc).__name__}: {exc}): {TORCH_INSTALL}",
        )
    if not why:
        return BuildStatus(True, path, sha, folder, origin, "", True, sources_dir())
    if not _sources():
        return BuildStatus.unavailable(
            folder,
            "none",
            f"the C++ op's sources are not in {_csrc()}: pip install --force-reinstall onnxtool",
        )
    compiler = _compiler()
    if shutil.which(compiler) is None and not Path(compiler).is_file():
        return BuildStatus.unavailable(
            folder,
            origin,
            f"the C++ op is {why} and there is no C++ compiler ({compiler}): apt-get install g++",
            sources=sources_dir(),
        )
    unwritable = writable_reason(folder, create=False)
    if unwritable:
        return BuildStatus.unavailable(
            folder,
            origin,
            f"the C++ op is {why} and {unwritable}: set ONNXTOOL_BUILD_DIR to a writable folder",
            sources=sources_dir(),
        )
    return BuildStatus.unavailable(
        folder,
        origin,
        f"the C++ op is {why}: it is built on first use (about a minute), or now with `{BUILD_COMMAND}`",
        buildable=True,
        sources=sources_dir(),
    )


def _main(argv: list[str]) -> int:
    if argv not in ([], ["build"], ["--verbose"], ["build", "--verbose"]):
        print(f"usage: {BUILD_COMMAND} [--verbose]", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        torch = _torch()
        state = _build_if_needed(torch, verbose="--verbose" in argv)
        path = library_path()
        import exporters.ops  # deferred: cycle exporters.ops -> exporters.build; and torch

        exporters.ops.load()  # the way users load it, fakes included
    except OpsBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 5
    print(f"onnxtool ops {state}: {path} ({time.perf_counter() - start:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
