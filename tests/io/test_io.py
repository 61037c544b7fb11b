"""graphsurgeon_tools.io: loading (errors, external data checks), atomic saving, external data handling."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from google.protobuf import message as google_message
from hostile import nested as nested_models
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

import graphsurgeon_tools.io as gio
from graphsurgeon_tools.errors import InvalidModelError, UnsafeExternalDataError, UsageError
from graphsurgeon_tools.io import EXTERNAL_DATA_DIR_KEY, external_data, external_data_dir, load_model, save_model
from graphsurgeon_tools.io.external_data import iter_model_tensors, may_hold_external, model_tensors


def _matmul_model(size: int = 64) -> onnx.ModelProto:
    weights = numpy_helper.from_array(np.arange(size * size, dtype=np.float32).reshape(size, size) / 1000, "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, size])],
        [weights],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _external(folder: Path, name: str = "m.onnx", location: str = "m.data") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    onnx.save(_matmul_model(), path, save_as_external_data=True, location=location, size_threshold=0)
    return path


def _run(path: Path) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": np.ones((1, 64), np.float32)})[0]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _set_location(path: Path, location: str, **extra: str) -> None:
    """Rewrite the external reference of W in the file at ``path`` (test set-up, not via io)."""
    model = onnx.load(path, load_external_data=False)
    tensor = model.graph.initializer[0]
    entries = {e.key: e.value for e in tensor.external_data}
    entries["location"] = location
    entries.update(extra)
    del tensor.external_data[:]
    for key, value in entries.items():
        tensor.external_data.add(key=key, value=value)
    path.write_bytes(model.SerializeToString())


# ----------------------------------------------------------------------------- load errors


def test_load_passes_a_proto_through_unchanged() -> None:
    model = _matmul_model()
    assert load_model(model) is model


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "model file not found"),
        (b"", "is empty"),
        (b"this is not protobuf at all \xff\xfe", "not an ONNX model"),
        ("truncated", "not an ONNX model"),
    ],
)
def test_load_rejects_bad_files_with_one_line_naming_the_file(tmp_path: Path, content, message) -> None:
    path = tmp_path / "bad.onnx"
    if content == "truncated":
        blob = _matmul_model().SerializeToString()
        path.write_bytes(blob[: len(blob) // 2])
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(InvalidModelError) as info:
        load_model(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_load_rejects_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidModelError, match="directory"):
        load_model(tmp_path)


# ----------------------------------------------------------------------------- external data


def test_external_data_stays_on_disk_and_the_folder_is_recorded(tmp_path: Path) -> None:
    path = _external(tmp_path / "src")
    model = load_model(path)
    weights = model.graph.initializer[0]
    assert weights.data_location == TensorProto.EXTERNAL and not weights.raw_data
    assert external_data_dir(model) == (tmp_path / "src").resolve()


def test_load_external_data_true_inlines_the_weights(tmp_path: Path) -> None:
    path = _external(tmp_path / "src")
    model = load_model(path, load_external_data=True)
    weights = model.graph.initializer[0]
    assert weights.data_location == TensorProto.DEFAULT
    np.testing.assert_array_equal(
        numpy_helper.to_array(weights), numpy_helper.to_array(_matmul_model().graph.initializer[0])
    )
    assert external_data_dir(model) is None


def test_save_to_another_folder_copies_the_data_next_to_the_output(tmp_path: Path) -> None:
    path = _external(tmp_path / "src")
    before = {p.name: _digest(p) for p in (tmp_path / "src").iterdir()}
    model = load_model(path)
    (tmp_path / "dst").mkdir()
    out = save_model(model, tmp_path / "dst" / "out.onnx")
    assert sorted(p.name for p in (tmp_path / "dst").iterdir()) == ["out.onnx", "out.onnx.data"]
    # onnx refuses hard-linked data files, so the output must be a real copy
    assert os.stat(tmp_path / "dst" / "out.onnx.data").st_nlink == 1
    reloaded = onnx.load(out)  # onnx's own loader, with its own path checks
    assert EXTERNAL_DATA_DIR_KEY not in {p.key for p in reloaded.metadata_props}
    np.testing.assert_array_equal(_run(out), _run(path))
    # the input files are untouched, and the caller's proto still points at them
    assert {p.name: _digest(p) for p in (tmp_path / "src").iterdir()} == before
    assert {e.key: e.value for e in model.graph.initializer[0].external_data}["location"] == "m.data"
    assert external_data_dir(model) == (tmp_path / "src").resolve()


def test_save_beside_the_input_uses_its_own_data_file(tmp_path: Path) -> None:
    path = _external(tmp_path)
    out = save_model(load_model(path), tmp_path / "copy.onnx")
    (tmp_path / "m.data").unlink()  # the output must not depend on the input's data file
    assert _run(out).shape == (1, 64)


def test_save_in_place_keeps_the_data_file(tmp_path: Path) -> None:
    path = _external(tmp_path, name="m.onnx", location="m.onnx.data")
    inode = os.stat(tmp_path / "m.onnx.data").st_ino
    expected = _run(path)
    save_model(load_model(path), path)
    assert os.stat(tmp_path / "m.onnx.data").st_ino == inode
    np.testing.assert_array_equal(_run(path), expected)


@pytest.mark.parametrize(
    "location, extra, message",
    [
        ("../outside.data", {}, "leaves the model's folder"),
        ("/etc/passwd", {}, "absolute path"),
        ("missing.data", {}, "is missing"),
        ("m.data", {"offset": "-4"}, "does not fit"),
        ("m.data", {"length": "99999999"}, "does not fit"),
        ("m.data", {"length": "1024"}, "does not match its shape"),
        ("m.data", {"offset": "abc"}, "not integers"),
    ],
)
def test_unsafe_or_broken_external_data_is_refused(tmp_path: Path, location, extra, message) -> None:
    path = _external(tmp_path / "model")
    (tmp_path / "outside.data").write_bytes(b"\0" * 16384)
    _set_location(path, location, **extra)
    with pytest.raises(UnsafeExternalDataError) as info:
        load_model(path)
    assert message in str(info.value)
    assert "W" in str(info.value) and str(path) in str(info.value)


def test_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    path = _external(tmp_path / "model")
    outside = tmp_path / "secret.data"
    (tmp_path / "model" / "m.data").rename(outside)
    (tmp_path / "model" / "m.data").symlink_to(outside)
    with pytest.raises(UnsafeExternalDataError, match="resolves outside"):
        load_model(path)


def test_symlink_inside_the_folder_is_fine(tmp_path: Path) -> None:
    path = _external(tmp_path / "model")
    folder = tmp_path / "model"
    (folder / "weights").mkdir()
    (folder / "m.data").rename(folder / "weights" / "real.data")
    (folder / "m.data").symlink_to(folder / "weights" / "real.data")
    assert load_model(path).graph.initializer[0].name == "W"


def test_hard_linked_data_is_refused_like_onnx_does(tmp_path: Path) -> None:
    path = _external(tmp_path / "model")
    os.link(tmp_path / "model" / "m.data", tmp_path / "elsewhere.data")
    with pytest.raises(UnsafeExternalDataError, match="hard links"):
        load_model(path)


# ----------------------------------------------------------------------------- atomic save


def test_save_is_atomic_when_the_final_rename_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.onnx"
    out.write_bytes(b"previous output")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gio.atomic.os, "replace", broken_replace)
    with pytest.raises(UsageError, match="cannot write .*out.onnx: No space left"):
        save_model(_matmul_model(), out)
    assert out.read_bytes() == b"previous output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.onnx"]  # no temp files left


def test_saved_files_get_normal_permissions(tmp_path: Path) -> None:
    out = save_model(_matmul_model(), tmp_path / "out.onnx")
    umask = os.umask(0)
    os.umask(umask)
    assert (out.stat().st_mode & 0o777) == (0o666 & ~umask)


@pytest.mark.parametrize("target, message", [("missing/out.onnx", "folder does not exist"), (".", "is a directory")])
def test_save_refuses_unusable_destinations(tmp_path: Path, target: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        save_model(_matmul_model(), tmp_path / target)


def test_models_over_the_protobuf_limit_move_big_tensors_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A real 2 GB model would take minutes and gigabytes here; lowering the limit exercises the same path.
    monkeypatch.setattr(gio.save, "_INLINE_LIMIT", 4096)
    model = _matmul_model()
    before = model.SerializeToString()
    out = save_model(model, tmp_path / "big.onnx")
    assert (tmp_path / "big.onnx.data").stat().st_size >= 64 * 64 * 4
    assert onnx.load(out, load_external_data=False).graph.initializer[0].data_location == TensorProto.EXTERNAL
    assert model.SerializeToString() == before  # the caller's proto is restored
    inline = tmp_path / "inline.onnx"
    onnx.save(_matmul_model(), inline)
    np.testing.assert_array_equal(_run(out), _run(inline))


def test_share_data_references_the_data_in_the_same_folder_only(tmp_path: Path) -> None:
    path = _external(tmp_path / "src")
    model = load_model(path)
    out = save_model(model, tmp_path / "src" / "shared.onnx", share_data=True)
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == ["m.data", "m.onnx", "shared.onnx"]
    np.testing.assert_array_equal(_run(out), _run(path))
    (tmp_path / "dst").mkdir()
    save_model(model, tmp_path / "dst" / "o.onnx", share_data=True)  # another folder: copied regardless
    assert (tmp_path / "dst" / "o.onnx.data").is_file()


def test_fifos_and_devices_are_refused_without_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    with pytest.raises(InvalidModelError, match="not a regular file"):
        load_model(fifo)  # would block forever if it tried to read
    with pytest.raises(InvalidModelError, match="not a regular file"):
        load_model("/dev/zero")


def test_files_over_the_protobuf_limit_are_refused_before_reading(tmp_path: Path) -> None:
    sparse = tmp_path / "huge.onnx"
    with open(sparse, "wb") as handle:
        handle.truncate(2 * 1024**3 + 1)  # sparse: no disk, and never read
    with pytest.raises(InvalidModelError, match="larger than protobuf's 2 GiB limit"):
        load_model(sparse)


def test_invalid_utf8_strings_are_one_clear_error(tmp_path: Path) -> None:
    model = _matmul_model()
    model.producer_name = "onnxtool-tests"
    path = tmp_path / "bad.onnx"
    path.write_bytes(model.SerializeToString().replace(b"onnxtool-tests", b"\x80nnxtool-tests"))
    with pytest.raises(InvalidModelError, match=r"ModelProto.producer_name is not valid UTF-8.*bad.onnx"):
        load_model(path)


@pytest.mark.parametrize("failing", ["copy_file_range", "both"])
def test_external_data_copy_falls_back_when_the_kernel_cannot_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """EXDEV/ENOSYS/EINVAL from copy_file_range (other file system, old kernel): sendfile,
    then a user-space copy, give the same bytes."""
    import errno

    source = tmp_path / "src.bin"
    source.write_bytes(bytes(range(256)) * 5000)

    def refuse(*args, **kwargs):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(gio.atomic.os, "copy_file_range", refuse)
    if failing == "both":
        monkeypatch.setattr(
            gio.atomic.os, "sendfile", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EINVAL, "no"))
        )
    dest = tmp_path / "dest.bin"
    dest.write_bytes(b"")
    gio.atomic.copy_file(source, dest)
    assert dest.read_bytes() == source.read_bytes()


def test_external_data_copy_reports_a_full_disk_instead_of_falling_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    source = tmp_path / "src.bin"
    source.write_bytes(b"x" * 4096)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(gio.atomic.os, "copy_file_range", full)
    dest = tmp_path / "dest.bin"
    dest.write_bytes(b"")
    with pytest.raises(OSError) as info:
        gio.atomic.copy_file(source, dest)
    assert info.value.errno == errno.ENOSPC


# ----------------------------------------------------------------------------- the checked tensor walk


def _tensors_everywhere() -> onnx.ModelProto:
    """A model the ONNX checker accepts with tensors in every place an attribute can hold one (a tensor,
    a sparse tensor, a tensor list, graphs and graph lists with tensors inside) beside attributes of
    other types (ints, floats, strings) and nodes with none."""

    def constant(name: str, values: list[float]) -> onnx.NodeProto:
        return helper.make_node(
            "Constant", [], [name], value=numpy_helper.from_array(np.array(values, np.float32), name)
        )

    def body(name: str, value: float) -> onnx.GraphProto:
        return helper.make_graph(
            [constant(f"{name}_c", [value, value])],
            name,
            [],
            [helper.make_tensor_value_info(f"{name}_c", TensorProto.FLOAT, [2])],
        )

    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([5.0], np.float32), "sv"),
        numpy_helper.from_array(np.array([1], np.int64), "si"),
        [3],
    )
    nodes = [
        constant("c", [1.0, 2.0, 3.0]),
        helper.make_node("Constant", [], ["s"], sparse_value=sparse),
        helper.make_node("Constant", [], ["k"], value_ints=[1, 2]),
        helper.make_node("Gemm", ["x", "w", "c"], ["g"], alpha=2.0, beta=1.0, transB=1),
        helper.make_node("If", ["cond"], ["branch"], then_branch=body("then", 1.0), else_branch=body("else", 2.0)),
        helper.make_node("Relu", ["g"], ["y"]),
        helper.make_node(
            "Holder",
            [],
            ["h"],
            domain="test.holder",
            tensors=[numpy_helper.from_array(np.ones(2, np.float32), "t1")],
            graphs=[body("listed", 3.0)],
            label="a string",
            count=4,
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(np.eye(3, dtype=np.float32), "w")],
    )
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("test.holder", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def test_the_checked_tensor_walk_finds_what_the_full_walk_finds() -> None:
    model = _tensors_everywhere()
    onnx.checker.check_model(model)
    full = [t.SerializeToString() for t in iter_model_tensors(model)]
    assert len(full) == 8  # w, c, the sparse tensor's values and indices, t1, and the three bodies' constants
    assert [t.SerializeToString() for t in iter_model_tensors(model, checked=True)] == full


def test_a_checked_save_writes_what_the_full_save_writes(tmp_path: Path) -> None:
    # Attribute tensors with their bytes in a data file: both walks find them, so both saves copy the
    # data and point the model at the copy.
    model = _tensors_everywhere()
    (tmp_path / "src").mkdir()
    convert_model_to_external_data(model, location="m.data", size_threshold=0, convert_attribute=True)
    onnx.save(model, tmp_path / "src" / "m.onnx")
    written = {}
    for checked in (False, True):
        folder = tmp_path / f"checked={checked}"
        folder.mkdir()
        save_model(load_model(tmp_path / "src" / "m.onnx"), folder / "out.onnx", checked=checked)
        written[checked] = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    assert sorted(written[True]) == ["out.onnx", "out.onnx.data"]
    assert written[True] == written[False]


def test_the_external_data_search_finds_every_external_tensor_however_spelled(tmp_path: Path) -> None:
    # Each tensor of the model (initializer, sparse, attribute, bodies) alone external, in the bytes
    # protobuf writes; then data_location written with longer varints than needed, which parsers accept.
    model = _tensors_everywhere()
    count = len(list(iter_model_tensors(model)))
    for index in range(count):
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        list(iter_model_tensors(copy))[index].data_location = TensorProto.EXTERNAL
        assert may_hold_external(copy.SerializeToString())
    spellings = [
        b"\x70\x01",
        b"\x70\x81\x00",
        b"\xf0\x00\x01",
        b"\xf0\x80\x80\x00\x81\x80\x80\x00",
        b"\x70\x81\x80\x80\x80\x10",
    ]
    for spelling in spellings:
        tensor = TensorProto()
        tensor.ParseFromString(spelling)
        assert tensor.data_location == TensorProto.EXTERNAL and may_hold_external(spelling)
    # other values and other wire types leave it unset, and the search may say no
    for spelling in (b"\x70\x00", b"\x70\x02", b"\x72\x01\x01"):
        tensor = TensorProto()
        tensor.ParseFromString(spelling)
        assert tensor.data_location != TensorProto.EXTERNAL and not may_hold_external(spelling)


def test_a_model_the_search_clears_loads_as_the_walk_loads_it(tmp_path: Path) -> None:
    inline = _tensors_everywhere()
    onnx.save(inline, tmp_path / "inline.onnx")
    assert not may_hold_external((tmp_path / "inline.onnx").read_bytes())  # spared the walk
    assert external_data_dir(load_model(tmp_path / "inline.onnx")) is None
    convert_model_to_external_data(inline, location="m.data", size_threshold=0, convert_attribute=True)
    onnx.save(inline, tmp_path / "external.onnx")
    assert may_hold_external((tmp_path / "external.onnx").read_bytes())
    assert external_data_dir(load_model(tmp_path / "external.onnx")) == tmp_path.resolve()


# ----------------------------------------------------------------------------- the checked model's own bytes


def _plain_chain(count: int = 30) -> onnx.ModelProto:
    """No attribute of a holding type, one name and one string attribute spelling such a type's bytes."""
    nodes = [helper.make_node("Relu", [f"a{i}"], [f"a{i + 1}"], name=f"relu_{i}") for i in range(count)]
    nodes[3].name = "look\xa0\x01\x04alike"  # UTF-8 c2 a0 01 04: the bytes of a TENSOR-typed attribute
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("a0", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info(f"a{count}", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(np.ones(3, np.float32), "unused")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _save_corpus() -> list[onnx.ModelProto]:
    plain = _plain_chain()
    plain.graph.node[3].name = "relu_3"  # no look-alike: the bytes spare the walk
    return [plain, _plain_chain(), _tensors_everywhere(), _matmul_model(), nested_models.if_model()]


@pytest.mark.parametrize("index", range(5))
def test_the_checked_bytes_give_the_tensors_the_walk_gives(index: int) -> None:
    model = _save_corpus()[index]
    onnx.checker.check_model(model)
    walked = [t.SerializeToString() for t in iter_model_tensors(model, checked=True)]
    assert [
        t.SerializeToString() for t in model_tensors(model, checked=True, serialized=model.SerializeToString())
    ] == walked
    assert [t.SerializeToString() for t in model_tensors(model)] == walked


@pytest.mark.parametrize("index", range(5))
def test_a_checked_save_from_the_bytes_writes_what_the_walked_save_writes(tmp_path: Path, index: int) -> None:
    model = _save_corpus()[index]
    written = {}
    for checked in (False, True):  # unchecked: walked and serialized at the end, as it always was
        target = tmp_path / f"checked={checked}.onnx"
        save_model(model, target, checked=checked)
        written[checked] = target.read_bytes()
    assert written[True] == written[False]


def test_bytes_showing_no_tensor_in_any_node_spare_the_walk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    walked: list[int] = []
    real = external_data._node_tensors
    monkeypatch.setattr(external_data, "_node_tensors", lambda nodes, *rest: walked.append(1) or real(nodes, *rest))
    plain = _save_corpus()[0]
    save_model(plain, tmp_path / "plain.onnx", checked=True)
    assert walked == []
    save_model(_plain_chain(), tmp_path / "lookalike.onnx", checked=True)  # a chance match: walked
    assert walked
    assert load_model(tmp_path / "plain.onnx") == plain


def test_a_model_protobuf_cannot_write_goes_the_walked_way() -> None:
    from graphsurgeon_tools.io import save

    class Unwritable:
        def SerializeToString(self) -> bytes:
            raise google_message.EncodeError("Failed to serialize proto")

    assert save._serialized(Unwritable()) is None
