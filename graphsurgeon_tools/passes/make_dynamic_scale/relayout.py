"""make-dynamic-scale on its own output: change the layout of the scales input it wrote.

::

    Resize(X, roi, scales:float32)   {onnxtool.original_values: scales = v}
        layout="sizes"|"factor"  ->  Resize(X, roi, v)  ->  (the integer layout's rewrite)
    Resize(X, roi, Concat(c, factor:float32))   (factor=True)   likewise, through the fold

A model written with the float ``scales`` layout is what TensorRT refuses (a float shape
input); ``onnxtool lint`` says so and suggests the integer layout. That suggestion must work
on the file it names, so the pass first puts the recorded original value back in place of
each float input it wrote (:func:`rebake`), then rewrites with the layout asked for. Only
inputs this tool recorded (``onnxtool.original_values``) are put back: a float input of the
user's own has no known value, and stays.

Requires: the pass's working proto (changed in place). Ensures: each input put back is
gone from the graph inputs and from the record; its value is an initializer of the same
name, of the declared element type and shape, so the sites read exactly what the dynamic
model computed when fed the recorded value. Does NOT rewrite anything else (the pass does).
"""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, numpy_helper

from graphsurgeon_tools.core import dtypes
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.resize.original_values import read_original_values, record_original_values
from graphsurgeon_tools.resize.sites import ResizeSite

__all__ = ["rebake", "recorded_float_inputs"]

_FLOATS = ("float16", "float32", "float64", "bfloat16")
# Walking back from a scales tensor stops here: a tensor whose *shape* is read is no value source.


def recorded_float_inputs(model: ModelProto) -> dict[str, list[float]]:
    """Graph inputs (not initializers) of a float type whose original value onnxtool recorded."""
    recorded = read_original_values(model)
    initializers = {t.name for t in model.graph.initializer}
    found = {}
    for info in model.graph.input:
        value = recorded.get(info.name)
        elem = info.type.tensor_type.elem_type if info.type.HasField("tensor_type") else 0
        if info.name in initializers or not isinstance(value, list) or not value or not dtypes.is_known(elem):
            continue
        if dtypes.dtype_name(elem) in _FLOATS:
            found[info.name] = value
    return found


def recorded_feeds(model: ModelProto) -> dict[str, np.ndarray]:
    """:func:`recorded_float_inputs` as arrays of each input's own element type (what to feed them)."""
    types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    return {
        name: np.asarray(value, dtype=dtypes.np_dtype(types[name]))
        for name, value in recorded_float_inputs(model).items()
    }


def rebake(model: ModelProto, sites: list[ResizeSite], selected: list[ResizeSite]) -> list[str]:
    """Put the recorded value back for each recorded float input behind a selected site's scales.

    An input that also reaches a site outside the selection stays (that site would lose its
    input). Returns one note per input put back (empty: nothing changed).
    """
    candidates = recorded_float_inputs(model)
    if not candidates:
        return []
    producers = core_graph.producers(model.graph)
    names = set(candidates)
    behind: dict[str, set[str]] = {}
    for site in sites:  # sizes too: a float factor the run-time sizes round(dim * factor) read
        tensor = site.scales_tensor or site.sizes_tensor
        if site.in_main_graph and tensor:
            behind[site.output_name] = core_graph.upstream_sources(model.graph, [tensor], producers, names)
    chosen = {site.output_name for site in selected}
    wanted = set().union(*(behind.get(out, set()) for out in chosen)) if chosen else set()
    held = set().union(*(inputs for out, inputs in behind.items() if out not in chosen)) if behind else set()
    # (name, element type, dims) first: the input list is rebuilt below
    put_back = [
        (
            i.name,
            i.type.tensor_type.elem_type,
            [d.dim_value for d in i.type.tensor_type.shape.dim] if i.type.tensor_type.HasField("shape") else [],
        )
        for i in model.graph.input
        if i.name in wanted and i.name not in held
    ]
    if not put_back:
        return []
    gone = {name for name, _, _ in put_back}
    kept = [i for i in model.graph.input if i.name not in gone]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    notes = []
    for name, elem, dims in put_back:
        array = np.asarray(candidates[name], dtype=dtypes.np_dtype(elem))
        if dims and all(d > 0 for d in dims) and int(np.prod(dims)) == array.size:
            array = array.reshape(dims)
        model.graph.initializer.append(numpy_helper.from_array(array, name))
        shown = ", ".join(f"{v:g}" for v in candidates[name])
        notes.append(
            f"input {name!r} ({dtypes.dtype_name(elem)}, recorded original value [{shown}]) was put back "
            "as a constant and rewritten in the layout asked for"
        )
    record_original_values(model, [])  # drops the record's entries for inputs that are gone
    return notes
