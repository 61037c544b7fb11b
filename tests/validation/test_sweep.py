"""graphsurgeon_tools.validation.sweep.parse_factors: the one factor parser (API, CLI and demo)."""

from __future__ import annotations

import math

import pytest

from graphsurgeon_tools.errors import InvalidScalesError, UsageError
from graphsurgeon_tools.validation.sweep import parse_factors


@pytest.mark.parametrize(
    "given, expected",
    [
        ([2, 3.5], [2.0, 3.5]),
        (["2", "x3", "X4"], [2.0, 3.0, 4.0]),
        (["2,3", " 4 "], [2.0, 3.0, 4.0]),
        ((1.5,), [1.5]),
    ],
)
def test_parses_numbers_and_cli_spellings(given, expected) -> None:
    assert parse_factors(given) == expected


@pytest.mark.parametrize("bad", [["two"], [0], [-1], [math.nan], ["inf"], [None]])
def test_refuses_what_is_not_a_positive_finite_number(bad) -> None:
    with pytest.raises(InvalidScalesError, match="factor"):
        parse_factors(bad)


def test_an_empty_sweep_is_a_usage_error_naming_the_keyword() -> None:
    with pytest.raises(UsageError, match="factors="):
        parse_factors([" , "])
