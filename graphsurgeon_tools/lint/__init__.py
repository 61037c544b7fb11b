"""Offline target rules: what TensorRT's ONNX parser refuses, where ONNX Runtime's numbers depart.

``lint_model(model, target="tensorrt" | "onnxruntime") -> LintReport`` (``to_dict()``,
``failed``). One module per rule family, each rule a check returning its reason:

* trt_shape_inputs: integer shape-tensor graph inputs (onnx-tensorrt resizeShapeTensor;
  NVIDIA/TensorRT#2301)
* trt_axes: iota axes for tensor scales; cubic <= 2 and linear <= 3 resized axes
* trt_attributes: antialias, keep_aspect_ratio_policy, coordinate modes, opset 10,
  opset range, TensorRT's out/in arithmetic for tensor scales
* trt_plugins: plugin_version/plugin_namespace strings, tensorrt_plugin_shape_input_indices
* ort_numerics: microsoft/onnxruntime#28085, #11496, #28292; pytorch/pytorch#79361

Does NOT build a TensorRT engine (none can be built on these machines): docs/tensorrt.md.
"""

from graphsurgeon_tools.lint.base import TARGETS, Finding, LintReport, Reason, Rule
from graphsurgeon_tools.lint.runner import RULES, lint_model, rules_for

__all__ = ["RULES", "TARGETS", "Finding", "LintReport", "Reason", "Rule", "lint_model", "rules_for"]
