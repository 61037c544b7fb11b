"""validate never passes on nothing: a comparison that compared no values is not a pass.

::

    every compared output empty (0 elements)        ->  the point fails: "nothing compared: ..."
    an output NaN in every element (reference side)  ->  the point fails: "nothing compared: ..."
    a user-given data input holding NaN              ->  OnnxToolError (exit 3) before anything runs

NaN-vs-NaN counts as agreement in :func:`graphsurgeon_tools.check.compare.compare_arrays`
(right for a NaN a model makes on purpose), so an output that is NaN everywhere - or a run
fed NaN, whose outputs are NaN wherever the input reaches - would pass without one value
compared. :func:`vacuous_reason` and :func:`refuse_nan_input` are the one place that says so.

Requires: the arrays of one sweep point (reference output name -> array, candidate output
name -> array), or one user input. Ensures: a reason (a one-line sentence) or None; never
changes the arrays. Does NOT judge partial NaN (a model may make some on purpose) and does
NOT look at random inputs (they never hold NaN).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from graphsurgeon_tools.errors import InvalidInputError

__all__ = ["refuse_nan_input", "vacuous_reason"]


def _all_nan(array: Any) -> bool:
    array = np.asarray(array)
    return bool(array.size) and array.dtype.kind in "fc" and bool(np.isnan(array).all())


def vacuous_reason(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> Optional[str]:
    """Why a point whose outputs all agreed compared nothing (None: it compared values).

    ``expected``: the reference's outputs by name; ``actual``: the candidate's.
    """
    if not expected:
        return "nothing compared: the reference gave no outputs"
    if sum(int(np.asarray(value).size) for value in expected.values()) == 0:
        names = ", ".join(repr(n) for n in expected)
        return f"nothing compared: every output is empty (0 elements: {names})"
    for name, value in expected.items():
        if _all_nan(value):
            both = any(_all_nan(v) for v in actual.values())
            side = "both models" if both else "the reference"
            return f"nothing compared: output {name!r} is NaN in every element of {side}"
    return None


def refuse_nan_input(name: str, array: np.ndarray, source: str) -> None:
    """InvalidInputError (exit 3) for a user-given data input holding NaN: every output it reaches
    would be NaN on both sides, and NaN-vs-NaN agreement is not evidence."""
    if array.dtype.kind not in "fc" or not array.size:
        return
    count = int(np.isnan(array).sum())
    if count:
        raise InvalidInputError(
            f"input {name!r} from {source}: {count} of {array.size} values are NaN; "
            "outputs computed from NaN compare nothing (give finite data)"
        )
