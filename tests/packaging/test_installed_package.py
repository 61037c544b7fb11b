"""onnxtool where users install it: the sdist and the wheel built from this checkout, installed into
fresh virtual environments outside the repository, run from an empty folder with a fresh HOME.

One build for every step: the sdist from a copy of the checkout, the wheel from that sdist (what
``pip install onnxtool-*.tar.gz`` and ``python -m build`` do), each installed with ``--no-deps``
into its own venv whose dependencies come from this test's environment through a folder of
symlinks named in a ``.pth`` (onnxtool's own files and its editable-install hooks left out, so
``graphsurgeon_tools``/``exporters`` can only come from the installed package; asserted).

Checked: the README's quick tour and a user's own nn.Module as ``--reference python:FILE:build``,
``demo``, all exit 0 with nothing written into site-packages; the torch op built on first use into
the per-user cache (two first uses at once build once); the compiled ONNX Runtime library shipped
in the wheel is what ran; a read-only site-packages works; the build-cache faults (stale lock after
kill -9, a truncated library, a read-only empty build folder) end in success or one line with its
code within a bounded time; without torch every torch-needing command is one line and exit 5;
``pip uninstall`` leaves nothing; every README/docs Python snippet runs from the installed package.

As root a read-only folder is a read-only bind mount in a private mount namespace (``unshare -m``;
chmod does not stop root); otherwise ``chmod -R a-w``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SITE = Path(sysconfig.get_paths()["purelib"])
PYVER = f"python{sys.version_info[0]}.{sys.version_info[1]}"
# What a user's CI job would bound a command by; the first use of the torch op compiles (~1-2 min on 2 busy cores).
COMMAND_TIMEOUT = 600
TORCH_FREE = ("torch", "functorch", "torchgen")


@dataclass
class Venv:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def onnxtool(self) -> Path:
        return self.root / "bin" / "onnxtool"

    @property
    def site(self) -> Path:
        return self.root / "lib" / PYVER / "site-packages"


@dataclass
class Setup:
    base: Path
    sdist: Path
    wheel: Path
    venv: Venv  # the wheel, installed
    home: Path  # the fresh HOME of the user running the tour (its XDG cache holds the torch op)
    work: Path  # the tour's folder, with its outputs
    build_env: dict[str, str]  # where the ONNX Runtime headers are, for builds from the sdist

    def env(self, **extra: str) -> dict[str, str]:
        return _user_env(self.venv, self.home, **extra)


def _user_env(venv: Venv, home: Path, **extra: str) -> dict[str, str]:
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ONNXTOOL_", "PYTHON", "VIRTUAL_ENV", "XDG_")) and k != "ONNXRUNTIME_INCLUDE_DIR"
    }
    return {
        **keep,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "COLUMNS": "200",
        "PATH": f"{venv.root / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        **extra,
    }


def _run(
    args: list, *, cwd: Path, env: dict[str, str], timeout: float = COMMAND_TIMEOUT, check: bool = True
) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert done.returncode == 0, f"{args} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _copy_checkout(target: Path) -> None:
    """The checkout's files (tracked and untracked, not ignored): no .build, .venv or build outputs."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True)
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = REPO / name
            if source.is_file():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)
        return
    shutil.copytree(
        REPO,
        target,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(
            ".git", ".build", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "_csrc", "_lib"
        ),
    )


def _deps_folder(target: Path, *, without_torch: bool) -> Path:
    """This environment's site-packages as symlinks, without onnxtool (and without torch if asked)."""
    target.mkdir()
    for entry in SITE.iterdir():
        name = entry.name
        if name.startswith(("onnxtool", "__editable__", "graphsurgeon_tools", "exporters")) or name.endswith(".pth"):
            continue
        if without_torch and (name in TORCH_FREE or name.startswith("torch-")):
            continue
        (target / name).symlink_to(entry)
    return target


def _make_venv(root: Path, deps: Path) -> Venv:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    venv = Venv(root)
    (venv.site / "onnxtool-test-deps.pth").write_text(f"{deps}\n")
    return venv


def _pip_install(venv: Venv, artefact: Path, cwd: Path, **env: str) -> None:
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            venv.python,
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            artefact,
        ],
        cwd=cwd,
        env={**os.environ, **env},
    )


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file() or p.is_symlink()
    }


def _one_line_error(done: subprocess.CompletedProcess, code: int) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == code, f"exit {done.returncode}, expected {code}: {done.stderr[-2000:]}"
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def _read_only(args: list, folders: list[Path]) -> list:
    """``args`` run with ``folders`` read-only (root: a private read-only bind mount)."""
    if os.geteuid() != 0:
        for folder in folders:
            subprocess.run(["chmod", "-R", "a-w", str(folder)], check=True)
        return args
    mounts = " && ".join(f"mount --bind {f} {f} && mount -o remount,bind,ro {f}" for f in map(str, folders))
    return ["unshare", "-m", "sh", "-c", f'{mounts} && exec "$@"', "sh", *args]


def _writable_again(folders: list[Path]) -> None:
    if os.geteuid() != 0:
        for folder in folders:
            subprocess.run(["chmod", "-R", "u+w", str(folder)], check=True)


USER_MODEL = '''\
"""A user's own model: nothing of onnxtool's in it."""
import torch
import torch.nn.functional as F
from torch import nn


class Upscaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 8, 3, padding=1)
        self.tail = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        y = F.interpolate(torch.relu(self.head(x)), scale_factor=2.0, mode="bilinear", align_corners=False)
        return self.tail(y)


def build():
    torch.manual_seed(0)
    return Upscaler().eval()


if __name__ == "__main__":
    torch.onnx.export(build(), (torch.rand(1, 3, 16, 16),), "my.onnx", dynamo=False, opset_version=17,
                      input_names=["input"], output_names=["output"])
'''


@contextlib.contextmanager
def _installed() -> Iterator[Setup]:
    from graphsurgeon_tools.runtime import ort_library

    base = Path(tempfile.mkdtemp(prefix="onnxtool-installed-"))
    assert REPO not in base.parents
    try:
        source, dist = base / "checkout", base / "dist"
        _copy_checkout(source)
        headers = ort_library.header_dir()  # else the wheel build fetches them from Debian
        build_env = {"ONNXRUNTIME_INCLUDE_DIR": str(headers)} if headers else {}
        _run(
            [sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(dist)!r})"],
            cwd=source,
            env={**os.environ, **build_env},
        )
        (sdist,) = dist.glob("onnxtool-*.tar.gz")
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "--quiet",
                "-w",
                dist,
                sdist,
            ],
            cwd=base,
            env={**os.environ, **build_env},
        )
        (wheel,) = dist.glob("onnxtool-*.whl")
        venv = _make_venv(base / "venv", _deps_folder(base / "deps", without_torch=False))
        _pip_install(venv, wheel, base)
        home, work = base / "home", base / "work"
        home.mkdir()
        work.mkdir()
        yield Setup(base, sdist, wheel, venv, home, work, build_env)
    finally:
        _writable_again([base])
        shutil.rmtree(base, ignore_errors=True)


def _the_sdist_and_the_wheel_carry_the_kernel_sources_and_the_compiled_library(setup: Setup) -> None:
    with tarfile.open(setup.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {
        "csrc/resize_kernel.h",
        "csrc/resize_cpu.cpp",
        "csrc/ort/dynamic_trt_resize.cpp",
        "setup.py",
        "LICENSE",
        "MANIFEST.in",
    } <= names
    assert not any(name.startswith((".build/", "graphsurgeon_tools/_lib")) or name.endswith(".so") for name in names)
    assert re.fullmatch(r"onnxtool-[\w.]+-py3-none-linux_\w+\.whl", setup.wheel.name), setup.wheel.name
    with zipfile.ZipFile(setup.wheel) as wheel:
        files = set(wheel.namelist())
        record = json.loads(wheel.read("graphsurgeon_tools/_lib/libonnxtool_ort_ops.so.record.json"))
        metadata = wheel.read(next(n for n in files if n.endswith(".dist-info/METADATA"))).decode()
    repo_sources = {
        f"graphsurgeon_tools/_csrc/{p.relative_to(REPO / 'csrc')}"
        for p in (REPO / "csrc").rglob("*")
        if p.suffix in (".cpp", ".h", ".map")
    }
    assert repo_sources <= files
    assert "graphsurgeon_tools/_lib/libonnxtool_ort_ops.so" in files and record["size"] > 10_000
    assert not any(name.startswith(("csrc/", ".build/")) for name in files)
    assert "License-Expression: Apache-2.0" in metadata


def _the_readme_tour_runs_from_the_installed_wheel(setup: Setup) -> None:
    venv, work, env = setup.venv, setup.work, setup.env()
    where = _run(
        [
            venv.python,
            "-c",
            (
                "import json, sys, graphsurgeon_tools, exporters; print(json.dumps("
                "[graphsurgeon_tools.__file__, exporters.__file__, sys.path]))"
            ),
        ],
        cwd=work,
        env=env,
    )
    gst, exp, path = json.loads(where.stdout)
    assert Path(gst).is_relative_to(venv.site) and Path(exp).is_relative_to(venv.site)
    assert not any(entry and Path(entry).resolve().is_relative_to(REPO) for entry in path), path
    before = _listing(venv.site)
    cache = setup.home / ".cache" / "onnxtool"
    assert not cache.exists()

    for args in (["export", "srcnn"], ["inspect", "srcnn_static.onnx"], ["make-dynamic-scale", "srcnn_static.onnx"]):
        done = _run([venv.onnxtool, *args], cwd=work, env=env)
        assert "building" not in done.stderr  # nothing here needs the torch op: nothing is compiled
    assert not cache.exists()

    # Two first uses of the torch op at once (the tour's validate and a script): one builds, both succeed.
    start = time.perf_counter()
    first = subprocess.Popen(
        [venv.onnxtool, "validate", "srcnn_static.dynamic.onnx", "--reference", "torch:srcnn", "--factors", "2,3,4"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    second = _run([venv.python, "-c", "import exporters.ops as ops; print(ops.load())"], cwd=work, env=env)
    out, err = first.communicate(timeout=COMMAND_TIMEOUT)
    first_use_s = time.perf_counter() - start
    assert first.returncode == 0, out + err
    assert (err + second.stderr).count("building the C++ op once") == 1, err + second.stderr
    library = Path(second.stdout.strip().splitlines()[-1])
    assert library.is_relative_to(cache / "torch_ext") and library.is_file()
    print(f"first use (validate --reference torch:srcnn + a concurrent load, fresh cache): {first_use_s:.1f} s")

    _run([venv.onnxtool, "swap-plugin", "srcnn_static.onnx"], cwd=work, env=env)
    report = json.loads(
        _run(
            [venv.onnxtool, "validate", "srcnn_static.plugin.onnx", "--reference", "srcnn_static.onnx", "--json"],
            cwd=work,
            env=env,
        ).stdout
    )
    assert report["passed"]
    status = json.loads(
        _run(
            [
                venv.python,
                "-c",
                (
                    "import json; from dataclasses import asdict; "
                    "from graphsurgeon_tools.runtime import ort_library; "
                    "print(json.dumps(asdict(ort_library.status()), default=str))"
                ),
            ],
            cwd=work,
            env=env,
        ).stdout
    )
    assert status["available"] and status["source"] == "wheel"
    assert Path(status["path"]).is_relative_to(venv.site / "graphsurgeon_tools" / "_lib")
    # The report's evidence names the compiled library that ran: the one shipped in the wheel.
    ran = report["evidence"]["plugin_kernels"]
    assert ran == [{"kind": "compiled-library", "path": status["path"], "sha256": status["sha256"]}], ran
    assert not report["evidence"]["slow_fallback"]

    (work / "my_model.py").write_text(USER_MODEL)
    _run([venv.python, "my_model.py"], cwd=work, env=env)
    _run([venv.onnxtool, "make-dynamic-scale", "my.onnx"], cwd=work, env=env)
    _run(
        [venv.onnxtool, "validate", "my.dynamic.onnx", "--reference", "python:my_model.py:build", "--factors", "2,3"],
        cwd=work,
        env=env,
    )
    _run([venv.onnxtool, "demo"], cwd=work, env=env)
    assert (work / "demo_out").is_dir()
    assert _listing(venv.site) == before, "something was written into site-packages"


def _a_read_only_site_packages_works(setup: Setup) -> None:
    venv, work = setup.venv, setup.work
    env = setup.env()
    before = _listing(venv.site)
    try:
        for args in (
            ["validate", "srcnn_static.dynamic.onnx", "--reference", "torch:srcnn", "--factors", "2"],
            ["validate", "srcnn_static.plugin.onnx", "--reference", "srcnn_static.onnx"],
        ):
            _run(_read_only([venv.onnxtool, *args], [venv.site]), cwd=work, env=env, timeout=300)
    finally:
        _writable_again([venv.site])
    assert _listing(venv.site) == before


def _warm_build(setup: Setup, name: str) -> tuple[Path, Path]:
    """A copy of the user's warm cache as a build folder: (folder, the torch op's library in it)."""
    folder = setup.base / name
    shutil.copytree(setup.home / ".cache" / "onnxtool", folder, symlinks=True)
    (library,) = folder.glob("torch_ext/*/onnxtool_ops.so")
    return folder, library


def _validate_torch(setup: Setup, build_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return _run(
        [setup.venv.onnxtool, "validate", "srcnn_static.dynamic.onnx", "--reference", "torch:srcnn", "--factors", "2"],
        cwd=setup.work,
        env=setup.env(ONNXTOOL_BUILD_DIR=str(build_dir)),
        timeout=timeout,
        check=False,
    )


def _a_truncated_library_is_rebuilt_never_loaded(setup: Setup) -> None:
    folder, library = _warm_build(setup, "fault-truncated")
    size = library.stat().st_size
    with open(library, "r+b") as handle:
        handle.truncate(size // 2)
    done = _validate_torch(setup, folder)
    assert done.returncode == 0, done.stderr
    assert "damaged" in done.stderr and "rebuilding" in done.stderr
    assert library.stat().st_size == size


def _a_build_killed_with_kill_9_leaves_no_lock_that_blocks_the_next(setup: Setup) -> None:
    folder, library = _warm_build(setup, "fault-killed")
    library.unlink()  # ninja relinks it: the build is killed while torch's lock file exists
    builder = subprocess.Popen(
        [setup.venv.python, "-c", "import exporters.ops as ops; ops.load()"],
        cwd=setup.work,
        env=setup.env(ONNXTOOL_BUILD_DIR=str(folder)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    baton = library.parent / "lock"  # torch.utils.cpp_extension's own lock file
    deadline = time.monotonic() + 120
    while not baton.exists() and builder.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert baton.exists(), "the build never reached torch's cpp_extension"
    os.killpg(builder.pid, signal.SIGKILL)  # the whole job, as a CI runner or the OOM killer would
    builder.wait(timeout=30)
    assert baton.exists()  # what used to make the next build wait forever
    done = _validate_torch(setup, folder)
    assert done.returncode == 0, done.stderr
    assert library.is_file() and not baton.exists()


def _a_read_only_empty_build_folder_is_one_line_with_exit_5(setup: Setup) -> None:
    folder = setup.base / "fault-read-only"
    folder.mkdir()
    env = setup.env(ONNXTOOL_BUILD_DIR=str(folder))
    try:
        torch_side = _run(
            _read_only(
                [
                    setup.venv.onnxtool,
                    "validate",
                    "srcnn_static.dynamic.onnx",
                    "--reference",
                    "torch:srcnn",
                    "--factors",
                    "2",
                ],
                [folder],
            ),
            cwd=setup.work,
            env=env,
            timeout=120,
            check=False,
        )
        plugin = _run(
            _read_only(
                [setup.venv.onnxtool, "validate", "srcnn_static.plugin.onnx", "--reference", "srcnn_static.onnx"],
                [folder],
            ),
            cwd=setup.work,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        _writable_again([folder])
    line = _one_line_error(torch_side, 5)
    assert str(folder) in line and "ONNXTOOL_BUILD_DIR" in line
    assert plugin.returncode == 0, plugin.stderr  # the ONNX Runtime library comes from the wheel
    assert not any(folder.iterdir())


def _the_sdist_installs_and_runs_a_plugin_model_with_its_compiled_library(setup: Setup) -> None:
    venv = _make_venv(setup.base / "venv-sdist", setup.base / "deps")
    _pip_install(venv, setup.sdist, setup.base, **setup.build_env)
    assert (venv.site / "graphsurgeon_tools" / "_lib" / "libonnxtool_ort_ops.so").is_file()
    env = _user_env(venv, setup.home)  # the same user: the torch op comes from their cache (same sources, same key)
    _run(
        [venv.onnxtool, "validate", "srcnn_static.plugin.onnx", "--reference", "srcnn_static.onnx"],
        cwd=setup.work,
        env=env,
    )
    loaded = _run([venv.python, "-c", "import exporters.ops as ops; print(ops.load())"], cwd=setup.work, env=env)
    assert "building" not in loaded.stderr and Path(loaded.stdout.strip()).is_relative_to(setup.home / ".cache")


def _without_torch_every_torch_command_is_one_line_with_exit_5_and_uninstall_leaves_nothing(setup: Setup) -> None:
    venv = _make_venv(setup.base / "venv-no-torch", _deps_folder(setup.base / "deps-no-torch", without_torch=True))
    empty = _listing(venv.site)
    _pip_install(venv, setup.wheel, setup.base)
    work = setup.base / "work-no-torch"
    work.mkdir()
    for name in ("srcnn_static.onnx", "srcnn_static.dynamic.onnx", "my.dynamic.onnx", "my_model.py"):
        shutil.copy2(setup.work / name, work / name)
    env = _user_env(venv, setup.base / "home-no-torch")
    # Graph surgery needs no torch.
    _run([venv.onnxtool, "swap-plugin", "srcnn_static.onnx"], cwd=work, env=env)
    _run([venv.onnxtool, "validate", "srcnn_static.plugin.onnx", "--reference", "srcnn_static.onnx"], cwd=work, env=env)
    answers = {
        " ".join(args): _run([venv.onnxtool, *args], cwd=work, env=env, timeout=120, check=False)
        for args in (
            ["export", "srcnn"],
            ["demo"],
            ["validate", "srcnn_static.dynamic.onnx", "--reference", "torch:srcnn"],
            ["validate", "my.dynamic.onnx", "--reference", "python:my_model.py:build", "--factors", "2"],
        )
    }
    _run(
        [sys.executable, "-m", "pip", "--python", venv.python, "uninstall", "--yes", "--quiet", "onnxtool"],
        cwd=setup.base,
        env=dict(os.environ),
    )
    assert _listing(venv.site) == empty, set(_listing(venv.site)) ^ set(empty)
    assert not (venv.root / "bin" / "onnxtool").exists()
    assert not (work / "demo_out").exists()
    wrong = {
        command: f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
        for command, done in answers.items()
        if done.returncode != 5 or len(done.stderr.strip().splitlines()) != 1 or "torch" not in done.stderr
    }
    assert not wrong, f"without torch, expected one line naming torch and exit 5: {wrong}"


# ----------------------------------------------------------------------------------- docs snippets

# Snippets that are not meant to run as written: (file, its first line) -> the reason. Everything else runs.
NOT_RUNNABLE: dict[tuple[str, str], str] = {
    (
        "docs/certify.md",
        "from graphsurgeon_tools import certify, verify_certificate, validate",
    ): "it verifies cert.json, a file it never writes (`onnxtool certify --out` does); and certifying the "
    "16..512 profile at 4 factors is a run of its own, not a snippet check",
    (
        "docs/adding-a-pass.md",
        "@dataclass(frozen=True)",
    ): "an excerpt of passes/set_factor/__init__.py with elisions (...), shown to name the pieces of a pass",
    (
        "docs/adding-a-pass.md",
        "def set_factor(model: ModelArgument, output: OutputOption = None, in_place: InPlaceOption = False, ...):",
    ): "an excerpt of cli/commands/set_factor.py with elisions (...), shown to name the pieces of a command",
    (
        "docs/adding-a-pass.md",
        "result.declared_inputs.append(DeclaredInput(",
    ): "a statement from inside a pass's call (result, node, value and self are the pass's own), shown to "
    "name the fields of a declaration; tests/validation/declared_passes.py runs passes that do it",
}

# Names the snippets take as given (a model, an input), defined the way their prose describes them.
PRELUDE = """\
import shutil, torch
from exporters import srcnn
for name, copy in (("srcnn_static.onnx", "model.onnx"), ("srcnn_static.dynamic.onnx", "model.dynamic.onnx")):
    shutil.copyfile(name, copy)
x = torch.rand(1, 3, 16, 16)
model = srcnn("static")
"""


def _snippets() -> list[tuple[str, str]]:
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text()
        for match in re.finditer(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
            line = text[: match.start()].count("\n") + 1
            found.append((f"{path.relative_to(REPO)}:{line}", match.group(1)))
    return found


def _every_readme_and_docs_python_snippet_runs_from_the_installed_package(setup: Setup) -> None:
    snippets = [
        (where, code) for where, code in _snippets() if (where.split(":")[0], code.splitlines()[0]) not in NOT_RUNNABLE
    ]
    assert len(snippets) >= 8
    folder = setup.base / "snippets"
    folder.mkdir()
    for name in ("srcnn_static.onnx", "srcnn_static.dynamic.onnx"):
        shutil.copy2(setup.work / name, folder / name)
    # One interpreter, a fresh namespace per snippet (each starts from the prelude): torch is imported once.
    runner = (
        "import json, sys, traceback\n"
        f"snippets = json.loads({json.dumps(json.dumps(snippets))})\n"
        f"prelude = {PRELUDE!r}\n"
        "failed = []\n"
        "for where, code in snippets:\n"
        "    scope = {'__name__': '__snippet__'}\n"
        "    exec(compile(prelude, 'prelude', 'exec'), scope)\n"
        "    try:\n"
        "        exec(compile(code, where, 'exec'), scope)\n"
        "    except BaseException:\n"
        "        failed.append(where + ': ' + traceback.format_exc(limit=-3))\n"
        "print(json.dumps(failed))\n"
    )
    done = _run([setup.venv.python, "-c", runner], cwd=folder, env=setup.env())
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert not failed, "\n".join(failed)


def test_onnxtool_works_where_users_install_it() -> None:
    """The steps share one build and one user (their order matters: later ones use the tour's outputs)."""
    steps = [
        _the_sdist_and_the_wheel_carry_the_kernel_sources_and_the_compiled_library,
        _the_readme_tour_runs_from_the_installed_wheel,
        _a_read_only_site_packages_works,
        _a_truncated_library_is_rebuilt_never_loaded,
        _a_build_killed_with_kill_9_leaves_no_lock_that_blocks_the_next,
        _a_read_only_empty_build_folder_is_one_line_with_exit_5,
        _the_sdist_installs_and_runs_a_plugin_model_with_its_compiled_library,
        _every_readme_and_docs_python_snippet_runs_from_the_installed_package,
        _without_torch_every_torch_command_is_one_line_with_exit_5_and_uninstall_leaves_nothing,
    ]
    start = time.perf_counter()
    failed: list[str] = []
    with _installed() as setup:
        print(
            f"built and installed: {time.perf_counter() - start:.1f} s; wheel {setup.wheel.stat().st_size} bytes, "
            f"sdist {setup.sdist.stat().st_size} bytes"
        )
        for index, step in enumerate(steps):
            began = time.perf_counter()
            try:
                step(setup)
            except (AssertionError, subprocess.TimeoutExpired) as exc:
                if index < 2:  # the build and the tour: every later step stands on them
                    raise
                failed.append(f"{step.__name__}: {exc}")
            print(f"{step.__name__}: {time.perf_counter() - began:.1f} s")
    assert not failed, "\n\n".join(failed)
