"""The build cache's rules in this checkout (graphsurgeon_tools.runtime.build_cache, io.files.exclusive_lock,
ort_library.status): where things are built, when a library is trusted, the lock. Fast: nothing is compiled.

The same faults through the installed package, end to end: tests/packaging/test_installed_package.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphsurgeon_tools.io.files import exclusive_lock
from graphsurgeon_tools.runtime import build_cache, ort_library

REPO = Path(__file__).resolve().parents[2]


def test_the_build_root_is_the_environment_then_the_clone(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ONNXTOOL_BUILD_DIR", str(tmp_path / "b"))
    assert build_cache.build_root() == ((tmp_path / "b").resolve(), "env")
    monkeypatch.delenv("ONNXTOOL_BUILD_DIR")
    assert build_cache.build_root() == (REPO / ".build", "clone")
    assert build_cache.sources_dir() == REPO / "csrc"


def test_an_installed_package_builds_into_the_users_cache(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("ONNXTOOL_BUILD_DIR", raising=False)
    monkeypatch.setattr(build_cache, "_in_clone", lambda: False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert build_cache.build_root() == (tmp_path / "xdg" / "onnxtool", "cache")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: only absolute paths count
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert build_cache.build_root() == (tmp_path / "home" / ".cache" / "onnxtool", "cache")


def _library(tmp_path: Path) -> Path:
    library = tmp_path / "libx.so"
    library.write_bytes(os.urandom(4096))
    build_cache.write_record(library, "key-1")
    return library


def test_a_library_is_trusted_only_as_its_record_says(tmp_path) -> None:
    library = _library(tmp_path)
    assert build_cache.check_record(library, "key-1") == ("", build_cache.file_sha256(library))
    assert build_cache.check_record(library, "key-2")[0].startswith("stale")
    with open(library, "r+b") as handle:
        handle.truncate(2048)
    assert build_cache.check_record(library)[0] == "damaged: 2048 bytes where its build recorded 4096"
    library.write_bytes(os.urandom(4096))  # same size, other bytes
    assert build_cache.check_record(library)[0].startswith("damaged: its sha256 differs")
    (tmp_path / "libx.so.record.json").write_text("{")
    assert build_cache.check_record(library)[0] == "without a valid build record"
    assert build_cache.check_record(tmp_path / "missing.so")[0] == "not built"


def test_a_damaged_shipped_ort_library_is_never_handed_out(monkeypatch, tmp_path) -> None:
    shipped = tmp_path / "_lib"
    shipped.mkdir()
    library = shipped / ort_library.LIBRARY_NAME
    library.write_bytes(os.urandom(4096))
    build_cache.write_record(library, "k")
    monkeypatch.setattr(build_cache, "SHIPPED_LIBRARIES", shipped)
    monkeypatch.setenv("ONNXTOOL_BUILD_DIR", str(tmp_path / "empty"))
    found = ort_library.status()
    assert found.available and found.source == "wheel" and found.path == library
    with open(library, "r+b") as handle:
        handle.truncate(100)
    found = ort_library.status()
    assert not found.available and found.path is None
    assert "shipped in the wheel" in found.reason and "damaged: 100 bytes" in found.reason
    assert not (tmp_path / "empty").exists()  # status writes nothing
    monkeypatch.setattr(ort_library, "_compiler", lambda: None)  # nothing to rebuild it with here
    assert ort_library.build(fetch=False) is None
    assert ort_library.unavailable_reason().startswith(f"the library shipped in the wheel ({library}) is damaged")


def test_a_build_folder_that_cannot_be_made_is_said_before_any_build(monkeypatch, tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert build_cache.writable_reason(blocker / "ort_ops") == f"{blocker} is not a folder"
    monkeypatch.setenv("ONNXTOOL_BUILD_DIR", str(blocker))
    found = ort_library.status()
    assert not found.available and "is not a folder" in found.reason and "ONNXTOOL_BUILD_DIR" in found.reason


def test_the_lock_names_its_owner_and_a_bounded_wait_says_who_holds_it(tmp_path) -> None:
    lock = tmp_path / "sub" / "x.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; sys.path.insert(0, sys.argv[1]); from graphsurgeon_tools.io.files import exclusive_lock\n"
                "with exclusive_lock(sys.argv[2]):\n    print('held', flush=True); time.sleep(60)"
            ),
            str(REPO),
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert lock.read_text().strip() == str(holder.pid)
        start = time.monotonic()
        with pytest.raises(TimeoutError, match=rf"process {holder.pid} has held .*x\.lock for more than 1 s"):
            with exclusive_lock(lock, timeout=1.0):
                pass
        assert time.monotonic() - start < 10
    finally:
        holder.kill()  # kill -9: the kernel drops its flock with it
        holder.wait()
    start = time.monotonic()
    with exclusive_lock(lock, timeout=5.0):
        assert lock.read_text().strip() == str(os.getpid())
    assert time.monotonic() - start < 5


def test_the_wheel_build_hook_loads_in_a_bare_interpreter(tmp_path) -> None:
    # setup.py imports ort_library without numpy/onnx (an isolated build environment has neither).
    bare = tmp_path / "bare"
    shutil.copytree(
        REPO / "graphsurgeon_tools", bare / "graphsurgeon_tools", ignore=shutil.ignore_patterns("__pycache__")
    )
    code = (
        "import sys, types; sys.path[:0] = [sys.argv[1]]; sys.modules['numpy'] = None; sys.modules['onnx'] = None\n"
        "runtime = types.ModuleType('graphsurgeon_tools.runtime'); runtime.__path__ = [sys.argv[1] + "
        "'/graphsurgeon_tools/runtime']; sys.modules['graphsurgeon_tools.runtime'] = runtime\n"
        "from graphsurgeon_tools.runtime import ort_library; print(ort_library.compile_library.__name__)"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code, str(bare)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "compile_library", done.stderr
