"""One C-speed answer to "is every string of this ONNX file valid UTF-8?".

onnx.proto is proto2, whose strings upb parses without checking them (invalid ones come
back as ``bytes``, and the first copy into another message dies). The same bytes parsed as
a proto3 twin of onnx.proto (the same messages and field numbers, in a private descriptor
pool) are checked by the protobuf runtime itself, in C, in one pass.

Requires: the bytes of a model file. Ensures: :func:`strings_are_utf8` is True only when the
twin parses the bytes, which the runtime allows only when every string field is valid UTF-8
(checked once per process on a known-bad message: a runtime that does not check makes it
answer False, never True). False means "not proven", for any reason (bad UTF-8, a field the
twin cannot parse, a file too big to parse twice cheaply): the caller then walks the parsed
model to name the bad field (:func:`graphsurgeon_tools.io.load._first_undecodable_string`).
Does NOT name fields and does NOT keep the twin (it is dropped after the parse).
"""

from __future__ import annotations

from typing import Any, Optional

from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory
from onnx import ModelProto

__all__ = ["strings_are_utf8"]

#: Above this the twin parse (a second copy of inline weights) costs more memory than the walk saves.
TWIN_LIMIT = 64 * 1024**2

_twin: Optional[Any] = None
_twin_ready = False


def _twin_class() -> Optional[Any]:
    """The proto3 twin of onnx's ModelProto, or None when this protobuf runtime does not check
    proto3 strings on parse (or cannot build the twin)."""
    global _twin, _twin_ready
    if _twin_ready:
        return _twin
    _twin_ready = True

    proto = descriptor_pb2.FileDescriptorProto()
    ModelProto.DESCRIPTOR.file.CopyToProto(proto)
    proto.syntax = "proto3"
    pending = list(proto.message_type)
    while pending:
        current = pending.pop()
        pending.extend(current.nested_type)
        for field in current.field:
            field.ClearField("default_value")  # proto3 has none; parsing does not need them
            if field.label == descriptor_pb2.FieldDescriptorProto.LABEL_REQUIRED:
                field.label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    try:
        pool = descriptor_pool.DescriptorPool()
        pool.Add(proto)
        twin = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{proto.package}.ModelProto"))
    except (TypeError, ValueError, KeyError, AttributeError):  # a descriptor this runtime refuses
        return None
    probe = ModelProto()
    probe.graph.name = "x"
    bad = probe.SerializeToString().replace(b"x", b"\xff")
    try:
        twin().ParseFromString(bad)
    except (message.DecodeError, UnicodeDecodeError):  # upb / the pure-Python backend
        _twin = twin  # the runtime checks proto3 strings: a parse that succeeds proves them
    return _twin


def strings_are_utf8(data: bytes) -> bool:
    """True when every string field in the serialized model ``data`` is valid UTF-8 (proven by
    the twin's parse); False when that is not proven (see the module docstring)."""
    if len(data) > TWIN_LIMIT:
        return False
    twin = _twin_class()
    if twin is None:
        return False

    try:
        twin().ParseFromString(data)
    except (message.DecodeError, RuntimeError, UnicodeDecodeError):  # UnicodeDecodeError: pure-Python backend
        return False
    return True
