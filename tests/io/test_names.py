"""io.names: file names as text (printable, utf8_file_name) and derived output names (no stacked suffixes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from graphsurgeon_tools.io.names import derived_name, printable, shell_quote, utf8_file_name

RAW = os.fsdecode(b"caf\xe9-\xff.onnx")


def test_printable_spells_undecodable_bytes_as_shell_escapes_and_is_valid_utf8():
    assert printable(RAW) == "caf\\xe9-\\xff.onnx"
    assert printable(Path("/tmp") / RAW) == "/tmp/caf\\xe9-\\xff.onnx"
    json.dumps(printable(RAW), ensure_ascii=False).encode("utf-8")  # no lone surrogate left
    assert printable("plain é.onnx") == "plain é.onnx"


def test_a_created_file_name_is_valid_utf8_and_keeps_the_rest():
    assert utf8_file_name(RAW + ".data") == "caf%E9-%FF.onnx.data"
    assert utf8_file_name("m.onnx.data") == "m.onnx.data"


def test_derived_names_replace_a_suffix_this_tool_wrote_instead_of_stacking():
    layouts = ("dynamic", "factor", "sizes")
    assert derived_name(Path("d/m.onnx"), "dynamic", layouts) == Path("d/m.dynamic.onnx")
    assert derived_name(Path("d/m.dynamic.onnx"), "sizes", layouts) == Path("d/m.sizes.onnx")
    assert derived_name(Path("m.plugin.onnx"), "resize", ("plugin", "resize")) == Path("m.resize.onnx")
    assert derived_name(Path("m.plugin.onnx"), "dynamic", layouts) == Path("m.plugin.dynamic.onnx")
    # re-running on its own output: never the input itself
    assert derived_name(Path("m.dynamic.onnx"), "dynamic", layouts) == Path("m.dynamic.dynamic.onnx")
    assert derived_name(Path(".dynamic.onnx"), "sizes", layouts) == Path(".dynamic.sizes.onnx")


def test_a_shell_word_names_the_same_bytes_when_pasted(tmp_path):
    import subprocess

    folder = tmp_path / os.fsdecode(b"it's \xff\\x")
    folder.mkdir()
    (folder / "m.onnx").write_bytes(b"ok")
    word = shell_quote(folder / "m.onnx")
    assert word.startswith("$'") and word.isascii()
    assert subprocess.run(["bash", "-c", f"cat {word}"], capture_output=True).stdout == b"ok"
    assert shell_quote(Path("a b.onnx")) == "'a b.onnx'" and shell_quote("plain.onnx") == "plain.onnx"
