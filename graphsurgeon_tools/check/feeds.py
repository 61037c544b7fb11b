"""Inputs for runs that check a model: concrete shapes, seeded random feeds, user arrays, size guard.

* :func:`concrete_input_shapes` / :func:`random_feeds`: what the built-in equivalence check
  feeds (symbolic dims 1 at axis 0, :data:`DEFAULT_DIM` elsewhere; floats uniform [-1, 1)).
* :func:`load_user_array` / :func:`conform_array` / :func:`random_input`: what ``validate``
  feeds (a user's ``.npy`` or array checked against the graph input; else uniform [0, 1)).
* :func:`conform_scale_input`: a user's array for a scale input (``validate``'s ``inputs=``):
  numeric, finite, positive (sizes: whole, non-negative), and the output it asks for within
  the output size limit, like a swept factor.
* :func:`guard_output_sizes`: refuse, before ORT allocates, tensors shape inference can pin
  down above the output size limit (:mod:`graphsurgeon_tools.check.limits`); fixed input
  values (``values=``) count as constants there.

Requires: a ModelProto (the shapes/feeds) or a graph input's declared shape and dtype.
Ensures: arrays of the declared rank, static dims and dtype (floats cast, with a note), or an
:class:`OnnxToolError` naming the input. Does NOT run any model; never unpickles (``.npy``
files are loaded with ``allow_pickle=False``) and never opens a FIFO or device
(:func:`graphsurgeon_tools.io.files.open_regular`: a FIFO would block, ``/dev/zero`` never ends).
"""

from __future__ import annotations

import math
import os
import pickle
import zipfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import ModelProto

from graphsurgeon_tools.check import limits
from graphsurgeon_tools.check.limits import check_output_size, resized_shape
from graphsurgeon_tools.core.checker import shape_inference, weightless_copy
from graphsurgeon_tools.core.dtypes import np_dtype
from graphsurgeon_tools.errors import InvalidInputError, InvalidModelError, InvalidScalesError, OnnxToolError
from graphsurgeon_tools.io.files import open_regular

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_DIM",
    "InputLike",
    "concrete_input_shapes",
    "conform_array",
    "conform_scale_input",
    "guard_output_sizes",
    "load_user_array",
    "random_feeds",
    "random_input",
]

DEFAULT_BATCH = 1
DEFAULT_DIM = 32

InputLike = Union[np.ndarray, str, os.PathLike]


def concrete_input_shapes(
    model: ModelProto, dims: Optional[Mapping[str, int]] = None, *, exclude: tuple[str, ...] = ()
) -> dict[str, list[int]]:
    """A concrete shape for every real graph input (initializer-backed ones excluded).

    Static dims (positive ``dim_value``) are kept; a named dim found in ``dims`` gets that
    value; any other dim (named, unknown, or a ``dim_value`` of -1 or 0) becomes 1 at axis 0
    and :data:`DEFAULT_DIM` elsewhere.
    """
    dims = dict(dims or {})
    initializers = {init.name for init in model.graph.initializer}
    shapes: dict[str, list[int]] = {}
    for inp in model.graph.input:
        if inp.name in initializers or inp.name in exclude:
            continue
        tensor_type = inp.type.tensor_type
        shape: list[int] = []
        for axis, dim in enumerate(tensor_type.shape.dim):
            # Older paddle2onnx writes dynamic dims as dim_value -1 (and 0 is seen too): any dim
            # that is not a positive integer is symbolic.
            if dim.HasField("dim_value") and dim.dim_value > 0:
                shape.append(int(dim.dim_value))
            elif dim.HasField("dim_param") and dim.dim_param in dims:
                shape.append(int(dims[dim.dim_param]))
            else:
                shape.append(DEFAULT_BATCH if axis == 0 else DEFAULT_DIM)
        shapes[inp.name] = shape
    return shapes


def random_feeds(model: ModelProto, shapes: Mapping[str, list[int]], seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs: floats uniform in [-1, 1), integers in [0, 8), booleans at random."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    by_name = {inp.name: inp for inp in model.graph.input}
    for name, shape in shapes.items():
        elem = by_name[name].type.tensor_type.elem_type
        if elem == 0:
            raise InvalidModelError(f"graph input {name!r} is not a tensor with a known element type")
        try:
            dtype = np_dtype(elem)
        except KeyError:
            raise InvalidModelError(
                f"graph input {name!r} has element type {elem}, which the check cannot generate"
            ) from None
        if dtype.kind == "f":
            feeds[name] = np.asarray(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
        elif dtype.kind in "iu":
            feeds[name] = np.asarray(rng.integers(0, 8, size=shape).astype(dtype))
        elif dtype.kind == "b":
            feeds[name] = np.asarray(rng.integers(0, 2, size=shape).astype(bool))
        else:
            raise InvalidModelError(f"graph input {name!r} has dtype {dtype} the check cannot generate")
    return feeds


def guard_output_sizes(
    model: ModelProto,
    shapes: Mapping[str, list[int]],
    max_output_bytes: Optional[int],
    *,
    what: str = "check",
    values: Optional[Mapping[str, np.ndarray]] = None,
) -> None:
    """Refuse (ResourceLimitError) before ORT allocates a tensor above the configured limit.

    ``shapes``: the concrete input shapes the run will feed; every tensor shape inference can
    then pin down is checked (``what`` starts the message: name the file there). ``values``:
    inputs whose values are fixed for the run (a user's scales); they become constants for
    shape inference, so the Resize sizes they decide are checked too. Tensors whose size
    depends on other run-time values (swept scales) are the caller's to check.
    """
    cap = limits.max_output_bytes(max_output_bytes)
    if cap is None:  # the limit is off: nothing can be refused, no shape inference to pay for
        return
    # The inputs the run will create count too: a declared 2**20 x 2**20 input is refused here,
    # not by numpy's MemoryError when the feeds are drawn.
    elem_types = {inp.name: inp.type.tensor_type.elem_type for inp in model.graph.input}
    for name, shape in shapes.items():
        if elem_types.get(name):
            check_output_size(shape, elem_types[name], limit=max_output_bytes, what=f"{what}: input {name!r}")
    skeleton = weightless_copy(model)
    fixed = {name: np.asarray(value) for name, value in (values or {}).items() if np.asarray(value).size <= 64}
    if fixed:
        kept = [inp for inp in skeleton.graph.input if inp.name not in fixed]
        del skeleton.graph.input[:]
        skeleton.graph.input.extend(kept)
        skeleton.graph.initializer.extend(onnx.numpy_helper.from_array(v, name) for name, v in fixed.items())
    for inp in skeleton.graph.input:
        if inp.name in shapes:
            inp.type.tensor_type.ClearField("shape")
            for value in shapes[inp.name]:
                inp.type.tensor_type.shape.dim.add().dim_value = value
    try:
        inferred = shape_inference(skeleton)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError, ValueError):
        # inference is a guard here, not a verdict: a model it cannot follow is judged by ORT
        return
    itemsizes: dict[int, int] = {}
    for info in list(inferred.graph.value_info) + list(inferred.graph.output):
        tensor_type = info.type.tensor_type
        if not tensor_type.HasField("shape") or tensor_type.elem_type == 0:
            continue
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in tensor_type.shape.dim]
        if None in dims:
            continue
        elem = tensor_type.elem_type
        if elem not in itemsizes:
            try:
                itemsizes[elem] = int(limits.tensor_nbytes((), elem))
            except ValueError:  # an element type numpy has no size for: not judged here
                itemsizes[elem] = 0
        # The arithmetic inline (tens of thousands of tensors on a big graph); the message from the one home.
        if itemsizes[elem] and itemsizes[elem] * math.prod(dims) > cap:
            check_output_size(dims, elem, limit=max_output_bytes, what=f"{what}: tensor {info.name!r}")


def load_user_array(name: str, value: InputLike) -> tuple[np.ndarray, str]:
    """``(array, where it came from)`` for an array or a ``.npy`` path; OnnxToolError naming ``name`` otherwise."""
    if isinstance(value, np.ndarray):
        return value, "array"
    path = Path(value)
    try:
        with open_regular(path, f"input {name!r} file", OnnxToolError) as handle:  # never a FIFO or device
            _refuse_declared_size(name, path, handle)
            array = np.load(handle, allow_pickle=False)
    except FileNotFoundError:
        raise InvalidInputError(f"input {name!r}: file not found: {path}") from None
    except ValueError as exc:
        if "allow_pickle" in str(exc):  # an object array: loading it would unpickle, i.e. run code
            raise InvalidInputError(
                f"input {name!r}: {path} holds pickled Python objects, which onnxtool never loads; save a numeric array"
            ) from None
        raise InvalidInputError(
            f"input {name!r}: {path} is not a readable .npy array ({' '.join(str(exc).split())})"
        ) from None
    except (OSError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError) as exc:  # unreadable, truncated, junk
        raise InvalidInputError(f"input {name!r}: {path} is not a readable .npy array ({type(exc).__name__})") from None
    if not isinstance(array, np.ndarray):
        raise InvalidInputError(f"input {name!r}: {path} holds several arrays (.npz); give one .npy per input")
    return array, str(path)


def _refuse_declared_size(name: str, path: Path, handle: Any) -> None:
    """Read a .npy header and refuse a shape the file cannot hold, or one above the size limit.

    np.load allocates what the header declares before it reads: a 100-byte file claiming
    1x3x100000x100000 would be a 112 GiB MemoryError (exit 4). Not a .npy (an .npz, junk):
    left to np.load's own errors. The handle is rewound either way."""
    import tokenize

    from numpy.lib import format as npy_format

    start = handle.tell()
    try:
        try:
            version = npy_format.read_magic(handle)
        except (ValueError, OSError, EOFError):
            return  # not a .npy (an .npz, junk): np.load says what it is
        reader = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}.get(version)
        if reader is None:
            return
        try:
            shape, _fortran, dtype = reader(handle)
        except (ValueError, OSError, EOFError, SyntaxError, TypeError, tokenize.TokenError) as exc:
            # numpy parses the header with a tokenizer: a cut or garbled one fails in many ways
            raise InvalidInputError(
                f"input {name!r}: {path} is not a readable .npy array (its header: {type(exc).__name__})"
            ) from None
    finally:
        data_start = handle.tell()
        handle.seek(start)
    if dtype.hasobject:
        return  # np.load refuses it (allow_pickle=False) with its own message
    check_output_size(shape, dtype, what=f"input {name!r} from {path}")
    available = os.fstat(handle.fileno()).st_size - data_start
    needed = math.prod(shape) * dtype.itemsize
    if needed > available:
        raise InvalidInputError(
            f"input {name!r}: {path} declares shape {list(shape)} ({needed} bytes of {dtype}) "
            f"but holds {available} bytes: truncated or not a .npy array"
        )


# Scale-input layouts (validation.ports.ScaleInput.layout) whose values are resize factors.
_FACTOR_LAYOUTS = ("scales", "pair", "factor")


def conform_scale_input(
    port: Any,
    array: np.ndarray,
    source: str,
    data_shapes: Sequence[Sequence[int]],
    *,
    limit: Optional[int] = None,
    what: str = "validate",
) -> np.ndarray:
    """A user's array for a scale input, checked as a swept factor is, cast to the input's dtype.

    Args:
        port: the scale input (``.name``, ``.layout``, ``.dtype``; see validation.ports.ScaleInput).
        array: the user's array; source: where it came from (a path, for messages).
        data_shapes: the shapes of the data inputs the run feeds (what the scales resize).
        limit: the output size limit (see :mod:`graphsurgeon_tools.check.limits`); what: message prefix.

    Raises :class:`InvalidScalesError` (exit 3) for non-numeric arrays (strings, objects, bools),
    NaN, infinite, zero or negative factors, and sizes that are not whole non-negative numbers;
    :class:`ResourceLimitError` when an output they ask for is above the limit.
    """
    name, layout = port.name, port.layout
    where = f"input {name!r} from {source}"
    if array.dtype.kind not in "fiu":
        raise InvalidScalesError(f"{where}: dtype {array.dtype} is not numeric; a scale input takes numbers")
    if layout == "size-tensor":  # only its shape is read: that shape is the output's
        check_output_size(array.shape, "float32", limit=limit, what=f"{what}: {where}: the output it asks for")
        return np.zeros(array.shape, dtype=port.dtype)
    values = array.astype(np.float64).reshape(-1)
    bad = values[~np.isfinite(values)]
    if bad.size:
        raise InvalidScalesError(f"{where}: {bad[0]} in {_short(values)} is not a finite number")
    if layout in _FACTOR_LAYOUTS and (values <= 0).any():
        raise InvalidScalesError(f"{where}: {values[values <= 0][0]} in {_short(values)} is not a positive scale")
    if layout == "sizes" and ((values < 0).any() or (values != np.floor(values)).any()):
        raise InvalidScalesError(f"{where}: sizes {_short(values)} must be whole non-negative numbers")
    target = np.dtype(port.dtype)
    info = np.finfo(target) if target.kind == "f" else np.iinfo(target)
    if values.size and (values.max() > info.max or values.min() < info.min):
        raise InvalidScalesError(f"{where}: {_short(values)} does not fit the input's type {target}")
    for shape in data_shapes:
        out = _output_shape(layout, list(shape), values)
        if out is not None:
            check_output_size(out, "float32", limit=limit, what=f"{what}: {where}: the output it asks for")
    return np.asarray(array.astype(np.float64) if layout == "sizes" else array).astype(port.dtype)


def _short(values: np.ndarray) -> str:
    shown = ", ".join(f"{v:g}" for v in values[:8])
    return f"[{shown}{', ...' if values.size > 8 else ''}]"


def _output_shape(layout: str, shape: list[int], values: np.ndarray) -> Optional[tuple[float, ...]]:
    """The output a data input of ``shape`` gets from these scale values, or None when they cannot apply."""
    rank, count = len(shape), int(values.size)
    if rank == 0 or count == 0:
        return None
    spatial = max(rank - 2, 1)
    if layout == "sizes":
        if count > rank:
            return None
        return tuple(shape[: rank - count]) + tuple(float(v) if v > 2**62 else int(v) for v in values)
    if layout == "factor":
        scales = [1.0] * (rank - spatial) + [float(values[0])] * spatial
    elif count <= rank:
        scales = [1.0] * (rank - count) + [float(v) for v in values]
    else:
        return None
    return resized_shape(shape, scales) if all(math.isfinite(s) for s in scales) else None


def conform_array(
    name: str, array: np.ndarray, shape: Sequence[Any], dtype: np.dtype, source: str, notes: list[str]
) -> np.ndarray:
    """Check a user array against the graph input; cast floats to the input's float type."""
    if shape and len(array.shape) != len(shape):
        raise InvalidInputError(
            f"input {name!r} from {source}: rank {array.ndim} (shape {list(array.shape)}), "
            f"the model expects rank {len(shape)} ({list(shape)})"
        )
    for axis, (got, want) in enumerate(zip(array.shape, shape)):
        if isinstance(want, int) and got != want:
            raise InvalidInputError(
                f"input {name!r} from {source}: shape {list(array.shape)} does not fit the model's "
                f"{list(shape)} (axis {axis}: {got} != {want})"
            )
    if array.dtype != dtype:
        if np.issubdtype(array.dtype, np.floating) and np.issubdtype(dtype, np.floating):
            notes.append(f"input {name!r}: cast {array.dtype} from {source} to {dtype}")
            with np.errstate(over="ignore"):  # overflow is refused below, not printed as a warning
                cast = array.astype(dtype)
            overflow = np.isinf(cast) & np.isfinite(array)
            if overflow.any():
                raise InvalidInputError(
                    f"input {name!r} from {source}: {array[overflow].flat[0]:g} does not fit "
                    f"{dtype} (the model's input type)"
                )
            array = cast
        elif np.issubdtype(array.dtype, np.integer) and np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            if array.size and (array.min() < info.min or array.max() > info.max):
                raise InvalidInputError(
                    f"input {name!r} from {source}: values outside {dtype}'s range [{info.min}, {info.max}]"
                )
            array = array.astype(dtype)
        else:
            raise InvalidInputError(f"input {name!r} from {source}: dtype {array.dtype}, the model expects {dtype}")
    return np.ascontiguousarray(array)


def random_input(
    shape: Sequence[Any],
    dtype: np.dtype,
    rng: np.random.Generator,
    size: int,
    *,
    limit: Optional[int] = None,
    what: str = "random input",
) -> np.ndarray:
    concrete = [d if isinstance(d, int) else (1 if axis == 0 else size) for axis, d in enumerate(shape)]
    # A declared input of 2**20 x 2**20 must be refused, not handed to numpy (MemoryError).
    # Floats are drawn in float64 first, so that is what is allocated.
    check_output_size(concrete, np.float64 if np.issubdtype(dtype, np.floating) else dtype, limit=limit, what=what)
    # np.asarray: for a 0-d input (a scalar condition) numpy hands back a scalar, which ORT refuses.
    if np.issubdtype(dtype, np.floating):
        # Uniform [0, 1): what an image model sees after normalisation to [0, 1].
        return np.asarray(rng.random(concrete, dtype=np.float64).astype(dtype))
    if dtype == np.bool_:
        return np.asarray(rng.random(concrete) < 0.5)
    return np.asarray(rng.integers(0, 10, size=concrete).astype(dtype))
