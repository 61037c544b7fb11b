"""Graph lookups and edits on ``onnx`` protos: producer/consumer maps, names, reachability,
and removal of what a rewrite left unused.

Requires: a ``GraphProto`` (main graph; subgraphs count as reads of their parent node).
Ensures: every walk over nested graphs uses an explicit stack (any depth; no RecursionError),
and every function is linear in the graph's size: :func:`remove_unused` builds its
maps once and walks a worklist over a consumer-count map, so a pass calls it ONCE with
all its candidates; on a big graph, candidates that no node mentions are found by searching the
graph's bytes instead of walking every node. Does NOT go through onnx-graphsurgeon (its import/export round trip
rewrites every weight), and does NOT touch weights it keeps.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Container, Iterable, Iterator, NamedTuple, Optional, Sequence

import onnx.inliner
from onnx import GraphProto, ModelProto, NodeProto, helper

from graphsurgeon_tools.core.mentions import Mentions, searchable_bytes
from graphsurgeon_tools.errors import PreconditionError

__all__ = [
    "NONDETERMINISTIC_OPS",
    "NameSet",
    "add_tensor_value_info",
    "all_tensor_names",
    "consumers",
    "downstream_tensors",
    "graphs_within",
    "inline_local_functions",
    "node_reads",
    "outer_reads",
    "producers",
    "remove_unused",
    "SHAPE_OF",
    "Scope",
    "scopes",
    "subgraphs",
    "unique_name",
    "upstream_sources",
]

#: Ops whose output is not a function of their inputs: never folded.
NONDETERMINISTIC_OPS = frozenset(
    {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}
)


def subgraphs(node: "NodeProto") -> Iterator["GraphProto"]:
    """The graphs a node carries in its attributes (If branches, Loop/Scan bodies)."""
    for attr in node.attribute:
        if attr.HasField("g"):
            yield attr.g
        yield from attr.graphs


#: The scope of the main graph (``Scope.name``; ``ResizeSite.scope``).
MAIN_GRAPH = "main graph"


class Scope(NamedTuple):
    """One graph of a model: the main graph, an If/Loop/Scan body, or a model-local function.

    ``name``: where it lives, e.g. ``"main graph"``, ``"If 'check' then_branch"``,
    ``"Loop 'steps' body / If 'inner' else_branch"``, ``"function 'local.Up'"``.
    ``graph``: the GraphProto (a FunctionProto for a function). ``parent``: the enclosing
    scope's name (None for the main graph and functions, which see no outer names).
    ``holder``: index, in the parent scope's graph, of the node whose attribute holds this
    body (None for the main graph and functions). ``function``: True inside a model-local
    function.
    """

    name: str
    graph: Any
    parent: Optional[str]
    holder: Optional[int]
    function: bool


def scopes(model: "ModelProto", *, functions: bool = True) -> Iterator[Scope]:
    """Every graph of ``model``: the main graph first, then bodies (depth first, node order),
    then model-local functions and their bodies. Iterative: any nesting depth."""
    roots: list[Scope] = [Scope(MAIN_GRAPH, model.graph, None, None, False)]
    if functions:
        for fn in model.functions:
            label = f"{fn.domain}.{fn.name}" if fn.domain else fn.name
            roots.append(Scope(f"function {label!r}", fn, None, None, True))
    for root in roots:
        stack = [root]
        while stack:
            scope = stack.pop()
            yield scope
            children = []
            for index, node in enumerate(scope.graph.node):
                if not len(node.attribute):
                    continue
                label = node.name or (node.output[0] if node.output else node.op_type)
                for attr in node.attribute:
                    bodies = ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)
                    for number, body in enumerate(bodies):
                        suffix = f"[{number}]" if len(attr.graphs) else ""
                        where = f"{node.op_type} {label!r} {attr.name}{suffix}"
                        name = where if scope.name == MAIN_GRAPH else f"{scope.name} / {where}"
                        children.append(Scope(name, body, scope.name, index, scope.function))
            stack.extend(reversed(children))


def graphs_within(graph: "GraphProto") -> Iterator["GraphProto"]:
    """``graph`` and every graph nested in it (any depth), with an explicit stack."""
    stack = [graph]
    while stack:
        current = stack.pop()
        yield current
        for node in current.node:
            if len(node.attribute):
                stack.extend(subgraphs(node))


def _bodies(graph: "GraphProto") -> list["GraphProto"]:
    return [sub for node in graph.node if len(node.attribute) for sub in subgraphs(node)]


def outer_reads(graph: "GraphProto") -> set[str]:
    """Names a subgraph reads that it does not define itself (captured from outer scopes).

    Post-order over the nesting with an explicit stack (any depth, no recursion): a body's
    captures count as reads of the graph holding it."""
    stack: list[tuple["GraphProto", list, list]] = [(graph, _bodies(graph), [])]
    while True:
        current, bodies, answers = stack[-1]
        if len(answers) < len(bodies):
            body = bodies[len(answers)]
            stack.append((body, _bodies(body), []))
            continue
        stack.pop()
        defined = {i.name for i in current.input} | {i.name for i in current.initializer}
        reads: set[str] = set()
        captured = iter(answers)  # same order as _bodies: node order, attribute order
        for node in current.node:
            reads.update(name for name in node.input if name)
            if len(node.attribute):
                for _ in subgraphs(node):
                    reads |= next(captured)
            defined.update(node.output)
        reads.update(o.name for o in current.output)
        reads -= defined
        if not stack:
            return reads
        stack[-1][2].append(reads)


def node_reads(node: "NodeProto") -> set[str]:
    """Every tensor a node reads: its inputs plus what its subgraphs capture from outside."""
    names = {name for name in node.input if name}
    for sub in subgraphs(node):
        names |= outer_reads(sub)
    return names


def producers(graph: "GraphProto") -> dict[str, int]:
    """Tensor name -> index of the node that produces it (main graph only)."""
    return {out: index for index, node in enumerate(graph.node) for out in node.output if out}


def consumers(graph: "GraphProto", start: int = 0, stop: Optional[int] = None) -> dict[str, list[int]]:
    """Tensor name -> indices of the nodes that read it (once per node), including reads from
    inside subgraphs (an If/Loop body that refers to an outer tensor counts as its parent
    node reading it). ``start``/``stop``: only the nodes in that range are read."""
    result: dict[str, list[int]] = defaultdict(list)
    nodes = graph.node
    for index in range(start, len(nodes) if stop is None else stop):
        node = nodes[index]
        # node_reads only for nodes with attributes (a body may capture): most nodes have none
        for name in node_reads(node) if len(node.attribute) else set(node.input):
            if name:
                result[name].append(index)
    return result


def all_tensor_names(graph: "GraphProto") -> set[str]:
    """Every name used in the graph (inputs, outputs, initializers, value_info, node I/O, node
    names), subgraphs included (walked iteratively)."""
    names: set[str] = set()
    add = names.update
    pending = [graph]  # bodies are gathered in the same walk over the nodes (no graphs_within pass)
    while pending:
        current = pending.pop()
        add(i.name for i in current.input)
        add(o.name for o in current.output)
        add(i.name for i in current.initializer)
        add(v.name for v in current.value_info)
        add(s.values.name for s in current.sparse_initializer)
        for node in current.node:
            add(node.input)
            add(node.output)
            if node.name:
                names.add(node.name)
            if len(node.attribute):
                pending.extend(subgraphs(node))
    names.discard("")
    return names


def add_tensor_value_info(field: Any, name: str, elem_type: int, shape: Optional[Sequence[Any]]) -> None:
    """Append to ``field`` (a graph's inputs, outputs or value_info) the entry that
    ``field.append(helper.make_tensor_value_info(name, elem_type, shape))`` appends, built in place:
    the helper builds a TypeProto and copies it, and append copies the result (a third of the cost,
    once per site of a big rewrite). ``shape``: ints, strings (names) or None (unknown dims).

    A dim of any other type is met while the entry is being built: that entry (the last one of
    ``field``) is removed again and the helper is called with the same arguments, so ``field`` ends
    as the helper leaves it (its ValueError, in its words), without a second walk of every shape."""
    info = field.add()
    info.name = name
    tensor = info.type.tensor_type
    tensor.elem_type = elem_type
    if shape is None:
        return
    dims = tensor.shape.dim
    if not shape:
        dims.extend([])  # an empty shape is written (a scalar), as the helper does
    for d in shape:
        dim = dims.add()
        if d is None:
            continue
        if isinstance(d, str):  # the dims a pass names, first: most entries have only these
            dim.dim_param = d
        elif isinstance(d, int):
            dim.dim_value = d
        else:
            del field[-1]
            field.append(helper.make_tensor_value_info(name, elem_type, shape))
            return


#: Searches of the graph's bytes a :class:`NameSet` makes before it gathers the names instead (one
#: per name asked about would read the bytes once per site of a big rewrite).
_NAME_SEARCHES = 16


class NameSet:
    """The graph's names (:func:`all_tensor_names` of the graph as it is at construction) with the
    caller's own additions and removals, used as a set (``in``, ``add``, ``update``, ``-=``): what
    :func:`unique_name` needs.

    A name that does not occur in the graph's serialized bytes is none of its names (protobuf
    keeps strings verbatim), so the walk over every node that gathers them runs only when a
    name asked about does occur there, or past :data:`_NAME_SEARCHES` searches: usually "scales"
    and its kin do not. A graph holding big or external weights is walked at once instead (its
    bytes would copy the weights).

    ``model_bytes``: the weightless bytes of the model holding ``graph`` (its main graph) as it is now
    (``Pass.handed_bytes``), when the caller has them: searched instead of a new serialization of the
    graph. They hold every string of the graph and more (the model's other fields, its functions): a
    name absent from them is none of its names; one present is looked for among the names gathered
    from them, which are the graph's (a weightless copy declares an initializer it leaves out as an
    input of the same name)."""

    def __init__(self, graph: "GraphProto", model_bytes: Optional[bytes] = None) -> None:
        blob = searchable_bytes(graph) if model_bytes is None else model_bytes  # as it is now
        self._names: Optional[set[str]] = all_tensor_names(graph) if blob is None else None
        self._blob = blob or b""
        self._in_model = model_bytes is not None
        self._added: set[str] = set()
        self._removed: set[str] = set()
        self._searches = 0  # each reads the whole blob: past _NAME_SEARCHES the names are gathered once

    def _gathered(self) -> set[str]:
        if self._names is None:
            graph = ModelProto.FromString(self._blob).graph if self._in_model else GraphProto.FromString(self._blob)
            self._names = all_tensor_names(graph)
        return self._names

    def __contains__(self, name: object) -> bool:
        if name in self._added:
            return True
        if name in self._removed or not isinstance(name, str):
            return False
        if self._names is None and self._searches < _NAME_SEARCHES:
            self._searches += 1
            if name.encode() not in self._blob:
                return False
        return name in self._gathered()

    def none_start_with(self, prefix: str) -> bool:
        """True: certainly no name here starts with ``prefix`` (its bytes occur nowhere in the graph's,
        nor does an added name start with it), so no name of a family ``prefix_0``, ``prefix_1``... is
        taken, asked in one search. False: maybe (ask ``in`` per name)."""
        if self._names is not None or any(name.startswith(prefix) for name in self._added):
            return False
        return prefix.encode() not in self._blob

    def add(self, name: str) -> None:
        self._added.add(name)
        self._removed.discard(name)

    def update(self, names: Iterable[str]) -> None:
        for name in names:
            self.add(name)

    def __isub__(self, names: Iterable[str]) -> "NameSet":
        for name in names:
            self._added.discard(name)
            self._removed.add(name)
        return self


def unique_name(taken: Any, base: str) -> str:
    """``base`` if unused, else ``base__1``, ``base__2``...; the result is added to ``taken``."""
    name, counter = base, 0
    while name in taken:
        counter += 1
        name = f"{base}__{counter}"
    taken.add(name)
    return name


def downstream_tensors(graph: "GraphProto", start: Iterable[str]) -> set[str]:
    """Every tensor computed (directly or transitively) from ``start`` in the main graph,
    ``start`` included. Requires a topologically sorted graph (one pass in node order; none on a
    big graph where no node reads ``start``, :class:`~graphsurgeon_tools.core.mentions.Mentions`)."""
    tainted = set(start)
    empty = "" in tainted
    tainted.discard("")  # an empty optional input reads nothing (node_reads leaves "" out)
    if Mentions(graph, tainted).unread():  # a site at the end of a big graph: nothing below it
        return tainted | ({""} if empty else set())
    for node in graph.node:
        # No set per node: isdisjoint on the inputs, captures only for nodes with attributes.
        hit = not tainted.isdisjoint(node.input)
        if not hit and len(node.attribute):
            hit = any(not tainted.isdisjoint(outer_reads(sub)) for sub in subgraphs(node))
        if hit:  # the outputs at once, then the "" of an omitted optional output out again: no generator per node
            tainted.update(node.output)
            tainted.discard("")
    if empty:
        tainted.add("")
    return tainted


#: Ops whose output is a data tensor's *shape*: a walk upstream for value sources stops here.
SHAPE_OF = ("Shape", "Size")


def upstream_sources(
    graph: "GraphProto",
    tensors: Iterable[str],
    producers: dict[str, int],
    sources: Container[str],
    *,
    stop_at: Container[str] = SHAPE_OF,
) -> set[str]:
    """The names among ``sources`` that reach any of ``tensors`` in the main graph (``producers``
    as :func:`producers` gives it). By default the walk does not pass a :data:`SHAPE_OF` node: a
    tensor read only for its shape is no source of the values; ``stop_at=()`` also finds the
    sources whose shape is read. Linear in the nodes visited."""
    found: set[str] = set()
    seen: set[str] = set()
    stack = list(tensors)
    while stack:
        name = stack.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        if name in sources:
            found.add(name)
            continue
        index = producers.get(name)
        if index is not None and graph.node[index].op_type not in stop_at:
            stack.extend(graph.node[index].input)
    return found


def _reads(node: "NodeProto") -> list[str]:
    """What a node reads, one entry per input slot (repeats kept), plus its subgraphs' captures.
    The count map and its decrements both use this, so they always agree."""
    reads = list(node.input)
    if len(node.attribute):
        for sub in subgraphs(node):
            reads.extend(outer_reads(sub))
    return reads


def _scan(graph: "GraphProto") -> tuple[Counter, dict[str, int]]:
    """One pass over the nodes: reads per tensor (as :func:`_reads` counts them) and
    tensor -> producer index. Inputs are gathered into one list and counted once: per-node
    Counter updates cost twice as much on upb protos."""
    reads: list[str] = []
    gather = reads.extend
    made: dict[str, int] = {}
    for index, node in enumerate(graph.node):
        gather(node.input)
        if len(node.attribute):
            for sub in subgraphs(node):
                gather(outer_reads(sub))
        outs = node.output
        if len(outs) == 1:  # the usual node: no loop
            made[outs[0]] = index
        else:
            for out in outs:
                made[out] = index
    made.pop("", None)
    return Counter(reads), made


def remove_unused(graph: "GraphProto", candidates: Iterable[str]) -> list[str]:
    """Remove the producers and initializers of ``candidates`` that nothing reads any more,
    walking upstream from them; returns the removed tensor names.

    Only the chains that lead to ``candidates`` are considered: unrelated dead nodes the
    model already had are left alone. Graph outputs and initializers that are also graph
    inputs are never removed. A node goes only when none of its outputs is read or is a
    graph output. Linear: one consumer-count map, one producer map, each node visited at
    most once per output; nodes are deleted once at the end. Call it once per pass with
    all candidates. A big graph whose nodes mention none of a few candidates is not walked
    (:class:`~graphsurgeon_tools.core.mentions.Mentions`).
    """
    pending = [name for name in candidates if name]
    if not pending:  # nothing was replaced: no scan of the whole graph
        return []
    outputs = {o.name for o in graph.output}
    inputs = {i.name for i in graph.input}
    # Candidates no node mentions (a site's old scales initializer) have no reads and no producer:
    # the walk below then only removes initializers, with the same answer as after a full scan.
    mentions = Mentions(graph, set(pending))
    counts, prod = (Counter(), {}) if mentions.unread() and mentions.unproduced() else _scan(graph)
    init_index = {init.name: index for index, init in enumerate(graph.initializer)}
    dead_nodes: set[int] = set()
    dead_inits: set[int] = set()
    removed: list[str] = []
    while pending:
        name = pending.pop()
        if name in outputs or counts.get(name, 0) > 0:
            continue
        index = prod.get(name)
        if index is not None:
            if index in dead_nodes:
                continue
            node = graph.node[index]
            if any(out in outputs or counts.get(out, 0) > 0 for out in node.output if out):
                continue
            dead_nodes.add(index)
            removed.extend(out for out in node.output if out)
            for read in _reads(node):
                counts[read] -= 1
                if counts[read] == 0 and read:
                    pending.append(read)
            continue
        position = init_index.get(name)
        if position is not None and position not in dead_inits and name not in inputs:
            dead_inits.add(position)
            removed.append(name)
    _delete_indices(graph.node, dead_nodes)
    _delete_indices(graph.initializer, dead_inits)
    if removed:
        gone = set(removed)
        kept = [v for v in graph.value_info if v.name not in gone]
        if len(kept) != len(graph.value_info):
            del graph.value_info[:]
            graph.value_info.extend(kept)
    return removed


def _delete_indices(field: "object", indices: set[int]) -> None:
    """Delete ``indices`` from a repeated proto field: one slice deletion per contiguous run,
    from the back (nothing is copied; the remaining elements shift in C)."""
    ordered = sorted(indices, reverse=True)
    position = 0
    while position < len(ordered):
        high = low = ordered[position]
        position += 1
        while position < len(ordered) and ordered[position] == low - 1:
            low = ordered[position]
            position += 1
        del field[low : high + 1]  # type: ignore[index, attr-defined]


def inline_local_functions(model: "ModelProto") -> "ModelProto":
    """A copy of ``model`` with its model-local functions inlined (``onnx.inliner``); the
    functions are dropped, their nodes become main-graph (or body) nodes. The one inliner of
    every pass (``inline_functions=True``); a model onnx cannot inline is the user's
    (PreconditionError)."""
    try:
        return onnx.inliner.inline_local_functions(model)
    except (RuntimeError, onnx.checker.ValidationError) as exc:  # the C++ inliner's refusals
        raise PreconditionError(
            f"inline_functions=True: onnx could not inline the model's functions: {' '.join(str(exc).split())[:200]}"
        ) from None
