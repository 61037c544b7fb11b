"""Static shapes through a main graph, node by node, with some tensors' shapes overridden.

``ShapeFlow(model)`` runs ONE forward pass (the base: every tensor's type and, for small
integer/float tensors such as shape vectors, its value) and can then re-run only the
nodes downstream of a changed tensor: ``flow.downstream({name: new_shape})`` walks that
cone in graph order and stops at the first node whose inputs no longer fit together,
returned as a :class:`Clash` ("Concat /neck/Concat_1 joins [1,64,60,60] with [1,64,40,40]").

Each node: a small value (Shape, Gather, Concat, Cast, arithmetic... of known values) is
computed with numpy, so a Reshape whose shape is computed from ``Shape`` follows the
change; the clash rules (Concat, broadcasting ops, MatMul, Reshape to a constant shape)
are checked on static shapes; everything else goes through ONNX's own per-node shape
inference (:func:`onnx.shape_inference.infer_node_outputs`), whose refusal is a clash too.

Requires: a ModelProto whose main graph is topologically sorted. Graph inputs whose dims
are not positive integers are probed at ``probe_dims`` (batch 1, other axes 128) unless
``input_shapes`` says otherwise. Ensures: never changes or runs the model; reads only
small initializers (at most :data:`MAX_VALUE_ELEMENTS` elements); one base pass; the nodes a
walk visits, and the readers of what it can change, read from the proto once, when first needed;
a downstream pass visits each node of the cone at most once, and counts as visits the rest of a
walk it takes from an earlier walk's memory instead of making it again (the answer and the
budget spent are those of the walk made). Does NOT look into If/Loop
bodies (their outputs are unknown) and does NOT know custom-domain ops (unknown outputs).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

import numpy as np
import onnx
from onnx import helper

from graphsurgeon_tools.core.constants import tensor_to_array
from graphsurgeon_tools.core.dtypes import elem_type
from graphsurgeon_tools.core.graph import consumers as core_consumers
from graphsurgeon_tools.core.graph import node_reads
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS, default_opset
from graphsurgeon_tools.errors import InvalidModelError
from graphsurgeon_tools.resize.shape_rules import (
    SAME_SHAPE,
    UNKNOWN,
    Clash,
    Tensor,
    clash_at,
    format_shape,
    from_type,
    label,
    plugin_output,
    quick_output,
    resize_by_scales,
    resize_by_scales_form,
)
from graphsurgeon_tools.resize.shape_values import MAX_VALUE_ELEMENTS, VALUE_OPS, compute_value

if TYPE_CHECKING:  # pragma: no cover
    from onnx import ModelProto, NodeProto

#: Same-shape unary ops whose output a pass takes straight from a static input: those of
#: SAME_SHAPE whose value no rule computes (compute_value knows the others) and that keep the type.
_FAST_UNARY = SAME_SHAPE - VALUE_OPS - {"Cast"}
#: What a node is, decided once by the base pass: ``_UNARY`` (a _FAST_UNARY op), ``_RESIZE`` (a Resize
#: of resize_by_scales_form), ``_OTHER`` (the general rules). Neither of the first two has clash rules
#: or a computed value: their answer is quick_output's, or the general rules' where it has none.
_OTHER, _UNARY, _RESIZE = 0, 1, 2
#: Not in a memo yet (None is an answer there: "the general rules decide").
_UNSEEN = object()

__all__ = ["BudgetSpent", "Clash", "MAX_VALUE_ELEMENTS", "ShapeFlow", "Tensor", "format_shape"]


class ShapeFlow:
    """Static shapes of a main graph; see the module docstring.

    Args:
        model: the model (read, never changed).
        input_shapes: shapes for graph inputs (by name) instead of the probe.
        input_values: values for small graph inputs (e.g. the scales a dynamic model is fed).
        probe_dims: (batch, other) sizes given to graph-input dims that are not positive integers;
            None leaves them unknown (then only what holds for every input size is computed).
    """

    def __init__(
        self,
        model: "ModelProto",
        *,
        input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
        input_values: Optional[Mapping[str, Any]] = None,
        probe_dims: Optional[tuple[int, int]] = (1, 128),
    ) -> None:
        self.model = model
        self.graph = model.graph
        self.opset = default_opset(model)
        self.imports = {imp.domain or "": imp.version for imp in model.opset_import}
        #: tensor -> indices of the nodes reading it (core.graph.consumers' answer) for the tensors a
        #: downstream walk can change: built by :meth:`_consumers_from`, as far up as a walk starts
        self.consumers: dict[str, list[int]] = {}
        #: the first node :attr:`consumers` has read (none yet)
        self._consumers_start = len(self.graph.node)
        #: whether every node reads only known names and writes only new ones (set by the base pass)
        self._ordered = False
        #: node index -> (node, its inputs, its outputs, its kind): read from the proto once, when visited
        self._facts: dict[int, tuple["NodeProto", list[str], list[str], int]] = {}
        self._kinds: dict[str, int] = {}  # op type -> kind, for the default domains
        self._schemas: dict[tuple[str, str], Any] = {}
        #: :meth:`_resize`'s answers by X's type and shape and the float32 scales' value
        self._resized: dict[tuple, Optional[Tensor]] = {}
        #: :meth:`_rest_key` -> (visits, clash, first lost node) of the rest of a one-override walk from there
        self._rests: dict[tuple, tuple[int, Optional[Clash], Optional[str]]] = {}
        self.base: dict[str, Tensor] = {}
        self.base_clash: Optional[Clash] = None
        self._seed(input_shapes or {}, probe_dims)
        for name, value in (input_values or {}).items():
            array = np.asarray(value)
            self.base[name] = Tensor(self.base.get(name, Tensor()).elem, tuple(array.shape), array)
        self._run_base()

    # -- the base pass -------------------------------------------------------------------
    def _seed(self, input_shapes: Mapping[str, Sequence[int]], probe: Optional[tuple[int, int]]) -> None:
        for init in self.graph.initializer:
            value = None
            dims = init.dims[:]  # Python ints
            count = 1
            for d in dims:
                count *= d
            if count <= MAX_VALUE_ELEMENTS:
                try:
                    value = tensor_to_array(init, self.model)
                except InvalidModelError:
                    value = None
            self.base[init.name] = Tensor(init.data_type, tuple(dims), value)
        for info in self.graph.input:
            if info.name in self.base:
                continue  # an initializer's default stays (ONNX: initializers override)
            tensor_type = info.type.tensor_type
            if info.name in input_shapes:
                shape: Optional[tuple] = tuple(int(d) for d in input_shapes[info.name])
            elif tensor_type.HasField("shape"):
                shape = tuple(
                    int(d.dim_value)
                    if d.HasField("dim_value") and d.dim_value > 0
                    else None
                    if probe is None
                    else (probe[0] if axis == 0 else probe[1])
                    for axis, d in enumerate(tensor_type.shape.dim)
                )
            else:
                shape = None
            self.base[info.name] = Tensor(tensor_type.elem_type, shape)

    # -- passes ---------------------------------------------------------------------------
    def downstream(
        self, overrides: Mapping[int, Callable[[list[Tensor]], Tensor]], *, budget: Optional[list[int]] = None
    ) -> tuple[Optional[Clash], Optional[str]]:
        """Re-run the nodes downstream of the nodes in ``overrides`` (node index -> function of
        that node's input Tensors giving its first output), the base everywhere else.

        Returns (clash or None, lost): ``lost`` names the first node after which a changed shape
        became unknown (then finding no clash proves nothing). ``budget``: a one-element list of
        node visits left, shared across calls and spent in place; raises BudgetSpent at zero.

        A walk from one override remembers its rest from each node where its heap runs dry (see
        :meth:`_rest_key`); a later walk that comes there in the same state takes that rest's answer
        and spends its visits without making them (a chain of 2,000 sites: each site's walk makes
        two visits, not one per site below it, and the budget runs down as it always did)."""
        heap = sorted(set(overrides))
        seen = set(heap)
        state: dict[str, Tensor] = {}
        lost: list[str] = []
        # The rests this walk will remember: (key, visits made before it). None: it neither remembers
        # nor looks one up (several overrides, whose functions a rest would depend on; or a changed
        # tensor read at or above its producer, which makes the rest depend on the way the walk came).
        marks: Optional[list[tuple[tuple, int]]] = [] if len(overrides) == 1 else None
        visits = 0
        rests = self._rests
        base = self.base
        base_get = base.get
        fact = self._fact
        consumers = self._consumers_from(heap[0]) if heap else self.consumers
        state_get = state.get
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            index = pop(heap)
            if marks is not None and not heap and index not in overrides:
                key = self._rest_key(index, state)
                rest = rests.get(key) if key is not None else None
                if rest is not None:
                    spent, clash, rest_lost = rest
                    if budget is not None:
                        if budget[0] < spent:  # the rest would have run out on the way, as below
                            budget[0] = 0
                            raise BudgetSpent()
                        budget[0] -= spent
                    visits += spent
                    result = (clash, None) if clash is not None else (None, lost[0] if lost else rest_lost)
                    break
                if key is not None and not lost:  # (a rest's first lost node is then this walk's)
                    marks.append((key, visits))
            if budget is not None:
                if budget[0] <= 0:
                    raise BudgetSpent()
                budget[0] -= 1
            visits += 1
            node, names, outs, kind = fact(index)
            if kind and index not in overrides:
                # the base pass's quick answer: X (and a Resize's scales) is all it reads
                x_name = names[0]
                x = (state_get(x_name) or base_get(x_name, UNKNOWN)) if x_name else UNKNOWN  # a Tensor is truthy
                new: Optional[Tensor] = None
                if kind == _UNARY:
                    if x.static and x.elem:
                        new = x if x.value is None else Tensor(x.elem, x.shape)
                else:
                    s_name = names[2]
                    new = self._resize(x, (state_get(s_name) or base_get(s_name, UNKNOWN)) if s_name else UNKNOWN)
                if new is not None:  # the one output, as the loop below takes it, without the dict
                    name = outs[0]
                    if not name:
                        continue
                    if not new.static and not lost:
                        lost.append(f"{node.op_type} {label(node)}")
                    old = base_get(name, UNKNOWN)
                    # same_as, asked only where the shapes agree (it is False where they do not)
                    if new.shape == old.shape and (new.value is None and old.value is None or new.same_as(old)):
                        continue
                    state[name] = new
                    readers = consumers.get(name, ())
                    if marks is not None and readers and readers[0] <= index:  # readers are in node order
                        marks = None
                    for nxt in readers:
                        if nxt not in seen:
                            seen.add(nxt)
                            push(heap, nxt)
                    continue
                inputs = [(state[n] if n in state else base_get(n, UNKNOWN)) if n else UNKNOWN for n in names]
                outputs = self._node(node, inputs)  # no quick answer: the general rules, as in the base pass
                if isinstance(outputs, Clash):
                    if all(base_get(o, UNKNOWN).shape is not None for o in outs if o):
                        result = (outputs, None)
                        break
                    outputs = {}
            else:
                inputs = [(state[n] if n in state else base_get(n, UNKNOWN)) if n else UNKNOWN for n in names]
                if index in overrides:
                    outputs = {outs[0]: overrides[index](inputs)}
                else:
                    clash = clash_at(node, inputs, [n for n in names if n in state])
                    if clash is not None:
                        result = (clash, None)
                        break
                    outputs = self._node(node, inputs)
                if isinstance(outputs, Clash):
                    if all(base_get(o, UNKNOWN).shape is not None for o in outs if o):
                        result = (outputs, None)
                        break
                    outputs = {}
            for name in outs:
                new = outputs.get(name, UNKNOWN) if name else None
                if new is None:
                    continue
                if not new.static and not lost:  # a changed input went where shapes are not followed
                    lost.append(f"{node.op_type} {label(node)}")
                if new.same_as(base_get(name, UNKNOWN)):
                    continue
                state[name] = new
                readers = consumers.get(name, ())
                if marks is not None and readers and readers[0] <= index:
                    marks = None
                for nxt in readers:
                    if nxt not in seen:
                        seen.add(nxt)
                        push(heap, nxt)
        else:
            result = (None, lost[0] if lost else None)
        for key, before in marks or ():
            rests[key] = (visits - before, *result)
        return result

    def _rest_key(self, index: int, state: Mapping[str, Tensor]) -> Optional[tuple]:
        """What the rest of a walk depends on when its heap runs dry at node ``index``, every push so
        far having gone down the graph: the node and the changed tensors it reads. No other changed
        tensor is read again (its readers would be on the heap), and everything else is the base.
        None where that is no cheap key: a node of the general rules (a body reads more than its
        inputs) or a changed tensor holding a value."""
        _, names, _, kind = self._fact(index)
        if not kind:
            return None
        key: list[Any] = [index]
        for name in names:
            tensor = state.get(name) if name else None
            if tensor is not None and tensor.value is not None:
                return None
            key.append(None if tensor is None else (tensor.elem, tensor.shape))
        return tuple(key)

    def _run_base(self) -> None:
        """The base pass, in node order. It also notes whether the graph is ordered: every name a node
        reads (its inputs and its bodies' captures) known before it (an initializer, a graph input or an
        earlier node's output) and every name it writes new. Then a tensor's readers all come after its
        producer, which lets :meth:`_consumers_from` leave out the nodes above a walk's start."""
        base = self.base
        base_get = base.get
        ordered = True
        for node in self.graph.node:
            # slices, not tuple(): a repeated field's slice is the cheapest copy of it (a visit only iterates)
            names = node.input[:]
            outs = node.output[:]
            if ordered:
                for name in node_reads(node) if len(node.attribute) else names:
                    if name and name not in base:
                        ordered = False
                for name in outs:
                    if name and name in base:
                        ordered = False
            kind = self._kind(node, names, outs)
            # A known kind's quick answer, read from X (and a Resize's scales) without the input list: a
            # chain of such ops (Relu..., or Resize sites) is most of a big graph. Where it has none, the
            # general rules decide (no clash rule applies to either kind).
            if kind == _UNARY:
                first = base_get(names[0], UNKNOWN)
                if first.static and first.elem:
                    if outs[0]:
                        base[outs[0]] = first if first.value is None else Tensor(first.elem, first.shape)
                    continue
            elif kind == _RESIZE:
                x = base_get(names[0], UNKNOWN) if names[0] else UNKNOWN
                resized = self._resize(x, base_get(names[2], UNKNOWN) if names[2] else UNKNOWN)
                if resized is not None:
                    if outs[0]:
                        base[outs[0]] = resized
                    continue
            inputs = [base_get(n, UNKNOWN) if n else UNKNOWN for n in names]
            if not kind:
                clash = clash_at(node, inputs, [])
                if clash is not None and self.base_clash is None:
                    self.base_clash = clash
            outputs = self._node(node, inputs)
            if isinstance(outputs, Clash):
                outputs = {}  # ONNX cannot say: unknown from here (not a clash of ours)
            for name in outs:
                if name:
                    base[name] = outputs.get(name, UNKNOWN)
        self._ordered = ordered

    def _kind(self, node: "NodeProto", names: list[str], outs: list[str]) -> int:
        """What a node is for the passes (see ``_UNARY``): its op type's kind, ``_OTHER`` where the quick
        answer's form does not hold (not one output, no X, a Resize not of resize_by_scales_form)."""
        if node.domain not in DEFAULT_DOMAINS:
            return _OTHER
        op = node.op_type
        kind = self._kinds.get(op)
        if kind is None:
            kind = self._kinds[op] = _UNARY if op in _FAST_UNARY else _RESIZE if op == "Resize" else _OTHER
        if kind and (
            len(outs) != 1
            or not names
            or (kind == _UNARY and not names[0])
            or (kind == _RESIZE and not resize_by_scales_form(node, names))
        ):
            return _OTHER
        return kind

    def _fact(self, index: int) -> tuple["NodeProto", list[str], list[str], int]:
        """Node ``index``, its inputs, its outputs and its kind, read once (a walk visits few nodes)."""
        fact = self._facts.get(index)
        if fact is None:
            node = self.graph.node[index]
            names = node.input[:]
            outs = node.output[:]
            fact = self._facts[index] = (node, names, outs, self._kind(node, names, outs))
        return fact

    def _consumers_from(self, start: int) -> dict[str, list[int]]:
        """:attr:`consumers`, holding every reader of every tensor that nodes ``start``.. produce.

        In an ordered graph (see :meth:`_run_base`) a reader comes after the producer of what it reads
        (had it come at or before, the name would have been unknown when read, or written twice), so
        the nodes from ``start`` on hold all those readers: a walk that starts there changes only
        tensors of those nodes and their readers. A graph that is not ordered gets every node's
        reads. Extended upwards as walks start higher, each node read once (core.graph.consumers over
        the nodes not read yet); the readers stay in node order (the ones found above come first)."""
        start = 0 if not self._ordered else max(start, 0)  # (a negative index counts from the end: all)
        stop = self._consumers_start
        if start < stop:
            consumers = self.consumers
            for name, readers in core_consumers(self.graph, start, stop).items():
                below = consumers.get(name)
                consumers[name] = readers + below if below else readers
            self._consumers_start = start
        return self.consumers

    # -- one node -------------------------------------------------------------------------
    def _resize(self, x: Tensor, scales: Tensor) -> Optional[Tensor]:
        """:func:`resize_by_scales`, kept by X's type and shape and the scales' value: a graph's Resize
        sites share a few of those (2,000 sites of one form: one computation), and a site's probe meets
        the same nodes again and again. It computes for float32 scales only: the others are not kept."""
        value = scales.value
        if value is None or value.dtype.char != "f":
            return resize_by_scales(x, scales)
        key = (x.elem, x.shape, value.dtype.str, value.shape, value.tobytes())  # the byte order too
        found = self._resized.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = self._resized[key] = resize_by_scales(x, scales)
        return found

    def _schema(self, node: "NodeProto") -> Any:
        domain = node.domain or ""
        key = (node.op_type, domain)
        if key not in self._schemas:
            version = self.imports.get(domain, self.imports.get("ai.onnx", 0) if domain == "" else 0)
            try:
                self._schemas[key] = onnx.defs.get_schema(node.op_type, version, domain)
            except onnx.defs.SchemaError:
                self._schemas[key] = None
        return self._schemas[key]

    def _node(self, node: "NodeProto", inputs: list[Tensor]) -> Any:
        """Output tensors by name, or a Clash when ONNX's shape inference refuses the node."""
        value = compute_value(node, inputs, self.model)
        if value is not None:
            try:
                elem = elem_type(value.dtype)
            except KeyError:
                elem = 0
            return {node.output[0]: Tensor(elem, tuple(int(d) for d in value.shape), value)}
        quick = quick_output(node, inputs) or plugin_output(node, inputs)
        if quick is not None:
            return {node.output[0]: quick}
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            return {}
        schema = self._schema(node)
        if schema is None:
            return {}
        types: dict[str, Any] = {}
        data: dict[str, Any] = {}
        for name, tensor in zip(node.input, inputs):
            if not name:
                continue
            if not tensor.elem:
                return {}  # ONNX's per-node inference needs every input's type
            types[name] = helper.make_tensor_type_proto(tensor.elem, tensor.shape)
            if tensor.value is not None:
                data[name] = onnx.numpy_helper.from_array(tensor.value, name)
        try:
            result = onnx.shape_inference.infer_node_outputs(schema, node, types, data)
        except (
            onnx.shape_inference.InferenceError,
            onnx.checker.ValidationError,
            RuntimeError,
            ValueError,
            TypeError,
            KeyError,
        ) as exc:  # ONNX refuses the node as it stands (a broken model: its checker says why)
            detail = " ".join(str(exc).split())
            detail = detail.replace("[ShapeInferenceError] ", "").replace("[TypeInferenceError] ", "")
            shapes = tuple(t.shape for t in inputs if t.shape is not None)
            return Clash(label(node), node.op_type, shapes, detail[:200])
        outputs = {}
        for name, type_proto in result.items():
            outputs[name] = from_type(type_proto)
        return outputs


class BudgetSpent(Exception):
    """The shared node-visit budget of :meth:`ShapeFlow.downstream` is spent."""
