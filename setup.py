"""The build step of onnxtool's wheel (setuptools; the metadata lives in pyproject.toml).

What it adds to a plain setuptools build (see docs/packaging.md for why setuptools):

* the kernel sources, ``csrc/`` (``csrc/ort/`` included), copied into the wheel as
  ``graphsurgeon_tools/_csrc/``: the torch op is built from them on first use, into a per-user
  cache (exporters.build); the repository's top-level ``csrc/`` stays their only source;
* the ONNX Runtime custom-op library, compiled now with g++ against ONNX Runtime's C API headers
  (``$ONNXRUNTIME_INCLUDE_DIR``, headers fetched earlier, or Debian's libonnxruntime-dev, fetched
  the way ``python -m graphsurgeon_tools.runtime.ort_library build`` does) and shipped as
  ``graphsurgeon_tools/_lib/libonnxtool_ort_ops.so`` with its record (size, sha256);
* a platform tag (``py3-none-<platform>``): the library is native code, but it uses ONNX
  Runtime's C API only, so it does not depend on the Python version.

``ONNXTOOL_WHEEL_WITHOUT_ORT_LIBRARY=1`` builds a pure wheel without the library (plugin models
then run through onnxruntime-extensions); without it, a library that cannot be built fails the
build with the reason. Editable installs (``pip install -e .``) copy and compile nothing: a clone
builds both parts into ``.build/`` (``make setup``).
"""

from __future__ import annotations

import os
import shutil
import sys
import types
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
WITHOUT_LIBRARY = os.environ.get("ONNXTOOL_WHEEL_WITHOUT_ORT_LIBRARY", "") not in ("", "0")
SOURCE_PATTERNS = ("*.cpp", "*.h", "*.map")


def _ort_library():
    """``graphsurgeon_tools.runtime.ort_library`` from this source tree, in a bare build environment.

    Its build code needs the standard library only, but ``graphsurgeon_tools/runtime/__init__``
    imports numpy: that package is stood in for by an empty one pointing at the same folder.
    """
    sys.path.insert(0, str(HERE))
    runtime = types.ModuleType("graphsurgeon_tools.runtime")
    runtime.__path__ = [str(HERE / "graphsurgeon_tools" / "runtime")]
    sys.modules.setdefault("graphsurgeon_tools.runtime", runtime)
    from graphsurgeon_tools.runtime import ort_library

    return ort_library


class BuildWithKernels(build_py):
    """build_py, plus the kernel sources and the compiled ONNX Runtime library (not when editable)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        package = Path(self.build_lib) / "graphsurgeon_tools"
        self._copy_sources(package / "_csrc")
        if WITHOUT_LIBRARY:
            print("onnxtool: ONNXTOOL_WHEEL_WITHOUT_ORT_LIBRARY is set: no ONNX Runtime library in this wheel")
            return
        ort_library = _ort_library()
        built = ort_library.compile_library(package / "_lib", fetch=True)
        if built is None:
            raise SystemExit(
                f"onnxtool: the ONNX Runtime custom-op library cannot be built: "
                f"{ort_library.unavailable_reason()} (ONNXTOOL_WHEEL_WITHOUT_ORT_LIBRARY=1 "
                "builds a wheel without it)"
            )
        print(f"onnxtool: built {built.name} ({built.stat().st_size} bytes) into the wheel")

    @staticmethod
    def _copy_sources(target: Path) -> None:
        source = HERE / "csrc"
        if not (source / "resize_kernel.h").is_file():
            raise SystemExit(f"onnxtool: the kernel sources are not in {source}")
        shutil.rmtree(target, ignore_errors=True)
        for pattern in SOURCE_PATTERNS:
            for path in source.rglob(pattern):
                destination = target / path.relative_to(source)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, destination)


class KernelDistribution(Distribution):
    """Native code inside (the library): installed into platlib, and the wheel is not pure."""

    def has_ext_modules(self) -> bool:
        return not WITHOUT_LIBRARY


class PlatformWheel(bdist_wheel):
    """A ``py3-none-<platform>`` wheel when it carries the compiled library."""

    def get_tag(self) -> tuple[str, str, str]:
        python, abi, platform = super().get_tag()
        return (python, abi, platform) if WITHOUT_LIBRARY else ("py3", "none", platform)


setup(distclass=KernelDistribution, cmdclass={"build_py": BuildWithKernels, "bdist_wheel": PlatformWheel})
