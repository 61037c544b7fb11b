"""Name the first node whose output differs between a candidate and an ONNX reference of the same graph.

On a failed sweep point, when the reference (an ONNX model or onnx-reference) produces tensors
of the same names as the candidate's nodes, both sides are re-run with those tensors exposed,
walked in the candidate's topological order in chunks, and compared with
:func:`graphsurgeon_tools.check.compare.compare_arrays` until the first one out of tolerance.
Its node is the place where the two sides part: every compared input of it agreed, so the
defect is in that node, on one side (the candidate's rewrite, or the reference's kernel, e.g.
onnx.reference's BatchNormalization below opset 14).

Bounded memory: the first run exposes one tensor; each later one at most ``max_tensors``, and
fewer when the largest tensor seen so far times the chunk would exceed ``max_bytes`` (a later,
bigger tensor can overshoot by its own growth); each chunk's arrays are dropped before the next
run. The graph outputs come back with every run. At most ``max_runs`` runs per side.

Requires: a candidate runner (``OnnxRunner``) and a reference with ``expose``/``run`` (see
:mod:`.references`), the failing point's factor and feeds.
Ensures: a :class:`NodeLocalisation` naming the first differing node, or ``None`` when the sides
share no node outputs, every shared tensor agrees, or a side fails to run.
Does NOT modify either model or the exposure either side had (it is restored). Weights are
compared only for the node found, and only against an ONNX model reference's same-named ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np
from onnx import numpy_helper

from graphsurgeon_tools.check.compare import compare_arrays
from graphsurgeon_tools.validation.runner import RunFailed

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_RUNS", "DEFAULT_MAX_TENSORS", "NodeLocalisation", "localise_nodes"]

DEFAULT_MAX_TENSORS = 32
DEFAULT_MAX_BYTES = 256 * 2**20
DEFAULT_MAX_RUNS = 64
ONNX_KINDS = ("onnx", "onnx-reference")  # the references with tensor names (see .references)


@dataclass
class NodeLocalisation:
    """The first node whose output differs, and whether its inputs already agreed."""

    node: str
    op_type: str
    output: str
    max_abs_error: Optional[float]
    inputs_agreed: bool  # every input tensor was compared and agreed: the defect is in this node, on one side
    uncompared_inputs: list[str] = field(default_factory=list)  # input tensors the reference lacks
    differing_weights: list[str] = field(default_factory=list)  # initializers the two models hold differently
    compared: int = 0  # tensors compared up to and including this one
    runs: int = 0  # runs per side
    note: str = ""  # the comparison's note (e.g. a shape difference)

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "op_type": self.op_type,
            "output": self.output,
            "max_abs_error": self.max_abs_error,
            "inputs_agreed": self.inputs_agreed,
            "uncompared_inputs": list(self.uncompared_inputs),
            "differing_weights": list(self.differing_weights),
            "compared": self.compared,
            "runs": self.runs,
            "note": self.note,
        }

    @property
    def message(self) -> str:
        error = "n/a" if self.max_abs_error is None else f"{self.max_abs_error:.3g}"
        if self.differing_weights:
            where = f"its weights differ ({', '.join(self.differing_weights[:4])})"
        elif self.inputs_agreed:
            where = "its inputs agreed: the defect is in this node, on one side"
        else:
            where = (
                f"inputs not compared ({', '.join(self.uncompared_inputs[:4])}): the difference may come from upstream"
            )
        detail = f"; {self.note}" if self.note else ""
        return (
            f"first differing node: {self.node or '<unnamed>'} ({self.op_type}), output {self.output!r}, "
            f"max |diff| {error}{detail}; {where} [{self.compared} tensors compared in {self.runs} "
            f"run(s) per side]"
        )


def _exposed_of(side: Any) -> list[str]:
    holder = getattr(side, "runner", side)  # OnnxModelReference keeps its exposure on its runner
    return list(getattr(holder, "exposed", []))


def _differing_weights(weights: Mapping[str, Any], reference: Any, atol: float, rtol: float) -> list[str]:
    """The node's initializers that the reference model holds under the same name, out of tolerance."""
    model = getattr(getattr(reference, "runner", None), "model", None)  # an ONNX model reference; else same graph
    if model is None or not weights:
        return []
    theirs = {t.name: t for t in model.graph.initializer if t.name in weights}
    return [
        name
        for name, tensor in weights.items()
        if name in theirs
        and not compare_arrays(
            numpy_helper.to_array(tensor), numpy_helper.to_array(theirs[name]), atol=atol, rtol=rtol
        ).passed
    ]


def localise_nodes(
    runner: Any,
    reference: Any,
    factor: Any,
    data: Sequence[tuple[str, np.ndarray]],
    feeds: Mapping[str, np.ndarray],
    *,
    atol: float,
    rtol: float,
    max_tensors: int = DEFAULT_MAX_TENSORS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_runs: int = DEFAULT_MAX_RUNS,
) -> Optional[NodeLocalisation]:
    """Walk the candidate's node outputs in order and name the first that differs from the reference's.

    Args:
        runner: the candidate's ``OnnxRunner``; reference: the sweep's reference.
        factor, data, feeds: the failing point (its factor, data inputs, the candidate's feeds).
        atol, rtol: the sweep's tolerance.
        max_tensors, max_bytes: per run, the most tensors exposed and the byte budget they steer.
        max_runs: the most runs per side before giving up (``None`` then).
    """
    if getattr(reference, "kind", "") not in ONNX_KINDS:  # a PyTorch module has no node outputs to match
        return None
    graph = runner.model.graph
    outputs = {o.name for o in graph.output}
    order = [out for node in graph.node for out in node.output if out]
    before = (_exposed_of(runner), _exposed_of(reference))
    shared = set(reference.expose([n for n in order if n not in outputs]))
    shared |= outputs  # graph outputs come back from every run of both sides
    walk = [n for n in order if n in shared]
    if not walk or not (shared - outputs):
        reference.expose(before[1])
        return None
    produced_by = {out: node for node in graph.node for out in node.output if out}
    compared: set[str] = {i.name for i in graph.input}  # both sides are fed the same inputs
    baked = runner.ports.baked_scales  # what the sweep's own run gave the reference
    position, runs, largest, count = 0, 0, 0, 0
    try:
        while position < len(walk) and runs < max_runs:
            # the first run knows no sizes yet: one tensor, then as many as the largest seen so far allows
            size = 1 if not largest else int(max(1, min(max_tensors, max_bytes // largest)))
            chunk = walk[position : position + size]
            names = [n for n in chunk if n not in outputs]
            runner.expose(names)
            reference.expose(names)
            actual = dict(runner.run(dict(feeds)))
            expected = dict(reference.run(factor, list(data), dict(feeds), baked))
            runs += 1
            largest = max([largest] + [int(np.asarray(v).nbytes) for v in (*actual.values(), *expected.values())])
            for name in chunk:
                got, want = actual.get(name), expected.get(name)
                if got is None or want is None:
                    continue
                result = compare_arrays(got, want, atol=atol, rtol=rtol, name=name)
                if result.passed:
                    compared.add(name)
                    count += 1
                    continue
                node = produced_by[name]
                weights = {t.name: t for t in graph.initializer if t.name in node.input}
                uncompared = [i for i in node.input if i and i not in compared and i not in weights]
                return NodeLocalisation(
                    node=node.name,
                    op_type=node.op_type,
                    output=name,
                    max_abs_error=result.max_abs_error,
                    inputs_agreed=not uncompared,
                    uncompared_inputs=uncompared,
                    differing_weights=_differing_weights(weights, reference, atol, rtol),
                    compared=count + 1,
                    runs=runs,
                    note=result.note if result.max_abs_error is None else "",
                )
            del actual, expected  # the chunk's arrays go before the next run
            position += len(chunk)
    except RunFailed:
        return None
    finally:
        runner.expose(before[0])
        reference.expose(before[1])
    return None
