"""swap-plugin: ONNX nodes -> TensorRT plugin nodes, and back.

Built-in spec ``DynamicTRTResize`` (the ``resize`` handler)::

    Resize(X, roi, scales)            -> DynamicTRTResize(X, scales')            signature "scales"
    Resize(X, roi, scales)            -> DynamicTRTResize(X, size_tensor)        signature "size-tensor"
    Resize(X, roi, "", sizes)         -> DynamicTRTResize(X, size_tensor(sizes))
    Resize(X, roi, scales | sizes)    -> DynamicTRTResize(X, sizes:int64[2])     signature "sizes" (IPluginV3)
        tensorrt_plugin_shape_input_indices=[1]: (h, w) VALUES, a TensorRT shape input (:mod:`.shape_input`)
    DynamicTRTResize(X, scales | size_tensor | sizes) -> Resize(...)             reverse=True

Generic specs (``handler = "generic"``, e.g. GridSample -> grid_sampler) map inputs and
attributes as the TOML says (:mod:`graphsurgeon_tools.plugins`); they have no reverse.

Modules: :mod:`.forward` (Resize -> plugin; reuses make-dynamic-scale's rewrite on the
sites it found, through :mod:`.to_dynamic`), :mod:`.size_tensor` (the size-tensor builder and
its inverse recogniser), :mod:`.reverse`, :mod:`.generic` (spec-driven), :mod:`.refusals` (why a node is not
swapped), :mod:`.edit` (builder, value_info, plugin attributes), :mod:`.result`,
:mod:`.check` (the built-in check).

The plugin node carries ``plugin_version``/``plugin_namespace`` (TensorRT's parser looks
plugins up by op_type + those two; it ignores the domain) and the Resize semantics; the
default domain ``trt.plugins`` is only there so ONNX tools accept a non-standard op (any
domain works; ``domain=`` changes it). A size tensor carries an output size, not a scale:
the plugin then resizes with scale = out / in, which equals the original Resize only where
in * scale is a whole number. Statically known cases where it is not are skipped with that
reason; for dynamic shapes it is a note in the report.

Requires: a model that passes the ONNX checker. Ensures: the result passes
``onnx.checker.check_model(full_check=True)`` (the full checker runs ONCE per run, and
Resize-site discovery once); with ``check=True`` (default) ``result.check`` says whether ONNX
Runtime gives the original's outputs and site outputs (:mod:`.check`; a difference is returned,
not raised: ``result.raise_if_failed()``); value_info (element type, rank, symbolic dims) for every
plugin output so shape inference continues past it. Not in place: the caller's model is
never modified. Does NOT look into subgraphs or functions, and does NOT save anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence, Union

from onnx import ModelProto

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core import opsets
from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.passes.base import Pass
from graphsurgeon_tools.passes.swap_plugin import forward, generic, reverse
from graphsurgeon_tools.passes.swap_plugin.check import run_check
from graphsurgeon_tools.passes.swap_plugin.options import SIGNATURES, SwapPluginOptions
from graphsurgeon_tools.passes.swap_plugin.result import SkippedNode, SwappedNode, SwapPluginResult
from graphsurgeon_tools.plugins import PluginSpec, builtin_spec, resolve_spec

__all__ = [
    "SIGNATURES",
    "SkippedNode",
    "SwapPlugin",
    "SwapPluginOptions",
    "SwapPluginResult",
    "SwappedNode",
    "swap_plugin",
]


def _resolve_spec(spec: Union[None, str, Path, PluginSpec]) -> PluginSpec:
    if spec is None:
        return builtin_spec("DynamicTRTResize")
    if isinstance(spec, PluginSpec):
        return spec
    return resolve_spec(spec)  # a file, or a built-in spec's name ("gridsample")


class SwapPlugin(Pass):
    """The pass object behind :func:`swap_plugin` (its keywords as :class:`SwapPluginOptions`)."""

    name = "swap-plugin"
    Options = SwapPluginOptions

    def __init__(self, options: Optional[SwapPluginOptions] = None) -> None:
        super().__init__(options)
        options = self.options
        self.spec = _resolve_spec(options.spec)
        self.op_type = options.plugin or self.spec.op_type
        self.domain = options.domain if options.domain is not None else self.spec.domain
        if opsets.is_default_domain(self.domain):
            raise UsageError(f"domain={self.domain!r} is the standard ONNX domain; a plugin node needs its own")
        if options.reverse and self.spec.handler != "resize":
            raise UsageError(f"reverse=True only exists for the resize handler; spec {self.spec.source} is generic")
        if options.qdq_form != "inside" and (options.reverse or self.spec.handler != "resize"):
            raise UsageError(
                'qdq_form="integer" is a form of the forward Resize swap (no reverse=True, no generic spec)'
            )

    def call(self, model: ModelProto) -> SwapPluginResult:
        options = self.options
        # the structural check's bytes of the model as handed in; they are its copy's bytes too (a copy
        # serializes as what it copies), so a CLI run's copy below still infers from them (one serialization less)
        weightless = self.handed_bytes(model)
        if options.inline_functions and len(model.functions):  # a fresh proto: the caller's stays as it was
            functions = len(model.functions)
            model, weightless = core_graph.inline_local_functions(model), None
            if options.check:  # a snapshot: the swap goes on in place
                snapshot = ModelProto()
                snapshot.CopyFrom(model)
                self.record_step("inline-functions", snapshot, functions_inlined=functions)
        elif not self.owned:  # not in place: the caller's proto stays as it was
            copy = ModelProto()
            copy.CopyFrom(model)
            model = copy
        result = SwapPluginResult(
            model=model,
            plugin=self.op_type,
            domain=self.domain,
            signature=options.signature if self.spec.handler == "resize" else "generic",
            reverse=options.reverse,
            spec_source=self.spec.source,
        )
        if options.reverse:
            reverse.reverse(model, self.spec, self.op_type, options.nodes, result, self.label)
        elif self.spec.handler == "resize":
            forward.forward_resize(
                model,
                self.spec,
                self.op_type,
                self.domain,
                options.signature,
                options.nodes,
                options.keep_constant,
                result,
                self.label,
                options.size_input,
                options.qdq_form,
                weightless,  # None where the functions were inlined
            )
            forward.raise_if_form_refused(options.signature, result, options.qdq_form)
        else:
            generic.forward_generic(model, self.spec, self.op_type, self.domain, options.nodes, result, self.label)
        return result

    def self_check(self, reference: Any, result: SwapPluginResult) -> Any:  # type: ignore[override]
        """The plugin model against ``reference`` (the user's model) in ONNX Runtime (:mod:`.check`)."""
        check = run_check(
            reference,
            result.model,
            result,
            op_type=self.op_type,
            generic=self.spec.handler != "resize",
            pending=result.pending_sizes,
            dims=self.options.check_dims,
            optimized_figure=self.options.optimized_figure,
        )
        if check.skipped:
            result.notes.append(f"check skipped: {check.skipped}")
        elif check.tolerance:
            # no "atol=" spelling: the CLI would turn it into a flag swap-plugin does not have
            result.notes.append(f"check tolerance: {check.tolerance}")
        return check


def swap_plugin(
    model: Any,
    *,
    plugin: Optional[str] = None,
    signature: str = "scales",
    domain: Optional[str] = None,
    nodes: Optional[Sequence[str]] = None,
    reverse: bool = False,
    spec: Union[None, str, Path, PluginSpec] = None,
    keep_constant: bool = False,
    size_input: Optional[str] = None,
    inline_functions: bool = False,
    check: bool = True,
    check_dims: Optional[dict[str, int]] = None,
    qdq_form: str = "inside",
    custom_op_libs: Optional[Sequence[Union[str, Path]]] = None,
    optimized_figure: bool = False,
) -> SwapPluginResult:
    """Replace matching nodes by plugin nodes (or, with ``reverse=True``, plugin nodes by Resize).

    Args:
        model: a ModelProto (never modified), a path, or an ``onnx_graphsurgeon.Graph``
            (``result.model`` is then a Graph too).
        plugin: the op_type to emit (reverse: the op_type to turn back); default the spec's.
        signature: "scales" | "size-tensor" | "sizes" (resize handler only). "sizes" is the
            TensorRT IPluginV3 form: ``DynamicTRTResize(X, sizes:int64[2])`` with
            ``tensorrt_plugin_shape_input_indices=[1]``; constant scales first become
            make_dynamic_scale's ``layout="sizes"`` input.
        domain: the plugin node's domain; default the spec's.
        nodes: exact names or glob patterns; a pattern matching no candidate is a UsageError.
        reverse: plugin nodes back to Resize (resize handler only).
        spec: a :class:`PluginSpec`, a TOML path, a built-in spec's name (``"gridsample"``, ``"nms"``:
            ``plugins.builtin_specs()``; a file at that path wins), or None for the built-in DynamicTRTResize.
        keep_constant: constant scales stay constants instead of becoming graph inputs.
        size_input: (size-tensor signature only) make the size tensor a graph input of that
            name (``NAME_0``, ``NAME_1``... for several nodes), as in MMDeploy's tutorial:
            TensorRT then only needs the input's dims, not float scale values on its shape path.
        inline_functions: inline model-local functions first (``onnx.inliner``) so their sites
            are swapped; without it they are skipped with the reason.
        check: run the built-in check (:mod:`.check`): the plugin model (its plugin nodes
            through :func:`graphsurgeon_tools.runtime.make_session`) against the original in
            ONNX Runtime at the original factors; ``reverse=True`` compares the Resize model
            with the plugin model. A difference is returned in ``result.check``, not raised
            (``result.raise_if_failed()``); a generic spec's plugin (no kernel) skips it with
            the reason.
        check_dims: sizes for named symbolic input dims in the check.
        qdq_form: for quantized sites (DequantizeLinear -> Resize -> QuantizeLinear): "inside"
            (default: the float plugin between the DQ and the Q) or "integer" (one plugin node
            consuming and producing the quantized tensors; refused, code
            ``plugin-dtype-unsupported``, while the kernel has no int8/uint8 path). See :mod:`.qdq_forms`.
        custom_op_libs: the user's own ONNX Runtime op libraries, registered on the check's
            sessions, for models with custom ops ORT lacks.
        optimized_figure: also run both models of the check at ``ORT_ENABLE_ALL`` and report
            their difference there as a figure (``result.check.optimized``), never a verdict; it
            costs a second ONNX Runtime session per model, so it is off by default (one session
            per model, at the level the verdict is taken at).

    Raises UsageError, InvalidModelError / PreconditionError (the input is broken),
    InvalidScalesError, InvalidSpecError; UnsupportedModelError when the requested signature
    refuses every matched site (each reason in the message). Nothing to swap (no site, or
    only sites outside the main graph or outside the spec's match) is not an error.
    """
    options = SwapPluginOptions(**{key: value for key, value in locals().items() if key != "model"})
    return SwapPlugin(options)(model)  # type: ignore[return-value]
