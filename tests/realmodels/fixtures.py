"""Session fixtures: every real model as an ONNX file, exported or located once per test session.

Import the fixtures into a test module (``from realmodels.fixtures import flows, real_models``)
and parametrize over :data:`CASES` with ``real_model_case`` ids ("dpt/torchscript-14",
"ppocrv6_det"...). Exports are lazy and cached: a test asking for one model/variant exports that
one only, once per run: under xdist the workers share one folder and a lock per export, so the
second worker to need a model waits for the first one's file instead of exporting it again.

Skips: a torch model when torch/transformers/diffusers are not installed (the ``realmodels``
extra); a shipped model when its wheel is not installed (``make setup`` installs them --no-deps).
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest

from realmodels import shipped
from realmodels.exports import EXPORTS, Export, export
from realmodels.flow import Flow
from realmodels.inputs import INPUTS

TORCH_MODELS = ("dpt", "segformer", "swin2sr", "vae_decoder", "upernet")
CASES: tuple[str, ...] = (
    *(f"{name}/{variant.label}" for name in TORCH_MODELS for variant in EXPORTS),
    *shipped.SHIPPED,
)


@dataclass
class RealModels:
    """Lazy, per-session cache of real-model ONNX files."""

    folder: Path
    paths: dict[str, Path] = field(default_factory=dict)
    export_seconds: dict[str, float] = field(default_factory=dict)  # case -> seconds in torch.onnx.export
    build_seconds: dict[str, float] = field(default_factory=dict)  # model -> seconds to build it
    _modules: dict[str, object] = field(default_factory=dict)

    def path(self, case: str) -> Path:
        if case not in self.paths:
            self.paths[case] = self._torch(case) if "/" in case else self._shipped(case)
        return self.paths[case]

    def module(self, name: str) -> object:
        """The builder's :class:`~realmodels.builders.TorchModel` ``name``, built once per process.

        Builders are seeded: the module matches the file :meth:`path` exported (in this process
        or in another xdist worker), so a test can use both without exporting again.
        """
        for package in ("torch", "transformers", "diffusers"):
            pytest.importorskip(package, reason=f"{name} needs the realmodels extra (pip install -e '.[realmodels]')")
        from realmodels import builders

        if name not in self._modules:
            started = time.perf_counter()
            self._modules[name] = builders.BUILDERS[name]()
            self.build_seconds[name] = time.perf_counter() - started
        return self._modules[name]

    def _shipped(self, case: str) -> Path:
        found = shipped.locate(case)
        if found is None:
            pytest.skip(f"{case}: install {shipped.SHIPPED[case].requirement} --no-deps (make setup does)")
        return found

    def _torch(self, case: str) -> Path:
        name, label = case.split("/")
        for package in ("torch", "transformers", "diffusers"):
            pytest.importorskip(package, reason=f"{case} needs the realmodels extra (pip install -e '.[realmodels]')")
        variant: Export = next(v for v in EXPORTS if v.label == label)
        path = self.folder / f"{name}.{label}.onnx"
        # xdist workers share self.folder: the first to take the lock exports, the others reuse.
        with _locked(self.folder / f"{name}.{label}.lock"):
            if not path.is_file():
                model = self.module(name)
                staging = self.folder / f"staging-{os.getpid()}"
                staging.mkdir(exist_ok=True)
                seconds = export(model.module, model.example, variant, staging / path.name)  # type: ignore[attr-defined]
                self.export_seconds[case] = seconds
                _move_export(staging / path.name, path)
        return path


@contextlib.contextmanager
def _locked(lock: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # not POSIX: each worker exports on its own (same files, one after the other)
        yield
        return
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _move_export(staged: Path, path: Path) -> None:
    """Move a finished export into place: its .data file first (same name, the model refers to it), model last."""
    data = staged.with_name(staged.name + ".data")
    if data.is_file():
        data.replace(path.with_name(path.name + ".data"))
    staged.replace(path)


@pytest.fixture(scope="session")
def real_models(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[RealModels]:
    # Under xdist, getbasetemp() is per worker and its parent is shared by all workers of the run.
    shared = tmp_path_factory.getbasetemp()
    if hasattr(pytestconfig, "workerinput"):
        shared = shared.parent
    folder = shared / "realmodels"
    folder.mkdir(exist_ok=True)
    models = RealModels(folder)
    yield models
    # The issue asks to keep export time small: say what it was (the controller's terminal only).
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None and models.export_seconds:
        with capture.global_and_fixture_disabled():  # teardown output is captured otherwise
            reporter.write_line(
                f"\nreal models: {len(models.export_seconds)} exports in {sum(models.export_seconds.values()):.1f} s "
                f"(+ {sum(models.build_seconds.values()):.1f} s building {len(models.build_seconds)} models)"
            )


@pytest.fixture(scope="session")
def flows(real_models: RealModels, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Flow]:
    """case -> its :class:`~realmodels.flow.Flow` (created once; each step runs once)."""
    folder = tmp_path_factory.mktemp("realmodels-flow")
    made: dict[str, Flow] = {}

    def get(case: str) -> Flow:
        if case not in made:
            path = real_models.path(case)
            inputs = {}
            for name, make in INPUTS.get(case, {}).items():
                inputs[name] = folder / f"{case.replace('/', '.')}.{name}.npy"
                np.save(inputs[name], make())
            made[case] = Flow(case, path, folder, inputs)
        return made[case]

    return get
