"""Speed of torch.ops.onnxtool.resize against F.interpolate and ONNX Runtime's Resize, side by side.

    .venv/bin/python benchmarks/bench_resize_op.py [--runs 30] [--threads 1 2]

For each case and thread count the three implementations run interleaved
(one call of each per round, so machine noise hits all of them alike) and the
median of the rounds is reported, with the ratios torch/ours and ORT/ours
(> 1 means ours is faster). The minimum is printed too: on a shared, busy
machine it is the better estimate of what each implementation can do, while
the median also shows how each copes with contention. ORT runs a one-node Resize model with
intra_op_num_threads set to the same thread count. Every case first checks
that the three outputs agree, so a fast wrong kernel cannot win.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

import exporters.ops as ops


@dataclass(frozen=True)
class Case:
    name: str
    shape: tuple[int, ...]
    factor: float
    torch_mode: str
    attrs: dict  # ONNX Resize attributes, shared by our op and ORT


CASES = [
    Case("bicubic x3 1x3x256x256", (1, 3, 256, 256), 3.0, "bicubic", {"mode": "cubic"}),
    Case("bilinear x2 1x64x128x128", (1, 64, 128, 128), 2.0, "bilinear", {"mode": "linear"}),
    Case(
        "nearest x2 1x64x128x128",
        (1, 64, 128, 128),
        2.0,
        "nearest",
        {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
    ),
    Case("bilinear x0.5 1x64x128x128", (1, 64, 128, 128), 0.5, "bilinear", {"mode": "linear"}),
]


def ort_session(case: Case, threads: int) -> ort.InferenceSession:
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], **case.attrs)
    rank = len(case.shape)
    scales = np.array([1.0] * (rank - 2) + [case.factor] * 2, np.float32)
    graph = helper.make_graph(
        [node],
        "resize",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, list(case.shape))],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(scales, "scales")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def interleaved_timings(fns: dict[str, Callable[[], object]], runs: int, warmup: int = 3) -> dict[str, list[float]]:
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    keys = list(fns)
    for round_ in range(runs):
        # Rotate who goes first, so no implementation always inherits the
        # cache state (or the page faults) the previous one left behind.
        shift = round_ % len(keys)
        for key in keys[shift:] + keys[:shift]:
            fn = fns[key]
            start = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - start)
    return {k: [t * 1e3 for t in v] for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()

    rows = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        for case in CASES:
            x = torch.rand(case.shape)
            x_np = x.numpy()
            scales = torch.tensor([1.0] * (x.dim() - 2) + [case.factor] * 2)
            session = ort_session(case, threads)
            align = {} if case.torch_mode == "nearest" else {"align_corners": False}

            def ours(x=x, scales=scales, case=case):
                return ops.resize(x, scales, **case.attrs)

            def theirs(x=x, case=case, align=align):
                return F.interpolate(x, scale_factor=case.factor, mode=case.torch_mode, **align)

            def onnxruntime(session=session, x_np=x_np):
                return session.run(None, {"X": x_np})[0]

            ref = ours()
            # torch's downscaling bilinear without antialias is ONNX half_pixel linear too.
            torch.testing.assert_close(theirs(), ref, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(onnxruntime(), ref.numpy(), rtol=1e-4, atol=1e-4)
            times = interleaved_timings({"ours": ours, "torch": theirs, "ort": onnxruntime}, args.runs)
            med = {k: statistics.median(v) for k, v in times.items()}
            low = {k: min(v) for k, v in times.items()}
            rows.append((case.name, threads, med, low))

    print(
        f"torch {torch.__version__}, onnxruntime {ort.__version__}, {args.runs} interleaved runs; "
        "ms as median (min); ratios > 1: ours is faster"
    )
    header = (
        f"{'case':28} {'thr':>3} {'ours ms':>15} {'torch ms':>15} {'ORT ms':>15} {'torch/ours':>13} {'ORT/ours':>13}"
    )
    print(header)
    print("-" * len(header))
    for name, threads, med, low in rows:
        cells = " ".join(f"{med[k]:7.3f} ({low[k]:5.2f})" for k in ("ours", "torch", "ort"))
        ratios = " ".join(f"{med[k] / med['ours']:6.2f} ({low[k] / low['ours']:4.1f})" for k in ("torch", "ort"))
        print(f"{name:28} {threads:>3} {cells} {ratios}")


if __name__ == "__main__":
    main()
