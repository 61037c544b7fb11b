"""How protobuf writes a string field: the bytes a search in a serialized model looks for.

Two searches read a model's bytes instead of walking its nodes (core.mentions: whether any node
reads or produces a name; core.output_types: whether one inference can serve the refresh and the
full check). Both look for a string field as protobuf writes it: the tag (field number << 3 | 2), the
length as a varint, the UTF-8 bytes, verbatim wherever the field sits, nested graphs included.

Requires: field numbers of string (or bytes) fields, from onnx.proto. Ensures: the exact bytes
protobuf writes for the field. Does NOT parse anything: a match in other bytes is possible, so a
search built on these answers "certainly not there" or "maybe", never a wrong "not there".
"""

from __future__ import annotations

__all__ = ["countable", "string_field"]


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def string_field(number: int, data: bytes) -> bytes:
    """How protobuf writes string field ``number`` holding ``data`` (wire type 2: tag, length, bytes)."""
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def countable(data: bytes) -> bool:
    """Whether ``bytes.count`` of :func:`string_field` (field 1 or 2) holding ``data`` counts every
    occurrence: two occurrences can overlap only where ``data`` holds a tag byte of those fields
    (0x0a, 0x12), as an occurrence can only start at one."""
    return b"\n" not in data and b"\x12" not in data
