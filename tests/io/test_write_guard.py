"""The write guard (graphsurgeon_tools.io.guard) and regular-file reads (graphsurgeon_tools.io.files).

Every write target is checked, before anything is written, against every file read inside the
open tracking_reads() scope (and against the model's own data files in save_model), by
(st_dev, st_ino): other spellings, symlinks and hard links all collide. Arguments that are not
regular files are refused from os.stat alone, before anything is opened.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.errors import InvalidModelError, UsageError
from graphsurgeon_tools.io import (
    check_writes,
    load_model,
    note_read,
    read_regular,
    save_model,
    stat_regular,
    tracking_reads,
    write_bytes_atomic,
)


def _model_with_data(folder: Path, name: str = "model.onnx", location: str = "weights.bin") -> Path:
    weight = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "w")
    raw = weight.raw_data
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(len(raw)))):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / location).write_bytes(raw)
    path = folder / name
    path.write_bytes(model.SerializeToString())
    return path


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() and not p.is_symlink() else b"<link>")
        for p in sorted(root.rglob("*"))
        if not p.is_dir() or p.is_symlink()
    }


def test_reads_inside_a_scope_are_protected_by_any_spelling(tmp_path: Path) -> None:
    path = _model_with_data(tmp_path / "in")
    os.link(path, tmp_path / "alias.onnx")
    os.symlink(tmp_path / "in" / "weights.bin", tmp_path / "link.bin")
    with tracking_reads() as reads:
        load_model(path)
        assert {r.path.name for r in reads} == {"model.onnx", "weights.bin"}
        for target in (
            path,
            tmp_path / "in" / ".." / "in" / "model.onnx",
            tmp_path / "alias.onnx",
            tmp_path / "link.bin",
        ):
            with pytest.raises(UsageError, match="which this command reads"):
                check_writes([(target, "output")])
        check_writes([(tmp_path / "new.onnx", "output")])  # nothing there yet: fine


def test_outside_a_scope_nothing_is_remembered(tmp_path: Path) -> None:
    path = _model_with_data(tmp_path / "in")
    load_model(path)
    check_writes([(path, "output")])


def test_nested_scopes_count_in_the_outer_one(tmp_path: Path) -> None:
    path = _model_with_data(tmp_path / "in")
    with tracking_reads() as outer:
        with tracking_reads():
            load_model(path)
        assert len(outer) == 2
        with pytest.raises(UsageError):
            check_writes([(path, "report")])


def test_scopes_are_per_thread(tmp_path: Path) -> None:
    path = _model_with_data(tmp_path / "in")
    seen = []
    with tracking_reads() as reads:
        thread = threading.Thread(target=lambda: (load_model(path), seen.append(True)))
        thread.start()
        thread.join()
        assert seen and len(reads) == 0  # another thread's command is not this one's


def test_a_replaced_file_no_longer_counts(tmp_path: Path) -> None:
    target = tmp_path / "report.xml"
    target.write_bytes(b"old")
    with tracking_reads():
        note_read(target, "a report")
        write_bytes_atomic(b"new", tmp_path / "tmp.xml")
        os.replace(tmp_path / "tmp.xml", target)  # a new inode: the file read is gone
        check_writes([(target, "report")])


def test_allow_lets_in_place_through(tmp_path: Path) -> None:
    path = _model_with_data(tmp_path / "in", location="model.onnx.data")
    with tracking_reads():
        model = load_model(path)
        with pytest.raises(UsageError, match="model.onnx"):
            save_model(model, path)
        save_model(model, path, in_place=True)
    assert load_model(path).graph.node


def test_save_checks_every_data_file_before_writing_any(tmp_path: Path) -> None:
    # The data file of OUT would be written over the input model (named out.onnx.data).
    path = _model_with_data(tmp_path / "in", name="out.onnx.data")
    before = _tree(tmp_path)
    with tracking_reads():
        model = load_model(path)
        with pytest.raises(UsageError, match="out.onnx.data"):
            save_model(model, tmp_path / "in" / "out.onnx")
    assert _tree(tmp_path) == before


def test_save_refuses_a_data_file_that_is_another_source_without_a_scope(tmp_path: Path) -> None:
    from hostile.corpus_round2 import _two_data_files

    # Sources sorted: out.onnx.1.data -> OUT.0.data, z.bin -> OUT.1.data = the first source.
    path = _two_data_files(tmp_path / "in", "out.onnx.1.data", "z.bin")
    model = load_model(path)
    before = _tree(tmp_path)
    with pytest.raises(UsageError, match=r"out\.onnx\.1\.data is an external data file of the model"):
        save_model(model, tmp_path / "in" / "out.onnx")
    assert _tree(tmp_path) == before


def test_a_data_file_already_in_place_is_not_a_write(tmp_path: Path) -> None:
    path = _model_with_data(tmp_path / "in", location="out.onnx.data")
    os.symlink("out.onnx.data", tmp_path / "in" / "other.onnx.data")  # the output's data name, same file
    save_model(load_model(path), tmp_path / "in" / "other.onnx")
    assert load_model(tmp_path / "in" / "other.onnx").graph.node


def test_symlink_loop_target_is_a_usage_error(tmp_path: Path) -> None:
    os.symlink("loop", tmp_path / "loop")
    with pytest.raises(UsageError, match="symlink loop"):
        write_bytes_atomic(b"x", tmp_path / "loop")


@pytest.mark.parametrize("kind", ["fifo", "dir", "device", "missing", "loop"])
def test_only_regular_files_are_read(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "thing"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "loop":
        os.symlink("thing", path)
    problem = {
        "fifo": "not a regular file",
        "dir": "directory",
        "device": "not a regular file",
        "missing": "not found",
        "loop": "symlink loop",
    }[kind]
    with pytest.raises(InvalidModelError, match=problem):
        stat_regular(path, "model")
    with pytest.raises(InvalidModelError, match=problem):
        read_regular(path, "model")


def test_read_regular_records_the_read_and_honours_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "spec.toml"
    path.write_bytes(b"x" * 10)
    with tracking_reads() as reads:
        assert read_regular(path, "plugin spec") == b"x" * 10
        assert [r.what for r in reads] == ["the plugin spec"]
    with pytest.raises(InvalidModelError, match="more than"):
        read_regular(path, "plugin spec", limit=5)
