"""How protobuf writes a string or varint field: the bytes a search in a serialized model looks for.

Searches read a model's bytes instead of walking its nodes (core.mentions: whether any node reads or
produces a name; core.output_types: whether one inference can serve the refresh and the full check;
resize.sites: whether any node is a Resize/Upsample or holds a body). They look for a field as
protobuf writes it: a string field as the tag (field number << 3 | 2), the length as a varint and the
UTF-8 bytes; a varint field as the tag (field number << 3) and the value; verbatim wherever the field
sits, nested graphs included.

Requires: field numbers of string (or bytes) fields, or of varint fields holding a value >= 0, from
onnx.proto; bytes that protobuf serialized (it writes the shortest varints, which these are; a parser
also reads longer ones, so a file's own bytes are no such search's input). Ensures: the exact bytes
protobuf writes for the field. Does NOT parse anything: a match in other bytes is possible, so a
search built on these answers "certainly not there" or "maybe", never a wrong "not there".
"""

from __future__ import annotations

__all__ = ["countable", "string_field", "varint_field"]


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


def varint_field(number: int, value: int) -> bytes:
    """How protobuf writes varint field ``number`` (an int or enum) holding ``value`` >= 0 (wire type 0: tag, value)."""
    return _varint(number << 3) + _varint(value)


def countable(data: bytes) -> bool:
    """Whether ``bytes.count`` of :func:`string_field` (field 1 or 2) holding ``data`` counts every
    occurrence: two occurrences can overlap only where ``data`` holds a tag byte of those fields
    (0x0a, 0x12), as an occurrence can only start at one."""
    return b"\n" not in data and b"\x12" not in data
