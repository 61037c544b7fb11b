"""The user's flow on one real model, step by step, each step run once per session and cached.

``Flow(case, path, folder)`` runs ``onnxtool`` in-process (``graphsurgeon_tools.cli.main``, the
same entry point as the console script) and keeps every command's exit code, JSON report and
stderr, so the tests of later steps (validate) reuse the files earlier steps wrote:

* ``inspect()``                          -> ``inspect --json``
* ``dynamic()``                          -> ``make-dynamic-scale --from-sizes --json`` (check on;
  plus ``--simplify`` for the cases in :data:`SIMPLIFY`)
* ``plugin(signature)``                  -> ``swap-plugin --signature S --json``
* ``reversed(signature)``                -> ``swap-plugin PLUGIN --reverse --json``
* ``validate(candidate, reference)``     -> ``validate CANDIDATE -r REFERENCE --json [-i ...]``

``inputs`` (name -> .npy path) are passed to validate as ``-i NAME=FILE`` so that a model whose
output is ~0 on random noise (the text detectors) is compared on an image it responds to.

Requires: the CLI's ``--json`` reports. Does NOT: judge anything (the tests do).
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# The TorchScript exporter computes these models' interpolate sizes from Shape of static tensors
# (a subgraph ending in Shape -> Gather -> Concat): the sites are "sizes: runtime" until onnxsim
# folds them, so a user runs make-dynamic-scale with simplify (the issue asks the tool to say so).
SIMPLIFY = ("segformer/torchscript-*", "upernet/torchscript-*")
#: The bound those cases accept: onnxsim's folding measured 1e-7..1e-6 on them.
SIMPLIFY_ATOL = "1e-5"


@dataclass
class Step:
    code: int
    report: dict[str, Any]
    err: str
    output: Path | None = None

    def why(self) -> str:
        """What to show when an assertion on this step fails."""
        return f"exit {self.code}: {self.err.strip()[-600:]}"


def cli(*args: object) -> tuple[int, str, str]:
    from graphsurgeon_tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def _step(*args: object, output: Path | None = None) -> Step:
    code, out, err = cli(*args)
    try:
        report = json.loads(out) if out.strip() else {}
    except json.JSONDecodeError:
        report = {"unparsed_stdout": out}
    return Step(code, report, err, output)


def new_input_feeds(report: dict[str, Any]) -> dict[str, np.ndarray]:
    """The values a pass reports for the inputs it added: the original factors."""
    return {
        i["name"]: np.array(i["value"], dtype=i["dtype"])
        for i in report.get("new_inputs", [])
        if i.get("value") is not None
    }


@dataclass
class Flow:
    case: str
    original: Path
    folder: Path
    inputs: dict[str, Path] = field(default_factory=dict)
    _cache: dict[tuple, Step] = field(default_factory=dict)

    def _once(self, key: tuple, *args: object, output: Path | None = None) -> Step:
        if key not in self._cache:
            self._cache[key] = _step(*args, output=output)
        return self._cache[key]

    @property
    def stem(self) -> str:
        return self.case.replace("/", ".")

    def inspect(self) -> Step:
        return self._once(("inspect",), "inspect", self.original, "--json")

    def dynamic(self) -> Step:
        out = self.folder / f"{self.stem}.dynamic.onnx"
        # onnxsim refolds float constants: the check compares the written model with the user's file,
        # so these cases accept onnxsim's few-ulp difference explicitly (the report gives its share)
        simplify = (
            ("--simplify", "--atol", SIMPLIFY_ATOL) if any(fnmatch.fnmatch(self.case, p) for p in SIMPLIFY) else ()
        )
        return self._once(
            ("dynamic",),
            "make-dynamic-scale",
            self.original,
            "--from-sizes",
            *simplify,
            "-o",
            out,
            "--json",
            output=out,
        )

    def plugin(self, signature: str) -> Step:
        out = self.folder / f"{self.stem}.{signature}.plugin.onnx"
        return self._once(
            ("plugin", signature),
            "swap-plugin",
            self.original,
            "--signature",
            signature,
            "-o",
            out,
            "--json",
            output=out,
        )

    def reversed(self, signature: str) -> Step:
        plugin = self.plugin(signature)
        out = self.folder / f"{self.stem}.{signature}.reversed.onnx"
        return self._once(
            ("reversed", signature), "swap-plugin", plugin.output, "--reverse", "-o", out, "--json", output=out
        )

    def validate(self, candidate: Path, reference: Path | str, *extra: str) -> Step:
        inputs = [a for name, path in self.inputs.items() for a in ("-i", f"{name}={path}")]
        return self._once(
            ("validate", str(candidate), str(reference), extra),
            "validate",
            candidate,
            "-r",
            reference,
            *inputs,
            *extra,
            "--json",
        )
