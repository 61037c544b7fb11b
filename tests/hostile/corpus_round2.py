"""Hostile cases, second round: what a command reads is never written,
no file argument can hang it, and no user input is an internal error.

Same :class:`~hostile.corpus.Case` shape as :mod:`hostile.corpus` (run by
tests/hostile/test_hostile_round2.py through :mod:`hostile.harness`). Groups:

* ``guard`` (class 1): a write target - the model, a data file ``OUT.data``/``OUT.N.data``, a
  ``--junit`` report - that is, through any path, symlink or hard link, a file the command
  reads (input model, its data files, the reference's, a ``--spec``, an ``--input`` .npy).
  Exit 2, nothing written.
* ``spec`` (class 5): plugin spec files the schema refuses at parse time. Exit 3.
* ``npy`` (classes 4, 5): ``--input`` arrays for a scale input: strings, NaN, zero, absurd
  factors. Exit 3.
* ``special`` (class 4): a FIFO as ``--spec`` or ``--input``: refused before it is opened
  (subprocess only: a mistake would hang).
* ``names`` (class 5): a symlink loop as output path (exit 2), as the model or its data file (exit 3).
* ``plugin`` (class 5): DynamicTRTResize nodes with mistyped or unknown attribute values, turned back
  (``--reverse``) or validated. Exit 3.

``SUCCESS_CASES`` are inputs a command must simply handle (exit 0, nothing on stderr):
non-UTF-8 file and folder names, with and without external data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np
from onnx import TensorProto, helper

from hostile import models
from hostile.corpus import NOT_REGULAR, READERS, Built, Case, registrar
from hostile.models import write

USAGE, INVALID = 2, 3
COLLISION = r"reads|read by|input|same file|overwrite|itself|data file"

WRITING = frozenset({"make-dynamic-scale", "swap-plugin"})
JUNIT = frozenset({"validate-junit"})
SWAP = frozenset({"swap-plugin"})
VALIDATE = frozenset({"validate"})

CASES: list[Case] = []
case = registrar(CASES)


def _external_model(folder: Path, name: str = "model.onnx", data_name: str = "weights.bin") -> Path:
    """A valid model whose weight ``w`` lives in ``folder/data_name``."""
    model = models.weighted_model()
    raw = models.externalize(model, "w", data_name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / data_name).write_bytes(raw)
    return write(model, folder / name)


def _two_data_files(folder: Path, first: str, second: str) -> Path:
    """A valid model with two external weights, in ``first`` and ``second``."""
    model = models.weighted_model()
    extra = helper.make_tensor("w2", TensorProto.FLOAT, [16, 16], np.ones(256, dtype=np.float32).tobytes(), raw=True)
    model.graph.initializer.append(extra)
    model.graph.node[-1].output[0] = "y_pre"
    model.graph.node.append(helper.make_node("Add", ["y_pre", "w2"], ["y"], name="plus_w2"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / first).write_bytes(models.externalize(model, "w", first))
    (folder / second).write_bytes(models.externalize(model, "w2", second))
    return write(model, folder / "model.onnx")


def _scales_input_model(folder: Path) -> Path:
    """A model whose scales are a graph input (what `--input scales=...` can fix)."""
    model = models.resize_model(None)
    model.graph.node[-1].input[:] = ["x", "", "scales"]
    model.graph.input.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]))
    return write(model, folder / "dynamic.onnx")


# --------------------------------------------------------------------------- class 1: the write guard


@case("guard_data_file_is_input_model", "guard", USAGE, COLLISION, commands=WRITING)
def _(tmp: Path) -> Built:
    # The input model is called out.onnx.data: saving OUT=out.onnx with external data would
    # write the weights over the very model being read.
    model = _external_model(tmp / "in", name="out.onnx.data")
    return Built(model, ("out.onnx.data",), output=tmp / "in" / "out.onnx")


@case("guard_data_files_shift", "guard", USAGE, COLLISION, commands=WRITING)
def _(tmp: Path) -> Built:
    # Two data files: out.onnx.1.data (read for w) and z.bin (read for w2). Copying them to
    # OUT.0.data / OUT.1.data would write z.bin's bytes over out.onnx.1.data: same size, so
    # the input would silently load other weights.
    model = _two_data_files(tmp / "in", "out.onnx.1.data", "z.bin")
    return Built(model, ("out.onnx.1.data", "model.onnx"), output=tmp / "in" / "out.onnx")


@case("guard_data_file_symlink_to_input", "guard", USAGE, COLLISION, commands=WRITING)
def _(tmp: Path) -> Built:
    model = _external_model(tmp / "in")
    os.symlink("model.onnx", tmp / "in" / "out.onnx.data")
    return Built(model, ("out.onnx.data", "model.onnx"), output=tmp / "in" / "out.onnx")


@case("guard_data_file_hardlink_to_input", "guard", USAGE, COLLISION, commands=WRITING)
def _(tmp: Path) -> Built:
    model = _external_model(tmp / "in")
    os.link(model, tmp / "in" / "out.onnx.data")
    return Built(model, ("out.onnx.data", "model.onnx"), output=tmp / "in" / "out.onnx")


@case("guard_data_file_is_spec", "guard", USAGE, COLLISION, commands=SWAP)
def _(tmp: Path) -> Built:
    model = _external_model(tmp / "in")
    spec = tmp / "in" / "out.onnx.data"
    spec.write_text('[plugin]\nop_type = "MyResize"\n[match]\nop_type = "Resize"\n')
    return Built(model, ("out.onnx.data",), output=tmp / "in" / "out.onnx", extra=("--spec", str(spec)))


@case("guard_output_is_spec", "guard", USAGE, COLLISION, commands=SWAP)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    spec = tmp / "in" / "plugin.toml"
    spec.write_text('[plugin]\nop_type = "MyResize"\n[match]\nop_type = "Resize"\n')
    return Built(model, ("plugin.toml",), output=spec, extra=("--spec", str(spec)))


@case("guard_output_hardlink_to_input", "guard", USAGE, COLLISION, commands=WRITING | JUNIT)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    (tmp / "out").mkdir()
    os.link(model, tmp / "out" / "alias.onnx")
    return Built(model, ("alias.onnx", "model.onnx"), output=tmp / "out" / "alias.onnx")


@case("guard_junit_is_candidate_data", "guard", USAGE, COLLISION, commands=JUNIT)
def _(tmp: Path) -> Built:
    model = _external_model(tmp / "in")
    return Built(model, ("weights.bin",), output=tmp / "in" / "weights.bin")


@case("guard_junit_is_reference_data", "guard", USAGE, COLLISION, commands=JUNIT)
def _(tmp: Path) -> Built:
    model = write(models.weighted_model(), tmp / "in" / "model.onnx")
    reference = _external_model(tmp / "theirs", name="reference.onnx", data_name="ref_weights.bin")
    # validate-junit passes the harness's reference; a second --reference (the last one wins) replaces it.
    return Built(
        model, ("ref_weights.bin",), output=tmp / "theirs" / "ref_weights.bin", extra=("--reference", str(reference))
    )


@case("guard_junit_is_input_npy", "guard", USAGE, COLLISION, commands=JUNIT)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    npy = tmp / "data" / "x.npy"
    npy.parent.mkdir(parents=True)
    np.save(npy, np.zeros(models.X_SHAPE, dtype=np.float32))
    return Built(model, ("x.npy",), output=npy, extra=("--input", f"x={npy}"))


@case("guard_junit_symlink_to_reference", "guard", USAGE, COLLISION, commands=JUNIT)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    reference = write(models.resize_model(), tmp / "theirs" / "reference.onnx")
    (tmp / "out").mkdir()
    os.symlink(reference, tmp / "out" / "report.xml")
    return Built(
        model,
        ("report.xml", "reference.onnx"),
        output=tmp / "out" / "report.xml",
        extra=("--reference", str(reference)),
    )


# --------------------------------------------------------------------------- class 5: the spec schema


_SPEC_HEAD = '[plugin]\nop_type = "MyResize"\n[match]\nop_type = "Resize"\n'


def _spec_case(name: str, problem: str, body: str, *, head: str = _SPEC_HEAD) -> None:
    def build(tmp: Path) -> Built:
        spec = tmp / "specs" / "plugin.toml"
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(head + body)
        model = write(models.resize_model(), tmp / "in" / "model.onnx")
        return Built(model, ("plugin.toml",), extra=("--spec", str(spec)))

    case(name, "spec", INVALID, problem, commands=SWAP)(build)


_spec_case("spec_deep_nesting", r"nest|deep", "[attributes.set]\nx = " + "[" * 3000 + "]" * 3000 + "\n")
_spec_case("spec_deep_inline_tables", r"nest|deep", "[attributes.set]\nx = " + "{a = " * 400 + "1" + "}" * 400 + "\n")
_spec_case(
    "spec_match_attributes_not_table",
    r"match\.attributes|table",
    "",
    head='[plugin]\nop_type = "MyResize"\n[match]\nop_type = "Resize"\nattributes = 3\n',
)
_spec_case(
    "spec_extra_constant_overflows_dtype", r"int8|fit", '[[inputs.extra]]\nname = "k"\ndtype = "int8"\nvalue = 1000\n'
)
_spec_case(
    "spec_extra_constant_negative_unsigned", r"uint8|fit", '[[inputs.extra]]\nname = "k"\ndtype = "uint8"\nvalue = -1\n'
)
_spec_case(
    "spec_extra_constant_shape_mismatch",
    r"shape|needs",
    '[[inputs.extra]]\nname = "k"\ndtype = "float32"\nvalue = [1, 2, 3]\nshape = [2, 2]\n',
)
_spec_case("spec_extra_constant_empty", r"empty", '[[inputs.extra]]\nname = "k"\ndtype = "float32"\nvalue = []\n')
_spec_case("spec_extra_constant_nan", r"finite|nan", '[[inputs.extra]]\nname = "k"\ndtype = "float32"\nvalue = nan\n')
_spec_case(
    "spec_extra_constant_not_integer", r"integer|int32", '[[inputs.extra]]\nname = "k"\ndtype = "int32"\nvalue = 1.5\n'
)
_spec_case(
    "spec_extra_input_dim_too_big",
    r"shape|2\*\*63|dim",
    '[[inputs.extra]]\nname = "k"\nkind = "graph_input"\ndtype = "float32"\nshape = [99999999999999999999]\n',
)
_spec_case(
    "spec_extra_input_duplicate_name",
    r"already|duplicate|name",
    '[[inputs.extra]]\nname = "k"\ndtype = "float32"\nvalue = 1\n'
    '[[inputs.extra]]\nname = "k"\ndtype = "float32"\nvalue = 2\n',
)
_spec_case("spec_attribute_set_empty_list", r"empty", "[attributes.set]\nx = []\n")
_spec_case("spec_attribute_name_empty", r"empty|name", '[attributes.set]\n"" = 1\n')
_spec_case("spec_attribute_name_not_a_name", r"not a valid name|name", '[attributes.set]\n"two words" = 1\n')
_spec_case("spec_attribute_float_overflow", r"finite|float32", "[attributes.set]\nx = 1e300\n")
_spec_case("spec_attributes_keep_empty", r"empty", "[attributes]\nkeep = []\n")
_spec_case("spec_rename_collision", r"renamed|several", '[attributes.rename]\nmode = "m"\nnearest_mode = "m"\n')
_spec_case("spec_output_rank_absurd", r"rank", '[[outputs]]\ndtype = "float32"\nrank = 100000000\n')
_spec_case("spec_output_same_as_input_absurd", r"index|input", '[[outputs]]\ntype = "same_as_input:999999"\n')
_spec_case("spec_input_order_index_absurd", r"index", "[inputs]\norder = [99999999999999999]\n")
_spec_case(
    "spec_op_type_huge",
    r"characters|at most",
    "",
    head=('[plugin]\nop_type = "' + "P" * 100_000 + '"\n[match]\nop_type = "Resize"\n'),
)


# --------------------------------------------------------------------------- classes 4, 5: .npy scales


def _npy_scales_case(name: str, problem: str, array: np.ndarray, env: Optional[dict] = None) -> None:
    def build(tmp: Path) -> Built:
        model = _scales_input_model(tmp / "in")
        npy = tmp / "data" / "scales.npy"
        npy.parent.mkdir(parents=True, exist_ok=True)
        np.save(npy, array)
        return Built(model, ("scales.npy",), reference=model, extra=("--input", f"scales={npy}"), env=env or {})

    case(name, "npy", INVALID, problem, commands=VALIDATE)(build)


_npy_scales_case("input_npy_scales_strings", r"numeric|number|dtype", np.array(["1", "1", "2", "2"]))
_npy_scales_case("input_npy_scales_nan", r"nan|finite", np.array([1.0, 1.0, np.nan, 2.0], dtype=np.float32))
_npy_scales_case("input_npy_scales_zero", r"positive|zero", np.array([1.0, 1.0, 0.0, 2.0], dtype=np.float32))
_npy_scales_case("input_npy_scales_absurd", r"limit", np.array([1.0, 1.0, 1e5, 1e5], dtype=np.float32))
_npy_scales_case(
    "input_npy_scales_over_env_limit",
    r"limit",
    np.array([1.0, 1.0, 64.0, 64.0], dtype=np.float32),
    env={"ONNXTOOL_MAX_OUTPUT_BYTES": "1M"},
)
_npy_scales_case("input_npy_scales_objectless_bool", r"numeric|number|dtype", np.array([True, True, True, True]))


def _npy_header(shape: tuple, descr: str = "<f4", data: bytes = b"\0" * 64) -> bytes:
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue() + data


def _npy_bytes_case(name: str, problem: str, content: bytes) -> None:
    def build(tmp: Path) -> Built:
        model = write(models.resize_model(), tmp / "in" / "model.onnx")
        npy = tmp / "data" / "x.npy"
        npy.parent.mkdir(parents=True, exist_ok=True)
        npy.write_bytes(content)
        return Built(model, ("x.npy",), extra=("--input", f"x={npy}"))

    case(name, "npy", INVALID, problem, commands=VALIDATE)(build)


# A 100-byte file whose header claims 112 GiB: np.load would allocate before reading.
_npy_bytes_case("input_npy_header_claims_112_gib", r"limit", _npy_header((1, 3, 100_000, 100_000)))
_npy_bytes_case("input_npy_header_claims_huge_strings", r"limit", _npy_header((100,), "<U100000000"))
_npy_bytes_case("input_npy_data_truncated", r"truncated|holds", _npy_header(models.X_SHAPE, data=b"\0" * 10))


# --------------------------------------------------------------------------- class 4: special files


@case("spec_is_fifo", "special", INVALID, NOT_REGULAR, commands=SWAP, subprocess_only=True)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    fifo = tmp / "specs" / "plugin.toml"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    return Built(model, ("plugin.toml",), extra=("--spec", str(fifo)))


@case("input_npy_is_fifo", "special", INVALID, NOT_REGULAR, commands=VALIDATE, subprocess_only=True)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    fifo = tmp / "data" / "x.npy"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    return Built(model, ("x.npy",), extra=("--input", f"x={fifo}"))


@case("input_npy_is_dev_zero", "special", INVALID, NOT_REGULAR, commands=VALIDATE, subprocess_only=True)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    return Built(model, ("/dev/zero",), extra=("--input", "x=/dev/zero"))


@case("reference_is_fifo", "special", INVALID, NOT_REGULAR, commands=VALIDATE, subprocess_only=True)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    fifo = tmp / "theirs" / "reference.onnx"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    return Built(model, ("reference.onnx",), reference=fifo)


# --------------------------------------------------------------------------- class 5: odd paths


@case("output_symlink_loop", "names", USAGE, r"symlink|symbolic|loop|levels", commands=WRITING | JUNIT | {"export"})
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    (tmp / "out").mkdir()
    os.symlink("loop.onnx", tmp / "out" / "loop.onnx")
    return Built(model, ("loop.onnx",), output=tmp / "out" / "loop.onnx")


@case("output_folder_symlink_loop", "names", USAGE, r"symlink|symbolic|loop|levels|folder", commands=WRITING | JUNIT)
def _(tmp: Path) -> Built:
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    (tmp / "out").mkdir()
    os.symlink("a", tmp / "out" / "b")
    os.symlink("b", tmp / "out" / "a")
    return Built(model, ("result.onnx", "a"), output=tmp / "out" / "a" / "result.onnx")


@case("output_is_fifo", "names", USAGE, r"not a regular file|fifo|device", commands=WRITING | JUNIT | {"export"})
def _(tmp: Path) -> Built:
    # Writing never opens it, but the rename would replace it (as -o /dev/null would replace the device).
    model = write(models.resize_model(), tmp / "in" / "model.onnx")
    (tmp / "out").mkdir()
    os.mkfifo(tmp / "out" / "pipe.onnx")
    return Built(model, ("pipe.onnx",), output=tmp / "out" / "pipe.onnx")


@case("model_symlink_loop", "names", INVALID, r"symlink|symbolic|loop|levels")
def _(tmp: Path) -> Built:
    (tmp / "in").mkdir(parents=True)
    os.symlink("model.onnx", tmp / "in" / "model.onnx")
    return Built(tmp / "in" / "model.onnx", ("model.onnx",))


@case("extdata_symlink_loop", "names", INVALID, r"symlink|symbolic|loop|levels|missing", commands=READERS)
def _(tmp: Path) -> Built:
    model = models.weighted_model()
    models.externalize(model, "w", "weights.bin")
    path = write(model, tmp / "in" / "model.onnx")
    os.symlink("weights.bin", tmp / "in" / "weights.bin")
    return Built(path, ("model.onnx", "weights.bin"))


# --------------------------------------------------------------------------- class 5: plugin nodes, mistyped


def _plugin_case(name: str, attr: str, value, commands: frozenset) -> None:
    def build(tmp: Path) -> Built:
        from graphsurgeon_tools import swap_plugin

        model = swap_plugin(models.resize_model()).model
        node = next(n for n in model.graph.node if n.op_type == "DynamicTRTResize")
        kept = [a for a in node.attribute if a.name != attr]
        del node.attribute[:]
        node.attribute.extend(kept + [helper.make_attribute(attr, value)])
        path = write(model, tmp / "in" / "plugin.onnx")
        # --reverse for swap-plugin; validate checks against onnx's reference evaluator of the candidate.
        return Built(
            path, ("plugin.onnx",), extra=("--reverse",) if commands == SWAP else ("--reference", "onnx-reference")
        )

    case(name, "plugin", INVALID, r"attribute|must be|mode|align", commands=commands)(build)


for _attr, _value in [
    ("mode", 3),
    ("cubic_coeff_a", "abc"),
    ("exclude_outside", "yes"),
    ("mode", [1, 2]),
    ("align_corners", 0.5),
    ("coordinate_transformation_mode", "bogus"),
]:
    _label = f"{_attr}_{type(_value).__name__}"
    _plugin_case(f"plugin_attr_{_label}_reverse", _attr, _value, SWAP)
_plugin_case("plugin_attr_mode_int_validate", "mode", 3, VALIDATE)
_plugin_case("plugin_attr_align_corners_float_validate", "align_corners", 0.5, VALIDATE)


# --------------------------------------------------------------------------- inputs that must simply work


@dataclass(frozen=True)
class SuccessCase:
    """A valid input in an unusual place: every command in ``commands`` must exit 0 with an empty stderr."""

    name: str
    build: Callable[[Path], Path]  # -> the model path
    commands: tuple[str, ...] = ("inspect", "inspect-json", "make-dynamic-scale", "swap-plugin", "validate")


def _scalar_condition_model(folder: Path) -> Path:
    """x and a 0-d bool input ``cond`` (Where picks x either way): random feeds must be 0-d arrays."""
    model = models.resize_model()
    model.graph.input.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    model.graph.node.insert(0, helper.make_node("Where", ["cond", "x", "x"], ["x_any"], name="pick"))
    model.graph.node[-1].input[0] = "x_any"
    return write(model, folder / "scalar_cond.onnx")


NON_UTF8 = os.fsdecode(b"caf\xe9-\xff")  # latin-1 bytes: not UTF-8; Python keeps them as surrogates

SUCCESS_CASES = [
    SuccessCase("non_utf8_file_name", lambda tmp: write(models.resize_model(), tmp / "in" / f"{NON_UTF8}.onnx")),
    SuccessCase("non_utf8_folder_name", lambda tmp: write(models.resize_model(), tmp / NON_UTF8 / "model.onnx")),
    SuccessCase("non_utf8_folder_external_data", lambda tmp: _external_model(tmp / NON_UTF8)),
    SuccessCase("plain_external_data", lambda tmp: _external_model(tmp / "in")),
    SuccessCase("scalar_bool_input", lambda tmp: _scalar_condition_model(tmp / "in")),
]

CASE_NAMES = [c.name for c in CASES]
assert len(set(CASE_NAMES)) == len(CASE_NAMES), "duplicate case names"
