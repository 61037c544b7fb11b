"""Plugin specs: which ONNX nodes become which plugin node, written as TOML.

A spec describes one swap ``Op(inputs, attrs) -> Plugin(inputs', attrs')``:

* ``[plugin]``: the emitted ``op_type``, its ``domain``, the ``plugin_version`` and
  ``plugin_namespace`` string attributes TensorRT's ONNX parser looks a plugin up by,
  and the ``handler`` (``"generic"``, or ``"resize"`` for the built-in DynamicTRTResize,
  whose scales/size-tensor inputs are built by :mod:`graphsurgeon_tools.passes.swap_plugin`).
* ``[match]``: ``op_type`` (a name or a list), optional ``name`` glob patterns and
  ``[match.attributes]`` conditions (``attr = value`` or ``attr = [allowed, values]``;
  an absent attribute is compared by its ONNX schema default).
* ``[inputs]`` (generic handler): ``order``, the original inputs to pass, by index or by
  the ONNX schema's input name (``"boxes"``, ``2``); ``[inputs.to_attributes]``, constant
  inputs turned into attributes (``iou_threshold = "iou_threshold"``); ``[[inputs.extra]]``,
  new inputs appended (``kind = "constant"`` with ``dtype``/``value``, or
  ``kind = "graph_input"`` with ``dtype``/``shape``).
* ``[attributes]``: ``copy`` (start from the node's attributes, default true),
  ``schema_defaults`` (fill absent attributes from the ONNX schema, default true, so the
  plugin sees every field even when the exporter left it implicit), ``keep``/``drop`` lists,
  ``[attributes.values]`` maps (``mode = { bilinear = 0 }``), ``[attributes.derive.NAME]``
  (``from``/``equals``: an int attribute that is 1 iff ``from == equals``),
  ``[attributes.rename]``, ``[attributes.defaults]`` (only when absent) and
  ``[attributes.set]`` (always). Applied in that order.
* ``[[outputs]]``: one table per output: ``type = "same_as_input:0"`` (element type and
  rank of that input), or ``dtype = "int64"`` with ``rank = 2`` and optionally
  ``shape = ["num_selected", 3]``. These become value_info so shape inference continues.

Modules: :mod:`.model` (the spec dataclasses), :mod:`.parser` (TOML -> spec), :mod:`.schema`
(the type and range of every value: indices, dims, ranks, constants per dtype, attribute
values, names, nesting depth). A spec is validated completely when it is parsed: invalid
specs raise :class:`InvalidSpecError` (one line naming the file and the key, exit code 3,
like any other invalid input file); a spec file is read only if it is a regular file.

Built-in specs ship as package data (:func:`builtin_specs`: ``DynamicTRTResize``, the default;
``gridsample``, GridSample -> MMDeploy's ``grid_sampler``; ``nms``, NonMaxSuppression -> a
``CustomNMS`` plugin) and are usable by name wherever a spec path is (:func:`resolve_spec`; a
file at that path wins). This module only parses and describes specs; it never changes a model
(:func:`graphsurgeon_tools.passes.swap_plugin.swap_plugin` applies them).
"""

from graphsurgeon_tools.plugins.model import (
    BUILTIN_SPECS,
    AttributeRules,
    ExtraInput,
    InvalidSpecError,
    MatchRule,
    OutputRule,
    PluginSpec,
)
from graphsurgeon_tools.plugins.parser import builtin_spec, builtin_specs, load_spec, parse_spec, resolve_spec

__all__ = [
    "BUILTIN_SPECS",
    "AttributeRules",
    "ExtraInput",
    "InvalidSpecError",
    "MatchRule",
    "OutputRule",
    "PluginSpec",
    "builtin_spec",
    "builtin_specs",
    "load_spec",
    "parse_spec",
    "resolve_spec",
]
