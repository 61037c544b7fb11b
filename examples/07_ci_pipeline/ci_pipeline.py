"""A CI gate through the Python API: build the deployable model, prove it, fail the build on a mismatch.

    python ci_pipeline.py [--out build] [--junit results.xml] [--sabotage WHAT]

Steps: export the SRCNN (factor baked in) -> make its scale dynamic -> validate it in
ONNX Runtime against the PyTorch model at x2, x3, x4 -> JUnit XML for the CI system.
Exit codes follow onnxtool's: 0 passed, 1 mismatch, 3 bad input, so a CI step needs
nothing but the exit code. ``--sabotage`` breaks the model on purpose (a Resize
attribute or one weight) to show what a failing build looks like.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from exporters import export, srcnn
from graphsurgeon_tools import CheckFailedError, OnnxToolError, make_dynamic_scale, save_model, validate
from graphsurgeon_tools.validation import write_junit

SABOTAGE = ("none", "mode", "coordinate_transformation_mode", "weight")


def sabotage(model: onnx.ModelProto, what: str) -> onnx.ModelProto:
    """A copy of ``model`` with one thing wrong, the kind of slip a real pipeline makes."""
    broken = onnx.ModelProto()
    broken.CopyFrom(model)
    if what in ("mode", "coordinate_transformation_mode"):
        node = next(n for n in broken.graph.node if n.op_type == "Resize")
        value = "linear" if what == "mode" else "align_corners"
        kept = [a for a in node.attribute if a.name != what]
        del node.attribute[:]
        node.attribute.extend([*kept, helper.make_attribute(what, value)])
    elif what == "weight":
        tensor = next(t for t in broken.graph.initializer if t.name == "conv1.weight")
        weight = numpy_helper.to_array(tensor).copy()
        weight[0, 0, 4, 4] += np.float32(0.01)
        tensor.CopyFrom(numpy_helper.from_array(weight, tensor.name))
    return broken


def run(out: Path, junit: Path | None, what: str) -> int:
    out.mkdir(parents=True, exist_ok=True)

    # Build: the model as the training code exports it, then the graph rewrite.
    model = srcnn("static", factor=3)
    export(model, model.example_inputs(), out / "srcnn_x3.onnx", input_names=["input"], output_names=["output"])
    # Its own ORT check compares before and after; raise_if_failed() fails the build on a difference.
    rewrite = make_dynamic_scale(out / "srcnn_x3.onnx").raise_if_failed()
    candidate = sabotage(rewrite.model, what) if what != "none" else rewrite.model
    save_model(candidate, out / "srcnn_dynamic.onnx")

    # Prove: every factor the product promises, against the PyTorch model.
    report = validate(out / "srcnn_dynamic.onnx", "torch:srcnn", factors=[2, 3, 4])
    if junit is not None:
        write_junit(report, junit)
    for point in report.factors:
        figures = ", ".join(f"{o.output} max|diff| {o.max_abs_error:.2g}" for o in point.outputs)
        print(f"  x{point.factor:g}: {point.status} ({figures})")
    print(report.summary_line())
    report.raise_if_failed()  # CheckFailedError carries the diagnosis
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("build"))
    parser.add_argument("--junit", type=Path)
    parser.add_argument("--sabotage", choices=SABOTAGE, default="none")
    args = parser.parse_args(argv)
    try:
        return run(args.out, args.junit, args.sabotage)
    except CheckFailedError as exc:
        print(f"::error title=onnxtool validate::{exc}")  # a GitHub Actions annotation; plain text elsewhere
        return int(exc.exit_code)
    except OnnxToolError as exc:  # bad input: a different failure than a mismatch
        print(f"::error title=onnxtool::{exc}")
        return int(exc.exit_code)


if __name__ == "__main__":
    sys.exit(main())
