"""The ONNX specification's own Resize/Upsample node cases (onnx.backend.test.case.node), built in code.

* ``SPEC_CASES``: every (op, export method) pair, ``[("Resize", "export_resize_..."), ...]``.
* ``spec_case(op, method) -> (model, feeds, expected)``: one case, cached; the wheel ships no data
  files, so the case's export function is called with onnx's module-level registry swapped out and
  restored (other tests that collect node cases in this process are unaffected).
"""

from __future__ import annotations

import importlib
from functools import lru_cache

import numpy as np
import onnx
import onnx.backend.test.case.node as registry


def _case_methods(op: str) -> list[str]:
    module = importlib.import_module(f"onnx.backend.test.case.node.{op.lower()}")
    return sorted(m for m in dir(getattr(module, op)) if m.startswith("export"))


SPEC_CASES = [("Resize", m) for m in _case_methods("Resize")] + [("Upsample", m) for m in _case_methods("Upsample")]


@lru_cache(maxsize=None)
def spec_case(op: str, method: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray], np.ndarray]:
    module = importlib.import_module(f"onnx.backend.test.case.node.{op.lower()}")
    saved_cases, saved_names = list(registry._NodeTestCases), dict(registry._existing_names)
    registry._NodeTestCases.clear()
    registry._existing_names.clear()
    try:
        getattr(getattr(module, op), method)()
        (case,) = registry._NodeTestCases
    finally:
        registry._NodeTestCases[:] = saved_cases
        registry._existing_names.clear()
        registry._existing_names.update(saved_names)
    inputs, outputs = case.data_sets[0]
    return case.model, dict(zip([i.name for i in case.model.graph.input], inputs)), outputs[0]
