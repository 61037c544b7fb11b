"""The one home of the ``onnxtool.original_values`` record: what each input a rewrite added held.

A pass that turns a constant into a graph input (make-dynamic-scale, swap-plugin, set-factor)
records the original value in the model's ``metadata_props`` so that ``validate`` and a later
pass can feed the input what reproduces the original model.

Requires: a ModelProto. Ensures: a record that is plain JSON; an unreadable one is never
trusted (read as empty) and is replaced on the next write. Does NOT touch the graph.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

import numpy as np
from onnx import ModelProto

from graphsurgeon_tools.core.dtypes import is_known, np_dtype

__all__ = ["ORIGINAL_VALUES_KEY", "original_feeds", "read_original_values", "record_original_values"]


#: metadata_props key: JSON ``{input_name: [values]}`` (what to feed the input to reproduce the
#: original model), or ``{input_name: {"shape": [dims]}}`` for a size tensor (only its shape is read).
ORIGINAL_VALUES_KEY = "onnxtool.original_values"


def read_original_values(model: ModelProto) -> dict[str, Any]:
    """The record :func:`record_original_values` wrote; {} when absent or unreadable (never trusted then)."""
    for prop in model.metadata_props:
        if prop.key == ORIGINAL_VALUES_KEY:
            try:
                recorded = json.loads(prop.value)
            except ValueError:
                return {}
            return recorded if isinstance(recorded, dict) else {}
    return {}


def original_feeds(model: ModelProto) -> dict[str, np.ndarray]:
    """Arrays that reproduce the original model, for the graph inputs the record names.

    A value entry becomes an array of the input's element type (shaped as declared when the
    declared shape holds exactly that many values); a ``{"shape": dims}`` entry (a size tensor,
    whose values are never read) becomes zeros of that shape. Entries that do not fit their
    input (a record written for another model) are left out, so the caller's own feed stands.
    """
    recorded = read_original_values(model)
    feeds: dict[str, np.ndarray] = {}
    for graph_input in model.graph.input:
        entry = recorded.get(graph_input.name)
        tensor_type = graph_input.type.tensor_type
        if entry is None or not tensor_type.elem_type:
            continue
        if not is_known(tensor_type.elem_type):
            continue
        dtype = np_dtype(tensor_type.elem_type)
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim]
        if isinstance(entry, Mapping):
            shape = entry.get("shape")
            if isinstance(shape, list) and len(shape) == len(dims):
                feeds[graph_input.name] = np.zeros([int(d) for d in shape], dtype=dtype)
            continue
        values = np.asarray(entry, dtype=dtype)
        if len(dims) == 1 and dims[0] in (None, values.size):
            feeds[graph_input.name] = values.reshape(-1)
        elif not dims and values.size == 1:
            feeds[graph_input.name] = values.reshape(())
    return feeds


def record_original_values(model: ModelProto, new_inputs: Iterable[Any]) -> None:
    """Merge each new input's original value (a NewInput or a new-input dict) into ``model``'s metadata.

    Entries for names that are no longer graph inputs are dropped (a later pass may consume them).
    """
    entries = [i if isinstance(i, Mapping) else vars(i) for i in new_inputs]
    recorded = read_original_values(model)  # an unreadable record is replaced
    props = [p for p in model.metadata_props if p.key == ORIGINAL_VALUES_KEY]
    for entry in entries:
        if entry.get("value"):
            recorded[entry["name"]] = np.asarray(entry["value"]).ravel().tolist()  # plain JSON numbers
        elif entry.get("shape_at_original_factor"):
            recorded[entry["name"]] = {"shape": [int(d) for d in entry["shape_at_original_factor"]]}
    inputs = {i.name for i in model.graph.input}
    recorded = {name: value for name, value in recorded.items() if name in inputs}
    for prop in props:
        model.metadata_props.remove(prop)
    if recorded:
        model.metadata_props.add(key=ORIGINAL_VALUES_KEY, value=json.dumps(recorded, sort_keys=True))
