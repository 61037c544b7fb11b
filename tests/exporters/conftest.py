"""Fixtures of the exporters tests: real models (tests/realmodels builders) built and exported once per session.

``real_export(name, variant) -> (TorchModel, Path)``: the builder's unmodified module and its export
(``variant`` is ``"torchscript-17"`` or ``"dynamo-18"``, as in realmodels.exports). Skips without
transformers/diffusers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest


@pytest.fixture(scope="session")
def real_export(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], tuple[Any, Path]]:
    folder = tmp_path_factory.mktemp("exporters-real")
    built: dict[str, Any] = {}
    paths: dict[tuple[str, str], Path] = {}

    def get(name: str, variant: str) -> tuple[Any, Path]:
        for package in ("torch", "transformers", "diffusers"):
            pytest.importorskip(package)
        from realmodels.builders import BUILDERS
        from realmodels.exports import EXPORTS, export

        if name not in built:
            built[name] = BUILDERS[name]()
        if (name, variant) not in paths:
            path = folder / f"{name}.{variant}.onnx"
            export(built[name].module, built[name].example, next(v for v in EXPORTS if v.label == variant), path)
            paths[name, variant] = path
        return built[name], paths[name, variant]

    return get
