"""What running DynamicTRTResize in ONNX Runtime costs: SRCNN with the plugin vs the original.

Measured side by side in one run (interleaved repeats, median), single-threaded ORT and torch
(the C++ kernel's thread pool) so the two sides compete on equal terms:

* SRCNN (StaticSRCNN, TorchScript export, opset 17): stock Resize vs DynamicTRTResize
  (signature scales and size-tensor) through ``runtime.make_session``;
* the Resize alone: stock ORT Resize vs the plugin node vs the kernel called directly
  (``runtime.resize_kernel``, no ORT), which splits the plugin's cost into the C++ kernel
  and the Python custom-op bridge (onnxruntime-extensions hands inputs over as numpy and
  copies the output back through a Python list).

Prints ns per output element of the resize for each, and the ratios.
Usage: ``python benchmarks/bench_plugin_runtime.py [--sizes 32,64] [--repeats 15]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.runtime import kernel_backend, make_session, resize_kernel


def _options() -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return options


def _median_times(calls: dict[str, callable], repeats: int) -> dict[str, float]:
    for call in calls.values():  # warm-up (first-run allocations, kernel loading)
        call()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():  # interleaved, so drift hits every side alike
            start = time.perf_counter()
            call()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def _export_srcnn(folder: Path) -> onnx.ModelProto:
    import torch

    from exporters.models import StaticSRCNN

    torch.manual_seed(0)
    path = folder / "srcnn.onnx"
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # the TorchScript exporter's notice
    torch.onnx.export(
        StaticSRCNN().eval(),
        (torch.randn(1, 3, 16, 16),),
        str(path),
        dynamo=False,
        opset_version=17,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "batch", 2: "height", 3: "width"}, "output": {0: "batch", 2: "oh", 3: "ow"}},
    )
    return onnx.load(path)


def _single_resize_models() -> tuple[onnx.ModelProto, onnx.ModelProto]:
    resize = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="cubic")
    plugin = helper.make_node(
        "DynamicTRTResize",
        ["x", "scales"],
        ["y"],
        domain="trt.plugins",
        mode="cubic",
        plugin_version="1",
        plugin_namespace="",
    )
    models = []
    for node in (resize, plugin):
        graph = helper.make_graph(
            [node],
            "g",
            [
                helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"]),
                helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]),
            ],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3, "oh", "ow"])],
        )
        opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("trt.plugins", 1)] if node.domain else [])
        models.append(helper.make_model(graph, opset_imports=opsets))
    return models[0], models[1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="32,64", help="input H=W values (factor 3)")
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    factor = 3.0
    scales = np.array([1, 1, factor, factor], np.float32)

    import torch

    torch.set_num_threads(1)  # the C++ kernel runs on torch's pool: one thread, like ORT here
    with tempfile.TemporaryDirectory() as tmp:
        original = _export_srcnn(Path(tmp))
    swapped = {sig: swap_plugin(original, signature=sig) for sig in ("scales", "size-tensor")}
    print(f"kernel backend: {kernel_backend()}; ORT {ort.__version__}, 1 thread; median of {args.repeats}")

    sessions = {
        "original": ort.InferenceSession(original.SerializeToString(), _options(), providers=["CPUExecutionProvider"])
    }
    for sig, result in swapped.items():
        sessions[f"plugin ({sig})"] = make_session(result.model, sess_options=_options())
    scales_name = swapped["scales"].new_inputs[0]["name"]

    print("\nSRCNN x3 end to end")
    print(
        f"{'input':>9} {'resize out elems':>17} "
        + " ".join(f"{name:>22}" for name in sessions)
        + "  (plugin - original) ns/elem"
    )
    for size in sizes:
        x = np.random.default_rng(0).random((1, 3, size, size), dtype=np.float32)
        feeds = {"input": x, scales_name: scales}
        calls = {
            name: (
                lambda s=session, f=feeds: s.run(
                    None, {k: v for k, v in f.items() if k in {i.name for i in s.get_inputs()}}
                )
            )
            for name, session in sessions.items()
        }
        times = _median_times(calls, args.repeats)
        elems = x.size * int(factor) ** 2
        base = times["original"]
        cells = " ".join(f"{times[n] * 1e3:9.2f} ms ({times[n] / base:4.2f}x)" for n in sessions)
        extra = (times["plugin (scales)"] - base) / elems * 1e9
        print(f"{size:>4}x{size:<4} {elems:>17,} {cells}  {extra:8.1f}")

    print("\nResize alone (bicubic x3): ns per output element")
    stock, plugin = _single_resize_models()
    stock_session = ort.InferenceSession(stock.SerializeToString(), _options(), providers=["CPUExecutionProvider"])
    plugin_session = make_session(plugin, sess_options=_options())
    print(
        f"{'input':>9} {'stock ORT Resize':>17} {'kernel direct':>14} {'plugin in ORT':>14} {'bridge':>8} {'plugin/stock':>13}"
    )
    for size in sizes:
        x = np.random.default_rng(1).random((1, 3, size, size), dtype=np.float32)
        elems = x.size * int(factor) ** 2
        times = _median_times(
            {
                "stock": lambda: stock_session.run(None, {"x": x, "scales": scales}),
                "kernel": lambda: resize_kernel(x, scales, mode="cubic"),
                "plugin": lambda: plugin_session.run(None, {"x": x, "scales": scales}),
            },
            args.repeats,
        )
        ns = {k: v / elems * 1e9 for k, v in times.items()}
        print(
            f"{size:>4}x{size:<4} {ns['stock']:17.1f} {ns['kernel']:14.1f} {ns['plugin']:14.1f} "
            f"{ns['plugin'] - ns['kernel']:8.1f} {times['plugin'] / times['stock']:12.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
