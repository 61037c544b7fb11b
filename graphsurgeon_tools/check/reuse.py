"""The sessions one check keeps for reuse: one ONNX Runtime session per model object and level.

``with reuse_sessions(): ...`` around the comparisons of one check (a pass's self-check and the
intermediate steps measured against the same user model, the seeds that take other If branches,
a QDQ check's quantized tensors): :func:`graphsurgeon_tools.check.sessions.session_for` keeps
each session it opens for a model object at a level, and gives it back to a later comparison of
the same object at that level. Outside a scope nothing is kept (a one-comparison check releases
each session after its run: one alive at a time, the least memory).

Requires: model objects that stay the same Python object across the comparisons (the pass's
reference bytes or proto, its result model). Ensures: the kept sessions are released when the
outermost scope ends; nested scopes share the outer one. Does NOT import onnxruntime or any
other module of ours.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Optional

__all__ = ["active", "reuse_sessions"]


@dataclass
class _Kept:
    model: object  # the object keyed by id(): held so that id cannot be reused while the scope lives
    session: Any
    exposed: frozenset[str]


class _Scope:
    """The sessions one check keeps: one per (model object, level)."""

    def __init__(self) -> None:
        self.kept: dict[tuple[int, str], _Kept] = {}

    def keep(self, model: object, level: str, session: Any, exposed: Iterable[str]) -> None:
        self.kept[(id(model), level)] = _Kept(model, session, frozenset(exposed))

    def find(self, model: object, level: str, needed: Sequence[str]) -> Any:
        """The session kept for ``model`` at ``level`` if it exposes ``needed``, else None."""
        kept = self.kept.get((id(model), level))
        if kept is None or kept.model is not model or not kept.exposed.issuperset(needed):
            return None
        return kept.session


_SCOPE: contextvars.ContextVar[Optional[_Scope]] = contextvars.ContextVar("onnxtool_check_sessions", default=None)


@contextlib.contextmanager
def reuse_sessions(enabled: bool = True) -> Iterator[None]:
    """Keep every session :func:`graphsurgeon_tools.check.sessions.session_for` opens until the
    outermost scope ends (nested: the outer one's); ``enabled=False``: nothing kept unless an outer
    scope keeps it (a check of one comparison)."""
    if not enabled or _SCOPE.get() is not None:
        yield
        return
    scope = _Scope()
    token = _SCOPE.set(scope)
    try:
        yield
    finally:
        _SCOPE.reset(token)
        scope.kept.clear()  # the sessions (and their copies of the weights) go now


def active() -> Optional[_Scope]:
    """The scope open in this context, or None."""
    return _SCOPE.get()
