"""Write an ONNX model atomically, with its external data beside it.

Requires: a ModelProto; for external tensors, a known data folder (recorded by load_model,
or ``external_data_dir=``); a writable destination folder.

Ensures:

* The output's external data lies next to the output, named ``<output file name>.data``
  (``<name>.<k>.data`` for several source files; bytes of the name that are not UTF-8 spelled
  ``%NN``, since the model records the name as a protobuf string), copied kernel-side
  (:func:`graphsurgeon_tools.io.atomic.copy_file`: constant memory, the speed of ``cp``),
  unless ``share_data=True`` and the output is in the data's folder. Never a hard link: onnx
  refuses external data files with several links (a "hard-link attack" guard), so a linked
  output would not load. No reference points back into another folder, and the in-memory
  folder record (EXTERNAL_DATA_DIR_KEY) is never written to the file.
* A model whose inline size would pass protobuf's 2 GB limit is saved with its large
  tensors moved to ``<output file name>.data``.
* Atomic (see :mod:`graphsurgeon_tools.io.atomic`): data files are renamed into place
  before the model file, so a crash between the two renames can leave an old model file
  next to new data (same weights for a graph-only pass; documented, not hidden).
* The caller's proto is given back as it came (locations, raw data, folder record).

* Nothing the command reads is overwritten: every target (the model and each data file) is
  checked by the write guard (:func:`graphsurgeon_tools.io.guard.check_writes`) before the
  first byte is written, against the files read in the open ``tracking_reads()`` scope and,
  always, the model's own data files. ``in_place=True`` lets the model file itself through.
  A data file that would land on a file read is refused (UsageError, exit 2), never renamed.

Does NOT check the model.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

from google.protobuf import message as protobuf_message
from onnx import ModelProto, TensorProto

from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.io.atomic import (
    check_destination,
    commit,
    copy_file,
    open_temp,
    remove_temps,
    removing_temps_on_signal,
    sweep_dead_temps,
    temp_path,
    write_temp,
)
from graphsurgeon_tools.io.external_data import (
    EXTERNAL_DATA_DIR_KEY,
    expected_nbytes,
    external_tensor_refs,
    is_external,
    iter_model_tensors,
    metadata_index,
    model_tensors,
    stored_tensors,
)
from graphsurgeon_tools.io.external_data import external_data_dir as recorded_data_dir
from graphsurgeon_tools.io.guard import check_writes, record
from graphsurgeon_tools.io.names import utf8_file_name

__all__ = ["save_model"]

PathLike = Union[str, "os.PathLike[str]"]

#: Serialized size above which save_model must move tensors out of the proto.
#: Protobuf's hard limit is 2 GiB; keep a margin for the graph itself.
_INLINE_LIMIT = 2 * 1024**3 - 64 * 1024**2
#: Tensors at least this big are the ones moved to external data when a model is too big.
_EXTERNALIZE_THRESHOLD = 1024
_ALIGNMENT = 4096


def _estimated_size(model: ModelProto, tensors: Optional[list[TensorProto]] = None) -> int:
    """The tensors' share of the serialized size, from their dims (cheap: upb's ByteSize()
    serializes the whole message to count it, a second per GiB). The graph itself is
    covered by the margin in _INLINE_LIMIT. ``tensors``: the model's tensors, when walked already."""
    total = 0
    for tensor in iter_model_tensors(model) if tensors is None else tensors:
        if tensor.data_location == TensorProto.EXTERNAL:
            continue
        size = expected_nbytes(tensor)
        total += size if size is not None else len(tensor.string_data) * 64
    return total


def _inline_graph(model: ModelProto) -> bool:
    """Whether the main graph's own tensors are inline and within the inline limit (the size estimate's)."""
    own = list(stored_tensors(model.graph))
    return not any(is_external(t) for t in own) and _estimated_size(model, own) <= _INLINE_LIMIT


def _serialized(model: ModelProto) -> Optional[bytes]:
    """The model's bytes, or None where protobuf cannot write them (over 2 GiB with its nodes' tensors:
    those are then moved out, as the walk finds)."""
    try:
        return model.SerializeToString()
    except protobuf_message.EncodeError:
        return None


def save_model(
    model: ModelProto,
    path: PathLike,
    *,
    external_data_dir: Optional[PathLike] = None,
    share_data: bool = False,
    in_place: bool = False,
    checked: bool = False,
) -> Path:
    """Write ``model`` to ``path`` atomically and return the path written.

    Args:
        model: the model; restored afterwards (it still points at the original data files).
        path: the output file. Saving over the model the data came from (in place) copies nothing.
        external_data_dir: overrides the data folder recorded by load_model.
        share_data: with an output in the folder the data already lives in, reference the
            existing data files instead of copying them (instant, but deleting the input's
            data then breaks the output too). In any other folder the data is copied regardless.
        in_place: ``path`` is the file the model was read from, and replacing it is meant
            (the write guard refuses it otherwise when the read was tracked).
        checked: the model passed the ONNX checker (as every pass's result has): the tensor walk
            reads each node attribute's type instead of testing its five tensor and graph fields
            (:func:`~graphsurgeon_tools.io.external_data.iter_model_tensors`), and not even that where the
            model's bytes, serialized first when they are likely what is written, show no attribute of
            those types (:func:`~graphsurgeon_tools.io.external_data.model_tensors`). Never for a model the
            checker has not accepted: a tensor in an attribute of another type would be missed.

    Raises :class:`UsageError` for an unusable destination, a target that is a file the
    command reads, or a failed write; :class:`UnsafeExternalDataError` for broken references.
    """
    path = Path(path)
    check_destination(path)
    recorded = metadata_index(model, EXTERNAL_DATA_DIR_KEY)
    saved_entry = None
    if recorded is not None:
        saved_entry = (model.metadata_props[recorded].key, model.metadata_props[recorded].value)
    base = Path(external_data_dir) if external_data_dir is not None else recorded_data_dir(model)
    # Serialized first where that is likely what is written (no folder record to leave out, the graph's own
    # tensors inline and few enough): a checked model's bytes then show whether its nodes hold any tensor.
    data = _serialized(model) if recorded is None and checked and _inline_graph(model) else None
    tensors = model_tensors(model, checked=checked, serialized=data)  # the external ones and the inline size
    external = [t for t in tensors if is_external(t)]
    refs = external_tensor_refs(model, base) if external else []
    shared_folder = bool(refs) and share_data and base is not None and base.resolve() == path.parent.resolve()
    copies = _data_copies(path, refs, shared_folder)
    targets = [(path, "output")] + [(dest, "data file") for dest, copied in copies.values() if copied]
    too_big = not refs and _estimated_size(model, tensors) > _INLINE_LIMIT
    if too_big:
        targets.append((path.parent / utf8_file_name(f"{path.name}.data"), "data file"))
    own = [r for r in (record(ref.path, f"an external data file of the model ({ref.location})") for ref in refs) if r]
    check_writes(targets, reads=own, allow=[path] if in_place else ())
    sweep_dead_temps(path.parent)
    made: list[Path] = []
    restore_locations: list[tuple[TensorProto, list[tuple[str, str]]]] = []
    stashed: list[tuple[TensorProto, bytes]] = []
    try:
        if recorded is not None:
            del model.metadata_props[recorded]
        with removing_temps_on_signal():
            if refs:
                _save_with_external(model, path, external, refs, copies, made, restore_locations)
            elif too_big:
                _save_externalized(model, path, made, stashed)
            else:
                written = data if data is not None else model.SerializeToString()  # the model is as serialized
                commit(write_temp(path.parent, path.name, written, made), path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        remove_temps(made)
        for tensor, entries in restore_locations:
            del tensor.external_data[:]
            for key, value in entries:
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
        for tensor, raw in stashed:
            del tensor.external_data[:]
            tensor.ClearField("data_location")
            tensor.raw_data = raw
        if saved_entry is not None and metadata_index(model, EXTERNAL_DATA_DIR_KEY) is None:
            entry = model.metadata_props.add()
            entry.key, entry.value = saved_entry
    return path


def _data_copies(path: Path, refs: list, shared_folder: bool) -> dict[Path, tuple[Path, bool]]:
    """source data file -> (the output's data file ``OUT.data`` or ``OUT.k.data``, whether to copy).

    A source that already is its destination (saving in place) is not copied. Empty when the
    output shares the sources (``share_data``)."""
    sources = [] if shared_folder else sorted({ref.path for ref in refs}, key=str)
    names = (
        {sources[0]: utf8_file_name(f"{path.name}.data")}
        if len(sources) == 1
        else {src: utf8_file_name(f"{path.name}.{k}.data") for k, src in enumerate(sources)}
    )
    copies = {}
    for source in sources:
        dest = path.parent / names[source]
        copies[source] = (dest, not (dest.exists() and os.path.samefile(source, dest)))
    return copies


def _save_with_external(model, path, external, refs, copies, made, restore_locations) -> None:
    """Copy each source data file to its destination in ``copies`` (none when shared), point the
    tensors at the copies, write the model; ``restore_locations`` records what to undo."""
    renames: list[tuple[Path, Path]] = []
    for source, (dest, copied) in copies.items():
        if not copied:
            continue  # in place: the data file already is the output's data file
        tmp = temp_path(path.parent, dest.name)
        made.append(tmp)
        copy_file(source, tmp)
        renames.append((tmp, dest))
    names = {source: dest.name for source, (dest, _copied) in copies.items()}
    for tensor, ref in zip(external, refs if copies else []):
        restore_locations.append((tensor, [(e.key, e.value) for e in tensor.external_data]))
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = names[ref.path]
    model_tmp = write_temp(path.parent, path.name, model.SerializeToString(), made)
    for tmp, dest in renames:
        commit(tmp, dest)
    commit(model_tmp, path)


def _save_externalized(model, path, made, stashed) -> None:
    """Move every raw tensor of at least _EXTERNALIZE_THRESHOLD bytes to ``<name>.data``
    (4 KiB aligned), then write the model; ``stashed`` records what to put back."""
    data_name = utf8_file_name(f"{path.name}.data")  # the model records it: a protobuf string is UTF-8
    data_tmp = temp_path(path.parent, data_name)
    made.append(data_tmp)
    with open_temp(data_tmp) as handle:
        for tensor in iter_model_tensors(model):
            if not tensor.HasField("raw_data") or (expected_nbytes(tensor) or 0) < _EXTERNALIZE_THRESHOLD:
                continue
            raw = tensor.raw_data
            offset = handle.tell()
            pad = (-offset) % _ALIGNMENT
            if pad:
                handle.write(b"\0" * pad)
                offset += pad
            handle.write(raw)
            stashed.append((tensor, raw))
            tensor.ClearField("raw_data")
            tensor.data_location = TensorProto.EXTERNAL
            for key, value in (("location", data_name), ("offset", str(offset)), ("length", str(len(raw)))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
    if _estimated_size(model) > _INLINE_LIMIT:
        raise UsageError(f"cannot save {path}: the graph is over 2 GB even with its raw tensors moved out")
    model_tmp = write_temp(path.parent, path.name, model.SerializeToString(), made)
    commit(data_tmp, path.parent / data_name)
    commit(model_tmp, path)
