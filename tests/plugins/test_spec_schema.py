"""The spec schema (graphsurgeon_tools.plugins.schema): every malformed value is refused at parse time.

Each entry is a spec that used to get through the parser and fail later (an OverflowError in
numpy, a reshape ValueError, a PostconditionError from the checker, a RecursionError in
tomllib): now one InvalidSpecError line naming the file and the key, exit code 3.
"""

from __future__ import annotations

import pytest

from graphsurgeon_tools.plugins import InvalidSpecError, parse_spec, schema

HEAD = '[plugin]\nop_type = "P"\n[match]\nop_type = "Resize"\n'

REFUSED = {
    "match attributes not a table": ('[plugin]\nop_type = "P"\n[match]\nop_type = "Resize"\nattributes = 3\n', "table"),
    "index out of range": (HEAD + "[inputs]\norder = [99999999999999999]\n", "input index"),
    "to_attributes index out of range": (HEAD + '[inputs.to_attributes]\n"99999999" = "x"\n', "input index"),
    "int8 overflow": (HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "int8"\nvalue = 1000\n', "does not fit int8"),
    "uint8 negative": (HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "uint8"\nvalue = -1\n', "does not fit uint8"),
    "float into int": (HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "int32"\nvalue = 1.5\n', "not an integer"),
    "bool out of 0/1": (HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "bool"\nvalue = 5\n', "does not fit bool"),
    "float16 overflow": (HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "float16"\nvalue = 1e6\n', "float16"),
    "nan constant": (HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "float32"\nvalue = nan\n', "finite"),
    "empty constant": (HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "float32"\nvalue = []\n', "empty"),
    "shape mismatch": (
        HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "float32"\nvalue = [1, 2, 3]\nshape = [2, 2]\n',
        "needs 4",
    ),
    "huge shape": (
        HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "float32"\nvalue = [1]\nshape = [1000000000, 1000000000]\n',
        "needs",
    ),
    "dim beyond int64": (
        HEAD + '[[inputs.extra]]\nname = "e"\nkind = "graph_input"\ndtype = "float32"\n'
        "shape = [99999999999999999999]\n",
        "2**63-1",
    ),
    "rank too high": (
        HEAD
        + '[[inputs.extra]]\nname = "e"\nkind = "graph_input"\ndtype = "float32"\nshape = ['
        + ", ".join(["1"] * 65)
        + "]\n",
        "rank 65",
    ),
    "graph input without shape": (
        HEAD + '[[inputs.extra]]\nname = "e"\nkind = "graph_input"\ndtype = "float32"\n',
        "needs a shape",
    ),
    "duplicate extra": (
        HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "float32"\nvalue = 1\n'
        '[[inputs.extra]]\nname = "e"\ndtype = "float32"\nvalue = 2\n',
        "already",
    ),
    "empty attribute list": (HEAD + "[attributes.set]\nx = []\n", "empty list"),
    "attribute name empty": (HEAD + '[attributes.set]\n"" = 1\n', "must not be empty"),
    "attribute name with a space": (HEAD + '[attributes.set]\n"a b" = 1\n', "not a valid name"),
    "attribute int64 overflow": (HEAD + "[attributes.set]\nx = 9223372036854775808\n", "int64"),
    "attribute float32 overflow": (HEAD + "[attributes.set]\nx = 1e300\n", "float32"),
    "attribute nan": (HEAD + "[attributes.set]\nx = nan\n", "finite"),
    "keep empty": (HEAD + "[attributes]\nkeep = []\n", "copy = false"),
    "drop empty": (HEAD + "[attributes]\ndrop = []\n", "empty list"),
    "rename collision": (HEAD + '[attributes.rename]\nmode = "m"\nnearest_mode = "m"\n', "several attributes"),
    "output index huge": (HEAD + '[[outputs]]\ntype = "same_as_input:99999"\n', "input index"),
    "output rank huge": (HEAD + '[[outputs]]\ndtype = "float32"\nrank = 100000000\n', "rank must be"),
    "type not a string": (HEAD + "[[outputs]]\ntype = 3\n", "same_as_input"),
    "deep arrays": (HEAD + "x = " + "[" * 3000 + "]" * 3000 + "\n", "nest deeper"),
    "deep inline tables": (HEAD + "[attributes.set]\nx = " + "{a = " * 600 + "1" + "}" * 600 + "\n", "nest deeper"),
    "moderately deep": (HEAD + "[attributes.set]\nx = " + "[" * 12 + "]" * 12 + "\n", "nest deeper"),
    "name too long": (HEAD.replace('"P"', '"' + "P" * 1000 + '"'), "characters"),
}


@pytest.mark.parametrize("text,problem", list(REFUSED.values()), ids=list(REFUSED))
def test_schema_refuses_at_parse_time_in_one_line(text: str, problem: str) -> None:
    with pytest.raises(InvalidSpecError) as info:
        parse_spec(text, source="my_spec.toml")
    message = str(info.value)
    assert "\n" not in message and "my_spec.toml" in message, message
    assert problem in message, message
    assert info.value.exit_code == 3


ACCEPTED = {
    "scalar graph input": HEAD + '[[inputs.extra]]\nname = "e"\nkind = "graph_input"\ndtype = "float32"\nshape = []\n',
    "int64 extremes": HEAD
    + '[[inputs.extra]]\nname = "e"\ndtype = "int64"\nvalue = [-9223372036854775808, 9223372036854775807]\n',
    "bool constant": HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "bool"\nvalue = [0, 1]\n',
    "a whole float into an int": HEAD + '[[inputs.extra]]\nname = "e"\ndtype = "int32"\nvalue = 2.0\n',
    "list attribute": HEAD + "[attributes.set]\nx = [1, 2.5]\n",
}


@pytest.mark.parametrize("text", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_schema_accepts_what_is_in_range(text: str) -> None:
    spec = parse_spec(text, source="ok.toml")
    assert (spec.op_type, spec.match.op_types, spec.source) == ("P", ("Resize",), "ok.toml")
    if "[[inputs.extra]]" in text:
        assert [extra.name for extra in spec.extra_inputs] == ["e"]  # the in-range value was kept, not dropped
    else:
        assert spec.attributes.set == {"x": [1, 2.5]}


def test_nesting_depth_is_iterative() -> None:
    deep: list = []
    for _ in range(100_000):  # far past the recursion limit
        deep = [deep]
    assert schema.nesting_depth(deep) == schema.MAX_DEPTH + 1  # stops counting early
    assert schema.nesting_depth({"a": [1, {"b": 2}]}) == 3
