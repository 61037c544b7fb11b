"""Load and save ONNX models: external data, models over 2 GB, atomic writes, path checks, the write guard.

``load_model(path_or_proto) -> ModelProto`` and ``save_model(model, path)``; the parts:

* :mod:`~graphsurgeon_tools.io.load`: refuse what is not a model; validate external data.
* :mod:`~graphsurgeon_tools.io.external_data`: the tensor walk and the reference checks.
* :mod:`~graphsurgeon_tools.io.save`: atomic save, external data copied beside the output.
* :mod:`~graphsurgeon_tools.io.atomic`: temp files, their sweep and signal cleanup, kernel copies.
* :mod:`~graphsurgeon_tools.io.guard`: the write guard (no command writes a file it reads).
* :mod:`~graphsurgeon_tools.io.files`: file arguments read only when they are regular files.

Names are imported lazily (PEP 562): ``graphsurgeon_tools.io.guard`` is what the CLI needs at
start-up, and it must not import onnx.

Requires: nothing beyond onnx and the standard library (no numpy, no onnxruntime).
Ensures: every write is atomic and checked against the files the command reads; every
external reference is checked before it is used.
Does NOT run the ONNX checker (passes check the models they produce).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphsurgeon_tools.lazy import lazy_face

if TYPE_CHECKING:  # the names as type checkers see them; at run time __getattr__ imports them
    from graphsurgeon_tools.io.atomic import check_destination, write_bytes_atomic
    from graphsurgeon_tools.io.external_data import (
        EXTERNAL_DATA_DIR_KEY,
        ExternalTensorRef,
        external_data_dir,
        external_tensor_refs,
        read_tensor_bytes,
    )
    from graphsurgeon_tools.io.files import open_regular, read_regular, stat_regular
    from graphsurgeon_tools.io.guard import FileRecord, check_writes, note_read, tracking_reads
    from graphsurgeon_tools.io.load import load_model
    from graphsurgeon_tools.io.save import save_model

_EXPORTS = {
    "check_destination": "atomic",
    "write_bytes_atomic": "atomic",
    "EXTERNAL_DATA_DIR_KEY": "external_data",
    "ExternalTensorRef": "external_data",
    "external_data_dir": "external_data",
    "external_tensor_refs": "external_data",
    "read_tensor_bytes": "external_data",
    "open_regular": "files",
    "read_regular": "files",
    "stat_regular": "files",
    "FileRecord": "guard",
    "check_writes": "guard",
    "note_read": "guard",
    "tracking_reads": "guard",
    "load_model": "load",
    "save_model": "save",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
