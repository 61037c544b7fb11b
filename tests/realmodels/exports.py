"""Export the builders' models with both torch exporters, the way a user would (static shapes).

``EXPORTS`` names the four variants every torch model is exported in: the TorchScript exporter
(``dynamo=False``) at opsets 14 and 17, the dynamo exporter (``dynamo=True``) at opsets 18 and 20
(Resize-13 and Resize-18/19; Constant nodes vs initializers and an empty-string roi).

Requires: torch (imported lazily). Ensures: one ``.onnx`` per call (the dynamo exporter may put the
weights in a ``.data`` file beside it); exporter warnings are silenced, errors propagate.
Does NOT: cache (the session fixtures do) or pick dynamic axes (users in the issue exported static).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any, NamedTuple


class Export(NamedTuple):
    exporter: str  # "torchscript" | "dynamo"
    opset: int

    @property
    def label(self) -> str:
        return f"{self.exporter}-{self.opset}"


EXPORTS: tuple[Export, ...] = (
    Export("torchscript", 14),
    Export("torchscript", 17),
    Export("dynamo", 18),
    Export("dynamo", 20),
)


def export(module: Any, example: Any, variant: Export, path: Path) -> float:
    """Write ``module`` exported as ``variant`` to ``path``; returns the seconds it took."""
    import torch

    started = time.perf_counter()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (example,),
            str(path),
            dynamo=variant.exporter == "dynamo",
            opset_version=variant.opset,
            input_names=["input"],
            output_names=["output"],
        )
    return time.perf_counter() - started
