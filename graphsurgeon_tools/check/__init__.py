"""Checks that run models: the ONE array comparison, input feeds, resource limits, and the
built-in equivalence check shared by the passes and ``validate``.

Submodules: ``compare`` (OutputComparison, compare_arrays), ``feeds``, ``limits``,
``tolerance`` (UlpTolerance), ``equivalence`` (compare_models, CheckResult), ``sessions`` (how a
check's models run in ONNX Runtime), ``reuse`` (one session per model across a check's
comparisons), ``sites_alone`` (each plugin site run on its own), ``steps`` (the models a check
names, each intermediate step measured).

A lazy package face (PEP 562): ``from graphsurgeon_tools import check`` imports nothing more, and
``check.equivalence`` imports that submodule (and what it needs: numpy, the runtime's session
plumbing) on first use. A pass imports the package this way and reaches the check's machinery
only when it runs its check, so a run with ``check=False`` (``--no-check``) never loads it.

Requires: nothing (importing the package imports none of its submodules). Ensures: every submodule
listed in ``__all__`` is an attribute once asked for. Does NOT re-export the submodules' names:
each lives in one submodule, named there by its callers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphsurgeon_tools.lazy import lazy_face

if TYPE_CHECKING:  # the submodules as type checkers see them; at run time __getattr__ imports them
    from graphsurgeon_tools.check import (
        compare,
        equivalence,
        feeds,
        limits,
        reuse,
        sessions,
        sites_alone,
        steps,
        tolerance,
    )

__all__ = ["compare", "equivalence", "feeds", "limits", "reuse", "sessions", "sites_alone", "steps", "tolerance"]


__getattr__, __dir__ = lazy_face(__name__, {}, __all__)
