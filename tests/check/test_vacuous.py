"""A comparison against a constant or below-atol reference is vacuous; PSNR only
where it means something (image-like, non-vacuous)."""

from __future__ import annotations

import math

import numpy as np

from graphsurgeon_tools.check.compare import compare_arrays


def test_a_constant_reference_is_vacuous_even_when_everything_matches() -> None:
    zeros = np.zeros((1, 1, 8, 8), np.float32)
    result = compare_arrays(zeros, zeros, atol=1e-4, rtol=1e-3)
    assert result.passed and result.vacuous and result.psnr_db is None
    assert "constant" in result.note and result.to_dict()["vacuous"] is True


def test_a_reference_below_atol_is_vacuous() -> None:
    tiny = np.random.default_rng(0).uniform(0, 1e-8, (1, 64, 64)).astype(np.float32)
    result = compare_arrays(np.zeros_like(tiny), tiny, atol=1e-4, rtol=1e-3)
    assert result.passed and result.vacuous and "below atol" in result.note


def test_a_real_reference_is_not_vacuous_and_image_like_outputs_get_psnr() -> None:
    rng = np.random.default_rng(0)
    ref = rng.uniform(0, 1, (1, 3, 8, 8)).astype(np.float32)
    result = compare_arrays(ref + 1e-6, ref, atol=1e-4, rtol=1e-3)
    assert result.passed and not result.vacuous
    assert result.psnr_db is not None and 100 < result.psnr_db < math.inf


def test_a_near_constant_image_gets_no_negative_psnr() -> None:
    ref = np.full((1, 3, 4, 4), 0.5, np.float32)
    result = compare_arrays(ref + 0.25, ref, atol=1e-4, rtol=1e-3)
    assert not result.passed and result.vacuous and result.psnr_db is None
    assert "out of tolerance" in result.note and "vacuous" in result.note


def test_one_element_is_judged_by_atol_alone() -> None:
    assert not compare_arrays(np.array([2.0]), np.array([2.0]), atol=1e-4, rtol=0).vacuous
    flags = compare_arrays(np.array([True, False]), np.array([True, False]), atol=0, rtol=0)
    assert flags.passed and not flags.vacuous
