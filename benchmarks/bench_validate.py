"""What a validation costs: each reference kind and the diagnosis, against bare ONNX Runtime runs.

One SRCNN (static x3 export, made dynamic) and a broken copy (wrong
coordinate_transformation_mode) in a temporary folder; then, interleaved round by
round so machine load hits every case alike, the median wall time of:

* ``ort``: the candidate alone, one ``session.run`` per factor (the floor: what any
  validation must at least do), session made once outside the timing;
* ``validate(..., <reference>)`` for an ONNX file, ``torch:srcnn`` and ``onnx-reference``;
* a failing ``validate`` with and without ``diagnose`` (the attribute-variant search).

Everything uses the same 32 x 32 input and the x2, x3, x4 sweep, except
``onnx-reference`` (pure-Python evaluator): 16 x 16 and x2 only, with its own ORT floor.
Prints ratios to the ORT floor. Usage: ``python benchmarks/bench_validate.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import helper


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    from exporters import export, srcnn
    from graphsurgeon_tools import make_dynamic_scale, make_session, save_model, validate

    folder = Path(tempfile.mkdtemp(prefix="bench_validate_"))
    model = srcnn("static", factor=3)
    static = folder / "static.onnx"
    export(model, model.example_inputs(), static, input_names=["input"], output_names=["output"])
    dynamic_model = make_dynamic_scale(static).model
    dynamic = folder / "dynamic.onnx"
    save_model(dynamic_model, dynamic)
    broken_model = onnx.ModelProto()
    broken_model.CopyFrom(dynamic_model)
    node = next(n for n in broken_model.graph.node if n.op_type == "Resize")
    for attribute in node.attribute:
        if attribute.name == "coordinate_transformation_mode":
            attribute.CopyFrom(helper.make_attribute("coordinate_transformation_mode", "align_corners"))
    broken = folder / "broken.onnx"
    save_model(broken_model, broken)
    reference_copy = folder / "reference_dynamic.onnx"
    save_model(dynamic_model, reference_copy)

    factors = [2.0, 3.0, 4.0]
    session = make_session(dynamic)
    x32 = np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32)
    x16 = x32[:, :, :16, :16].copy()

    def ort_floor(x: np.ndarray, sweep: list[float]) -> Callable[[], None]:
        def run() -> None:
            for f in sweep:
                session.run(None, {"input": x, "scales": np.array([1, 1, f, f], np.float32)})

        return run

    def check(fn: Callable[[], object], passed: bool) -> Callable[[], None]:
        def run() -> None:
            report = fn()
            assert report.passed is passed, report.summary_line()

        return run

    cases: dict[str, Callable[[], None]] = {
        "ort (x2,x3,x4, 32x32)": ort_floor(x32, factors),
        "validate vs ONNX file (dynamic)": check(lambda: validate(dynamic, reference_copy, factors=factors), True),
        "validate vs ONNX file (static, x3 only)": check(lambda: validate(dynamic, static, factors=factors), True),
        "validate vs torch:srcnn": check(lambda: validate(dynamic, "torch:srcnn", factors=factors), True),
        "failing, diagnose=False": check(
            lambda: validate(broken, "torch:srcnn", factors=factors, diagnose=False), False
        ),
        "failing, diagnose=True": check(lambda: validate(broken, "torch:srcnn", factors=factors), False),
        "ort (x2, 16x16)": ort_floor(x16, [2.0]),
        "validate vs onnx-reference (x2, 16x16)": check(
            lambda: validate(dynamic, "onnx-reference", factors=[2], input_size=16), True
        ),
    }
    for fn in cases.values():  # warm-up: imports, the C++ library, first-session costs
        fn()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)

    median = {name: statistics.median(values) for name, values in times.items()}
    floors = {"32": median["ort (x2,x3,x4, 32x32)"], "16": median["ort (x2, 16x16)"]}
    print(f"validate cost, median of {args.rounds} interleaved rounds (SRCNN, CPU)")
    print(f"{'case':<42}{'ms':>10}{'x ORT floor':>14}")
    for name, value in median.items():
        floor = floors["16"] if "16x16" in name else floors["32"]
        print(f"{name:<42}{value * 1e3:>10.1f}{value / floor:>14.1f}")
    diag = median["failing, diagnose=True"] / median["failing, diagnose=False"]
    print(f"diagnosis adds {diag:.1f}x to a failing validation (attribute-variant search)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
