"""exporters.build's faults that need no compiler run: a killed build's lock file on a current library."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_killed_builds_lock_beside_a_current_library_goes_on_the_next_load(tmp_path: Path) -> None:
    # A build killed after its link but before torch released its FileBaton: the library and its
    # record are current, so the next use loads without building, and only the load can drop the
    # lock (else a later rebuild in that folder would find it; here it must not wait or rebuild).
    pytest.importorskip("torch")
    probe = "import exporters.build as b; b.load_library(); print(b.build_directory())"
    built = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    folder = Path(built.stdout.strip().splitlines()[-1])
    copy = tmp_path / "build" / folder.relative_to(folder.parents[1])
    shutil.copytree(folder, copy)
    library = copy / "onnxtool_ops.so"
    before = library.stat().st_mtime_ns
    (copy / "lock").write_bytes(b"")
    env = dict(os.environ, ONNXTOOL_BUILD_DIR=str(tmp_path / "build"))
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert Path(done.stdout.strip().splitlines()[-1]) == copy
    assert not (copy / "lock").exists()
    assert library.stat().st_mtime_ns == before  # loaded as it was: no rebuild took the lock away
