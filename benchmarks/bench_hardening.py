"""What the input checks cost: ``io.load_model`` (path checks, UTF-8 of every string, external-data
checks) against a bare ``onnx.load`` of the same file, side by side, alternating, medians.

Models: PaddleOCR's PP-OCRv4 detector when installed (a real graph, 672 nodes), a synthetic
20,000-node chain (the worst case: the string check is per node), and a 256 MiB inline
weight (the weights must never be walked: the ratio should stay near 1.0x), plus the same
weight as external data (load_model leaves it on disk; onnx.load reads it).
Also: a hostile corpus run (every case, in-process ``inspect``) per second, for scale.

Usage: ``python benchmarks/bench_hardening.py [RUNS]`` (default 7).
"""

from __future__ import annotations

import glob
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _median(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _chain(nodes: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"relu_{i}") for i in range(nodes)],
        "chain",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info(f"t{nodes}", TensorProto.FLOAT, [1, 8])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weighted(nbytes: int) -> onnx.ModelProto:
    weight = numpy_helper.from_array(np.full(nbytes // 4, 0.25, dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "weighted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [nbytes // 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [nbytes // 4])],
        [weight],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main(argv: list[str]) -> int:
    from graphsurgeon_tools.io import load_model

    runs = int(argv[0]) if argv else 7
    with tempfile.TemporaryDirectory(prefix="onnxtool-bench-") as folder:
        root = Path(folder)
        cases: list[tuple[str, Path]] = []
        found = glob.glob(str(Path(sys.prefix) / "lib/python3*/site-packages/rapidocr_onnxruntime/models/*det*.onnx"))
        if found:
            cases.append(("PP-OCRv4 det (real, 672 nodes)", Path(found[0])))
        chain = root / "chain.onnx"
        onnx.save(_chain(20_000), chain)
        cases.append(("20,000-node chain", chain))
        inline = root / "inline.onnx"
        onnx.save(_weighted(256 * 1024**2), inline)
        cases.append(("256 MiB inline weight", inline))
        external = root / "ext" / "external.onnx"
        external.parent.mkdir()
        onnx.save(_weighted(256 * 1024**2), external, save_as_external_data=True, location="external.onnx.data")
        cases.append(("256 MiB external weight", external))

        print(
            f"{'model':34s} {'onnx.load':>11s} {'load_model':>11s} {'ratio':>7s}   ({runs} alternating runs, medians)"
        )
        for label, path in cases:
            onnx.load(str(path))
            load_model(path)  # warm the page cache for both
            bare, ours = [], []
            for _ in range(runs):
                bare.append(_median(lambda: onnx.load(str(path)), 1))
                ours.append(_median(lambda: load_model(path), 1))
            b, o = statistics.median(bare), statistics.median(ours)
            print(f"{label:34s} {b * 1000:9.1f}ms {o * 1000:9.1f}ms {o / b:6.2f}x")

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        import contextlib
        import io
        import os

        from hostile.corpus import CASES
        from hostile.harness import prepare

        from graphsurgeon_tools.cli import main as cli_main

        os.environ.pop("ONNXTOOL_MAX_OUTPUT_BYTES", None)
        usable = [c for c in CASES if not c.subprocess_only and c.expected_code("inspect") is not None]
        start = time.perf_counter()
        for index, case in enumerate(usable):
            setup = prepare(case, root / f"case{index}")
            with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                cli_main(["inspect", str(setup.built.model)])
        elapsed = time.perf_counter() - start
        print(
            f"hostile corpus through `inspect`: {len(usable)} cases in {elapsed:.2f} s "
            f"({len(usable) / elapsed:.0f} cases/s, build included)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
