"""Opset imports: which version of the default ONNX domain a model uses, and domain edits.

Requires: a ModelProto. Ensures: :func:`default_opset` has ONE behaviour everywhere: the
version of the first ``""``/``"ai.onnx"`` entry of ``opset_import``, and
:class:`~graphsurgeon_tools.errors.InvalidModelError` when there is none (the ONNX checker
refuses such a model too, so no caller can do anything sensible with a made-up version;
a caller that reads models leniently catches the error where it needs to).
Does NOT convert nodes between opsets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from graphsurgeon_tools.errors import InvalidModelError

# The opset gate lives below core (io refuses such a file while loading it); passes and checks
# handed a ModelProto call it through here.
from graphsurgeon_tools.io.load import raise_if_unknown_opsets, unknown_opsets

if TYPE_CHECKING:  # pragma: no cover
    from onnx import GraphProto, ModelProto

__all__ = [
    "DEFAULT_DOMAINS",
    "default_opset",
    "domain_in_use",
    "drop_unused_opset",
    "ensure_opset_import",
    "is_default_domain",
    "raise_if_unknown_opsets",
    "set_default_opset",
    "unknown_opsets",
]

#: The spellings of the default ONNX domain; onnxruntime and the checker know them without registration.
DEFAULT_DOMAINS = ("", "ai.onnx")


def is_default_domain(domain: str) -> bool:
    """True for the default ONNX domain (``""`` or ``"ai.onnx"``)."""
    return domain in DEFAULT_DOMAINS


def default_opset(model: "ModelProto") -> int:
    """The version of the default ONNX domain the model imports. Raises InvalidModelError if none."""
    for opset in model.opset_import:
        if opset.domain in DEFAULT_DOMAINS:
            return int(opset.version)
    raise InvalidModelError("the model imports no version of the default ONNX domain (opset_import)")


def set_default_opset(model: "ModelProto", version: int) -> None:
    """Set the default-domain opset version in place (adding the import if missing). Converts no node."""
    for opset in model.opset_import:
        if opset.domain in DEFAULT_DOMAINS:
            opset.version = version
            return
    model.opset_import.add(domain="", version=version)


def ensure_opset_import(model: "ModelProto", domain: str, version: int = 1) -> None:
    """Import ``domain`` at ``version`` unless the model already imports it (any version is kept)."""
    if not any(op.domain == domain for op in model.opset_import):
        model.opset_import.add(domain=domain, version=version)


def domain_in_use(model: "ModelProto", domain: str) -> bool:
    """Whether any node uses ``domain``: main graph, If/Loop/Scan bodies, and model functions."""
    graphs: list["GraphProto"] = [model.graph]
    while graphs:
        graph = graphs.pop()
        for node in graph.node:
            if node.domain == domain:
                return True
            graphs.extend(_subgraphs(node.attribute))
    return any(node.domain == domain for function in model.functions for node in function.node)


def drop_unused_opset(model: "ModelProto", domain: str) -> None:
    """Remove the import of ``domain`` when no node (anywhere, see :func:`domain_in_use`) uses it.
    The default domain is never dropped."""
    if domain in DEFAULT_DOMAINS or domain_in_use(model, domain):
        return
    kept = [op for op in model.opset_import if op.domain != domain]
    del model.opset_import[:]
    model.opset_import.extend(kept)


def _subgraphs(attributes: Iterable) -> list["GraphProto"]:
    found = []
    for attr in attributes:
        if attr.HasField("g"):
            found.append(attr.g)
        found.extend(attr.graphs)
    return found
