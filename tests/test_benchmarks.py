"""The benchmark whose figures the passes' speed goals are judged by runs to its end.

benchmarks/bench_pass_scaling.py is run by hand and by ``make bench``, never by CI; a change in a
dependency (typer 0.29 -> 0.28 dropped a module its stage breakdown imported) once made ``--stages``
crash after the ratio rows, unnoticed. Here it runs on tiny graphs (the figures are not looked at, only
that every row and stage line is printed and the process exits 0).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_pass_scaling_benchmark_prints_every_row_and_stage(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_pass_scaling.py"), "--runs", "1", "--sites", "3"]
    command += ["--nodes", "30", "--stages", "--no-check-cost", "--dir", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = re.findall(
        r"^\s+(3 Resize sites|30 nodes)\s+(make-dynamic-scale|swap-plugin) .* ([\d.]+)x", done.stdout, re.M
    )
    assert len(rows) == 4, done.stdout
    assert len(re.findall(r"the contract's checks alone\s+[\d.]+x", done.stdout)) == 2, done.stdout
    stage_lines = re.findall(
        r"^(3 Resize sites|30 nodes): (make-dynamic-scale|swap-plugin) stages.*whole", done.stdout, re.M
    )
    assert len(stage_lines) == 4, done.stdout
