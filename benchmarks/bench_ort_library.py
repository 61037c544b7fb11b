"""What DynamicTRTResize costs in ONNX Runtime through the compiled custom-op library.

Side by side in one run (interleaved repeats, medians), ratios against ONNX Runtime's own
Resize on the same inputs and thread count:

* SRCNN x3 (StaticSRCNN, TorchScript export, opset 17): the original model vs the
  swapped one (signature scales and size-tensor) running the library, at 1 and 2 threads;
* one Resize, linear x2 on 1x64x128x128: ORT's Resize vs the plugin through the library
  vs the plugin through the onnxruntime-extensions Python bridge (the path before the
  library), at 1 and 2 threads;
* the kernel's cost per output element against ORT's Resize at cubic, linear, nearest;
* session creation: the original model without the library, with it registered, and the
  plugin model with it.

Usage: ``python benchmarks/bench_ort_library.py [--repeats 30] [--srcnn-sizes 64,128]``.
Needs the library (``make setup``); says why and exits 0 without it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.runtime import ort_library


def _options(threads: int, library: Path | None = None) -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if library is not None:
        options.register_custom_ops_library(str(library))
    return options


def _session(model: onnx.ModelProto, threads: int, library: Path | None = None) -> ort.InferenceSession:
    return ort.InferenceSession(
        model.SerializeToString(), _options(threads, library), providers=["CPUExecutionProvider"]
    )


def _medians(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    for call in calls.values():  # warm-up: first-run allocations, arena growth
        call()
        call()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():  # interleaved: drift and neighbours' load hit every side alike
            start = time.perf_counter()
            call()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def _feeds(session: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    names = {i.name for i in session.get_inputs()}
    return {k: v for k, v in feeds.items() if k in names}


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


def _resize_models(mode: str) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """(ORT Resize, DynamicTRTResize) single-node models, scales as an input."""
    models = []
    for node in (
        helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode),
        helper.make_node(
            "DynamicTRTResize",
            ["x", "scales"],
            ["y"],
            domain="trt.plugins",
            mode=mode,
            plugin_version="1",
            plugin_namespace="",
        ),
    ):
        graph = helper.make_graph(
            [node],
            "g",
            [
                helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "c", "h", "w"]),
                helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]),
            ],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "c", "oh", "ow"])],
        )
        opsets = [helper.make_opsetid("", 19)] + ([helper.make_opsetid("trt.plugins", 1)] if node.domain else [])
        models.append(helper.make_model(graph, opset_imports=opsets))
    return models[0], models[1]


def _extensions_session(model: onnx.ModelProto, threads: int) -> ort.InferenceSession | None:
    """The Python-bridge path (make_session with the library switched off), if it can run here."""
    from graphsurgeon_tools.runtime import make_session

    saved = ort_library.library_path
    ort_library.library_path = lambda **_: None  # type: ignore[assignment]
    try:
        return make_session(model, sess_options=_options(threads))
    except (ImportError, RuntimeError) as exc:
        print(f"  (extensions path unavailable: {exc})")
        return None
    finally:
        ort_library.library_path = saved  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--srcnn-sizes", default="64,128", help="SRCNN input H=W values (factor 3)")
    args = parser.parse_args(argv)
    library = ort_library.library_path()
    if library is None:
        print(f"skipped: {ort_library.unavailable_reason()}")
        return 0
    print(
        f"ORT {ort.__version__}; library {library.name}; median of {args.repeats} interleaved runs; "
        "ratio = plugin / ORT's own Resize on the same threads"
    )

    # ---- SRCNN x3
    with tempfile.TemporaryDirectory() as tmp:
        original = _export_srcnn(Path(tmp))
    swapped = {sig: swap_plugin(original, signature=sig) for sig in ("scales", "size-tensor")}
    scales_name = swapped["scales"].new_inputs[0]["name"]
    three = np.array([1, 1, 3, 3], np.float32)
    print("\nSRCNN x3 end to end (goal: plugin within 1.05x of the original)")
    print(f"{'input':>9} {'threads':>7} {'original':>11} {'plugin scales':>22} {'plugin size-tensor':>22}")
    for size in [int(s) for s in args.srcnn_sizes.split(",")]:
        x = np.random.default_rng(0).random((1, 3, size, size), dtype=np.float32)
        feeds = {"input": x, scales_name: three}
        for threads in (1, 2):
            sessions = {"original": _session(original, threads)}
            for sig, result in swapped.items():
                sessions[sig] = _session(result.model, threads, library)
            times = _medians(
                {name: (lambda s=s: s.run(None, _feeds(s, feeds))) for name, s in sessions.items()}, args.repeats
            )
            base = times["original"]
            print(
                f"{size:>4}x{size:<4} {threads:>7} {base * 1e3:8.2f} ms "
                + " ".join(f"{times[sig] * 1e3:12.2f} ms ({times[sig] / base:4.2f}x)" for sig in swapped)
            )

    # ---- one Resize, linear x2 on 1x64x128x128
    print("\nOne Resize, linear x2 on 1x64x128x128 (goal: library within 1.05x of ORT's Resize)")
    stock, plugin = _resize_models("linear")
    x = np.random.default_rng(1).random((1, 64, 128, 128), dtype=np.float32)
    two = np.array([1, 1, 2, 2], np.float32)
    feeds = {"x": x, "scales": two}
    print(f"{'threads':>7} {'ORT Resize':>11} {'library':>20} {'Python bridge':>22}")
    for threads in (1, 2):
        calls = {
            "stock": (lambda s=_session(stock, threads): s.run(None, feeds)),
            "library": (lambda s=_session(plugin, threads, library): s.run(None, feeds)),
        }
        bridge = _extensions_session(plugin, threads)
        if bridge is not None:
            calls["bridge"] = lambda s=bridge: s.run(None, feeds)
        times = _medians(calls, max(5, args.repeats // 3) if bridge is not None else args.repeats)
        base = times["stock"]
        cells = f"{times['library'] * 1e3:9.2f} ms ({times['library'] / base:4.2f}x)"
        if "bridge" in times:
            cells += f" {times['bridge'] * 1e3:11.2f} ms ({times['bridge'] / base:5.1f}x)"
        print(f"{threads:>7} {base * 1e3:8.2f} ms {cells}")

    # ---- per output element, by mode
    print("\nPer output element, 1 thread, x2 on 1x32x96x96 and x0.5 on 1x32x192x192 (ns/elem)")
    print(f"{'mode':>8} {'factor':>6} {'ORT Resize':>11} {'library':>9} {'ratio':>6}")
    for mode in ("cubic", "linear", "nearest"):
        stock, plugin = _resize_models(mode)
        for factor, side in ((2.0, 96), (0.5, 192)):
            x = np.random.default_rng(2).random((1, 32, side, side), dtype=np.float32)
            feeds = {"x": x, "scales": np.array([1, 1, factor, factor], np.float32)}
            s, p = _session(stock, 1), _session(plugin, 1, library)
            times = _medians({"stock": lambda: s.run(None, feeds), "library": lambda: p.run(None, feeds)}, args.repeats)
            elems = x.size * factor * factor
            print(
                f"{mode:>8} {factor:>6} {times['stock'] / elems * 1e9:11.2f} {times['library'] / elems * 1e9:9.2f} "
                f"{times['library'] / times['stock']:5.2f}x"
            )

    # ---- session creation
    print("\nSession creation (SRCNN, 1 thread), median ms")
    plugin_model = swapped["scales"].model
    original_bytes, plugin_bytes = original.SerializeToString(), plugin_model.SerializeToString()
    times = _medians(
        {
            "original, no library": lambda: ort.InferenceSession(
                original_bytes, _options(1), providers=["CPUExecutionProvider"]
            ),
            "original, library registered": lambda: ort.InferenceSession(
                original_bytes, _options(1, library), providers=["CPUExecutionProvider"]
            ),
            "plugin model, library": lambda: ort.InferenceSession(
                plugin_bytes, _options(1, library), providers=["CPUExecutionProvider"]
            ),
        },
        args.repeats,
    )
    for name, value in times.items():
        print(f"  {name:<30} {value * 1e3:7.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
