"""Inputs a real model responds to, so that comparisons on its outputs are not vacuous.

A text detector on uniform noise answers "no text anywhere": PP-OCRv3's probability map is exactly
0 at 128x128 and PP-OCRv4/v6's stay below 1e-4, under validate's atol. On a white page with dark
stroke blocks in lines (:func:`text_page`, normalized as PaddleOCR does) their maps reach 0.9-1.0.

Ensures: deterministic arrays (seeded), float32 NCHW. Does NOT: write files (the fixtures do).
"""

from __future__ import annotations

import numpy as np

# PaddleOCR's detector preprocessing: ImageNet mean/std on [0, 1] RGB.
_MEAN = np.array([0.485, 0.456, 0.406])
_STD = np.array([0.229, 0.224, 0.225])


def text_page(height: int = 64, width: int = 64, line: int = 16, gap: int = 8, seed: int = 0) -> np.ndarray:
    """A white page with lines of dark 'glyph' blocks, shape [1, 3, height, width]."""
    rng = np.random.default_rng(seed)
    page = np.full((height, width, 3), 255.0)
    for top in range(4, height - line, line + gap):
        x = 4
        while x < width - 8:
            glyph = int(rng.integers(2, 5))
            if rng.random() < 0.6:
                page[top : top + line, x : x + glyph] = 0.0
            x += glyph + 1 + int(rng.integers(0, 3))
    normalized = (page / 255.0 - _MEAN) / _STD
    return normalized.transpose(2, 0, 1)[None].astype(np.float32)


# case -> {input name: array maker}; cases not listed get validate's seeded random inputs.
INPUTS = {
    "ppocrv6_det": {"x": lambda: text_page()},
    "ppocrv3_det": {"x": lambda: text_page()},
}
