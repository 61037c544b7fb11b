"""Run every benchmark in this folder, one after the other, and print their reports.

Each ``bench_*.py`` measures ratios side by side in one run (never absolute timings
compared across runs), so its figures mean something on any machine.
Usage: ``python benchmarks/run_all.py [NAME_SUBSTRING ...]``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    scripts = sorted(here.glob("bench_*.py"))
    if argv:
        scripts = [s for s in scripts if any(word in s.name for word in argv)]
    failed = []
    for script in scripts:
        print(f"=== {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=here.parent).returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
