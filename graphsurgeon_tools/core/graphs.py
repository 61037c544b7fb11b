"""Accept a model in any of the forms users hold it in, and give back the same form.

``as_model(obj) -> (ModelProto, give_back)``: ``obj`` is a ModelProto, a path (str or
os.PathLike, loaded with :func:`graphsurgeon_tools.io.load_model`, weights left on disk),
or an ``onnx_graphsurgeon.Graph`` (exported with ``gs.export_onnx``). ``give_back(model)``
turns a result ModelProto back into the kind given: a Graph for a Graph
(``gs.import_onnx``), a ModelProto otherwise.

Requires: onnx-graphsurgeon only when a Graph is passed; it is detected by its type's
module name and imported then, never at start-up. Ensures: the ModelProto path costs
nothing (no copy). Does NOT copy a ModelProto: passes that must not change their input
copy it themselves. The Graph round trip rewrites every weight (export and import both
copy tensors): its cost is the price of passing a Graph. onnx-graphsurgeon's own logger
(which prints on stdout) is silenced around the round trip: a library call prints nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any, Callable

from onnx import ModelProto

from graphsurgeon_tools.io import load_model

__all__ = ["as_model", "is_gs_graph"]


def is_gs_graph(obj: Any) -> bool:
    """Whether ``obj`` is an ``onnx_graphsurgeon.Graph``, decided without importing the package."""
    kind = type(obj)
    return kind.__name__ == "Graph" and kind.__module__.split(".")[0] == "onnx_graphsurgeon"


def _same(model: ModelProto) -> ModelProto:
    return model


def as_model(obj: Any) -> tuple[ModelProto, Callable[[ModelProto], Any]]:
    """``obj`` as a ModelProto, and the function that gives a result back in ``obj``'s kind.

    Raises TypeError for anything that is not a ModelProto, a path or an onnx_graphsurgeon Graph.
    """
    if isinstance(obj, ModelProto):
        return obj, _same
    if isinstance(obj, (str, os.PathLike)):
        return load_model(obj), _same
    if is_gs_graph(obj):
        import onnx_graphsurgeon as gs  # deferred: onnx_graphsurgeon, only for a gs.Graph caller (optional)

        with _quiet_gs():
            exported = gs.export_onnx(obj)
        return exported, _import_quietly
    raise TypeError(f"expected an onnx.ModelProto, a path or an onnx_graphsurgeon.Graph, got {type(obj).__name__}")


@contextlib.contextmanager
def _quiet_gs() -> Iterator[None]:
    """onnx-graphsurgeon's logger silenced for the block (it prints warnings and errors on stdout)."""
    from onnx_graphsurgeon.logger import G_LOGGER  # deferred: onnx_graphsurgeon, only for a gs.Graph caller

    with G_LOGGER.suppress():
        yield


def _import_quietly(model: ModelProto) -> Any:
    import onnx_graphsurgeon as gs  # deferred: onnx_graphsurgeon, only for a gs.Graph caller (optional)

    with _quiet_gs():
        return gs.import_onnx(model)
