"""core.wire gives the bytes protobuf itself writes for a string field, short and long (varint) lengths."""

from __future__ import annotations

import pytest
from onnx import helper

from graphsurgeon_tools.core.wire import countable, string_field


@pytest.mark.parametrize("name", ["x", "a" * 127, "b" * 128, "c" * 20000, "ünï"])
def test_string_field_is_what_protobuf_writes(name: str) -> None:
    node = helper.make_node("Relu", [name], ["y"])
    data = name.encode()
    assert node.SerializeToString().startswith(string_field(1, data))  # input: NodeProto field 1, first
    assert string_field(2, b"y") in node.SerializeToString()  # output: field 2
    assert string_field(4, b"Relu") in node.SerializeToString()  # op_type: field 4
    assert string_field(1, data + b"z") not in node.SerializeToString()


def test_countable_refuses_data_holding_a_tag_byte() -> None:
    assert countable(b"plain_name")
    assert not countable(b"with\nnewline")
    assert not countable(b"with\x12byte")
    # why: with a tag byte inside, two occurrences overlap and bytes.count misses one
    data = b"\n\x02"
    field = string_field(1, data)
    assert field == b"\n\x02\n\x02"
    stream = field + b"\n\x02"  # holds it twice, overlapping (at 0 and at 2)
    assert stream.find(field, 1) == 2
    assert stream.count(field) == 1
