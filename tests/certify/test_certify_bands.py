"""The comb probe reads a per-axis matrix exactly, from any implementation, with band entries only."""

from __future__ import annotations

import numpy as np
import pytest

from graphsurgeon_tools.certify.bands import Band, BandReadError, compare_bands, read_band
from graphsurgeon_tools.certify.ledger import compact_ranges
from graphsurgeon_tools.certify.profile import parse_certify_profile
from graphsurgeon_tools.errors import UsageError


def _engine(matrix: np.ndarray, axis: str):
    """A made-up implementation: resizes the probe's axis by ``matrix`` (out x L), the other axis untouched."""

    def run(x: np.ndarray) -> np.ndarray:
        if axis == "w":  # 1 x 1 x K x L
            return np.einsum("ol,kl->ko", matrix, x[0, 0])[None, None].astype(np.float32)
        return np.einsum("ol,lk->ok", matrix, x[0, 0])[None, None].astype(np.float32)

    return run


def _random_band(length: int, out: int, width: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = np.zeros((out, length), dtype=np.float32)
    for row in range(out):
        start = rng.integers(0, length - width + 1)
        matrix[row, start : start + width] = rng.uniform(-0.5, 1.0, width).astype(np.float32)
        matrix[row, start + rng.integers(0, width)] = 0.0  # a hole inside the band
    return matrix


@pytest.mark.parametrize("axis", ["h", "w"])
@pytest.mark.parametrize(
    ("length", "out", "width", "spacing"), [(37, 90, 4, 5), (64, 16, 9, 5), (5, 11, 2, 3), (1, 3, 1, 2)]
)
def test_a_band_is_read_exactly_and_widened_when_wider_than_the_comb(axis, length, out, width, spacing):
    matrix = _random_band(length, out, width, seed=length + out)
    band = read_band(_engine(matrix, axis), length, axis, spacing)
    dense = np.zeros_like(matrix)
    for row in range(band.out):
        for col, weight in band.row(row):
            dense[row, col] = weight
    assert band.out == out
    np.testing.assert_array_equal(dense, matrix)
    assert band.nbytes < 64 * out * max(width, 1)  # entries only, never out x L


def test_a_non_linear_engine_is_refused_not_misread():
    def run(x: np.ndarray) -> np.ndarray:
        return np.sqrt(np.abs(x)).astype(np.float32)

    with pytest.raises(BandReadError):
        read_band(run, 8, "w", 3)


def test_bands_compare_bit_exactly_or_within_a_bound():
    a = Band(4, 2, np.array([0, 2, 4]), np.array([0, 1, 2, 3], np.int32), np.array([0.5, 0.5, 0.25, 0.75], np.float32))
    b = Band(
        4,
        2,
        np.array([0, 2, 4]),
        np.array([0, 1, 2, 3], np.int32),
        np.array([0.5, 0.5, 0.25, np.nextafter(np.float32(0.75), np.float32(1))], np.float32),
    )
    rows, largest = compare_bands(a, b, 0.0)
    assert rows.tolist() == [1] and 0 < largest < 1e-6
    assert compare_bands(a, b, 1e-6)[0].size == 0
    c = Band(4, 2, np.array([0, 1, 2]), np.array([0, 3], np.int32), np.array([1.0, 1.0], np.float32))
    assert compare_bands(a, c, 1e-3)[0].tolist() == [0, 1]


def test_profiles_list_every_length_of_a_range_and_ratio_factors():
    profile = parse_certify_profile("8,16..20,100:2,64/26,x3")
    assert profile.lengths == (8, 16, 17, 18, 19, 20, 100)
    assert profile.factors == (2.0, 64 / 26, 3.0)
    assert compact_ranges(list(profile.lengths)) == [[8, 8], [16, 20], [100, 100]]
    for bad in ("16..8:2", "16:0", "a:2", "16", "0..4:2", "16:two"):
        with pytest.raises(UsageError):
            parse_certify_profile(bad)


def test_every_cause_names_a_lint_rule_that_exists_or_none():
    from graphsurgeon_tools.certify.causes import CAUSES
    from graphsurgeon_tools.lint import RULES

    ids = {rule.id for rule in RULES}
    named = {cause.lint_rule for cause in CAUSES.values() if cause.lint_rule}
    assert named <= ids and {"ort-nearest-fractional-ratio", "trt-scale-arithmetic"} <= named
