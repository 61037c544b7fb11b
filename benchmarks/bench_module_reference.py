"""What validating against an unmodified PyTorch module costs, against a bare ORT run plus a bare PyTorch run.

Real models built by their projects' code (tests/realmodels builders: transformers Swin2SR
"nearest+conv", diffusers AutoencoderKL decoder), exported by the TorchScript exporter and
made dynamic, in a temporary folder. Then, interleaved round by round so machine load hits
every case alike, the median wall time of one sweep over x2, x3, x4 (every site at the factor):

* ``floor``: per factor, one ``session.run`` of the candidate plus one plain PyTorch run of
  the module on the same input at the same factor (torch's own interpolate kernel, its
  ``scale_factor`` replaced; sessions and modules made outside the timing);
* ``reference``: per factor, :class:`exporters.module_reference.RoutedModuleReference` run
  (routed through the C++ op at the candidate's per-site factors) plus the same ORT run and
  an element-wise comparison: the work validate adds for an ``nn.Module`` reference;
* ``validate``: ``graphsurgeon_tools.validate(candidate, module, factors=[2, 3, 4])``, the
  whole API (sessions, ports, reference, comparison, report) from a file on disk.

The goal is ``validate`` within 1.5x of the floor. Prints medians and bests (the
best of the rounds is the figure to trust on a loaded machine) and their ratios to the floor.
Usage: ``python benchmarks/bench_module_reference.py [--rounds N] [--size S]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

REPO = Path(__file__).resolve().parent.parent
FACTORS = (2.0, 3.0, 4.0)


def _build(name: str, size: int) -> tuple[Any, np.ndarray]:
    import torch

    sys.path.insert(0, str(REPO / "tests"))
    from realmodels.builders import BUILDERS

    built = BUILDERS[name]()
    example = built.example
    shape = (*example.shape[:2], size, size)
    x = (
        torch.rand(shape, generator=torch.Generator().manual_seed(0))
        if name == "swin2sr"
        else torch.randn(shape, generator=torch.Generator().manual_seed(0))
    )
    return built.module, x.numpy()


def _export(module: Any, x: np.ndarray, path: Path) -> Path:
    import onnx
    import torch

    from graphsurgeon_tools import make_dynamic_scale

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (torch.from_numpy(x),),
            str(path),
            dynamo=False,
            opset_version=17,
            input_names=["input"],
            output_names=["output"],
        )
    dynamic = make_dynamic_scale(onnx.load(str(path)), check=False).model
    out = path.with_name(path.stem + ".dynamic.onnx")
    onnx.save(dynamic, str(out))
    return out


class _PlainAt:
    """The bare PyTorch run at factor ``f``: torch's own interpolate kernel, ``scale_factor`` replaced (no C++ op)."""

    def __init__(self, factor: float) -> None:
        import torch.nn.functional as F
        from torch.overrides import TorchFunctionMode

        outer = self

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
                kwargs = dict(kwargs or {})
                if func is F.interpolate and kwargs.get("scale_factor", args[2] if len(args) > 2 else None) is not None:
                    args = args[:2]
                    kwargs["scale_factor"] = outer.factor
                return func(*args, **kwargs)

        self.factor = factor
        self.mode = Mode()

    def __enter__(self) -> None:
        self.mode.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.mode.__exit__(*exc)


def _cases(name: str, module: Any, x: np.ndarray, candidate: Path) -> dict[str, Callable[[], None]]:
    import onnx
    import onnxruntime as ort
    import torch

    from exporters.module_reference import RoutedModuleReference

    session = ort.InferenceSession(str(candidate), providers=["CPUExecutionProvider"])
    scale_inputs = [i.name for i in session.get_inputs() if i.name != "input"]
    model = onnx.load(str(candidate))
    reference = RoutedModuleReference(module, name, model)
    reference.prepare([x])
    tensor = torch.from_numpy(x)

    def feeds(f: float) -> dict[str, np.ndarray]:
        return {"input": x, **{n: np.array([1, 1, f, f], np.float32) for n in scale_inputs}}

    def floor() -> None:
        for f in FACTORS:
            session.run(None, feeds(f))
            with torch.no_grad(), _PlainAt(f):
                module(tensor)

    def routed() -> None:
        for f in FACTORS:
            got = session.run(None, feeds(f))[0]
            want = reference.run(f, [("input", x)], feeds(f))[0][1]
            if got.shape == want.shape:
                np.abs(got - want).max()

    def validate() -> None:
        from graphsurgeon_tools import validate as run

        run(str(candidate), module, factors=list(FACTORS), inputs={"input": x})

    return {"floor": floor, "reference": routed, "validate": validate}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=32, help="input height = width (latent size for the VAE)")
    parser.add_argument("--models", default="swin2sr,vae_decoder")
    args = parser.parse_args(argv)

    import torch

    folder = Path(tempfile.mkdtemp(prefix="bench_module_reference_"))
    print(f"torch threads {torch.get_num_threads()}, factors {FACTORS}, {args.rounds} rounds")
    for name in args.models.split(","):
        size = args.size // 2 if name == "vae_decoder" else args.size
        module, x = _build(name, size)
        candidate = _export(module, x, folder / f"{name}.onnx")
        cases = _cases(name, module, x, candidate)
        times: dict[str, list[float]] = {case: [] for case in cases}
        failed: dict[str, str] = {}
        for _ in range(args.rounds + 1):  # the first round warms up and is dropped
            for case, run in cases.items():
                if case in failed:
                    continue
                start = time.perf_counter()
                try:
                    run()
                except Exception as exc:  # a benchmark reports what broke and goes on
                    failed[case] = f"{type(exc).__name__}: {str(exc)[:160]}"
                    continue
                times[case].append(time.perf_counter() - start)
        floor = statistics.median(times["floor"][1:])
        floor_min = min(times["floor"][1:])
        print(f"{name} input {list(x.shape)}:")
        for case, values in times.items():
            if case in failed:
                print(f"  {case:10s} failed: {failed[case]}")
                continue
            median, best = statistics.median(values[1:]), min(values[1:])
            print(
                f"  {case:10s} median {median * 1000:8.1f} ms  {median / floor:5.2f}x floor   "
                f"best {best * 1000:8.1f} ms  {best / floor_min:5.2f}x floor"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
