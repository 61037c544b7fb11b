"""swap-plugin's deployable forms for a quantized Resize (``qdq_form=``).

::

    Xq -> DQ -> Resize -> Q -> Yq      qdq_form="inside" (default): Xq -> DQ -> DynamicTRTResize -> Q -> Yq
                                       (a float plugin inside the pair the quantizer wrote)
                                       qdq_form="integer": Xq -> DynamicTRTResize -> Yq
                                       (one plugin node on the quantized tensor; DQ and Q gone)

The integer form needs a kernel that takes the quantized type (int8/uint8: the one table,
:mod:`graphsurgeon_tools.resize.kernel_dtypes`, per mode), equal scale and zero point on both
sides, and mode nearest (then the integer node is exact; a linear blend on integers truncates as
ORT's integer Resize does where the pair rounds, so linear/cubic are refused); otherwise the site is
refused up front (:func:`integer_refusal`), never folded into a model the kernel cannot load.
Sites that are not a full DQ -> Resize -> Q pair are swapped in the float form either way.

Requires: the sites from :func:`graphsurgeon_tools.resize.qdq.qdq_sites` of the model as given.
Ensures: :func:`fold_integer` leaves a topologically ordered graph and value_info for each folded
output. Does NOT decide anything about sites that are not quantized.
"""

from __future__ import annotations

from typing import Any, Optional

from onnx import ModelProto

from graphsurgeon_tools.refusal import Refusal
from graphsurgeon_tools.resize.plugin_dtypes import DTYPE_CODE, dtype_refusal
from graphsurgeon_tools.resize.qdq import QdqSite

__all__ = ["QDQ_FORMS", "fold_integer", "integer_refusal"]

QDQ_FORMS = ("inside", "integer")
PARAMETERS_CODE = "qdq-parameters-differ"
ROUNDING_CODE = "qdq-integer-rounding"
#: Refusals of the requested integer form (a request refused at every site fails: RefusedRequestError).
FORM_CODES = frozenset({DTYPE_CODE, PARAMETERS_CODE, ROUNDING_CODE})


def integer_refusal(site: QdqSite, types: dict[str, Any], op_type: str, mode: str = "nearest") -> Optional[Refusal]:
    """Why ``qdq_form="integer"`` cannot fold this quantized site (whose Resize has ``mode``), or None when it can."""
    info = types.get(site.quantized_input)
    elem = info.tensor_type.elem_type if info is not None and info.HasField("tensor_type") else 0
    if not elem:
        return Refusal(
            DTYPE_CODE,
            'qdq_form="integer": the quantized tensor is of unknown type, so no integer '
            f'{op_type} node can be typed; qdq_form="inside" puts a float plugin between the '
            "DequantizeLinear and the QuantizeLinear",
        )
    refused = dtype_refusal(elem, op_type, mode=mode, what="the quantized tensor")
    if refused is not None:
        return Refusal(
            DTYPE_CODE,
            f'qdq_form="integer": {refused.text}; qdq_form="inside" puts a float plugin '
            "between the DequantizeLinear and the QuantizeLinear",
        )
    if mode != "nearest":
        # The integer kernel blends as ONNX Runtime's integer Resize does (float32 blend, truncated);
        # DequantizeLinear -> Resize -> QuantizeLinear rounds the same blend to nearest even, so the two
        # differ by one quantization step on a large share of the elements: refused, not left to the check.
        return Refusal(
            ROUNDING_CODE,
            f"qdq_form=\"integer\": mode '{mode}' on the quantized tensor truncates "
            "its blend (ONNX Runtime's integer Resize arithmetic) where the DequantizeLinear -> Resize "
            "-> QuantizeLinear pair rounds it, so one integer node differs from the pair by "
            'one quantization step; qdq_form="inside" keeps the float plugin between them',
        )
    if site.same_parameters is not True:
        what = "differ" if site.same_parameters is False else "are not constants"
        return Refusal(
            PARAMETERS_CODE,
            f'qdq_form="integer": the DequantizeLinear and QuantizeLinear scale/zero point '
            f'{what}, so one integer node cannot stand for the pair; qdq_form="inside" '
            "keeps both",
        )
    return None


def fold_integer(model: ModelProto, sites: list[QdqSite], op_type: str) -> list[str]:
    """Rewire each swapped plugin of ``sites`` onto the quantized tensors and drop its DQ and Q.

    Returns the names of the removed nodes. The plugin keeps its position (the DQ before it and
    the Q after it only go away), so the order stays topological.
    """
    graph = model.graph
    removed: list[str] = []
    for site in sites:
        plugin = next((n for n in graph.node if n.op_type == op_type and site.output in n.output), None)
        if plugin is None:
            continue
        readers: dict[str, int] = {}
        for node in graph.node:
            for name in node.input:
                readers[name] = readers.get(name, 0) + 1
        dq = next(n for n in graph.node if plugin.input[0] in n.output)
        (q,) = [n for n in graph.node if n.op_type == "QuantizeLinear" and n.input and n.input[0] == site.output]
        plugin.input[0] = dq.input[0]
        plugin.output[0] = q.output[0]
        drop = [q] + ([dq] if readers.get(dq.output[0], 0) == 1 else [])
        for node in drop:
            removed.append(node.name or node.output[0])
            graph.node.remove(node)
        stale = {site.output} | ({dq.output[0]} if dq in drop else set())
        kept = [v for v in graph.value_info if v.name not in stale]
        del graph.value_info[:]
        graph.value_info.extend(kept)
    return removed
