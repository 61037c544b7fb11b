"""Declared inputs: each graph input a pass created, said once in one typed, serialisable form.

A pass that turns a constant into a graph input puts a :class:`DeclaredInput` into its result's
``declared_inputs``; the pass contract (``passes.base.Pass``) records them in the written model's
``metadata_props`` under :data:`DECLARED_INPUTS_KEY`, so that ``validate`` on a FILE knows what
the input is and how to feed it without knowing the pass:

* at its ``original`` value (what reproduces the model the pass was given) for the equivalence
  comparison, and
* at a requested factor ``f`` where ``layout`` says how (the vocabulary of
  ``validation.ports.ScaleInput``: ``scales`` ``[1, 1, f, f]``, ``pair`` ``[f, f]``, ``factor``
  ``f``, ``sizes`` the output size, ``size-tensor`` whose shape is the output size); ``value``:
  no factor rule, always fed its original (or what the user gives).

The record (JSON)::

    {"schema": "onnxtool.declared_inputs/1",
     "inputs": [{"name": "pads", "by": "make-dynamic-pad", "drives": ["pad0"], "dtype": "int64",
                 "shape": [8], "layout": "value", "original": [0, 0, 1, 1, 0, 0, 1, 1]}]}

``original`` is a flat list of values, or ``{"shape": dims}`` for a size tensor (only its shape is
read), or null (no value reproduces the original: validate then needs the user's value).

Requires: a ModelProto. Ensures: :func:`read_declared_inputs` never trusts a record it cannot read
(an unreadable record or entry is left out, never guessed); :func:`record_declared_inputs` keeps only
entries naming graph inputs the model still has. Does NOT touch the graph or feed anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Union

import numpy as np
from onnx import ModelProto

__all__ = [
    "DECLARED_INPUTS_KEY",
    "DECLARED_INPUTS_SCHEMA",
    "FACTOR_LAYOUTS",
    "DeclaredInput",
    "read_declared_inputs",
    "record_declared_inputs",
    "vector_layout",
]

#: metadata_props key of the record.
DECLARED_INPUTS_KEY = "onnxtool.declared_inputs"
DECLARED_INPUTS_SCHEMA = "onnxtool.declared_inputs/1"
#: Layouts a factor drives (how ``f`` becomes the input's value); ``value`` is the one that has no rule.
FACTOR_LAYOUTS = ("scales", "pair", "factor", "sizes", "size-tensor")
VALUE_LAYOUT = "value"

Dim = Union[int, str, None]


@dataclass(frozen=True)
class DeclaredInput:
    """A graph input a pass created.

    ``name``: the graph input. ``drives``: the nodes it feeds (names). ``dtype``: numpy's name
    (``float32``, ``int64``). ``shape``: as declared on the graph input (ints static, strings
    symbolic). ``layout``: how a factor is fed (:data:`FACTOR_LAYOUTS`), or ``value`` (no factor
    rule). ``original``: the flat values that reproduce the original model (None: unknown);
    ``original_shape``: for a size tensor, the shape that does (its values are never read).
    ``by``: the pass that declared it.
    """

    name: str
    drives: tuple[str, ...]
    dtype: str
    shape: tuple[Dim, ...]
    layout: str = VALUE_LAYOUT
    original: Optional[tuple[Union[int, float], ...]] = None
    original_shape: Optional[tuple[int, ...]] = None
    by: str = ""

    def __post_init__(self) -> None:
        if self.layout not in (*FACTOR_LAYOUTS, VALUE_LAYOUT):
            raise ValueError(
                f"declared input {self.name!r}: layout {self.layout!r} is not one of "
                f"{', '.join((*FACTOR_LAYOUTS, VALUE_LAYOUT))}"
            )
        np.dtype(self.dtype)  # a name numpy knows, or TypeError

    @property
    def factor_driven(self) -> bool:
        return self.layout != VALUE_LAYOUT

    def original_array(self, dtype: Any = None) -> Optional[np.ndarray]:
        """The original as an array of ``dtype`` (default: the declared one), shaped as declared when
        the declared shape is static and holds exactly that many values; None when there is none."""
        dtype = np.dtype(dtype or self.dtype)
        if self.original_shape is not None:
            return np.zeros([int(d) for d in self.original_shape], dtype=dtype)
        if self.original is None:
            return None
        values = np.asarray(self.original, dtype=dtype)
        if not self.shape and values.size == 1:
            return values.reshape(())
        if all(isinstance(d, int) for d in self.shape) and int(np.prod(self.shape)) == values.size:
            return values.reshape([int(d) for d in self.shape])
        return values

    def to_dict(self) -> dict[str, Any]:
        original: Any = None
        if self.original_shape is not None:
            original = {"shape": [int(d) for d in self.original_shape]}
        elif self.original is not None:
            original = list(self.original)
        return {
            "name": self.name,
            "by": self.by,
            "drives": list(self.drives),
            "dtype": self.dtype,
            "shape": list(self.shape),
            "layout": self.layout,
            "original": original,
        }

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> "DeclaredInput":
        """The inverse of :meth:`to_dict`; ValueError/TypeError/KeyError for an entry that does not fit."""
        original = entry.get("original")
        values = shape = None
        if isinstance(original, Mapping):
            shape = tuple(int(d) for d in original["shape"])
        elif original is not None:
            values = tuple(_number(v) for v in np.asarray(original).ravel().tolist())
        dims = tuple(d if d is None or isinstance(d, str) else int(d) for d in entry.get("shape", ()))
        return cls(
            name=str(entry["name"]),
            drives=tuple(str(n) for n in entry.get("drives", ())),
            dtype=str(entry["dtype"]),
            shape=dims,
            layout=str(entry.get("layout", VALUE_LAYOUT)),
            original=values,
            original_shape=shape,
            by=str(entry.get("by", "")),
        )


def vector_layout(length: Optional[int], rank: Optional[int], *, sizes: bool = False, scalar: bool = False) -> str:
    """The layout of a 1-D (or scalar) input that drives a resize: the one rule, for a pass declaring
    its input and for validate reading an undeclared one. ``length``: its entries (None: unknown, read
    as a full scales vector); ``rank``: of the X it resizes (None: taken as 4, an image); ``sizes``: it
    holds output sizes (a Resize's sizes slot read as values), not factors; ``scalar``: 0-d."""
    if sizes:
        return "sizes"
    if scalar or length == 1:
        return "factor"
    if length == 2 and (rank or 4) != 2:
        return "pair"
    return "scales"


def _number(value: Any) -> Union[int, float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    return value


def read_declared_inputs(model: ModelProto) -> dict[str, DeclaredInput]:
    """Name -> declaration, from the record :func:`record_declared_inputs` wrote; {} when absent.

    An unreadable record, another schema, or an entry that does not parse is left out (never guessed);
    so is an entry whose name is no longer a graph input."""
    raw = next((p.value for p in model.metadata_props if p.key == DECLARED_INPUTS_KEY), None)
    if raw is None:
        return {}
    try:
        record = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(record, Mapping) or record.get("schema") != DECLARED_INPUTS_SCHEMA:
        return {}
    inputs = {i.name for i in model.graph.input} - {t.name for t in model.graph.initializer}
    declared: dict[str, DeclaredInput] = {}
    for entry in record.get("inputs", ()):
        try:
            parsed = DeclaredInput.from_dict(entry)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        if parsed.name in inputs:
            declared[parsed.name] = parsed
    return declared


def record_declared_inputs(model: ModelProto, declared: Iterable[DeclaredInput]) -> None:
    """Merge ``declared`` into ``model``'s record (a later declaration of a name replaces the earlier).

    Entries naming inputs the model no longer has are dropped (a later pass may have consumed them);
    an unreadable record is replaced."""
    merged = read_declared_inputs(model)
    for entry in declared:
        merged[entry.name] = entry
    inputs = {i.name for i in model.graph.input}
    kept = [entry.to_dict() for name, entry in merged.items() if name in inputs]
    for prop in [p for p in model.metadata_props if p.key == DECLARED_INPUTS_KEY]:
        model.metadata_props.remove(prop)
    if kept:
        record = {"schema": DECLARED_INPUTS_SCHEMA, "inputs": kept}
        model.metadata_props.add(key=DECLARED_INPUTS_KEY, value=json.dumps(record, sort_keys=True))
