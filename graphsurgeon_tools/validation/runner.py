"""Load a model for validation and run it in ONNX Runtime at one sweep point.

:func:`load_onnx` loads through :func:`graphsurgeon_tools.io.load_model` and refuses
nonsense scales up front; :class:`OnnxRunner` feeds a model its data plus, for each scale
input, the value for a factor, and runs it through
:func:`graphsurgeon_tools.runtime.make_session` (plugin nodes included). ``expose`` makes
it return the outputs of the resize sites as well (after the graph outputs), so that validate
compares what a rewrite changed, not only what reaches the model's outputs.

Requires: a loaded ModelProto. Ensures: a failing run is a :class:`RunFailed` (recorded in
the report, not fatal); a model ORT cannot load is an :class:`InvalidModelError` naming it.
Does NOT compare anything or print (sessions are quiet: the report carries ORT's message).
"""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence, Union

import numpy as np
import onnx

from graphsurgeon_tools.errors import InvalidModelError, UsageError, naming
from graphsurgeon_tools.extensions import environment_problem
from graphsurgeon_tools.io import load_model
from graphsurgeon_tools.resize import find_resize_sites
from graphsurgeon_tools.resize.sanity import raise_if_nonsense
from graphsurgeon_tools.resize.shape_flow import ShapeFlow
from graphsurgeon_tools.runtime.session import make_session, ort_errors
from graphsurgeon_tools.validation.ports import model_ports
from graphsurgeon_tools.validation.sweep import Factor

__all__ = ["SITE_OPS", "OnnxRunner", "RunFailed", "load_onnx", "ort_session"]

#: Nodes whose outputs validate compares too: exactly what a rewrite changed.
SITE_OPS = ("Resize", "Upsample", "DynamicTRTResize")


class RunFailed(Exception):
    """A model or reference raised while running one sweep point (recorded, not fatal)."""

    @classmethod
    def raised(cls, label: str, exc: BaseException) -> Exception:
        """What to raise when the user's module ``label`` raised ``exc`` while running.

        The module's own failure is a RunFailed (one sweep point, recorded). An environment
        problem underneath (torch missing, the C++ op it is routed through cannot be built) is
        not the module's and not a difference: it is that :class:`EnvironmentProblemError`
        (exit 5), which ends the run."""
        problem = environment_problem(exc)
        if problem is not None:
            return problem
        return cls(f"{label} raised {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")


def load_onnx(model: Union[str, os.PathLike, onnx.ModelProto], role: str = "candidate") -> onnx.ModelProto:
    """Load through :func:`graphsurgeon_tools.io.load_model` (external data inlined, checked paths).

    Nonsense scales or sizes and short tensors are refused here (exit 3, naming the file and
    the node) rather than left to surface as an ORT load error or a failed comparison.
    """
    proto = load_model(model, load_external_data=True)
    label = f"the {role} model" if isinstance(model, onnx.ModelProto) else f"{role} {model}"
    with naming(label):  # e.g. a scales tensor shorter than its shape
        sites = find_resize_sites(proto, nested=True)  # bodies and functions too: every site is gated
    for site in sites:  # the rules every command applies (the one nonsense-scales gate)
        raise_if_nonsense(site, label)
    return proto


def ort_session(model: onnx.ModelProto, where: str, *, quiet: bool = False, level: Optional[str] = None) -> Any:
    """An ONNX Runtime session that can run plugin nodes (via ``runtime.make_session``).

    ``quiet``: ORT logs nothing, not even errors (for the diagnosis, whose attribute
    variants may be combinations ORT refuses). A model ORT cannot load raises
    :class:`InvalidModelError` naming ``where``. ``level``: an ``ort.GraphOptimizationLevel``
    name (None: ORT's default, every optimization).
    """
    import onnxruntime as ort  # deferred: onnxruntime, only when a model is run

    options = ort.SessionOptions()
    if quiet:
        options.log_severity_level = 4
    if level is not None:
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    try:
        return make_session(model, sess_options=options)
    except ort_errors() as exc:  # ORT's own exception types for graphs it refuses
        raise InvalidModelError(f"ONNX Runtime cannot load {where}: {' '.join(str(exc).split())[:300]}") from exc


class OnnxRunner:
    """Runs one ONNX model in ONNX Runtime at a factor, feeding its scale inputs.

    Sessions are quiet by default: a failing run is reported with ORT's message in the
    validation report, so ORT's own log line on stderr would only say it twice.
    """

    def __init__(self, model: onnx.ModelProto, where: str, *, session: Any = None, quiet: bool = True) -> None:
        self.model = model
        self.where = where
        self.quiet = quiet
        self.ports = model_ports(model, where)
        self._session = session
        self._fixed_names = {spec.name for spec in self.ports.fixed_inputs}
        self.exposed: list[str] = []  # site tensors run() returns after the graph outputs
        self.level: Optional[str] = None  # ORT optimization level (None: ORT's default); set before the first run

    @property
    def session(self) -> Any:
        if self._session is None:
            outputs = self.model.graph.output
            for name in self.exposed:  # exposed for this session only; the caller's model is left as it was
                outputs.append(onnx.ValueInfoProto(name=name))
            try:
                self._session = ort_session(self.model, self.where, quiet=self.quiet, level=self.level)
            finally:
                for _ in self.exposed:
                    outputs.pop()
        return self._session

    def site_outputs(self) -> list[str]:
        """Outputs of the main graph's Resize/Upsample/plugin nodes that are not graph outputs."""
        graph_outputs = {o.name for o in self.model.graph.output}
        return [
            node.output[0]
            for node in self.model.graph.node
            if node.op_type in SITE_OPS and node.output and node.output[0] not in graph_outputs
        ]

    def expose(self, names: Sequence[str]) -> list[str]:
        """Also return the tensors ``names`` that a node of this model produces; returns those."""
        produced = {out for node in self.model.graph.node for out in node.output if out}
        graph_outputs = {o.name for o in self.model.graph.output}
        self.exposed = [n for n in names if n in produced and n not in graph_outputs]
        self._session = None
        return list(self.exposed)

    def feeds(
        self,
        factor: Factor,
        data: dict[str, np.ndarray],
        fixed: dict[str, np.ndarray],
        reference_baked: Optional[dict[str, tuple[float, ...]]] = None,
    ) -> dict[str, np.ndarray]:
        """Data plus one value per scale input (``fixed`` ones as given, the rest for ``factor``), and
        each declared fixed input (``fixed`` when given there, else its declared original).

        ``factor=None`` feeds each scale input the scales ``reference_baked`` holds for the
        node it drives (a static reference with different factors per node).
        """
        feeds = dict(data)
        feeds.update({name: value for name, value in fixed.items() if name in self._fixed_names})
        feeds.update(self.ports.fixed_feeds(given=feeds))
        x_shape = next(iter(data.values())).shape if data else ()
        for scale in self.ports.scale_inputs:
            if scale.name in fixed:
                feeds[scale.name] = fixed[scale.name]
            elif factor is not None:
                feeds[scale.name] = scale.feed(factor, x_shape)
            else:
                baked = next(
                    (reference_baked[n] for n in scale.nodes if reference_baked and n in reference_baked), None
                )
                if baked is None:
                    raise UsageError(
                        f"{self.where}: no baked scales to feed input {scale.name!r} "
                        f"(nodes {', '.join(scale.nodes)}); pass factors="
                    )
                feeds[scale.name] = scale.feed_scales(baked, x_shape)
        if factor is not None:
            self._site_sizes(factor, feeds, fixed)
        return feeds

    def _site_sizes(self, factor: float, feeds: dict[str, np.ndarray], fixed: dict[str, np.ndarray]) -> None:
        """A ``sizes`` input holds the output size at ITS site: floor(dim * factor) of the X that
        site resizes, which is not the data input wherever the site sits deeper in the network (a
        U-Net's decoder). Each is computed from the X shape the shape flow gives with the data
        shapes and the inputs decided before it (sites in graph order); where the flow cannot tell,
        the data-input guess stays."""
        sized = [s for s in self.ports.scale_inputs if s.layout == "sizes" and s.name not in fixed]
        if not sized:
            return
        order = {(node.name or f"#{index}"): (index, node) for index, node in enumerate(self.model.graph.node)}
        shapes = {
            name: list(np.shape(value))
            for name, value in feeds.items()
            if name not in {s.name for s in self.ports.scale_inputs}
        }
        sized.sort(key=lambda s: min((order[n][0] for n in s.nodes if n in order), default=len(order)))
        for scale in sized:
            nodes = [order[n][1] for n in scale.nodes if n in order]
            if not nodes or not nodes[0].input:
                continue
            values = {k: v for k, v in feeds.items() if k not in shapes and k != scale.name}
            flow = ShapeFlow(self.model, input_shapes=shapes, input_values=values, probe_dims=None)
            known = flow.base.get(nodes[0].input[0])
            x = known.shape if known is not None else None
            length = scale.length or len(feeds[scale.name])
            if x is None or len(x) < length or any(d is None for d in x[-length:]):
                continue
            spatial = max(len(x) - 2, 1)
            out = [int(d) for d in x[:-spatial]] + [int(np.floor(int(d) * factor)) for d in x[-spatial:]]
            feeds[scale.name] = np.asarray(out[-length:], dtype=scale.dtype)

    def run(self, feeds: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        try:
            values = self.session.run(None, feeds)
        except ort_errors() as exc:  # ORT's refusals and failed plugin kernels; bugs propagate
            raise RunFailed(f"{self.where} failed in ONNX Runtime: {' '.join(str(exc).split())[:300]}") from exc
        names = [o.name for o in self.session.get_outputs()]
        return list(zip(names, [np.asarray(v) for v in values]))
