"""Read an ONNX model from a file, refusing what is not one before and after parsing.

Requires: a path (or a ModelProto, passed through unchanged).

Ensures: :func:`load_model` with a path refuses, as :class:`InvalidModelError`, what is not
a model before parsing it (missing, a directory, a FIFO or device, over protobuf's 2 GiB),
what does not parse, and strings that are not UTF-8 after parsing (protobuf would fail later,
somewhere deep); it checks every external-data reference (see
:mod:`graphsurgeon_tools.io.external_data`) and records the model's folder in the proto's
metadata (:data:`EXTERNAL_DATA_DIR_KEY`) so that save_model, the ORT check and constant
lookups still find the bytes after the proto is copied or rewritten. The model file and every
data file are recorded as read for the write guard (:mod:`graphsurgeon_tools.io.guard`); the
file is opened without blocking (:func:`graphsurgeon_tools.io.files.open_regular`).

Does NOT run the ONNX checker (that would serialize the whole model again), and by default
does not read external weights.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Optional, Union

import onnx.defs
from google.protobuf import message as protobuf_message
from onnx import ModelProto, TensorProto

from graphsurgeon_tools.errors import InvalidModelError, UnsupportedModelError
from graphsurgeon_tools.io.external_data import (
    external_data_dir,
    is_external,
    iter_model_tensors,
    may_hold_external,
    set_external_data_dir,
    validate_ref,
)
from graphsurgeon_tools.io.files import open_regular
from graphsurgeon_tools.io.guard import note_read
from graphsurgeon_tools.io.utf8 import strings_are_utf8

__all__ = ["load_model", "raise_if_unknown_opsets", "unknown_opsets"]

PathLike = Union[str, "os.PathLike[str]"]

#: Protobuf cannot parse a message bigger than this.
PROTOBUF_LIMIT = 2 * 1024**3


def load_model(path_or_proto: Union[PathLike, ModelProto], *, load_external_data: bool = False) -> ModelProto:
    """Read an ONNX model from a path, or pass a ModelProto through unchanged (not copied).

    Args:
        path_or_proto: the model file, or a ModelProto (returned as is).
        load_external_data: read external weights into the proto. Default False: a pass that
            only touches the graph never reads them, and save_model copies the data files
            next to the output.

    Raises :class:`InvalidModelError` (missing, unreadable, not ONNX) or
    :class:`UnsafeExternalDataError`; TypeError for an argument of another type.
    """
    if isinstance(path_or_proto, ModelProto):
        if load_external_data and external_data_dir(path_or_proto) is not None:
            _inline_external_data(path_or_proto, str(external_data_dir(path_or_proto)))
        return path_or_proto
    if not isinstance(path_or_proto, (str, os.PathLike)):
        raise TypeError(f"load_model expects a path or an onnx.ModelProto, got {type(path_or_proto).__name__}")
    path = Path(path_or_proto)
    data = _read(path)
    model = _parse(path, data)
    folder = path.resolve().parent
    # the bytes are searched first: a model without external data is not walked (a big graph's nodes cost more)
    external = [t for t in iter_model_tensors(model) if is_external(t)] if may_hold_external(data) else []
    if external:
        for tensor in external:
            ref = validate_ref(tensor, folder, str(path))
            note_read(ref.path, f"an external data file of {path.name} ({ref.location})")
        set_external_data_dir(model, folder)
        if load_external_data:
            _inline_external_data(model, str(path))
    return model


def _read(path: Path) -> bytes:
    """The file's bytes, after refusing what cannot be a model file."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InvalidModelError(f"model file not found: {path}") from None
    except OSError as exc:
        raise InvalidModelError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InvalidModelError(f"not a file (a directory): {path}")
    if not stat.S_ISREG(info.st_mode):
        # a FIFO would block and /dev/zero never ends: refuse before reading
        raise InvalidModelError(f"not a regular file (a FIFO, device or socket): {path}")
    if info.st_size > PROTOBUF_LIMIT:
        raise InvalidModelError(
            f"{path} is {info.st_size / 2**30:.1f} GiB, larger than protobuf's 2 GiB limit, so it cannot be an "
            "ONNX model file (models this big keep their weights in external data)"
        )
    try:
        with open_regular(path, "model file", InvalidModelError, info=info) as handle:
            data = handle.read()
    except FileNotFoundError:
        raise InvalidModelError(f"model file not found: {path}") from None
    except IsADirectoryError:
        raise InvalidModelError(f"not a file (a directory): {path}") from None
    except PermissionError:
        raise InvalidModelError(f"cannot read {path}: permission denied") from None
    except OSError as exc:
        raise InvalidModelError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not data:
        raise InvalidModelError(f"not an ONNX model: {path} is empty")
    return data


def _parse(path: Path, data: bytes) -> ModelProto:
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except (protobuf_message.Error, RuntimeError):
        # DecodeError (a protobuf Error) for truncated or foreign bytes; RuntimeError where a
        # protobuf backend reports a malformed message (nesting too deep) its own way.
        raise InvalidModelError(f"not an ONNX model (cannot parse, truncated or wrong format): {path}") from None
    # Protobuf happily parses many non-ONNX byte strings into a near-empty message.
    if model.ir_version <= 0 or not model.HasField("graph") or not (model.graph.node or model.graph.output):
        raise InvalidModelError(f"not an ONNX model (no IR version or empty graph): {path}")
    bad_text = None if strings_are_utf8(data) else _first_undecodable_string(model)  # the walk names the field
    if bad_text:
        raise InvalidModelError(f"not an ONNX model (a {bad_text} is not valid UTF-8; corrupt file?): {path}")
    # An opset import newer than this onnx knows (any domain it defines): exit 3 for every
    # command that reads the file, before the checker or ONNX Runtime guess at it.
    raise_if_unknown_opsets(model, str(path))
    return model


def unknown_opsets(model: ModelProto) -> list[str]:
    """Opset imports (the model's and its functions') of a domain this onnx defines, at a version
    newer than it knows, e.g. ``"ai.onnx.ml 99 (this onnx knows up to 5)"``. Domains onnx does
    not define (plugins, local functions) are not judged: their versions mean what their owners
    say. (Also exported as ``graphsurgeon_tools.core.opsets.unknown_opsets``.)"""
    known = onnx.defs.C.schema_version_map()  # domain -> (first, last) version this onnx has schemas for
    known["ai.onnx"] = known.get("", (1, onnx.defs.onnx_opset_version()))
    found: list[str] = []
    imports = list(model.opset_import) + [o for fn in model.functions for o in fn.opset_import]
    for entry in imports:
        span = known.get(entry.domain)
        if span is not None and entry.version > span[1]:
            text = f"{entry.domain or 'ai.onnx (default domain)'} {entry.version} (this onnx knows up to {span[1]})"
            if text not in found:
                found.append(text)
    return found


def raise_if_unknown_opsets(model: ModelProto, label: str = "") -> None:
    """The one opset gate: UnsupportedModelError (exit 3) naming the first opset import newer than
    this onnx knows (:func:`unknown_opsets`): neither the checker nor ONNX Runtime can be trusted
    with it. load_model calls it on every file; passes call it on a ModelProto they are handed."""
    found = unknown_opsets(model)
    if found:
        where = f"{label}: " if label else ""
        raise UnsupportedModelError(f"{where}opset import {found[0]} is newer than the installed onnx supports")


def _first_undecodable_string(message: Any) -> Optional[str]:
    """Name of the first string field that is not UTF-8, or None.

    Protobuf (upb) parses proto2 strings without checking them and hands invalid ones back
    as ``bytes``; the first code that copies one into another message then dies with a
    UnicodeDecodeError. Checking once here turns that into one clear error. TensorProtos
    are visited field by field so their raw_data (the weights) is never copied out. A work
    list, not recursion: nesting depth is the file's to choose."""
    pending = [message]
    while pending:
        current = pending.pop()
        if isinstance(current, TensorProto):
            texts = [current.name, current.doc_string]
            texts += [text for entry in current.external_data for text in (entry.key, entry.value)]
            if any(isinstance(t, bytes) for t in texts):
                return "tensor name or external-data entry"
            continue
        for descriptor, value in current.ListFields():
            items = value if descriptor.is_repeated else [value]
            if descriptor.message_type is None:
                if descriptor.type == descriptor.TYPE_STRING and any(isinstance(item, bytes) for item in items):
                    return f"{type(current).__name__}.{descriptor.name}"
                continue
            pending.extend(reversed(items))
    return None


def _inline_external_data(model: ModelProto, label: str) -> None:
    """Read every external tensor's bytes into the proto and drop the folder record."""
    folder = external_data_dir(model)
    if folder is None:
        return
    for tensor in iter_model_tensors(model):
        if is_external(tensor):
            ref = validate_ref(tensor, folder, label)
            with open(ref.path, "rb") as handle:
                handle.seek(ref.offset)
                tensor.raw_data = handle.read(ref.length)
            del tensor.external_data[:]
            tensor.ClearField("data_location")
    set_external_data_dir(model, None)
