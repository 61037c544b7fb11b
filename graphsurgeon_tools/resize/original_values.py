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

__all__ = ["ORIGINAL_VALUES_KEY", "read_original_values", "record_original_values"]


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
