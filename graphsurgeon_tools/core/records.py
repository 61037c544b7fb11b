"""Plain dataclasses built and replaced at C speed: a pass makes one per site of a big run.

``build(cls, values)`` is ``cls(**values)`` and ``replace(obj, **changes)`` is
``dataclasses.replace(obj, **changes)``. A frozen dataclass's ``__init__`` sets each field through
``object.__setattr__`` (a third of the cost of a 30-field site); for a plain dataclass (every field an
``__init__`` field, no ``__post_init__``, no ``__slots__``) the instance's ``__dict__`` is filled in one
update instead, which is all ``__init__`` would have done.

Requires: ``build``'s ``values`` name every field, in field order (the order ``__init__`` would set
them, which reports built from ``__dict__`` rely on). Ensures: an object equal to what the class
itself makes; anything else (another kind of class, a missing or unknown name) goes through the
class itself, with its own errors. Does NOT validate values (``__init__`` does not either).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, Optional, TypeVar

__all__ = ["build", "replace"]

T = TypeVar("T")


@functools.cache
def _plain_fields(cls: type) -> Optional[tuple[str, ...]]:
    """The field names of a plain dataclass ``cls``, in order; None for any other class."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        return None
    fields = dataclasses.fields(cls)
    return tuple(f.name for f in fields) if all(f.init for f in fields) else None


def build(cls: type[T], values: Mapping[str, Any]) -> T:
    """``cls(**values)``, for ``values`` naming every field of ``cls`` in order."""
    if tuple(values) != _plain_fields(cls):
        return cls(**values)
    made = object.__new__(cls)
    made.__dict__.update(values)
    return made


def replace(obj: T, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)``; ``obj`` itself is left as it was."""
    # a plain dataclass's instance holds exactly its fields in __dict__
    if _plain_fields(type(obj)) is None or not changes.keys() <= obj.__dict__.keys():
        return dataclasses.replace(obj, **changes)
    made = object.__new__(type(obj))
    state = made.__dict__
    state.update(obj.__dict__)
    state.update(changes)
    return made
