"""How a check's models run in ONNX Runtime: the session factories, the bytes ORT gets, and
one session per model and level however many comparisons a check makes.

* :func:`session_for`: the session a comparison runs a model in. Inside
  :func:`graphsurgeon_tools.check.reuse.reuse_sessions`
  the session opened for a model object at a level is kept and reused by every later comparison
  of the same object at that level (further seeds, a step measured against the same user model,
  the quantized tensors of a QDQ check), so a check opens ONE session per model; outside it each
  session is released after its run (one alive at a time: the least memory). A kept session
  exposes every Resize/Upsample/plugin output of its model (and what the scope's first caller
  names), so a later comparison finds the tensors it fetches; one that needs a tensor the kept
  session does not expose gets a new session, and the caller's report says so.
* :func:`check_options`: the session options of every check run (the level; no thread spinning
  between the check's few runs; ORT's own log off, its errors come back as exceptions).
* :func:`plain_session`: a CPU session with the user's scoped custom-op libraries
  (``custom_op_libs=`` of the enclosing :func:`graphsurgeon_tools.runtime.session.custom_op_scope`).
* :func:`plugin_or_cpu_session`: :func:`graphsurgeon_tools.runtime.make_session` for a model with plugin
  nodes (onnxtool's kernel), :func:`plain_session` otherwise.
* :func:`session_input`: the serialized model with the tensors a check compares exposed as graph
  outputs, and the folder its external data is relative to.
* :func:`custom_domains`: the custom-domain ops of a model ORT cannot run out of the box.

Requires: ModelProtos or their bytes; ``options`` an ``onnxruntime.SessionOptions``.
Ensures: the caller's proto is left as it was (outputs appended for serialization are removed);
kept sessions are released when the outermost ``reuse_sessions`` ends.
Does NOT import onnxruntime at module level (a pass loads this module only when it checks).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

import onnx
from onnx import ModelProto

from graphsurgeon_tools.check import reuse
from graphsurgeon_tools.io import external_data_dir, load_model
from graphsurgeon_tools.runtime import ort_library
from graphsurgeon_tools.runtime import session as runtime_session

__all__ = [
    "ORT_DOMAINS",
    "SITE_OPS",
    "check_options",
    "custom_domains",
    "plain_session",
    "plugin_or_cpu_session",
    "session_for",
    "session_input",
    "site_outputs",
]

#: Domains ORT runs out of the box (besides the default domain).
ORT_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training")
#: The nodes whose outputs a check compares besides the graph outputs.
SITE_OPS = ("Resize", "Upsample", "DynamicTRTResize")

SessionFactory = Callable[[bytes, Any], Any]


def check_options(level: str, folder: Optional[str] = None) -> Any:
    """SessionOptions for a check's run at ``level`` (a name of ``ort.GraphOptimizationLevel``)."""
    import onnxruntime as ort  # deferred: onnxruntime, only when a check runs

    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    options.log_severity_level = 4  # failures come back as exceptions, reported in one line; ORT's
    # own coloured log line on stderr would only say it twice (and break the one-line contract)
    # A check runs each session a few times: intra-op threads spinning between runs only burn CPU.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if folder:
        options.add_session_config_entry("session.model_external_initializers_file_folder_path", folder)
    return options


def site_outputs(model: ModelProto) -> list[str]:
    """The outputs of the main graph's Resize/Upsample/plugin nodes that are not graph outputs."""
    graph_outputs = {o.name for o in model.graph.output}
    return [
        node.output[0]
        for node in model.graph.node
        if node.op_type in SITE_OPS and node.output and node.output[0] and node.output[0] not in graph_outputs
    ]


def session_for(
    model: object,
    proto: ModelProto,
    level: str,
    needed: Sequence[str],
    factory: SessionFactory,
    *,
    expose: Sequence[str] = (),
) -> tuple[Any, bool]:
    """``(session, opened)``: a session of ``proto`` (the model object ``model``, parsed) at ``level``
    whose outputs include the graph outputs and ``needed``. Inside ``reuse_sessions`` the one kept
    for ``model`` at ``level`` when it exposes ``needed`` (``opened`` False), else a new one, kept,
    exposing also every site output and ``expose`` (the tensors the model's node produce)."""
    scope = reuse.active()
    graph_outputs = {o.name for o in proto.graph.output}
    wanted = [name for name in dict.fromkeys(needed) if name not in graph_outputs]
    if scope is not None:
        found = scope.find(model, level, wanted)
        if found is not None:
            return found, False
        produced = {name for node in proto.graph.node for name in node.output if name}
        more = [name for name in (*site_outputs(proto), *expose) if name in produced and name not in graph_outputs]
        wanted = list(dict.fromkeys([*wanted, *more]))
    blob, folder = session_input(proto, wanted)
    session = factory(blob, check_options(level, folder))
    if scope is not None:
        scope.keep(model, level, session, wanted)
    return session, True


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
