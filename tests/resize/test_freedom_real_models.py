"""Factor freedom on the real models (tests/realmodels: projects' own code, both exporters,
PaddleOCR-family shipped ONNX): every site is decided, the pinning node is the one the architecture
predicts, and the model runs at its own factors."""

from __future__ import annotations

import fnmatch
from collections import Counter

import pytest
from realmodels.fixtures import CASES, real_models  # noqa: F401 - session fixture

from graphsurgeon_tools.io import load_model
from graphsurgeon_tools.resize import find_resize_sites
from graphsurgeon_tools.resize.freedom import factor_clash, site_freedom

# (case pattern) -> how many sites are free, and the op types pinning the others (a multiset).
# Why, per architecture:
# - swin2sr: nearest x2 -> conv -> nearest x2 -> conv: nothing meets the upsampled tensor.
# - segformer: every stage is resized to stage 1's size and concatenated: all pinned by that Concat.
# - dpt: fusion stages upsample then ADD the next, finer stage (3 pinned by Add); the last stage and
#   the head are free; TorchScript also keeps the position-embedding resize, pinned by the Concat
#   with the class token (dynamo folds it away).
# - upernet: PSP pooling branches (Concat), FPN top-down (Add), FPN fusion (Concat); the final
#   resize to the image size is free.
# - vae_decoder: TorchScript computes the attention Reshape from Shape (free); dynamo bakes the
#   shape into a constant (pinned by that Reshape).
# - PP-OCR detectors (DBNet FPN): three upsample+Add laterals, three upsample+Concat.
# - layout_cdla (PicoDet): two upsample+Concat in the neck.
EXPECTED: dict[str, tuple[int, Counter]] = {
    "swin2sr/*": (2, Counter()),
    "segformer/*": (0, Counter({"Concat": 4})),
    "dpt/torchscript-*": (2, Counter({"Add": 3, "Concat": 1})),
    "dpt/dynamo-*": (2, Counter({"Add": 3})),
    "upernet/*": (1, Counter({"Concat": 5, "Add": 3})),
    "vae_decoder/torchscript-*": (1, Counter()),
    "vae_decoder/dynamo-*": (0, Counter({"Reshape": 1})),
    "ppocrv6_det": (0, Counter({"Add": 3, "Concat": 3})),
    "ppocrv3_det": (0, Counter({"Add": 3, "Concat": 3})),
    "layout_cdla": (0, Counter({"Concat": 2})),
}


def _expected(case: str) -> tuple[int, Counter]:
    return next(value for pattern, value in EXPECTED.items() if fnmatch.fnmatchcase(case, pattern))


@pytest.mark.parametrize("case", CASES)
def test_every_site_is_decided_and_pinned_where_the_architecture_says(case: str, real_models) -> None:  # noqa: F811
    model = load_model(real_models.path(case))
    sites = find_resize_sites(model)
    freedom = site_freedom(model, sites=sites)
    undecided = {key: f.reason for key, f in freedom.items() if f.free is None}
    assert not undecided, undecided
    free = sum(f.free for f in freedom.values())
    pinning = Counter(f.pinned_by.op_type for f in freedom.values() if f.pinned_by is not None)
    assert (free, pinning) == _expected(case), {k: f.describe() for k, f in freedom.items()}
    # Each site at its own scales is the model itself: nothing clashes.
    own = {s.node_name or s.output_name: list(s.scales) for s in sites if s.scales}
    assert factor_clash(model, own, sites=sites) is None
