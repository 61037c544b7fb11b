"""Where a run-time scales/sizes tensor really comes from: the SHAPE of data, not its values.

``shape_source(model, tensor) -> ShapeSource | None``; per site, :func:`site_shape_sources` (the
run-time scales/sizes of a main-graph site that read data shapes) and :class:`SourceNotes` (the one
home of the text every command shows for them: inspect, make-dynamic-scale's and swap-plugin's
refusals and notes; one shape flow per model, built at the first question). Exporters write ``interpolate(x,
size=skip.shape[2:])`` as ``Shape(skip) -> Slice -> Concat -> Resize.sizes``; the constant
tracer sees graph data upstream and calls it run time ("computed from graph input 'x'",
"constant subgraph over 64 nodes"). Two different things hide there:

* every shape read is static: the value is the same for every input, and ``simplify=True``
  (onnxsim) folds it into a constant, after which ``from_sizes=True`` can convert the site;
* some shape read has dynamic dims: the value really changes at run time.

Requires: a ModelProto (main graph, topologically sorted). Ensures: read-only; walks at
most :data:`MAX_WALK` producers upstream of ``tensor`` and computes values with
:class:`~graphsurgeon_tools.resize.shape_flow.ShapeFlow` without probing symbolic dims (one
base pass, reusable through ``flow=``). Does NOT change the model or run onnxsim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from graphsurgeon_tools.core.constants import ValueSource
from graphsurgeon_tools.core.graph import producers
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS
from graphsurgeon_tools.resize.shape_flow import ShapeFlow, Tensor, format_shape

if TYPE_CHECKING:  # pragma: no cover
    from onnx import ModelProto

    from graphsurgeon_tools.resize.sites import ResizeSite

__all__ = ["MAX_WALK", "ShapeSource", "SourceNotes", "shape_flow_for_sources", "shape_source", "site_shape_sources"]

#: Producers walked upstream of the tensor at most.
MAX_WALK = 512


@dataclass(frozen=True)
class ShapeSource:
    """A tensor computed from the shapes of ``shapes_of`` (tensor name -> its shape, None dims dynamic)."""

    tensor: str
    shapes_of: tuple[tuple[str, Optional[tuple[Optional[int], ...]]], ...]
    value: Optional[tuple[Any, ...]]  # the folded value when every shape read is static

    @property
    def foldable(self) -> bool:
        return self.value is not None

    def describe(self) -> str:
        reads = ", ".join(f"{name!r} {format_shape(shape)}" for name, shape in self.shapes_of[:3])
        if len(self.shapes_of) > 3:
            reads += f" and {len(self.shapes_of) - 3} more"
        if self.foldable:
            value = "[" + ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in self.value) + "]"
            return (
                f"computed from the static shape of {reads}: the same {value} for every input; "
                "simplify=True folds it to a constant"
            )
        return f"computed at run time from the shape of {reads}"


def shape_flow_for_sources(model: "ModelProto") -> ShapeFlow:
    """The ShapeFlow :func:`shape_source` needs (symbolic dims left unknown), to share across calls."""
    return ShapeFlow(model, probe_dims=None)


def shape_source(model: "ModelProto", tensor: str, *, flow: Optional[ShapeFlow] = None) -> Optional[ShapeSource]:
    """How ``tensor`` depends on data shapes; None when it reads no shape (or reads data values,
    or is constant already, or the walk is over :data:`MAX_WALK` producers).

    Args:
        model: the model (read only).
        tensor: a scales or sizes tensor of a site.
        flow: :func:`shape_flow_for_sources` of ``model``, when several tensors are asked about.
    """
    graph = model.graph
    produced = producers(graph)
    inputs = {i.name for i in graph.input}
    initializers = {i.name for i in graph.initializer}
    shapes_read: dict[str, int] = {}  # tensor whose shape is read -> first Shape node reading it
    stack, seen = [tensor], set()
    while stack:
        name = stack.pop()
        if not name or name in seen or name in initializers:
            continue
        seen.add(name)
        if len(seen) > MAX_WALK:
            return None
        index = produced.get(name)
        if index is None:
            if name in inputs:
                return None  # reads a graph input's VALUES: data, not a shape
            continue
        node = graph.node[index]
        if node.op_type in ("Shape", "Size") and node.domain in DEFAULT_DOMAINS:
            shapes_read[node.input[0]] = min(index, shapes_read.get(node.input[0], index))
            continue
        stack.extend(node.input)
    if not shapes_read:
        return None
    flow = flow or shape_flow_for_sources(model)
    found = flow.base.get(tensor, Tensor())
    value = tuple(found.value.reshape(-1).tolist()) if found.value is not None else None
    ordered = sorted(shapes_read, key=shapes_read.__getitem__)  # graph order
    return ShapeSource(tensor, tuple((name, flow.base.get(name, Tensor()).shape) for name in ordered), value)


def site_shape_sources(model: "ModelProto", site: "ResizeSite", flow: ShapeFlow) -> dict[str, ShapeSource]:
    """{"scales"|"sizes": ShapeSource} for the run-time vectors of a main-graph ``site`` that read data shapes."""
    found: dict[str, ShapeSource] = {}
    if not site.in_main_graph:
        return found
    for kind, source, tensor in (
        ("scales", site.scales_source, site.scales_tensor),
        ("sizes", site.sizes_source, site.sizes_tensor),
    ):
        if source == ValueSource.RUNTIME and tensor:
            where = shape_source(model, tensor, flow=flow)
            if where is not None:
                found[kind] = where
    return found


class SourceNotes:
    """Says where a site's run-time scales/sizes come from (one shape flow per model, built lazily)."""

    def __init__(self, model: "ModelProto") -> None:
        self.model = model
        self._flow: Optional[ShapeFlow] = None

    @property
    def flow(self) -> ShapeFlow:
        """The shape flow of the model (symbolic dims unknown), built at the first use."""
        if self._flow is None:
            self._flow = shape_flow_for_sources(self.model)
        return self._flow

    def sources(self, site: "ResizeSite") -> dict[str, ShapeSource]:
        """:func:`site_shape_sources` of ``site``; builds the flow only for a site with a run-time vector."""
        if not site.in_main_graph or ValueSource.RUNTIME not in (site.scales_source, site.sizes_source):
            return {}
        return site_shape_sources(self.model, site, self.flow)

    def of_site(self, site: "ResizeSite") -> dict[str, str]:
        """{"scales"|"sizes": text} for the run-time vectors of ``site`` that read data shapes."""
        return {kind: where.describe() for kind, where in self.sources(site).items()}

    def notes(self, site: "ResizeSite") -> tuple[str, ...]:
        """The site's notes with the tracer's run-time reasons replaced where the shape source says more."""
        better = self.of_site(site)
        return tuple(
            f"{kind}: {better[kind]}" if kind in better else note
            for note in site.notes
            for kind in [note.split(":", 1)[0]]
        )
