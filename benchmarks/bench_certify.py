"""What a certificate costs: every length 16..2048 on both axes at factors 1, 2, 3, 4, one cubic site.

The site is SRCNN's own (bicubic, half_pixel, a = -0.75, TorchScript export of the static model,
made dynamic, then swapped to the DynamicTRTResize plugin so the candidate is onnxtool's compiled
kernel -- a second engine beside ONNX Runtime's Resize). Every implementation is read:
ONNX Runtime, the candidate (plugin library), PyTorch's routed op and its own interpolate,
the TensorRT model, and onnx.reference within its per-site budget (it is per-element Python).

Prints: wall time and process CPU time; per implementation, its probes, seconds and the cost
per (length, factor, axis) probe; the comparison time; peak resident memory before and after
(bands are compared point by point and dropped: memory does not grow with the profile).
Wall time on a shared machine counts other people's work; CPU time is this process's own.

Usage: ``python benchmarks/bench_certify.py [--profile 16..2048:1,2,3,4] [--form plugin|dynamic]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="16..2048:1,2,3,4")
    parser.add_argument("--form", choices=("plugin", "dynamic"), default="plugin")
    parser.add_argument("--onnx-reference-budget", type=float, default=2.0)
    args = parser.parse_args(argv)

    from exporters.onnx_export import export_srcnn
    from graphsurgeon_tools import extensions, make_dynamic_scale, save_model, swap_plugin
    from graphsurgeon_tools.certify import certify, parse_certify_profile

    if not extensions.resize_readers():  # a checkout that is not pip-installed has no entry point
        from exporters.registrations import register

        register()

    folder = Path(tempfile.mkdtemp(prefix="bench_certify_"))
    static = folder / "srcnn_static_x3.onnx"
    export_srcnn(static, variant="static", factor=3.0, compare=False)
    dynamic = make_dynamic_scale(static).model
    candidate = folder / f"srcnn_{args.form}.onnx"
    save_model(swap_plugin(dynamic).model if args.form == "plugin" else dynamic, candidate)
    profile = parse_certify_profile(args.profile)
    points = len(profile.lengths) * len(profile.factors) * 2

    rss_before = _rss_mib()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    certificate = certify(
        candidate, "torch:srcnn", profile=profile, whole_model=False, onnx_reference_budget_s=args.onnx_reference_budget
    )
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    rss_after = _rss_mib()

    (site,) = certificate.sites
    print(
        f"profile {args.profile}: {len(profile.lengths)} lengths x {len(profile.factors)} factors x 2 axes "
        f"= {points} points; site {site.site} ({site.op_type}, {site.reference_semantics.describe()})"
    )
    print(f"certified: {certificate.certified}  wall {wall:.1f} s  process CPU {cpu:.1f} s")
    threads = {"main": 0.0, "worker": 0.0}
    for reader in site.readers:
        per = 1e6 * reader.cpu_seconds / max(reader.calls, 1)
        side = (
            "worker"
            if reader.name.startswith("torch-") or (reader.name == "candidate" and reader.key is None)
            else "main"
        )
        threads[side] += reader.cpu_seconds
        print(
            f"  {reader.name:18s} {reader.kind:5s} {reader.covers:7s} {side:6s} probes {reader.calls:6d}  "
            f"wall {reader.seconds:7.2f} s  CPU {reader.cpu_seconds:6.2f} s  {per:7.1f} us CPU/probe"
        )
    threads["main"] += site.compare_seconds
    print(
        f"  comparisons ({len(site.ledgers)} pairs per point): CPU {site.compare_seconds:.1f} s, "
        f"{1e6 * site.compare_seconds / points:.0f} us/point"
    )
    print(
        f"  per (length, factor, axis) point, every implementation and comparison: "
        f"{1e3 * wall / points:.2f} ms wall, {1e3 * cpu / points:.2f} ms CPU"
    )
    print(
        f"  this thread's CPU: main {threads['main']:.1f} s (incl. comparisons), worker {threads['worker']:.1f} s "
        "(PyTorch's own pool threads not included; process CPU above includes them)"
    )
    print(f"peak RSS {rss_before:.0f} MiB before, {rss_after:.0f} MiB after (bands dropped point by point)")
    for line in certificate.text().splitlines()[1:]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
