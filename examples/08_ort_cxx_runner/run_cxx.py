"""Build ort_cxx_runner against the onnxruntime wheel's own libonnxruntime, run a plugin model with it.

    python run_cxx.py MODEL [--threads N]

The model's inputs are made here (a seeded 1x3x16x16 image for each 4-D float input,
scales [1, 1, 3, 3] for each 1-D float input of 4 entries), written raw, and handed to
the C++ program; its output is compared with the same model run from Python through
graphsurgeon_tools.runtime.make_session. Prints the reason and exits 0 where the
library or a compiler is missing (the Python path does not need them).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime

from graphsurgeon_tools.runtime import make_session
from graphsurgeon_tools.runtime.ort_library import header_dir, library_path, unavailable_reason

HERE = Path(__file__).resolve().parent


def build_runner(out: Path) -> Path:
    """g++ ort_cxx_runner.cpp, linked against the libonnxruntime.so.* shipped inside the wheel (once)."""
    source = HERE / "ort_cxx_runner.cpp"
    if out.is_file() and out.stat().st_mtime > source.stat().st_mtime:
        return out
    capi = Path(onnxruntime.__file__).parent / "capi"
    (runtime_lib,) = sorted(capi.glob("libonnxruntime.so.*"))
    # The wheel's file is libonnxruntime.so.1.NN.0 but its SONAME is libonnxruntime.so.1,
    # a name the wheel does not ship: a link of that name beside the program resolves it.
    links = out.parent / "ort_lib"
    links.mkdir(exist_ok=True)
    soname = links / "libonnxruntime.so.1"
    soname.unlink(missing_ok=True)
    soname.symlink_to(runtime_lib)
    command = [
        "g++",
        "-std=c++17",
        "-O2",
        str(source),
        f"-I{header_dir()}",
        str(soname),
        "-Wl,-rpath,$ORIGIN/ort_lib",
        "-o",
        str(out),
    ]
    print("$", " ".join(command))
    subprocess.run(command, check=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    library = library_path()
    if library is None or shutil.which("g++") is None:
        print(f"skipped: {unavailable_reason() or 'no g++'}")
        return 0
    runner = build_runner(Path("ort_cxx_runner").resolve())

    model = onnx.load(args.model, load_external_data=False)
    rng = np.random.default_rng(0)
    feeds: dict[str, np.ndarray] = {}
    specs = []
    for value in model.graph.input:
        rank = len(value.type.tensor_type.shape.dim)
        feeds[value.name] = (
            rng.random((1, 3, 16, 16), dtype=np.float32) if rank == 4 else np.array([1, 1, 3, 3], np.float32)
        )
        path = Path(f"in_{len(specs)}.bin")
        feeds[value.name].tofile(path)
        specs.append(f"{value.name}={path}:float32:{'x'.join(map(str, feeds[value.name].shape))}")

    done = subprocess.run(
        [str(runner), args.model, str(library), "out_", "--threads", str(args.threads), *specs],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        return 1
    print(done.stdout, end="")
    _, name, _, shape = done.stdout.splitlines()[0].split()
    got = np.fromfile("out_0.bin", dtype=np.float32).reshape([int(d) for d in shape.split("x")])
    want = make_session(args.model).run(None, feeds)[0]
    same = got.shape == want.shape and np.array_equal(got, want)
    print(f"C++ vs Python ({name} {got.shape}): {'identical' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
