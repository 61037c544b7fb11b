"""Run a model the way the tests compare them: ONNX Runtime on CPU, or onnxtool's plugin session.

* ``ort_run(model, feeds) -> list[np.ndarray]``: a plain CPU ``InferenceSession``.
* ``plugin_run(model, feeds) -> list[np.ndarray]``: ``graphsurgeon_tools.runtime.make_session`` (runs
  DynamicTRTResize through the compiled library or its fallback).
Both feed only the model's own inputs (a test may hold one feed dict for the original and the rewrite,
whose inputs differ); every output is returned, in order.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort

from graphsurgeon_tools.runtime import make_session


def _run(session, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    names = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in feeds.items() if k in names})


def ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return _run(ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]), feeds)


def plugin_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return _run(make_session(model), feeds)
