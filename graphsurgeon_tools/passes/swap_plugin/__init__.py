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
sites it found), :mod:`.size_tensor` (the size-tensor builder and its inverse recogniser),
:mod:`.reverse`, :mod:`.generic` (spec-driven), :mod:`.refusals` (why a node is not
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

from graphsurgeon_tools.core import opsets
from graphsurgeon_tools.errors import OnnxToolError, UsageError
from graphsurgeon_tools.passes.base import ModelCheck, Pass
from graphsurgeon_tools.passes.swap_plugin.result import SkippedNode, SwappedNode, SwapPluginResult
from graphsurgeon_tools.plugins import PluginSpec, builtin_spec, resolve_spec

__all__ = ["SIGNATURES", "SkippedNode", "SwapPlugin", "SwapPluginResult", "SwappedNode", "swap_plugin"]

SIGNATURES = ("scales", "size-tensor", "sizes")


def _resolve_spec(spec: Union[None, str, Path, PluginSpec]) -> PluginSpec:
    if spec is None:
        return builtin_spec("DynamicTRTResize")
    if isinstance(spec, PluginSpec):
        return spec
    return resolve_spec(spec)  # a file, or a built-in spec's name ("gridsample")


class SwapPlugin(Pass):
    """The pass object behind :func:`swap_plugin` (same keywords)."""

    name = "swap-plugin"
    in_place = False

    def __init__(
        self,
        *,
        plugin: Optional[str] = None,
        signature: str = "scales",
        domain: Optional[str] = None,
        nodes: Optional[list[str]] = None,
        reverse: bool = False,
        spec: Union[None, str, Path, PluginSpec] = None,
        keep_constant: bool = False,
        size_input: Optional[str] = None,
        label: str = "the model",
        inline_functions: bool = False,
        check: bool = True,
        check_dims: Optional[dict[str, int]] = None,
        qdq_form: str = "inside",
    ) -> None:
        if signature not in SIGNATURES:
            raise UsageError(f"unknown signature {signature!r} (choose from: {', '.join(SIGNATURES)})")
        if size_input is not None and (signature != "size-tensor" or reverse):
            raise UsageError('size_input= needs signature="size-tensor" (and no reverse=True)')
        if keep_constant and signature == "sizes":
            raise UsageError('keep_constant=True has no signature="sizes" form: the V3 plugin reads its output '
                             "(h, w) from an int64 input")
        if size_input is not None and not size_input.strip():
            raise UsageError("size_input must not be empty")
        self.spec = _resolve_spec(spec)
        self.op_type = plugin or self.spec.op_type
        self.domain = domain if domain is not None else self.spec.domain
        if opsets.is_default_domain(self.domain):
            raise UsageError(f"domain={self.domain!r} is the standard ONNX domain; a plugin node needs its own")
        if reverse and self.spec.handler != "resize":
            raise UsageError(f"reverse=True only exists for the resize handler; spec {self.spec.source} is generic")
        self.signature, self.nodes, self.reverse = signature, nodes, reverse
        self.keep_constant, self.size_input, self.label = keep_constant, size_input, label
        self.inline_functions = inline_functions
        self.check, self.check_dims = check, check_dims
        from graphsurgeon_tools.passes.swap_plugin.qdq_forms import QDQ_FORMS

        if qdq_form not in QDQ_FORMS:
            raise UsageError(f"unknown qdq_form {qdq_form!r} (choose from: {', '.join(QDQ_FORMS)})")
        if qdq_form != "inside" and (reverse or self.spec.handler != "resize"):
            raise UsageError('qdq_form="integer" is a form of the forward Resize swap (no reverse=True, no generic spec)')
        self.qdq_form = qdq_form
        self.original: Any = None

    def requires(self, model: ModelProto) -> None:
        from graphsurgeon_tools.passes.swap_plugin.refusals import check_initializer_sizes

        opsets.default_opset(model)  # InvalidModelError when there is none
        opsets.raise_if_unknown_opsets(model, self.label)  # any domain onnx defines, ai.onnx.ml included
        self.model_check = ModelCheck(model, label=self.label)
        check_initializer_sizes(model, self.label)

    def call(self, model: ModelProto) -> SwapPluginResult:
        from graphsurgeon_tools.passes.swap_plugin import forward, generic, reverse

        self.original = model if self.check else None  # what the built-in check compares against
        if self.inline_functions and len(model.functions):  # a fresh proto: the caller's stays as it was
            from graphsurgeon_tools.passes.make_dynamic_scale.run import inline_local_functions

            model = inline_local_functions(model)
        elif not self.owned:  # not in place: the caller's proto stays as it was
            copy = ModelProto()
            copy.CopyFrom(model)
            model = copy
        elif self.check:  # the pass owns the proto and changes it: keep the original as bytes
            self.original = model.SerializeToString()
        result = SwapPluginResult(
            model=model, plugin=self.op_type, domain=self.domain,
            signature=self.signature if self.spec.handler == "resize" else "generic",
            reverse=self.reverse, spec_source=self.spec.source,
        )
        if self.reverse:
            reverse.reverse(model, self.spec, self.op_type, self.nodes, result, self.label)
        elif self.spec.handler == "resize":
            forward.forward_resize(model, self.spec, self.op_type, self.domain, self.signature, self.nodes,
                                   self.keep_constant, result, self.label, self.size_input, self.qdq_form)
            forward.raise_if_form_refused(self.signature, result)
        else:
            generic.forward_generic(model, self.spec, self.op_type, self.domain, self.nodes, result, self.label)
        return result

    def ensures(self, model: ModelProto, result: SwapPluginResult) -> None:  # type: ignore[override]
        if not result.changed:
            self.model_check.unchanged()
            return
        self.model_check.ensures(model, f"swap-plugin ({self.op_type})")
        if self.check:
            from graphsurgeon_tools.passes.base import Timer
            from graphsurgeon_tools.passes.swap_plugin.check import run_check

            timer = Timer(result.timings)
            result.check = run_check(self.original, model, result, op_type=self.op_type,
                                     generic=self.spec.handler != "resize", pending=result.pending_sizes,
                                     dims=self.check_dims)
            if result.check.skipped:
                result.notes.append(f"check skipped: {result.check.skipped}")
            elif result.check.tolerance:
                # no "atol=" spelling: the CLI would turn it into a flag swap-plugin does not have
                result.notes.append(f"check tolerance: {result.check.tolerance}")
            timer.lap("check")
        self.original = None  # the caller's model (or its bytes) is not kept past the run


def swap_plugin(
    model: Any,
    *,
    plugin: Optional[str] = None,
    signature: str = "scales",
    domain: Optional[str] = None,
    nodes: Optional[list[str]] = None,
    reverse: bool = False,
    spec: Union[None, str, Path, PluginSpec] = None,
    keep_constant: bool = False,
    size_input: Optional[str] = None,
    inline_functions: bool = False,
    check: bool = True,
    check_dims: Optional[dict[str, int]] = None,
    qdq_form: str = "inside",
    custom_op_libs: Optional[Sequence[Union[str, Path]]] = None,
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

    Raises UsageError, InvalidModelError / PreconditionError (the input is broken),
    InvalidScalesError, InvalidSpecError; UnsupportedModelError when the requested signature
    refuses every matched site (each reason in the message). Nothing to swap (no site, or
    only sites outside the main graph or outside the spec's match) is not an error.
    """
    label = str(model) if isinstance(model, (str, Path)) else None
    try:
        the_pass = SwapPlugin(plugin=plugin, signature=signature, domain=domain, nodes=nodes, reverse=reverse,
                              spec=spec, keep_constant=keep_constant, size_input=size_input,
                              label=label or "the model", inline_functions=inline_functions, check=check,
                              check_dims=check_dims, qdq_form=qdq_form)
        from graphsurgeon_tools.runtime.session import custom_op_scope

        with custom_op_scope(custom_op_libs):  # the built-in check's sessions register them
            return the_pass(model)  # type: ignore[return-value]
    except OnnxToolError as exc:
        # Errors name the file when there is one.
        if label is None or label in str(exc):
            raise
        relabelled = type(exc)(f"{label}: {exc}")
        relabelled.__dict__.update(exc.__dict__)  # e.g. RefusedRequestError.skipped
        raise relabelled from None
