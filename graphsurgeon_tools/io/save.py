"""Load and save ONNX models: external data, models over 2 GB, atomic writes, path checks.

``load_model(path_or_proto) -> ModelProto`` and ``save_model(model, path)``.

External data, the short version:

* :func:`load_model` with a path refuses what is not a model before parsing it (missing,
  a directory, a FIFO or device, over protobuf's 2 GiB), refuses strings that are not
  UTF-8 after parsing (protobuf would fail later, somewhere deep), and checks every
  external-data reference (no ``..``, no absolute path, no symlink leading out of the
  model's folder, no hard-linked file, the byte range must lie inside the file and match
  the tensor's size). By default it leaves the weights on
  disk. The loaded proto then records the model's folder in a metadata entry
  (:data:`EXTERNAL_DATA_DIR_KEY`) so that :func:`save_model`, the ORT check and
  constant lookups can still find the bytes after the proto is copied or rewritten.
* :func:`save_model` writes the output's external data next to the output, named
  ``<output file name>.data``, as a kernel-side copy (constant memory), unless asked to
  share the input's data files (``share_data=True``, same folder only). Never a hard link:
  onnx refuses external data files with several links (a "hard-link attack" guard), so a
  linked output would not load. It never leaves a reference that points back into the
  input's folder, and never writes the metadata entry into the file.
* A model whose inline size would pass protobuf's 2 GB limit is saved with its large
  tensors moved to ``<output file name>.data``.

Writes are atomic: everything goes to a temporary file in the destination folder and is
renamed into place, so a crash leaves any previous output untouched. Temporary files are
named ``.<name>.onnxtool-tmp-<pid>-<random>``; a later save into the same folder removes
those of writers that no longer run (a SIGKILLed writer cannot clean up after itself).
Writes are not fsync'ed: atomic against crashes of the process, not of the machine. (Data files are
renamed into place before the model file, so a crash between the two renames can leave an
old model file next to new data - same weights for a graph-only pass; documented, not hidden.)
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

import onnx
from onnx import ModelProto, TensorProto

from graphsurgeon_tools.errors import InvalidModelError, UnsafeExternalDataError, UsageError

__all__ = [
    "EXTERNAL_DATA_DIR_KEY",
    "ExternalTensorRef",
    "external_data_dir",
    "external_tensor_refs",
    "load_model",
    "read_tensor_bytes",
    "save_model",
]

PathLike = Union[str, "os.PathLike[str]"]

#: metadata_props key under which :func:`load_model` records the folder that external-data
#: locations are relative to. In memory only: :func:`save_model` never writes it to disk.
EXTERNAL_DATA_DIR_KEY = "onnxtool.external_data_dir"

#: Protobuf cannot parse a message bigger than this.
_PROTOBUF_LIMIT = 2 * 1024**3
#: Serialized size above which :func:`save_model` must move tensors out of the proto.
#: Protobuf's hard limit is 2 GiB; keep a margin for the graph itself.
_INLINE_LIMIT = 2 * 1024**3 - 64 * 1024**2
#: Tensors at least this big are the ones moved to external data when a model is too big.
_EXTERNALIZE_THRESHOLD = 1024
_ALIGNMENT = 4096

# A new file made by mkstemp is 0600; outputs should get the usual permissions.
_UMASK = os.umask(0)
os.umask(_UMASK)


# --------------------------------------------------------------------------- helpers


def _iter_graph_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    """Every TensorProto of a graph: initializers, sparse initializers, node attributes, subgraphs."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    yield from _iter_node_tensors(graph.node)


def _iter_node_tensors(nodes: Iterable[onnx.NodeProto]) -> Iterator[TensorProto]:
    """Every TensorProto held by the nodes' attributes, their subgraphs included."""
    for node in nodes:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("sparse_tensor"):
                yield attr.sparse_tensor.values
                yield attr.sparse_tensor.indices
            if attr.HasField("g"):
                yield from _iter_graph_tensors(attr.g)
            for sub in attr.graphs:
                yield from _iter_graph_tensors(sub)


def _iter_model_tensors(model: ModelProto) -> Iterator[TensorProto]:
    yield from _iter_graph_tensors(model.graph)
    for function in model.functions:
        yield from _iter_node_tensors(function.node)


def _is_external(tensor: TensorProto) -> bool:
    return tensor.data_location == TensorProto.EXTERNAL


def _metadata_index(model: ModelProto, key: str) -> Optional[int]:
    for index, entry in enumerate(model.metadata_props):
        if entry.key == key:
            return index
    return None


def external_data_dir(model: ModelProto) -> Optional[Path]:
    """The folder external-data locations of ``model`` are relative to, if load_model recorded one."""
    index = _metadata_index(model, EXTERNAL_DATA_DIR_KEY)
    return None if index is None else Path(model.metadata_props[index].value)


def _set_external_data_dir(model: ModelProto, folder: Optional[Path]) -> None:
    index = _metadata_index(model, EXTERNAL_DATA_DIR_KEY)
    if folder is None:
        if index is not None:
            del model.metadata_props[index]
        return
    if index is None:
        entry = model.metadata_props.add()
        entry.key = EXTERNAL_DATA_DIR_KEY
    else:
        entry = model.metadata_props[index]
    entry.value = str(folder)


@dataclass(frozen=True)
class ExternalTensorRef:
    """One validated external-data reference: which bytes of which file hold a tensor."""

    tensor_name: str
    location: str  # as written in the model, relative to the model's folder
    path: Path  # resolved absolute path (inside the model's folder)
    offset: int
    length: int


def _expected_nbytes(tensor: TensorProto) -> Optional[int]:
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


def _validate_ref(tensor: TensorProto, base: Path, model_file: str) -> ExternalTensorRef:
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
    base_real = base.resolve()
    target = (base / location).resolve()
    # Symlinks: the resolved target must still be inside the model's folder.
    if target != base_real and base_real not in target.parents:
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data location {location!r} resolves outside "
            f"the model's folder (symlink to {target})"
        )
    if not target.is_file():
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data file {location!r} is missing"
        )
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
    expected = _expected_nbytes(tensor)
    if expected is not None and expected != length:
        raise UnsafeExternalDataError(
            f"tensor {name!r} in {model_file}: external data length {length} does not match its "
            f"shape {list(tensor.dims)} ({expected} bytes)"
        )
    return ExternalTensorRef(name, location, target, offset, length)


def external_tensor_refs(model: ModelProto, base: Optional[PathLike] = None) -> list[ExternalTensorRef]:
    """Validate and list every external-data reference of ``model``.

    ``base`` defaults to the folder recorded by :func:`load_model`. Raises
    :class:`UnsafeExternalDataError` for a reference that is unsafe or broken and
    :class:`InvalidModelError` when the model has external references but no known folder.
    Reads file sizes only, never the data.
    """
    tensors = [t for t in _iter_model_tensors(model) if _is_external(t)]
    if not tensors:
        return []
    folder = Path(base) if base is not None else external_data_dir(model)
    if folder is None:
        raise InvalidModelError(
            "the model has external data but no known folder to resolve it against "
            "(load it with load_model(path) or pass external_data_dir=)"
        )
    label = str(folder)
    return [_validate_ref(t, folder, label) for t in tensors]


def read_tensor_bytes(model: ModelProto, tensor: TensorProto) -> bytes:
    """The raw bytes of an external tensor of ``model`` (validated first). For small tensors only."""
    folder = external_data_dir(model)
    if folder is None:
        raise InvalidModelError(
            f"tensor {tensor.name!r} has external data but the model's folder is unknown"
        )
    ref = _validate_ref(tensor, folder, str(folder))
    with open(ref.path, "rb") as handle:
        handle.seek(ref.offset)
        return handle.read(ref.length)


# --------------------------------------------------------------------------- load


def load_model(path_or_proto: Union[PathLike, ModelProto], *, load_external_data: bool = False) -> ModelProto:
    """Read an ONNX model from a path, or pass a ModelProto through unchanged (not copied).

    With a path, external-data references are validated (see :func:`external_tensor_refs`).
    ``load_external_data=False`` (the default) keeps the weights on disk: a pass that only
    touches the graph never reads them, and :func:`save_model` copies the data
    files next to the output. ``load_external_data=True`` reads them into the proto.

    Does NOT run the ONNX checker (that would serialize the whole model again); passes check
    the models they produce. Raises :class:`InvalidModelError` (missing, unreadable, not ONNX)
    or :class:`UnsafeExternalDataError`.
    """
    if isinstance(path_or_proto, ModelProto):
        if load_external_data and external_data_dir(path_or_proto) is not None:
            _inline_external_data(path_or_proto, str(external_data_dir(path_or_proto)))
        return path_or_proto
    if not isinstance(path_or_proto, (str, os.PathLike)):
        raise TypeError(f"load_model expects a path or an onnx.ModelProto, got {type(path_or_proto).__name__}")
    path = Path(path_or_proto)
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
    if info.st_size > _PROTOBUF_LIMIT:
        raise InvalidModelError(
            f"{path} is {info.st_size / 2**30:.1f} GiB, larger than protobuf's 2 GiB limit, so it cannot be an "
            "ONNX model file (models this big keep their weights in external data)"
        )
    try:
        data = path.read_bytes()
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
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except Exception:  # protobuf's DecodeError and friends: truncated or not protobuf at all
        raise InvalidModelError(f"not an ONNX model (cannot parse, truncated or wrong format): {path}") from None
    finally:
        del data
    # Protobuf happily parses many non-ONNX byte strings into a near-empty message.
    if model.ir_version <= 0 or not model.HasField("graph") or not (model.graph.node or model.graph.output):
        raise InvalidModelError(f"not an ONNX model (no IR version or empty graph): {path}")
    bad_text = _first_undecodable_string(model)
    if bad_text:
        raise InvalidModelError(f"not an ONNX model (a {bad_text} is not valid UTF-8; corrupt file?): {path}")
    folder = path.resolve().parent
    external = [t for t in _iter_model_tensors(model) if _is_external(t)]
    if external:
        for tensor in external:
            _validate_ref(tensor, folder, str(path))
        if load_external_data:
            _set_external_data_dir(model, folder)
            _inline_external_data(model, str(path))
        else:
            _set_external_data_dir(model, folder)
    return model


def _first_undecodable_string(message: Any) -> Optional[str]:
    """Name of the first string field that is not UTF-8, or None.

    Protobuf (upb) parses proto2 strings without checking them and hands invalid ones back
    as ``bytes``; the first code that copies one into another message then dies with a
    UnicodeDecodeError. Checking once here turns that into one clear error. TensorProtos
    are visited field by field so their raw_data (the weights) is never copied out."""
    if isinstance(message, TensorProto):
        texts = [message.name, message.doc_string]
        texts += [text for entry in message.external_data for text in (entry.key, entry.value)]
        return "tensor name or external-data entry" if any(isinstance(t, bytes) for t in texts) else None
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            if descriptor.type == descriptor.TYPE_STRING:
                items = value if descriptor.is_repeated else [value]
                if any(isinstance(item, bytes) for item in items):
                    return f"{type(message).__name__}.{descriptor.name}"
            continue
        for item in (value if descriptor.is_repeated else [value]):
            found = _first_undecodable_string(item)
            if found:
                return found
    return None


def _inline_external_data(model: ModelProto, label: str) -> None:
    folder = external_data_dir(model)
    assert folder is not None
    for tensor in _iter_model_tensors(model):
        if _is_external(tensor):
            ref = _validate_ref(tensor, folder, label)
            with open(ref.path, "rb") as handle:
                handle.seek(ref.offset)
                tensor.raw_data = handle.read(ref.length)
            del tensor.external_data[:]
            tensor.ClearField("data_location")
    _set_external_data_dir(model, None)


# --------------------------------------------------------------------------- save


def _estimated_size(model: ModelProto) -> int:
    """The tensors' share of the serialized size, from their dims (cheap: upb's ByteSize()
    serializes the whole message to count it, a second per GiB). The graph itself is
    covered by the margin in _INLINE_LIMIT."""
    total = 0
    for tensor in _iter_model_tensors(model):
        if tensor.data_location == TensorProto.EXTERNAL:
            continue
        size = _expected_nbytes(tensor)
        total += size if size is not None else len(tensor.string_data) * 64
    return total


# Temp files are named ".<final name>.onnxtool-tmp-<pid>-<random>": hidden, recognisably
# ours, and saying whose they are, so that a later save can sweep the leftovers of a writer
# that was SIGKILLed (which no finally/atexit can clean) without touching a live writer's.
_TEMP_MARK = "onnxtool-tmp"
_TEMP_RE = re.compile(r"^\..+\." + _TEMP_MARK + r"-(\d+)-[A-Za-z0-9_]+$")


def _temp_path(folder: Path, name: str) -> Path:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.{_TEMP_MARK}-{os.getpid()}-", suffix="")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)
    return Path(tmp)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _sweep_dead_temps(folder: Path) -> None:
    """Remove temp files of onnxtool writers that died mid-write (their pid no longer runs).

    A reused pid keeps a stale temp alive a little longer; that is harmless. Files that do
    not match our naming are never touched."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        match = _TEMP_RE.match(entry.name)
        if match is None or int(match.group(1)) == os.getpid() or _pid_alive(int(match.group(1))):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
        except OSError:
            pass


def _open_temp(path: Path):
    """Open a fresh (empty) temp file for writing WITHOUT O_TRUNC.

    Truncating an existing file, even an empty one, makes ext4 (auto_da_alloc) flush the
    whole file to disk on close: a second or more per GiB that a plain ``open(new, "wb")``
    of a file that did not exist never pays."""
    return os.fdopen(os.open(path, os.O_WRONLY), "wb")


def _write_temp(folder: Path, name: str, data: bytes, made: list[Path]) -> Path:
    """Write ``data`` to a fresh temp file for ``name`` in ``folder``; ``made`` records it for cleanup."""
    tmp = _temp_path(folder, name)
    made.append(tmp)
    with _open_temp(tmp) as handle:
        handle.write(data)
    return tmp


def _remove_temps(made: Iterable[Path]) -> None:
    for tmp in made:
        if tmp.exists():
            try:
                tmp.unlink()
            except OSError:
                pass


def _copy_data(source: Path, dest: Path) -> None:
    """Copy a data file kernel-side (copy_file_range, then sendfile): constant memory, like ``cp``."""
    with open(source, "rb") as src, _open_temp(dest) as dst:
        remaining = os.fstat(src.fileno()).st_size
        if hasattr(os, "posix_fadvise"):  # as cp does: read-ahead for one sequential pass
            os.posix_fadvise(src.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
        try:
            while remaining > 0:
                done = os.copy_file_range(src.fileno(), dst.fileno(), min(remaining, 1 << 31))
                if done == 0:
                    break
                remaining -= done
        except (AttributeError, OSError):
            src.seek(0)
            dst.seek(0)
            dst.truncate()
            shutil.copyfileobj(src, dst, 16 * 1024 * 1024)
    os.chmod(dest, 0o666 & ~_UMASK)


def check_destination(path: Path) -> None:
    """Refuse (UsageError, exit 2) a destination that cannot take a new file, before any work."""
    if path.is_dir():
        raise UsageError(f"output path is a directory: {path}")
    if not path.parent.is_dir():
        raise UsageError(f"output folder does not exist: {path.parent}")
    if not os.access(path.parent, os.W_OK):
        raise UsageError(f"output folder is not writable: {path.parent}")


def write_bytes_atomic(data: bytes, path: PathLike) -> Path:
    """Write a small file (a report, an image) the way :func:`save_model` writes a model.

    Temp file in the destination folder, then rename: a crash leaves any old file intact, and
    the temp of a killed writer is swept by the next write into that folder. Raises
    :class:`UsageError` for an unusable destination. Does not guard against overwriting an
    input: callers that read files compare paths first.
    """
    path = Path(path)
    check_destination(path)
    _sweep_dead_temps(path.parent)
    made: list[Path] = []
    try:
        os.replace(_write_temp(path.parent, path.name, data, made), path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        _remove_temps(made)
    return path


def save_model(
    model: ModelProto,
    path: PathLike,
    *,
    external_data_dir: Optional[PathLike] = None,
    share_data: bool = False,
) -> Path:
    """Write ``model`` to ``path`` atomically and return the path written.

    * Inline models are serialized once and renamed into place.
    * Models whose tensors live in external files (as left by :func:`load_model`) get those
      files copied next to the output as ``<name>.data`` (``<name>.<k>.data`` for several
      source files; kernel-side copy, constant memory) and the references rewritten to match.
      Saving over the model the data came from (in place) copies nothing. The caller's proto
      is restored afterwards: it still points at the original files. Not hard links: onnx
      (1.18+) refuses to load external data with more than one link, as a possible attack.
    * ``share_data=True`` and an output in the folder the data already lives in: the output
      references the existing data files, nothing is copied (instant, but deleting the
      input's data then breaks the output too; the CLI uses it for ``--in-place`` and
      ``--share-data``). In any other folder the data is copied regardless.
    * Models too big for one protobuf (about 2 GB) have their large tensors written to
      ``<name>.data``.

    ``external_data_dir`` overrides the folder recorded by :func:`load_model`.
    Does NOT check the model, and does not guard the input file: callers that must not
    overwrite their input compare paths first. Raises :class:`UsageError` for an unusable
    destination and :class:`UnsafeExternalDataError` for broken references.
    """
    path = Path(path)
    check_destination(path)
    _sweep_dead_temps(path.parent)
    recorded = _metadata_index(model, EXTERNAL_DATA_DIR_KEY)
    saved_entry = None
    if recorded is not None:
        saved_entry = (model.metadata_props[recorded].key, model.metadata_props[recorded].value)
    base = Path(external_data_dir) if external_data_dir is not None else (
        Path(saved_entry[1]) if saved_entry else None
    )
    external = [t for t in _iter_model_tensors(model) if _is_external(t)]
    refs = external_tensor_refs(model, base) if external else []
    made: list[Path] = []
    restore_locations: list[tuple[TensorProto, list[tuple[str, str]]]] = []
    stashed: list[tuple[TensorProto, bytes]] = []
    try:
        if recorded is not None:
            del model.metadata_props[recorded]
        if refs:
            shared_folder = share_data and base is not None and base.resolve() == path.parent.resolve()
            sources = [] if shared_folder else sorted({ref.path for ref in refs}, key=str)
            names = (
                {sources[0]: f"{path.name}.data"}
                if len(sources) == 1
                else {src: f"{path.name}.{k}.data" for k, src in enumerate(sources)}
            )
            renames: list[tuple[Path, Path]] = []
            for source in sources:
                dest = path.parent / names[source]
                if dest.exists() and os.path.samefile(source, dest):
                    continue  # in place: the data file already is the output's data file
                tmp = _temp_path(path.parent, names[source])
                made.append(tmp)
                _copy_data(source, tmp)
                renames.append((tmp, dest))
            for tensor, ref in zip(external, refs if not shared_folder else []):
                restore_locations.append((tensor, [(e.key, e.value) for e in tensor.external_data]))
                for entry in tensor.external_data:
                    if entry.key == "location":
                        entry.value = names[ref.path]
            model_tmp = _write_temp(path.parent, path.name, model.SerializeToString(), made)
            for tmp, dest in renames:
                os.replace(tmp, dest)
            os.replace(model_tmp, path)
        elif _estimated_size(model) > _INLINE_LIMIT:
            data_name = f"{path.name}.data"
            data_tmp = _temp_path(path.parent, data_name)
            made.append(data_tmp)
            with _open_temp(data_tmp) as handle:
                for tensor in _iter_model_tensors(model):
                    if not tensor.HasField("raw_data") or (_expected_nbytes(tensor) or 0) < _EXTERNALIZE_THRESHOLD:
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
                raise UsageError(
                    f"cannot save {path}: the graph is over 2 GB even with its raw tensors moved out"
                )
            model_tmp = _write_temp(path.parent, path.name, model.SerializeToString(), made)
            os.replace(data_tmp, path.parent / data_name)
            os.replace(model_tmp, path)
        else:
            model_tmp = _write_temp(path.parent, path.name, model.SerializeToString(), made)
            os.replace(model_tmp, path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        _remove_temps(made)
        for tensor, entries in restore_locations:
            del tensor.external_data[:]
            for key, value in entries:
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
        for tensor, raw in stashed:
            del tensor.external_data[:]
            tensor.ClearField("data_location")
            tensor.raw_data = raw
        if saved_entry is not None and _metadata_index(model, EXTERNAL_DATA_DIR_KEY) is None:
            entry = model.metadata_props.add()
            entry.key, entry.value = saved_entry
    return path
