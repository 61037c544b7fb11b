"""How a check's models run in ONNX Runtime: the session factories and the bytes ORT gets.

* :func:`plain_session`: a CPU session with the user's scoped custom-op libraries
  (``custom_op_libs=`` of the enclosing :func:`graphsurgeon_tools.runtime.session.custom_op_scope`).
* :func:`plugin_or_cpu_session`: :func:`graphsurgeon_tools.runtime.make_session` for a model with plugin
  nodes (onnxtool's kernel), :func:`plain_session` otherwise.
* :func:`session_input`: the serialized model with the tensors a check compares exposed as graph
  outputs, and the folder its external data is relative to.
* :func:`custom_domains`: the custom-domain ops of a model ORT cannot run out of the box.

Requires: ModelProtos or their bytes; ``options`` an ``onnxruntime.SessionOptions``.
Ensures: the caller's proto is left as it was (outputs appended for serialization are removed).
Does NOT import onnxruntime at module level (a pass loads this module only when it checks).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import onnx
from onnx import ModelProto

from graphsurgeon_tools.io import external_data_dir, load_model
from graphsurgeon_tools.runtime import ort_library
from graphsurgeon_tools.runtime import session as runtime_session

__all__ = ["ORT_DOMAINS", "custom_domains", "plain_session", "plugin_or_cpu_session", "session_input"]

#: Domains ORT runs out of the box (besides the default domain).
ORT_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training")


def custom_domains(model: ModelProto) -> list[str]:
    """``domain::op_type`` of every node (bodies included) in a domain ORT does not know, less local functions."""
    domains = set()

    def walk(graph: onnx.GraphProto) -> None:
        for node in graph.node:
            if node.domain not in ORT_DOMAINS:
                domains.add(f"{node.domain}::{node.op_type}")
            for attr in node.attribute:
                if attr.HasField("g"):
                    walk(attr.g)
                for sub in attr.graphs:
                    walk(sub)

    walk(model.graph)
    local = {(f.domain, f.name) for f in model.functions}
    return sorted(d for d in domains if tuple(d.split("::", 1)) not in local)


def plain_session(model: Union[bytes, str], options: Any) -> Any:
    """A CPU session of ``model`` (bytes or a path) with the scoped custom-op libraries registered."""
    import onnxruntime as ort  # deferred: onnxruntime, only when a check runs

    for library in runtime_session.scoped_custom_op_libs():  # the user's op libraries (custom_op_libs= of the call)
        ort_library.register(options, library)
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def plugin_or_cpu_session(blob: bytes, options: Any) -> Any:
    """make_session for a model with plugin nodes (onnxtool's kernel), a plain CPU session otherwise."""
    proto = ModelProto.FromString(blob)
    if runtime_session.plugin_nodes(proto):
        return runtime_session.make_session(proto, sess_options=options)
    return plain_session(blob, options)


def session_input(proto: ModelProto, extra_outputs: Sequence[str]) -> tuple[bytes, Optional[str]]:
    """Bytes for ORT (``extra_outputs`` exposed as graph outputs) plus the folder external data is relative to."""
    folder = external_data_dir(proto)
    if folder is not None and not _utf8(str(folder)):
        # ORT takes the data folder as UTF-8 config text, which a non-UTF-8 folder name is not:
        # give it the weights inline instead (a copy; the caller's proto keeps pointing at disk).
        inline = ModelProto()
        inline.CopyFrom(proto)
        load_model(inline, load_external_data=True)
        proto, folder = inline, None
    added = 0
    for name in extra_outputs:  # appended, serialized, then removed: no copy of the weights
        proto.graph.output.append(onnx.ValueInfoProto(name=name))
        added += 1
    try:
        blob = proto.SerializeToString()
    finally:
        for _ in range(added):
            proto.graph.output.pop()
    return blob, (str(folder) if folder else None)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # surrogate-escaped bytes of a non-UTF-8 file name
        return False
    return True
