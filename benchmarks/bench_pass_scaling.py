"""Passes scale linearly: make-dynamic-scale and swap-plugin on many sites and on many nodes,
side by side with a bare ``onnx.load`` + ``onnx.save`` of the same file.

1. A 2,000-Resize-site graph (a chain of Resize nodes, each with its own constant scales):
   ``onnxtool make-dynamic-scale M -o OUT --no-check`` (2,000 new graph inputs) and
   ``onnxtool swap-plugin M -o OUT --no-check`` (2,000 plugin nodes) against
   ``python -c "onnx.load(M); onnx.save(m, OUT)"``. Goal: at most 3x, whole process.
2. A 50,000-node graph (a chain of Relu nodes and one Resize):
   the same three commands. Goal: at most 2x, whole process.

The four goal ratios are taken with the factor-freedom analysis on (the default: a bounded
static shape flow over each site's downstream) and the built-in check off. ``--no-freedom``
adds make-dynamic-scale rows without the analysis. The built-in check's own cost is stated
beside them: each command once more with ``--check --json`` (the check's ``seconds`` as the
report gives them, and the ONNX Runtime sessions it opened: one per model, at the exact level;
the optimized-level figure, a second session per model, is ``--optimized-figure``'s).

The floor under the ratios is measured beside them: a process that loads and saves the model and
runs only the checks every pass's contract runs (the structural checker before, the full checker
after: passes/model_check.py ModelCheck), as a one-command typer app (the CLI framework the project uses),
with no pass work. No pass that keeps the contract
can go below it on this machine; the goal ratios are judged against it in the closing notes.

Which code runs: the children are this interpreter with this environment (``PYTHONPATH``
reaches them); the first line printed names the ``graphsurgeon_tools`` they import. Its
bytecode is compiled first (``compileall``, as ``pip install`` does), so a process does not
compile ~20,000 lines of source on every start when ``PYTHONDONTWRITEBYTECODE`` is set;
``--no-compile`` measures that cost too. ``--stages`` adds, per command, where the time goes:
interpreter start, ``import onnx``, the command's own imports, the pass's stages (its
``timings``: structural check, find, freedom, plan, rewrite, shapes, full checker) and the
rest (load, save, report, typer).

Once the first took 82x: ``remove_unused`` rebuilt the consumer map once per
site, and the passes ran the full checker several times. Every command runs in its own
process under a small runner reporting the child's wall time, CPU time (user+sys) and
peak RSS; runs alternate, medians and best-of-N are printed. On a shared machine the CPU
ratio is the steadiest figure. Files go to a temp dir that is deleted at the end.

Usage: ``python benchmarks/bench_pass_scaling.py [--runs N] [--sites N] [--nodes N] [--dir D] [--no-freedom]
[--no-compile] [--stages]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNNER = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - start
if done.returncode != 0:
    sys.stderr.write(done.stderr.decode()[-2000:])
    sys.exit(done.returncode)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024}))
"""

BUILD = r"""
import sys, onnx
from onnx import helper, TensorProto
kind, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
nodes, inits = [], []
previous = "x"
if kind == "sites":  # `count` Resize sites in a chain, each with its own scales initializer
    inits.append(helper.make_tensor("roi", TensorProto.FLOAT, [0], []))
    for i in range(count):
        inits.append(helper.make_tensor(f"s{i}", TensorProto.FLOAT, [4], [1, 1, 1, 1]))
        nodes.append(helper.make_node("Resize", [previous, "roi", f"s{i}"], [f"r{i}"], name=f"resize_{i}"))
        previous = f"r{i}"
    out_shape = [1, 3, 8, 8]
else:  # `count` nodes: a chain of Relu and one Resize at the end
    for i in range(count - 1):
        nodes.append(helper.make_node("Relu", [previous], [f"a{i}"], name=f"relu_{i}"))
        previous = f"a{i}"
    inits.append(helper.make_tensor("s", TensorProto.FLOAT, [4], [1, 1, 2, 2]))
    nodes.append(helper.make_node("Resize", [previous, "", "s"], ["r"], name="resize"))
    previous = "r"
    out_shape = [1, 3, 16, 16]
graph = helper.make_graph(nodes, kind, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info(previous, TensorProto.FLOAT, out_shape)], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, path)
"""


#: What every pass pays for the contract (passes/model_check.py ModelCheck) before any work of its own, as a
#: command of the CLI framework the project uses: typer parses a model path, an output path and one
#: option, then the bare load+save plus the structural checker on the input and the full checker
#: (structural + strict, type-checking shape inference) on the output, here on the same bytes. Its
#: ratio is the lowest a pass command can reach while it runs the checks the contract requires.
FLOOR = """
import sys
from pathlib import Path

import onnx
import typer

app = typer.Typer()


@app.command()
def floor(model: Path, output: Path = typer.Option(..., "-o"), check: bool = typer.Option(False, "--check")) -> None:
    proto = onnx.load(model)
    onnx.checker.check_model(proto.SerializeToString())
    onnx.checker.check_model(proto.SerializeToString(), full_check=True)
    onnx.save(proto, output)


app()
"""


def measure(command: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", RUNNER, *command], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ratio_line(label: str, ours: list[dict], theirs: list[dict], goal: float) -> str:
    t_ours, t_theirs = (statistics.median(r["wall"] for r in runs) for runs in (ours, theirs))
    b_ours, b_theirs = (min(r["wall"] for r in runs) for runs in (ours, theirs))
    c_ours, c_theirs = (statistics.median(r["cpu"] for r in runs) for runs in (ours, theirs))
    m_ours, m_theirs = (statistics.median(r["rss_mib"] for r in runs) for runs in (ours, theirs))
    return (
        f"{label}:\n  time   median {t_ours:6.2f}s vs {t_theirs:6.2f}s = {t_ours / t_theirs:.2f}x, "
        f"best {b_ours:6.2f}s vs {b_theirs:6.2f}s = {b_ours / b_theirs:.2f}x (goal <= {goal}x)\n"
        f"  CPU (user+sys) median {c_ours:6.2f}s vs {c_theirs:6.2f}s = {c_ours / c_theirs:.2f}x\n"
        f"  peak RSS {m_ours:7.0f} MiB vs {m_theirs:7.0f} MiB = {m_ours / m_theirs:.2f}x"
    )


COMMANDS = ("make-dynamic-scale", "swap-plugin")


def cli(command: str, model: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from graphsurgeon_tools.cli import main; main()",
        command,
        str(model),
        "-o",
        str(out),
        *extra,
    ]


def compare(label: str, model: Path, out: Path, runs: int, goal: float, extra: tuple[str, ...] = ()) -> dict:
    """Both commands and the bare load+save, alternating, ``runs`` times each: one line per command."""
    bare = [
        sys.executable,
        "-c",
        "import onnx, sys; m = onnx.load(sys.argv[1]); onnx.save(m, sys.argv[2])",
        str(model),
        str(out / "bare.onnx"),
    ]
    floor = [sys.executable, "-c", FLOOR, str(model), "-o", str(out / "floor.onnx")]
    ours = {
        c: cli(c, model, out / f"{c}.onnx", "--no-check", *extra)
        for c in COMMANDS
        if not extra or c == "make-dynamic-scale"
    }  # --no-freedom is make-dynamic-scale's flag
    measure(bare)  # warm the page cache and the interpreter's imports for all
    results: dict[str, list[dict]] = {name: [] for name in ("bare", "floor", *ours)}
    for index in range(runs):
        order = [("bare", bare), ("floor", floor), *ours.items()]
        for name, command in order if index % 2 else order[::-1]:  # alternate who goes first
            results[name].append(measure(command))
    ratios = {}
    for name in ("floor", *ours):
        flags = " ".join(("--no-check", *extra))
        what = "the contract's checks alone (a typer command, no pass)" if name == "floor" else f"{name} {flags}"
        print(
            ratio_line(f"{label}: {what} vs onnx.load+onnx.save", results[name], results["bare"], goal),
            flush=True,
        )
        ratios[name] = statistics.median(r["wall"] for r in results[name]) / statistics.median(
            r["wall"] for r in results["bare"]
        )
    return ratios


def check_cost(label: str, model: Path, out: Path) -> None:
    """The built-in check on its own: the ``seconds`` the report gives, once per command."""
    for name in COMMANDS:
        done = subprocess.run(
            cli(name, model, out / f"{name}.checked.onnx", "--check", "--json"), capture_output=True, text=True
        )
        if done.returncode != 0:
            print(f"{label}: {name} --check exit {done.returncode}: {done.stderr.strip()[-300:]}", flush=True)
            continue
        check = json.loads(done.stdout).get("check") or {}
        opened = [s for s in check.get("sessions") or [] if not s.get("reused")]
        print(
            f"{label}: {name} --check: the check itself {check.get('seconds', float('nan')):.2f}s, "
            f"{len(opened)} ONNX Runtime session(s) (passed={check.get('passed')}, "
            f"skipped={check.get('skipped')!r})",
            flush=True,
        )


def best_wall(command: list[str], runs: int) -> float:
    return min(measure(command)["wall"] for _ in range(max(runs, 1)))


def stages(label: str, model: Path, out: Path, runs: int) -> None:
    """Where one command's time goes: start, imports, the pass's own stages, the rest (best of ``runs``)."""
    start = best_wall([sys.executable, "-c", "pass"], runs)
    onnx_import = best_wall([sys.executable, "-c", "import onnx"], runs)
    for name in COMMANDS:
        package = name.replace("-", "_")
        imports = best_wall(
            [
                sys.executable,
                "-c",
                f"import onnx, graphsurgeon_tools.cli, graphsurgeon_tools.passes.{package}",
            ],
            runs,
        )
        whole, timings = None, {}
        for _ in range(max(runs, 1)):
            begin = time.perf_counter()
            done = subprocess.run(
                cli(name, model, out / f"{name}.stages.onnx", "--no-check", "--json"), capture_output=True, text=True
            )
            wall = time.perf_counter() - begin
            if done.returncode != 0:
                print(f"{label}: {name} --json exit {done.returncode}: {done.stderr.strip()[-300:]}", flush=True)
                break
            if whole is None or wall < whole:
                whole, timings = wall, json.loads(done.stdout).get("timings") or {}
        if whole is None:
            continue
        work = sum(timings.values())
        parts = [
            f"start {start:.3f}",
            f"import onnx {onnx_import - start:.3f}",
            f"our imports (cli, typer, pass) {imports - onnx_import:.3f}",
        ]
        parts += [f"{key} {value:.3f}" for key, value in timings.items()]
        parts.append(f"rest (load, save, report, typer, lazy imports) {whole - imports - work:.3f}")
        print(f"{label}: {name} stages, best of {runs} (s): whole {whole:.3f} = " + ", ".join(parts), flush=True)


def compile_package() -> str:
    """Compile the bytecode of the graphsurgeon_tools the children import; returns its folder."""
    where = subprocess.run(
        [sys.executable, "-c", "import graphsurgeon_tools, os; print(os.path.dirname(graphsurgeon_tools.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run([sys.executable, "-m", "compileall", "-q", where], check=True, stdout=subprocess.DEVNULL)
    return where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sites", type=int, default=2000)
    parser.add_argument("--nodes", type=int, default=50000)
    parser.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp dir)")
    parser.add_argument("--no-freedom", action="store_true", help="also make-dynamic-scale --no-freedom rows")
    parser.add_argument("--no-check-cost", action="store_true", help="skip the --check runs")
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="leave the package's bytecode as it is (cost of compiling it on every start included "
        "when PYTHONDONTWRITEBYTECODE is set)",
    )
    parser.add_argument("--stages", action="store_true", help="also a per-stage breakdown of each command")
    args = parser.parse_args()
    if args.no_compile:
        where = subprocess.run(
            [
                sys.executable,
                "-c",
                "import graphsurgeon_tools, os; print(os.path.dirname(graphsurgeon_tools.__file__))",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        print(
            f"running {where} (bytecode as found; PYTHONDONTWRITEBYTECODE="
            f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})",
            flush=True,
        )
    else:
        print(f"running {compile_package()} (bytecode compiled first, as pip install does)", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="bench_scaling_", dir=args.dir))
    try:
        sites, nodes = folder / "sites.onnx", folder / "nodes.onnx"
        subprocess.run([sys.executable, "-c", BUILD, "sites", str(sites), str(args.sites)], check=True)
        subprocess.run([sys.executable, "-c", BUILD, "nodes", str(nodes), str(args.nodes)], check=True)
        summary: list[str] = []
        floors: list[str] = []
        for extra in ((), ("--no-freedom",)) if args.no_freedom else ((),):
            for label, model, goal in ((f"{args.sites} Resize sites", sites, 3.0), (f"{args.nodes} nodes", nodes, 2.0)):
                for name, ratio in compare(label, model, folder, args.runs, goal, extra).items():
                    if name == "floor":
                        if not extra:
                            floors.append(f"  {label:>18}  the contract's checks alone   {ratio:5.2f}x")
                        continue
                    summary.append(
                        f"  {label:>18}  {name:<18} {' '.join(extra) or '(freedom on)':<13} "
                        f"{ratio:5.2f}x (goal <= {goal}x)"
                    )
        print("median wall ratios, whole process, built-in check off:\n" + "\n".join(summary), flush=True)
        print(
            "the floor under them: a typer command doing load + structural checker + full checker + save, no pass work\n"
            + "\n".join(floors),
            flush=True,
        )
        if args.stages:
            stages(f"{args.sites} Resize sites", sites, folder, args.runs)
            stages(f"{args.nodes} nodes", nodes, folder, args.runs)
        if not args.no_check_cost:
            check_cost(f"{args.sites} Resize sites", sites, folder)
            check_cost(f"{args.nodes} nodes", nodes, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
