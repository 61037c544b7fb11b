"""`onnxtool --help` start-up time against `python -c "import onnx, typer"`, side by side.

Goal: at most 1.5x. Both run as fresh processes, alternating, N times each;
the medians and their ratio are printed. Also lists which heavy modules `--help` imports
(none of torch, onnxruntime, onnxsim, onnx_graphsurgeon, onnx.reference may appear;
onnx is listed too, for information).

Usage: ``python benchmarks/bench_cli_startup.py [N]`` (default 15).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path


def _time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    runs = int(argv[0]) if argv else 15
    python = sys.executable
    script = Path(python).with_name("onnxtool")
    cli = [str(script), "--help"] if script.exists() else [python, "-m", "graphsurgeon_tools.cli", "--help"]
    baseline = [python, "-c", "import onnx, typer"]
    for command in (cli, baseline):  # warm the file cache
        _time(command)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(_time(cli))
        theirs.append(_time(baseline))
    heavy = (
        subprocess.run(
            [
                python,
                "-c",
                "import sys\nfrom graphsurgeon_tools.cli import main\ntry:\n main(['--help'])\n"
                "except SystemExit:\n pass\nprint([m for m in ('torch','onnxruntime','onnxsim','onnx_graphsurgeon',"
                "'onnx.reference','onnx') if m in sys.modules])",
            ],
            capture_output=True,
            text=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"onnxtool --help            median {statistics.median(ours) * 1000:7.1f} ms  (min {min(ours) * 1000:.1f})")
    print(
        f"python -c 'import onnx, typer' median {statistics.median(theirs) * 1000:7.1f} ms  (min {min(theirs) * 1000:.1f})"
    )
    print(f"ratio {ratio:.2f}x (goal <= 1.5x) over {runs} alternating runs; heavy modules imported by --help: {heavy}")
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
