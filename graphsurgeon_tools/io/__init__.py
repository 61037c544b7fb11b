"""Load and save ONNX models: external data, models over 2 GB, atomic writes, path checks.

``load_model(path_or_proto) -> ModelProto`` and ``save_model(model, path)``; the parts:

* :mod:`~graphsurgeon_tools.io.load`: refuse what is not a model; validate external data.
* :mod:`~graphsurgeon_tools.io.external_data`: the tensor walk and the reference checks.
* :mod:`~graphsurgeon_tools.io.save`: atomic save, external data copied beside the output.
* :mod:`~graphsurgeon_tools.io.atomic`: temp files, their sweep and signal cleanup, kernel copies.

Requires: nothing beyond onnx and the standard library (no numpy, no onnxruntime).
Ensures: every write is atomic; every external reference is checked before it is used.
Does NOT run the ONNX checker (passes check the models they produce).
"""

from graphsurgeon_tools.io.atomic import check_destination, write_bytes_atomic
from graphsurgeon_tools.io.external_data import (
    EXTERNAL_DATA_DIR_KEY,
    ExternalTensorRef,
    external_data_dir,
    external_tensor_refs,
    read_tensor_bytes,
)
from graphsurgeon_tools.io.load import load_model
from graphsurgeon_tools.io.save import save_model

__all__ = [
    "EXTERNAL_DATA_DIR_KEY",
    "ExternalTensorRef",
    "check_destination",
    "external_data_dir",
    "external_tensor_refs",
    "load_model",
    "read_tensor_bytes",
    "save_model",
    "write_bytes_atomic",
]
