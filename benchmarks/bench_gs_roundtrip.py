"""What an onnx_graphsurgeon.Graph costs: the gs round trip on big models vs the ModelProto path.

The public API accepts an ``onnx_graphsurgeon.Graph`` wherever it accepts a ModelProto
(``graphsurgeon_tools.core.graphs.as_model``: ``gs.export_onnx`` in, ``gs.import_onnx`` out).
This measures what that costs on two big models, each step in a fresh process (wall time and
peak RSS of that process, so imports are in every figure alike):

* ``load``: ``onnx.load`` alone (the floor every path pays);
* ``gs round trip``: ``onnx.load`` + ``gs.import_onnx`` + ``gs.export_onnx``;
* ``pass (ModelProto)``: ``onnx.load`` + ``make_dynamic_scale(model, check=False)``;
* ``pass (gs.Graph)``: ``onnx.load`` + ``gs.import_onnx`` + ``make_dynamic_scale(graph, check=False)``
  (skipped with a note while the passes do not accept a Graph yet).

Models: a 50,000-node graph (a chain of Add/Mul with one Resize, small weights) and a model
with 1 GiB of inline weights (one Resize plus a 1 GiB initializer).

Usage: ``python benchmarks/bench_gs_roundtrip.py [--runs N] [--nodes N] [--weights-gib G] [--dir D]``
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BUILD = r"""
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
kind, path, size = sys.argv[1], sys.argv[2], float(sys.argv[3])
nodes = [helper.make_node("Resize", ["x", "", "scales_c"], ["r"], name="resize", mode="nearest")]
inits = [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales_c")]
last = "r"
if kind == "nodes":
    inits.append(numpy_helper.from_array(np.full((1,), 1.0, np.float32), "one"))
    for i in range(int(size) - 1):
        op = "Add" if i % 2 else "Mul"
        nodes.append(helper.make_node(op, [last, "one"], [f"t{i}"], name=f"n{i}"))
        last = f"t{i}"
else:
    count = int(size * 2**30) // 4
    inits.append(numpy_helper.from_array(np.zeros((count,), np.float32), "big"))
    nodes.append(helper.make_node("Identity", ["big"], ["w"], name="keep_big"))
outputs = [helper.make_tensor_value_info(last, TensorProto.FLOAT, [1, 3, 16, 16])]
if kind != "nodes":
    outputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [count]))
graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          outputs, inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
with open(path, "wb") as f:
    f.write(model.SerializeToString())
"""

STEPS = {
    "load": "m = onnx.load(path)",
    "gs round trip": "import onnx_graphsurgeon as gs\nm = gs.export_onnx(gs.import_onnx(onnx.load(path)))",
    "pass (ModelProto)": (
        "from graphsurgeon_tools import make_dynamic_scale\n"
        "r = make_dynamic_scale(onnx.load(path), check=False, inplace=True)\nassert r.changed"
    ),
    "pass (gs.Graph)": (
        "import onnx_graphsurgeon as gs\nfrom graphsurgeon_tools import make_dynamic_scale\n"
        "g = gs.import_onnx(onnx.load(path))\n"
        "try:\n    r = make_dynamic_scale(g, check=False)\n"
        "except TypeError as exc:\n    print(json.dumps({'skipped': str(exc)[:120]}))\n    raise SystemExit(0)\n"
        "assert type(r.model).__name__ == 'Graph', type(r.model)"
    ),
}

RUNNER = r"""
import json, resource, sys, time
start = time.perf_counter()
import onnx
path = sys.argv[1]
{step}
wall = time.perf_counter() - start
print(json.dumps({{"wall": wall, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def measure(step: str, path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER.format(step=STEPS[step]), str(path)], capture_output=True, text=True
    )
    if done.returncode != 0:
        return {
            "error": done.stderr.strip().splitlines()[-1][:200] if done.stderr.strip() else f"exit {done.returncode}"
        }
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=50_000)
    parser.add_argument("--weights-gib", type=float, default=1.0)
    parser.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp dir)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench_gs_", dir=args.dir))
    try:
        models = {
            f"{args.nodes:,} nodes": folder / "nodes.onnx",
            f"{args.weights_gib:g} GiB weights": folder / "weights.onnx",
        }
        sizes = {"nodes": args.nodes, "weights": args.weights_gib}
        for (label, path), (kind, size) in zip(models.items(), sizes.items()):
            subprocess.run([sys.executable, "-c", BUILD, kind, str(path), str(size)], check=True)
        for label, path in models.items():
            measure("load", path)  # warm the page cache
            results: dict[str, list[dict]] = {step: [] for step in STEPS}
            for _ in range(args.runs):
                for step in STEPS:
                    results[step].append(measure(step, path))
            print(
                f"{label} ({path.stat().st_size / 2**20:.0f} MiB file), median of {args.runs}, each step a fresh process:"
            )
            base = statistics.median(r["wall"] for r in results["load"])
            for step, runs in results.items():
                if any("error" in r for r in runs):
                    print(f"  {step:<18} failed: {next(r['error'] for r in runs if 'error' in r)}")
                    continue
                if any("skipped" in r for r in runs):
                    print(f"  {step:<18} skipped: {runs[0]['skipped']}")
                    continue
                wall = statistics.median(r["wall"] for r in runs)
                rss = statistics.median(r["rss_mib"] for r in runs)
                print(f"  {step:<18} {wall:7.2f} s = {wall / base:5.2f}x load   peak RSS {rss:7.0f} MiB")
            print(flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
