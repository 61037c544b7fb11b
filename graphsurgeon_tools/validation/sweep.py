"""The factor sweep: the ONE factor parser, and which factors a candidate/reference pair runs at.

* :func:`parse_factors` turns what a user gives (numbers, ``"2"``, ``"x2"``, ``"2,3,4"``)
  into positive finite floats; the CLI (``--factors``), the demo and ``validate`` all use it.
* :func:`plan_sweep` decides the sweep points: each factor with the reason to skip it (a
  static side runs only at its baked factor), or one point ``None`` ("as baked") when a side
  bakes different factors per node or nothing resizes.

Requires: ports of the candidate and a reference (anything with ``dynamic``,
``baked_factor``, ``baked_scales``). Ensures: a non-empty plan; notes explain ignored
factors. Does NOT run anything.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Optional, Sequence

from graphsurgeon_tools.errors import InvalidScalesError, UsageError

__all__ = ["DEFAULT_FACTORS", "Factor", "format_factor", "parse_factors", "plan_sweep"]

DEFAULT_FACTORS: tuple[float, ...] = (2.0, 3.0, 4.0)

# A sweep point: a float factor, or None for "whatever scales the model has baked in".
Factor = Optional[float]


def format_factor(factor: Factor) -> str:
    """``x2`` for 2.0, ``baked`` for None."""
    if factor is None:
        return "baked"
    return f"x{factor:g}"


def _items(values: Iterable[Any]) -> list[Any]:
    items: list[Any] = []
    for value in values:
        if isinstance(value, str):
            items += [part.strip() for part in value.split(",") if part.strip()]
        else:
            items.append(value)
    return items


def parse_factors(values: Iterable[Any]) -> list[float]:
    """Positive finite factors from numbers or strings (``"2"``, ``"x2"``, ``"2,3"``).

    Raises :class:`InvalidScalesError` (exit 3) for one that is not a positive finite number
    and :class:`UsageError` (exit 2) for an empty sweep.
    """
    out: list[float] = []
    for value in _items(values):
        try:
            factor = float(value.lstrip("xX") if isinstance(value, str) else value)
        except (TypeError, ValueError):
            raise InvalidScalesError(f"factors={value!r}: not a number") from None
        if not math.isfinite(factor) or factor <= 0:
            raise InvalidScalesError(f"factors={value!r}: not a positive finite number")
        out.append(factor)
    if not out:
        raise UsageError("the factor sweep is empty: give at least one factor (factors=)")
    return out


def plan_sweep(
    factors: Optional[Sequence[float]], candidate: Any, reference: Any, notes: list[str]
) -> list[tuple[Factor, str]]:
    """Sweep points, each with the reason to skip it (empty: run it).

    Args:
        factors: the parsed sweep, or None (the static side's baked factor; a candidate with no
            scale input at its own factor; else 2, 3, 4).
        candidate: the candidate's :class:`~graphsurgeon_tools.validation.ports.Ports`.
        reference: the :class:`~graphsurgeon_tools.validation.references.Reference`.
        notes: appended to when ``factors`` are ignored.
    """
    ref_mixed = not reference.dynamic and reference.baked_factor is None and bool(reference.baked_scales)
    cand_mixed = not candidate.is_dynamic and candidate.baked_factor is None and bool(candidate.baked_scales)
    if ref_mixed or cand_mixed:
        side = "reference" if ref_mixed else "candidate"
        if factors is not None:
            notes.append(
                f"the {side} is static with different factors per Resize node: "
                "compared once at its baked scales; factors= ignored"
            )
        return [(None, "")]
    if not candidate.is_dynamic and candidate.resize_nodes == 0:
        # Nothing resizes: a factor means nothing, compare once as the model stands.
        if factors is not None:
            notes.append("the candidate has no Resize/Upsample node: compared once; factors= ignored")
        return [(None, "")]
    if factors is None:
        if not reference.dynamic and reference.baked_factor is not None:
            factors = [reference.baked_factor]
        elif not candidate.is_dynamic and candidate.baked_factor is not None:
            factors = [candidate.baked_factor]
        elif not candidate.is_dynamic:
            # The candidate takes no factor (baked per node, sizes-driven, or computed from shapes):
            # the default sweep never asks it for one it cannot take; compared at its own factor.
            if reference.dynamic:
                notes.append(
                    "the candidate has no scale input (its sites are baked or sizes-driven): compared at "
                    "the model's own factor; give factors= to ask for others"
                )
            return [(None, "")]
        else:
            factors = list(DEFAULT_FACTORS)
    plan: list[tuple[Factor, str]] = []
    for factor in factors:
        reason = ""
        if not candidate.is_dynamic and candidate.baked_factor is not None and factor != candidate.baked_factor:
            reason = (
                f"the candidate is static (baked {format_factor(candidate.baked_factor)}): it only runs at that factor"
            )
        elif not reference.dynamic and reference.baked_factor is not None and factor != reference.baked_factor:
            reason = (
                f"the reference is static (baked {format_factor(reference.baked_factor)}): compared only at that factor"
            )
        plan.append((factor, reason))
    return plan
