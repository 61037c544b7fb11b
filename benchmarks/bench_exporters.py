"""The SRCNN export styles side by side: export time, and what each style costs at inference.

For every (variant x exporter) that works: the time ``exporters.export`` takes
(torch export + onnx.checker + the ORT proof), then the median latency of the
exported model in ONNX Runtime on a 1x3x64x64 image upscaled x3, and of the
PyTorch module in eager mode, all as ratios to the static variant measured in
the same run. One thread everywhere (the machine is shared). Plugin models run
through ``graphsurgeon_tools.runtime.make_session`` (the Python custom-op bridge).

    python benchmarks/bench_exporters.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

COMBOS = [
    ("static", "scales", "torchscript"),
    ("static", "scales", "dynamo"),
    ("new-interpolate", "scales", "torchscript"),
    ("cxx-op", "scales", "torchscript"),
    ("cxx-op", "scales", "dynamo"),
    ("plugin", "scales", "torchscript"),
    ("plugin", "scales", "dynamo"),
    ("plugin", "size-tensor", "torchscript"),
    ("plugin", "size-tensor", "dynamo"),
]


def interleaved_medians(fns: list, repeat: int) -> list[float]:
    """Median seconds per function, timed round-robin so that load from other processes on a
    shared machine falls on every function alike (sequential blocks would skew the ratios)."""
    for fn in fns:
        fn()  # warm-up: first-run allocations, lazy initialisation
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--size", type=int, default=64)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    import onnxruntime as ort

    from exporters import export, srcnn
    from graphsurgeon_tools.runtime import make_session

    # Pay each exporter's one-time import and registration cost before timing anything.
    with tempfile.TemporaryDirectory() as tmp:
        for exporter in ("torchscript", "dynamo"):
            model = srcnn("static", pretrained=False)
            export(model, model.example_inputs(), Path(tmp) / f"warm_{exporter}.onnx", exporter=exporter)

        rows, ort_fns, eager_fns = [], [], []
        for variant, signature, exporter in COMBOS:
            model = srcnn(variant, signature=signature)
            path = Path(tmp) / f"{variant}_{signature}_{exporter}.onnx"
            start = time.perf_counter()
            export(model, model.example_inputs(3), path, exporter=exporter)
            export_s = time.perf_counter() - start

            inputs = model.example_inputs(3, height=args.size, width=args.size)
            options = ort.SessionOptions()
            options.intra_op_num_threads = options.inter_op_num_threads = 1
            if variant == "plugin":
                session = make_session(path, sess_options=options)
            else:
                session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
            names = [i.name for i in session.get_inputs()]
            feeds = {name: value.numpy() for name, value in zip(names, inputs)}
            ort_fns.append(lambda session=session, feeds=feeds: session.run(None, feeds))
            eager_fns.append(lambda model=model, inputs=inputs: model(*inputs))
            rows.append([f"{variant}{'/' + signature if variant == 'plugin' else ''}", exporter, export_s])
        ort_times = interleaved_medians(ort_fns, args.repeat)
        with torch.no_grad():
            eager_times = interleaved_medians(eager_fns, args.repeat)
        rows = [(*row, o, e) for row, o, e in zip(rows, ort_times, eager_times)]

    base_ort = rows[0][3]
    base_eager = rows[0][4]
    base_export = {e: next(r[2] for r in rows if r[1] == e and r[0] == "static") for e in ("torchscript", "dynamo")}
    print(
        f"SRCNN x3 on 1x3x{args.size}x{args.size}, 1 thread, median of {args.repeat}; "
        f"ratios to the static variant (same exporter for export time)"
    )
    print(
        f"{'variant':<22}{'exporter':<13}{'export s':>9}{'vs static':>10}{'ORT ms':>9}{'vs static':>10}"
        f"{'eager ms':>10}{'vs static':>10}"
    )
    for name, exporter, export_s, ort_s, eager_s in rows:
        print(
            f"{name:<22}{exporter:<13}{export_s:>9.2f}{export_s / base_export[exporter]:>9.2f}x"
            f"{ort_s * 1e3:>9.2f}{ort_s / base_ort:>9.2f}x{eager_s * 1e3:>10.2f}{eager_s / base_eager:>9.2f}x"
        )
    ts = sum(r[2] for r in rows if r[1] == "torchscript")
    dy = sum(r[2] for r in rows if r[1] == "dynamo")
    print(
        f"dynamo / torchscript export time (all variants both can export): "
        f"{dy / sum(r[2] for r in rows if r[1] == 'torchscript' and r[0] != 'new-interpolate'):.1f}x "
        f"(torchscript total {ts:.2f} s, dynamo total {dy:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
