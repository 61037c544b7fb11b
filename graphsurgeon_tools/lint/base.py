"""The lint vocabulary: a rule, the reason it gives, the finding it makes, the report.

A rule is one check with a source: ``check(ctx, subject) -> Reason | None`` where the
subject is a Resize/Upsample site (:class:`~graphsurgeon_tools.resize.ResizeSite`), a
plugin node (a ``NodeProto`` outside the ONNX domains) or the model itself. ``None``
means the subject passes; a :class:`Reason` says why not, how sure the rule is
(``severity``) and, where one exists, the API call that rewrites the model into a
layout that passes (:class:`Fix`: a call and its keywords; the CLI spells it as a command).

Requires: a ModelProto that loads (weights may stay on disk; no rule reads them).
Ensures: :class:`LintContext` builds its maps once; every query is linear in the graph. A rule's
fix is a proposal: :mod:`.fixes` keeps it only where it works on the model at hand.
Does NOT: run a model, build a TensorRT engine, or change the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Union

from onnx import ModelProto, NodeProto

from graphsurgeon_tools.core.dtypes import dtype_name, is_known
from graphsurgeon_tools.core.graph import SHAPE_OF, scopes
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS
from graphsurgeon_tools.refusal import Fix
from graphsurgeon_tools.resize import ResizeSite

TARGETS = ("tensorrt", "onnxruntime")
SEVERITIES = ("error", "warning", "info")  # only "error" fails a lint
SUBJECTS = ("resize", "plugin", "model")
# Domains ONNX itself defines: their nodes are standard ops, never plugin lookups.
_ONNX_DOMAINS = DEFAULT_DOMAINS + ("ai.onnx.ml", "ai.onnx.preview.training")


#: The rewrites the rules point to. A rule proposes; :mod:`.fixes` keeps a proposal only where
#: it works on the model linted (applied, then linted again), so each may be tried anywhere.
LAYOUT_SIZES = Fix("make_dynamic_scale", (("layout", "sizes"),))
LAYOUT_FACTOR = Fix("make_dynamic_scale", (("layout", "factor"),))
SWAP_SIZES = Fix("swap_plugin", (("signature", "sizes"),))
SWAP_PLUGIN = Fix("swap_plugin")


def reswap(then: Fix) -> Fix:
    """Plugin nodes back to Resize (``reverse=True``), then ``then`` on the result: how a plugin
    node this tool can read is written again in another form."""
    return Fix("swap_plugin", (("reverse", True),), then=then)


@dataclass(frozen=True)
class Reason:
    """Why a subject breaks a rule (the value a check returns)."""

    text: str
    severity: str = "error"
    fix: Optional[Fix] = None  # None: no rewrite of this tool makes the subject pass
    alternatives: tuple[Fix, ...] = ()  # tried in order when ``fix`` does not work on the model

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")


Subject = Union["ResizeSite", "NodeProto", "ModelProto"]


@dataclass(frozen=True)
class Rule:
    """One rule: an id, the target it belongs to, where it comes from, and its check."""

    id: str
    target: str
    subject: str  # "resize" | "plugin" | "model"
    source: str  # repository + file, or the issue, the rule is read from
    summary: str
    check: Callable[["LintContext", Subject], Optional[Reason]]

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"rule {self.id}: target must be one of {TARGETS}")
        if self.subject not in SUBJECTS:
            raise ValueError(f"rule {self.id}: subject must be one of {SUBJECTS}")


@dataclass(frozen=True)
class Finding:
    """A rule broken by one node (or by the model)."""

    rule: str
    target: str
    severity: str
    source: str
    node: str  # node name (or its first output when unnamed); "" for the model
    op_type: str
    reason: str
    fix: Optional[Fix]
    candidates: tuple[Fix, ...] = ()  # the rule's proposals, before lint keeps the one that works

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "target": self.target,
            "severity": self.severity,
            "source": self.source,
            "node": self.node,
            "op_type": self.op_type,
            "reason": self.reason,
            "fix": self.fix.to_dict() if self.fix is not None else None,
        }


@dataclass
class LintReport:
    """What :func:`graphsurgeon_tools.lint.lint_model` found for one target."""

    target: str
    rules: tuple[str, ...]  # ids of the rules checked
    findings: list[Finding] = field(default_factory=list)
    sites: int = 0  # Resize/Upsample nodes checked
    plugin_nodes: int = 0

    @property
    def failed(self) -> bool:
        """True when a rule of the target fails (a finding of severity "error")."""
        return any(f.severity == "error" for f in self.findings)

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "failed": self.failed,
            "rules": list(self.rules),
            "sites": self.sites,
            "plugin_nodes": self.plugin_nodes,
            "counts": {s: self.count(s) for s in SEVERITIES},
            "findings": [f.to_dict() for f in self.findings],
        }


def node_label(node: "NodeProto") -> str:
    return node.name or (node.output[0] if node.output else node.op_type)


class LintContext:
    """Facts about one model that every rule reads, built once.

    ``producers`` (tensor -> node), ``graph_inputs`` (name -> elem type, initializers
    excluded), ``elem_types`` (every tensor whose element type the model states),
    ``sites`` (:func:`graphsurgeon_tools.resize.find_resize_sites`, bodies and functions
    included) and ``plugin_nodes`` (main graph). Values are traced through the main graph
    only: a shape input that reaches a body site through the body's own nodes is not seen.
    """

    def __init__(self, model: "ModelProto", sites: Iterable["ResizeSite"]) -> None:
        self.model = model
        self.sites = list(sites)
        graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS), 0)
        self.nodes = list(graph.node)
        self.producers: dict[str, "NodeProto"] = {}
        for node in self.nodes:
            for out in node.output:
                if out:
                    self.producers[out] = node
        initializers = {t.name for t in graph.initializer}
        self.initializers = initializers
        self.elem_types: dict[str, int] = {t.name: t.data_type for t in graph.initializer}
        for info in list(graph.value_info) + list(graph.output) + list(graph.input):
            if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type:
                self.elem_types[info.name] = info.type.tensor_type.elem_type
        for node in self.nodes:
            if node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS and node.output:
                for attr in node.attribute:
                    if attr.name == "value":
                        self.elem_types[node.output[0]] = attr.t.data_type
        self.graph_inputs: dict[str, int] = {
            i.name: self.elem_types.get(i.name, 0) for i in graph.input if i.name not in initializers
        }
        self.plugin_nodes = [n for n in self.nodes if n.domain not in _ONNX_DOMAINS]
        self._feeding: dict[str, tuple[str, ...]] = {}
        self._scope_graphs: Optional[dict[str, Any]] = None

    def node_of(self, site: "ResizeSite") -> "NodeProto":
        """The site's node, in whatever graph it lives (main graph, a body, a function)."""
        if site.in_main_graph:
            return self.nodes[site.node_index]
        if self._scope_graphs is None:
            self._scope_graphs = {scope.name: scope.graph for scope in scopes(self.model)}
        return self._scope_graphs[site.scope].node[site.node_index]

    def graph_inputs_feeding(self, tensor: str) -> tuple[str, ...]:
        """Graph inputs whose *values* reach ``tensor`` (walk stops at Shape/Size), in graph order.

        Linear in the nodes behind ``tensor``; answers are memoised per tensor.
        """
        if not tensor:
            return ()
        if tensor in self._feeding:
            return self._feeding[tensor]
        found: set[str] = set()
        seen: set[str] = set()
        stack = [tensor]
        while stack:
            name = stack.pop()
            if not name or name in seen:
                continue
            seen.add(name)
            if name in self.graph_inputs:
                found.add(name)
                continue
            node = self.producers.get(name)
            if node is None or node.op_type in SHAPE_OF:
                continue
            stack.extend(node.input)
        ordered = tuple(n for n in self.graph_inputs if n in found)
        self._feeding[tensor] = ordered
        return ordered

    def whole_factor_sizes(self, site: "ResizeSite") -> bool:
        """True when the site's sizes are ``Concat(<X dims>, Shape(X)[-k:] * f)`` with an integer ``f``.

        That is make-dynamic-scale's ``layout="factor"``: whatever ``f`` is fed, each output
        length is a whole multiple of the input's (out/in is whole).
        """
        concat = self.producers.get(site.sizes_tensor) if site.sizes_tensor and site.in_main_graph else None
        if concat is None or concat.op_type != "Concat" or not concat.input:
            return False
        mul = self.producers.get(concat.input[-1])
        if mul is None or mul.op_type != "Mul" or len(mul.input) != 2:
            return False
        integer = {6, 7}  # INT32, INT64
        shape_side = [t for t in mul.input if self._reads_shape_of(t, site.input_name)]
        other = [t for t in mul.input if t not in shape_side]
        return len(shape_side) == 1 and len(other) == 1 and self.elem_types.get(other[0], 0) in integer

    def _reads_shape_of(self, tensor: str, x: str) -> bool:
        node = self.producers.get(tensor)
        while node is not None and node.op_type in ("Slice", "Gather", "Identity", "Cast"):
            node = self.producers.get(node.input[0]) if node.input else None
        return node is not None and node.op_type == "Shape" and bool(node.input) and node.input[0] == x

    def elem_type_name(self, tensor: str) -> str:
        code = self.elem_types.get(tensor, 0)
        return dtype_name(code) if is_known(code) else "unknown"
