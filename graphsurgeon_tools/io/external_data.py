"""External-data references: find every tensor of a model, check where its bytes live.

Requires: a ModelProto; for external tensors, the folder their locations are relative to
(recorded by :func:`graphsurgeon_tools.io.load_model` under :data:`EXTERNAL_DATA_DIR_KEY`, or
given by the caller).

Ensures: :func:`external_tensor_refs` returns one :class:`ExternalTensorRef` per external
tensor only after checking it: no ``..``, no absolute path, no NUL, no symlink leading out of
the model's folder, no hard-linked file, a byte range inside the file that matches the
tensor's dtype and shape. Anything else raises :class:`UnsafeExternalDataError`.

Does NOT read weights (only file sizes), except :func:`read_tensor_bytes`, which reads one
tensor's bytes and is meant for small tensors (scales, sizes, shapes).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

import onnx
from onnx import ModelProto, TensorProto

from graphsurgeon_tools.errors import InvalidModelError, UnsafeExternalDataError

__all__ = [
    "EXTERNAL_DATA_DIR_KEY",
    "ExternalTensorRef",
    "external_data_dir",
    "external_tensor_refs",
    "may_hold_external",
    "read_tensor_bytes",
]

PathLike = Union[str, "os.PathLike[str]"]

#: metadata_props key under which load_model records the folder that external-data
#: locations are relative to. In memory only: save_model never writes it to disk.
EXTERNAL_DATA_DIR_KEY = "onnxtool.external_data_dir"
# A folder whose name is not UTF-8 (a proto string must be) is recorded as the hex of its bytes.
_FS_HEX = "fs-hex:"


#: The attribute types whose value field holds a tensor or a graph. In a model the ONNX checker has
#: accepted, only these attributes hold any (its check_attribute: a set value field matches the type).
_HOLDING_TYPES = frozenset(
    {
        onnx.AttributeProto.TENSOR,
        onnx.AttributeProto.SPARSE_TENSOR,
        onnx.AttributeProto.GRAPH,
        onnx.AttributeProto.TENSORS,
        onnx.AttributeProto.GRAPHS,
    }
)


def iter_graph_tensors(graph: onnx.GraphProto, *, checked: bool = False) -> Iterator[TensorProto]:
    """Every TensorProto of a graph: initializers, sparse initializers, node attributes, subgraphs.

    Iterative (a work list of graphs), so subgraphs nested deeper than Python's recursion
    limit are walked like any other. ``checked``: the model passed the ONNX checker, so an
    attribute's type says whether it holds a tensor or a graph (one read instead of five tests
    per attribute); never for a model the checker has not accepted, whose attribute of another
    type may hold one too."""
    pending = [graph]
    while pending:
        current = pending.pop()
        yield from stored_tensors(current)
        yield from _node_tensors(current.node, pending, checked)


def stored_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    """The graph's own tensors (not its bodies'): initializers, then sparse initializers' values and indices."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices


def iter_node_tensors(nodes: Iterable[onnx.NodeProto], *, checked: bool = False) -> Iterator[TensorProto]:
    """Every TensorProto held by the nodes' attributes, their subgraphs included (``checked``: as
    :func:`iter_graph_tensors`)."""
    subgraphs: list[onnx.GraphProto] = []
    yield from _node_tensors(nodes, subgraphs, checked)
    for graph in subgraphs:
        yield from iter_graph_tensors(graph, checked=checked)


def _node_tensors(nodes: Iterable[onnx.NodeProto], subgraphs: list, checked: bool) -> Iterator[TensorProto]:
    """The tensors the nodes' attributes hold directly; their subgraphs are appended to ``subgraphs``."""
    for node in nodes:
        attributes = node.attribute
        if not attributes:  # most nodes: a generator step per node cost a whole load's parse on big graphs
            continue
        for attr in attributes:
            # Most attributes (ints, floats, strings) hold none of the five: skip them before the empty
            # `yield from`/extend below (most of the walk's time). Exact: the body below does something
            # only when one of these five is set or non-empty, which in a checked model only an attribute
            # of a holding type can be; otherwise all five are tested, as plain truth tests.
            if checked:
                if attr.type not in _HOLDING_TYPES:
                    continue
            elif not (
                attr.HasField("t")
                or attr.HasField("sparse_tensor")
                or attr.HasField("g")
                or attr.tensors
                or attr.graphs
            ):
                continue
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("sparse_tensor"):
                yield attr.sparse_tensor.values
                yield attr.sparse_tensor.indices
            if attr.HasField("g"):
                subgraphs.append(attr.g)
            subgraphs.extend(attr.graphs)


def iter_model_tensors(model: ModelProto, *, checked: bool = False) -> Iterator[TensorProto]:
    """Every TensorProto of the model: main graph, subgraphs and model-local functions (``checked``:
    the model passed the ONNX checker, see :func:`iter_graph_tensors`)."""
    yield from iter_graph_tensors(model.graph, checked=checked)
    for function in model.functions:
        yield from iter_node_tensors(function.node, checked=checked)


#: An attribute of a type that holds a tensor or a graph, as protobuf writes its type: field 20 (tag
#: 0xa0 0x01), the type's number (each below 128: one byte).
_HOLDING_ATTRIBUTE = re.compile(b"|".join(re.escape(bytes((0xA0, 0x01, kind))) for kind in sorted(_HOLDING_TYPES)))


def model_tensors(model: ModelProto, *, checked: bool = False, serialized: Optional[bytes] = None) -> list[TensorProto]:
    """``list(iter_model_tensors(model, checked=checked))``; where ``serialized``, the bytes protobuf wrote
    for ``model`` as it is, show no attribute of a type that holds a tensor or a graph, without the walk
    over the nodes (a checked model from IR version 2 on: the checker requires every attribute's type,
    and one that matches the field it holds, so only such an attribute holds any; its type is written
    as :data:`_HOLDING_ATTRIBUTE` wherever it sits, functions included). Then the main graph's own
    tensors are all there are, in the walk's order. A chance match in other bytes only means the walk."""
    if checked and serialized is not None and model.ir_version >= 2 and not _HOLDING_ATTRIBUTE.search(serialized):
        return list(stored_tensors(model.graph))
    return list(iter_model_tensors(model, checked=checked))


def is_external(tensor: TensorProto) -> bool:
    return tensor.data_location == TensorProto.EXTERNAL


def may_hold_external(data: bytes) -> bool:
    """False only when the serialized model ``data`` (a file's bytes, as they are) certainly holds no
    tensor stored externally, wherever it sits (bodies, attributes, functions and sparse tensors are
    nested in the same bytes): no bytes spell a TensorProto.data_location (field 14, a varint) holding
    EXTERNAL (1). Its tag's first byte is 0x70, or 0xf0 when written longer than needed; its value's
    first byte 0x01, or 0x81 when written longer (any varint whose low 32 bits are 1, as an int32 enum
    reads it): parsers read long varints as the short ones (upb does). Three byte searches (on a 50,000-node
    graph a third of the walk's time): a chance match in other bytes (a name, weights) only says "maybe",
    and the caller walks the tensors."""
    return b"\x70\x01" in data or b"\x70\x81" in data or b"\xf0" in data


def metadata_index(model: ModelProto, key: str) -> Optional[int]:
    for index, entry in enumerate(model.metadata_props):
        if entry.key == key:
            return index
    return None


def external_data_dir(model: ModelProto) -> Optional[Path]:
    """The folder external-data locations of ``model`` are relative to, if load_model recorded one."""
    index = metadata_index(model, EXTERNAL_DATA_DIR_KEY)
    if index is None:
        return None
    value = model.metadata_props[index].value
    if value.startswith(_FS_HEX):  # recorded paths are absolute: a real one starts with "/"
        return Path(os.fsdecode(bytes.fromhex(value[len(_FS_HEX) :])))
    return Path(value)


def set_external_data_dir(model: ModelProto, folder: Optional[Path]) -> None:
    """Record ``folder`` as the model's external-data folder (``None`` removes the record)."""
    index = metadata_index(model, EXTERNAL_DATA_DIR_KEY)
    if folder is None:
        if index is not None:
            del model.metadata_props[index]
        return
    if index is None:
        entry = model.metadata_props.add()
        entry.key = EXTERNAL_DATA_DIR_KEY
    else:
        entry = model.metadata_props[index]
    text = str(folder)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes in the name, kept by Python as surrogates
        text = _FS_HEX + os.fsencode(folder).hex()
    entry.value = text


@dataclass(frozen=True)
class ExternalTensorRef:
    """One validated external-data reference: which bytes of which file hold a tensor."""

    tensor_name: str
    location: str  # as written in the model, relative to the model's folder
    path: Path  # resolved absolute path (inside the model's folder)
    offset: int
    length: int


def expected_nbytes(tensor: TensorProto) -> Optional[int]:
    """Raw byte size a tensor of this dtype/shape must have, or None if not fixed-size."""
    if tensor.data_type in (TensorProto.STRING, TensorProto.UNDEFINED):
        return None
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, ValueError, TypeError):
        return None
    count = 1
    for dim in tensor.dims:
        count *= int(dim)
    if tensor.data_type in (TensorProto.INT4, TensorProto.UINT4) or (
        hasattr(TensorProto, "FLOAT4E2M1") and tensor.data_type == TensorProto.FLOAT4E2M1
    ):
        return (count + 1) // 2
    return count * itemsize


def validate_ref(tensor: TensorProto, base: Path, model_file: str) -> ExternalTensorRef:
    """Check one external reference against the model's folder; raise UnsafeExternalDataError."""
    info = {entry.key: entry.value for entry in tensor.external_data}
    name = tensor.name or "<unnamed>"
    location = info.get("location", "")
    if not location:
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file} says its data is external but gives no location"
        )
    if "\x00" in location:
        raise UnsafeExternalDataError(f"tensor {name!r} in {model_file}: external data location contains a NUL byte")
    pure = Path(location)
    if pure.is_absolute() or location.startswith(("/", "\\")) or (len(location) > 1 and location[1] == ":"):
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data location {location!r} is an absolute path; "
            "only paths inside the model's folder are allowed"
        )
    if ".." in location.replace("\\", "/").split("/"):
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data location {location!r} leaves the model's folder ('..')"
        )
    try:
        base_real = base.resolve()
        target = (base / location).resolve()
    except (RuntimeError, OSError) as exc:  # Python < 3.13 raises RuntimeError on a symlink loop
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data location {location!r} cannot be resolved "
            f"(a symlink loop?): {exc}"
        ) from None
    # Symlinks: the resolved target must still be inside the model's folder.
    if target != base_real and base_real not in target.parents:
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data location {location!r} resolves outside "
            f"the model's folder (symlink to {target})"
        )
    if not target.is_file():
        raise UnsafeExternalDataError(f"tensor {name!r} in {model_file}: external data file {location!r} is missing")
    file_stat = target.stat()
    size = file_stat.st_size
    # A hard link cannot be traced to where it points; like onnx (which refuses these files
    # too), treat a data file with several links as a possible way out of the folder.
    if file_stat.st_nlink > 1:
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data file {location!r} has {file_stat.st_nlink} hard links "
            "(refused, as onnx does, as a possible hard-link attack; copy the file to break the link)"
        )
    try:
        offset = int(info.get("offset", "0") or 0)
        length = int(info["length"]) if info.get("length", "") != "" else size - offset
    except ValueError:
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data offset/length are not integers "
            f"({info.get('offset')!r}, {info.get('length')!r})"
        ) from None
    if offset < 0 or length < 0 or offset + length > size:
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data range offset={offset} length={length} "
            f"does not fit in {location!r} ({size} bytes)"
        )
    expected = expected_nbytes(tensor)
    if expected is not None and expected != length:
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data length {length} does not match its "
            f"shape {list(tensor.dims)} ({expected} bytes)"
        )
    return ExternalTensorRef(name, location, target, offset, length)


def external_tensor_refs(model: ModelProto, base: Optional[PathLike] = None) -> list[ExternalTensorRef]:
    """Validate and list every external-data reference of ``model``.

    Args:
        model: the model whose external tensors are listed.
        base: the folder locations are relative to; default: the one recorded by load_model.

    Raises :class:`UnsafeExternalDataError` for a reference that is unsafe or broken and
    :class:`InvalidModelError` when the model has external references but no known folder.
    Reads file sizes only, never the data.
    """
    tensors = [t for t in iter_model_tensors(model) if is_external(t)]
    if not tensors:
        return []
    folder = Path(base) if base is not None else external_data_dir(model)
    if folder is None:
        raise InvalidModelError(
            "the model has external data but no known folder to resolve it against "
            "(load it with load_model(path) or pass external_data_dir=)"
        )
    label = str(folder)
    return [validate_ref(t, folder, label) for t in tensors]


def read_tensor_bytes(model: ModelProto, tensor: TensorProto) -> bytes:
    """The raw bytes of an external tensor of ``model`` (validated first). For small tensors only."""
    folder = external_data_dir(model)
    if folder is None:
        raise InvalidModelError(f"tensor {tensor.name!r} has external data but the model's folder is unknown")
    ref = validate_ref(tensor, folder, str(folder))
    with open(ref.path, "rb") as handle:
        handle.seek(ref.offset)
        return handle.read(ref.length)
