"""The hostile-input corpus: every case built in code, in a tmp folder, with what must happen.

A :class:`Case` knows how to build its input (``build(tmp) -> Built``), the exit code
every applicable command must return, and a regular expression for the *problem* the
one-line message must state; :class:`Built` says which file names the message must
mention (any one of them). Nothing here runs onnxtool: ``harness`` does.

Groups (what they break, and the commands they apply to by default):

* ``file``, ``format``, ``graph``, ``external``, ``scales``, ``special``: the model itself.
  Every command that reads a model: exit 3.
* ``limits``: models or settings that would make a check allocate too much (exit 3),
  or a malformed limit (exit 2). Commands that run a model.
* ``output``: a valid model and an output path that must not be used. Commands that
  write a file: exit 2.

``special`` cases (a FIFO, ``/dev/zero``, a 2 GiB sparse file) could hang a command or
eat memory if it mishandles them, so the harness runs them only in a subprocess with a
timeout and a memory limit.
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np
import onnx
from onnx import TensorProto, helper

from hostile import models
from hostile.models import write

USAGE, INVALID = 2, 3

READERS = frozenset({"inspect", "inspect-json", "make-dynamic-scale", "swap-plugin", "validate", "validate-reference"})
RUNNERS = frozenset({"make-dynamic-scale", "validate"})  # commands whose checks run a model
WRITERS = frozenset({"make-dynamic-scale", "swap-plugin", "export", "validate-junit"})

# Problem patterns (case-insensitive). Loose about wording, strict about the subject.
NOT_FOUND = r"not found|does not exist|no such file|missing"
NOT_ONNX = (
    r"not an? (valid )?onnx|cannot parse|parse|protobuf|decode|truncat|corrupt|wrong format"
    r"|no ir.?version|no graph|empty graph|not a model"
)
NOT_REGULAR = r"not a (regular )?file|fifo|pipe|device|special file"
OUTSIDE = r"outside|escape|leaves the model's folder|\.\.|travers|unsafe"
RANGE = r"range|offset|length|does not fit|beyond|past the end|exceed|short"


@dataclass(frozen=True)
class Built:
    """What a case built: the model argument and what the one-line message must name."""

    model: Path
    names: tuple[str, ...]  # the message must contain at least one of these
    output: Optional[Path] = None  # output cases: the path under test
    reference: Optional[Path] = None  # validate: a reference to use instead of the harness's
    extra: tuple[str, ...] = ()  # extra command-line arguments
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    build: Callable[[Path], Built]
    code: int
    problem: str  # regex the one-line message must match (re.IGNORECASE)
    commands: frozenset = READERS
    codes: Mapping[str, int] = field(default_factory=dict)  # per-command exit code overrides
    subprocess_only: bool = False

    def expected_code(self, command: str) -> Optional[int]:
        """The exit code ``command`` must return on this case, or None if it does not apply."""
        if command not in self.commands:
            return None
        return self.codes.get(command, self.code)


def registrar(cases: list[Case]) -> Callable:
    """The ``@case(name, group, code, problem, **kwargs)`` decorator of a corpus: it appends to ``cases``."""

    def case(name: str, group: str, code: int, problem: str, **kwargs) -> Callable:
        def register(build: Callable[[Path], Built]) -> Callable[[Path], Built]:
            cases.append(Case(name, group, build, code, problem, **kwargs))
            return build

        return register

    return case


CASES: list[Case] = []
case = registrar(CASES)


def _model_file(tmp: Path, data: bytes, name: str = "model.onnx") -> Built:
    path = tmp / "in" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return Built(path, (name,))


def _model(tmp: Path, model: onnx.ModelProto, name: str = "model.onnx") -> Built:
    return _model_file(tmp, model.SerializeToString(), name)


def valid_bytes() -> bytes:
    """The model truncation and mutation cases start from: a Resize and a 1 KiB weight, inline."""
    return models.weighted_model().SerializeToString()


# --------------------------------------------------------------------------- file


@case("missing_file", "file", INVALID, NOT_FOUND)
def _(tmp: Path) -> Built:
    (tmp / "in").mkdir(parents=True, exist_ok=True)
    return Built(tmp / "in" / "absent.onnx", ("absent.onnx",))


@case("directory", "file", INVALID, r"director|not a (regular )?file")
def _(tmp: Path) -> Built:
    path = tmp / "in" / "folder.onnx"
    path.mkdir(parents=True)
    write(models.resize_model(), path / "model.onnx")  # a model inside does not make the folder one
    return Built(path, ("folder.onnx",))


@case("empty_file", "file", INVALID, r"empty|0 bytes|zero bytes|no data")
def _(tmp: Path) -> Built:
    return _model_file(tmp, b"")


@case("random_bytes_4k", "file", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    return _model_file(tmp, np.random.default_rng(0).bytes(4096))


@case("random_bytes_17", "file", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    return _model_file(tmp, np.random.default_rng(1).bytes(17))


def _truncation(fraction: float, minus: int = 0) -> Callable[[Path], Built]:
    def build(tmp: Path) -> Built:
        data = valid_bytes()
        cut = max(1, int(len(data) * fraction) - minus)
        return _model_file(tmp, data[:cut])

    return build


for _label, _fraction, _minus in [
    ("1_byte", 0.0, 0),
    ("2_percent", 0.02, 0),
    ("10_percent", 0.10, 0),
    ("25_percent", 0.25, 0),
    ("50_percent", 0.50, 0),
    ("75_percent", 0.75, 0),
    ("minus_16", 1.0, 16),
    ("minus_1", 1.0, 1),
]:
    case(f"truncated_{_label}", "file", INVALID, NOT_ONNX)(_truncation(_fraction, _minus))


# --------------------------------------------------------------------------- other formats


@case("json_file", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    return _model_file(tmp, b'{"format": "onnx", "graph": {"node": [], "input": ["x"]}}\n')


@case("pytorch_checkpoint", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    import torch  # a real checkpoint, the file users most often mistake for a model

    buffer = io.BytesIO()
    torch.save({"conv1.weight": torch.arange(12, dtype=torch.float32).reshape(3, 4)}, buffer)
    return _model_file(tmp, buffer.getvalue(), "srcnn.pth")


@case("png_image", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )
    return _model_file(tmp, png)


@case("gzipped_model", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    return _model_file(tmp, gzip.compress(valid_bytes(), mtime=0))


@case("zip_archive", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("model.onnx", valid_bytes())
    return _model_file(tmp, buffer.getvalue())


@case("onnx_text_format", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    return _model_file(tmp, onnx.printer.to_text(models.resize_model()).encode())


@case("tensorproto_not_model", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    return _model_file(tmp, models.scales_tensor(np.linspace(0, 1, 64)).SerializeToString())


@case("graphproto_not_model", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    return _model_file(tmp, models.resize_model().graph.SerializeToString())


@case("nodeproto_not_model", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    return _model_file(tmp, models.resize_model().graph.node[0].SerializeToString())


@case("model_without_graph", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    model = onnx.ModelProto(ir_version=8, producer_name="hostile-corpus")
    model.opset_import.append(helper.make_opsetid("", 13))
    return _model(tmp, model)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


@case("subgraphs_nested_too_deep", "format", INVALID, NOT_ONNX)
def _(tmp: Path) -> Built:
    # 200 nested If subgraphs: past protobuf's recursion limit (100). onnx.helper refuses to
    # build it, so the wire format is written by hand: Graph.node=1, Node.attribute=5,
    # Attribute.g=6 / type=20 (GRAPH=5), Model.ir_version=1, graph=7, opset_import=8.
    graph = _field(1, _field(1, b"x") + _field(2, b"y") + _field(4, b"Identity"))
    for depth in range(200):
        attr = _field(1, b"then_branch") + _varint(20 << 3) + _varint(5) + _field(6, graph)
        node = _field(1, b"c") + _field(2, b"y") + _field(4, b"If") + _field(5, attr)
        graph = _field(1, node) + _field(2, b"g%d" % depth)
    data = _varint(1 << 3) + _varint(8) + _field(7, graph) + _field(8, _field(1, b"") + _varint(2 << 3) + _varint(13))
    return _model_file(tmp, data)


# --------------------------------------------------------------------------- invalid graphs


@case("graph_cycle", "graph", INVALID, r"cycl|topolog|sorted")
def _(tmp: Path) -> Built:
    model = models.resize_model()
    # a -> b -> a: neither can be computed first; the Resize reads from the loop.
    model.graph.node.insert(0, helper.make_node("Add", ["x", "loop_b"], ["loop_a"], name="loop_first"))
    model.graph.node.insert(1, helper.make_node("Relu", ["loop_a"], ["loop_b"], name="loop_second"))
    model.graph.node[-1].input[0] = "loop_b"
    return _model(tmp, model)


@case("output_produced_twice", "graph", INVALID, r"SSA|single static|more than once|multiple times|twice|duplicate")
def _(tmp: Path) -> Built:
    model = models.resize_model()
    model.graph.node.append(helper.make_node("Relu", ["x"], ["y"], name="second_writer"))
    return _model(tmp, model)


@case("dangling_node_input", "graph", INVALID, r"ghost")
def _(tmp: Path) -> Built:
    model = models.resize_model()
    model.graph.node.insert(0, helper.make_node("Add", ["x", "ghost"], ["x_plus"], name="reads_ghost"))
    model.graph.node[-1].input[0] = "x_plus"
    return _model(tmp, model)


@case("graph_output_never_produced", "graph", INVALID, r"never_made")
def _(tmp: Path) -> Built:
    model = models.resize_model()
    model.graph.output.append(helper.make_tensor_value_info("never_made", TensorProto.FLOAT, ["n"]))
    return _model(tmp, model)


@case("unknown_default_opset", "graph", INVALID, r"opset|version|999")
def _(tmp: Path) -> Built:
    return _model(tmp, models.resize_model(opset=999))


@case("unknown_op_default_domain", "graph", INVALID, r"FooBar")
def _(tmp: Path) -> Built:
    model = models.resize_model()
    model.graph.node.insert(0, helper.make_node("FooBar", ["x"], ["x_foo"], name="foo"))
    model.graph.node[-1].input[0] = "x_foo"
    return _model(tmp, model)


@case("resize_before_it_existed", "graph", INVALID, r"Resize|opset|version")
def _(tmp: Path) -> Built:
    model = models.resize_model(opset=10)
    model.opset_import[0].version = 9  # Resize was introduced in opset 10
    return _model(tmp, model)


@case("ir_version_from_the_future", "graph", INVALID, r"ir.?version|IR")
def _(tmp: Path) -> Built:
    model = models.resize_model()
    model.ir_version = 999
    return _model(tmp, model)


@case("initializer_data_short", "graph", INVALID, r"\bw\b|size|bytes|data|shape")
def _(tmp: Path) -> Built:
    model = models.weighted_model()
    weight = next(t for t in model.graph.initializer if t.name == "w")
    weight.raw_data = weight.raw_data[:10]  # dims say 16x16 float32 (1024 bytes)
    return _model(tmp, model)


# --------------------------------------------------------------------------- external data


def _external(
    tmp: Path,
    location: str,
    *,
    data: Optional[bytes] = None,
    offset: int = 0,
    length: Optional[int] = None,
    data_at: Optional[str] = None,
) -> tuple[Built, bytes]:
    """model.onnx in tmp/in with ``w`` external at ``location``; optionally write ``data`` at ``data_at``."""
    model = models.weighted_model()
    raw = models.externalize(model, "w", location, offset=offset, length=length)
    built = _model(tmp, model)
    if data_at is not None:
        target = tmp / "in" / data_at
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(raw if data is None else data)
    return built, raw


def _secret(tmp: Path, raw: bytes) -> Path:
    """A file outside the model's folder that a hostile model would like read."""
    secret = tmp / "outside" / "secret.bin"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_bytes(raw)
    return secret


@case("extdata_missing", "external", INVALID, NOT_FOUND)
def _(tmp: Path) -> Built:
    built, _raw = _external(tmp, "weights.bin")
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_short_file", "external", INVALID, RANGE)
def _(tmp: Path) -> Built:
    built, raw = _external(tmp, "weights.bin", data_at="weights.bin")
    (tmp / "in" / "weights.bin").write_bytes(raw[:100])
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_dotdot", "external", INVALID, OUTSIDE)
def _(tmp: Path) -> Built:
    built, raw = _external(tmp, "../outside/secret.bin")
    _secret(tmp, raw)  # present and the right size: only the location is wrong
    return Built(built.model, ("model.onnx", "secret.bin"))


@case("extdata_absolute_path", "external", INVALID, r"absolute|" + OUTSIDE)
def _(tmp: Path) -> Built:
    model = models.weighted_model()
    secret = _secret(tmp, b"")
    raw = models.externalize(model, "w", str(secret))
    secret.write_bytes(raw)
    built = _model(tmp, model)
    return Built(built.model, ("model.onnx", "secret.bin"))


@case("extdata_symlink_file", "external", INVALID, r"symlink|symbolic|" + OUTSIDE)
def _(tmp: Path) -> Built:
    built, raw = _external(tmp, "weights.bin")
    os.symlink(_secret(tmp, raw), tmp / "in" / "weights.bin")
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_symlink_folder", "external", INVALID, r"symlink|symbolic|" + OUTSIDE)
def _(tmp: Path) -> Built:
    built, raw = _external(tmp, "sub/secret.bin")
    os.symlink(_secret(tmp, raw).parent, tmp / "in" / "sub")
    return Built(built.model, ("model.onnx", "secret.bin"))


@case("extdata_hardlink", "external", INVALID, r"hard ?link|link")
def _(tmp: Path) -> Built:
    # A hard link is indistinguishable from the file itself except by its link count;
    # onnx >= 1.21 refuses st_nlink > 1 for the same reason (the 2026 hardlink advisories).
    built, raw = _external(tmp, "weights.bin")
    os.link(_secret(tmp, raw), tmp / "in" / "weights.bin")
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_offset_absurd", "external", INVALID, RANGE)
def _(tmp: Path) -> Built:
    built, _raw = _external(tmp, "weights.bin", offset=10**15, data_at="weights.bin")
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_length_absurd", "external", INVALID, RANGE)
def _(tmp: Path) -> Built:
    built, _raw = _external(tmp, "weights.bin", length=10**15, data_at="weights.bin")
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_offset_negative", "external", INVALID, RANGE + r"|negative")
def _(tmp: Path) -> Built:
    built, _raw = _external(tmp, "weights.bin", offset=-512, data_at="weights.bin")
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_offset_not_a_number", "external", INVALID, r"integer|number|offset")
def _(tmp: Path) -> Built:
    model = models.weighted_model()
    raw = models.externalize(model, "w", "weights.bin")
    next(e for e in model.graph.initializer[-1].external_data if e.key == "offset").value = "0x10; rm -rf /"
    built = _model(tmp, model)
    (tmp / "in" / "weights.bin").write_bytes(raw)
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_length_mismatch", "external", INVALID, r"length|size|shape|bytes")
def _(tmp: Path) -> Built:
    built, raw = _external(tmp, "weights.bin", length=512)
    (tmp / "in" / "weights.bin").write_bytes(raw)  # 1024 bytes on disk, the tensor needs 1024, it claims 512
    return Built(built.model, ("model.onnx", "weights.bin"))


@case("extdata_location_is_folder", "external", INVALID, r"director|folder|not a (regular )?file|" + NOT_FOUND)
def _(tmp: Path) -> Built:
    built, _raw = _external(tmp, "weights")
    (tmp / "in" / "weights").mkdir()
    return Built(built.model, ("model.onnx", "weights"))


@case("extdata_no_location", "external", INVALID, r"location")
def _(tmp: Path) -> Built:
    model = models.weighted_model()
    models.externalize(model, "w", "weights.bin")
    tensor = model.graph.initializer[-1]
    entries = [(e.key, e.value) for e in tensor.external_data if e.key != "location"]
    del tensor.external_data[:]
    for key, value in entries:
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return _model(tmp, model)


@case("extdata_nul_byte", "external", INVALID, r"NUL|null|\\x00|invalid|location")
def _(tmp: Path) -> Built:
    built, _raw = _external(tmp, "weights.bin\x00../../etc/passwd", data_at="weights.bin")
    return Built(built.model, ("model.onnx",))


# --------------------------------------------------------------------------- nonsense scales


def _scales_case(name: str, problem: str, make: Callable[[], onnx.ModelProto], **kwargs) -> None:
    case(name, "scales", INVALID, problem, **kwargs)(lambda tmp: _model(tmp, make()))


NAN = float("nan")
_scales_case("scales_nan", r"nan", lambda: models.resize_model((1.0, 1.0, NAN, 2.0)))
_scales_case("scales_nan_constant_node", r"nan", lambda: models.resize_model((1.0, 1.0, 2.0, NAN), source="constant"))
_scales_case("scales_infinite", r"inf|finite", lambda: models.resize_model((1.0, 1.0, float("inf"), 2.0)))
_scales_case("scales_zero", r"zero|positive|> ?0|<= ?0", lambda: models.resize_model((1.0, 1.0, 0.0, 2.0)))
_scales_case("scales_negative", r"negative|positive|<= ?0", lambda: models.resize_model((1.0, 1.0, -2.0, 2.0)))
_scales_case(
    "scales_wrong_length", r"length|entries|rank|elements|dimension", lambda: models.resize_model((2.0, 2.0, 2.0))
)
_scales_case(
    "scales_empty_tensor",
    r"length|entries|rank|elements|dimension|empty|neither|sizes",
    lambda: models.resize_model(()),
)
_scales_case(
    "scales_absurdly_large",
    r"large|limit|exceed|absurd|[GTPE]iB|bytes",
    lambda: models.resize_model((1.0, 1.0, 1e9, 1e9)),
)
_scales_case(
    "scales_int64", r"type|float|int64", lambda: models.resize_model((1, 1, 2, 2), scales_dtype=TensorProto.INT64)
)
_scales_case(
    "scales_2d",
    r"rank|1-?d|one.dim|shape|dimension|length",
    lambda: models.resize_model((1.0, 1.0, 2.0, 2.0), scales_dims=(2, 2)),
)
_scales_case(
    "scales_and_sizes_both_set",
    r"both|only one|exclusive|scales.*sizes|sizes.*scales",
    lambda: models.resize_model((1.0, 1.0, 2.0, 2.0), sizes=(1, 3, 16, 16), opset=11),
)
_scales_case(
    "roi_scales_sizes_all_set",
    r"both|only one|exclusive|scales.*sizes|sizes.*scales",
    lambda: models.resize_model((1.0, 1.0, 2.0, 2.0), sizes=(1, 3, 16, 16), roi=(0, 0, 0, 0, 1, 1, 1, 1), opset=13),
)
_scales_case("neither_scales_nor_sizes", r"neither|one of|scales|sizes", lambda: models.resize_model(None))
_scales_case(
    "sizes_negative", r"sizes|negative|positive|zero", lambda: models.resize_model(None, sizes=(1, 3, -16, 16))
)
_scales_case("upsample7_scales_nan", r"nan", lambda: models.upsample7_model((1.0, 1.0, NAN, 2.0)))
_scales_case(
    "upsample7_rank_mismatch",
    r"length|entries|rank|elements|dimension",
    lambda: models.upsample7_model((1.0, 2.0, 2.0)),
)


@case("axes_scales_mismatch", "scales", INVALID, r"axes|length|entries|rank|elements|dimension")
def _(tmp: Path) -> Built:
    model = models.resize_model((2.0, 2.0, 2.0), opset=18)
    model.graph.node[-1].attribute.append(helper.make_attribute("axes", [2, 3]))  # 3 scales for 2 axes
    return _model(tmp, model)


@case("scales_raw_data_short", "scales", INVALID, r"scales|size|bytes|data|shape")
def _(tmp: Path) -> Built:
    model = models.resize_model()
    scales = next(t for t in model.graph.initializer if t.name == "scales")
    scales.raw_data = scales.raw_data[:8]  # dims say 4 floats (16 bytes)
    return _model(tmp, model)


# --------------------------------------------------------------------------- resource limits


@case("limit_from_env", "limits", INVALID, r"limit", commands=RUNNERS)
def _(tmp: Path) -> Built:
    # x8 on 1x3x64x64 is a 3 MiB output: harmless, but above the 1 MiB the environment allows.
    built = _model(tmp, models.resize_model((1.0, 1.0, 8.0, 8.0), x_shape=(1, 3, 64, 64)))
    # validate compares it with itself: both sides run at the baked factor.
    return Built(built.model, built.names, reference=built.model, env={"ONNXTOOL_MAX_OUTPUT_BYTES": "1M"})


@case("limit_default_1gib", "limits", INVALID, r"limit", commands=RUNNERS)
def _(tmp: Path) -> Built:
    # x300 on 1x3x32x32 is 1.03 GiB: just above the default limit, refused before ORT allocates it.
    built = _model(tmp, models.resize_model((1.0, 1.0, 300.0, 300.0), x_shape=(1, 3, 32, 32)))
    return Built(built.model, built.names, reference=built.model)


@case("limit_huge_declared_input", "limits", INVALID, r"limit", commands=RUNNERS)
def _(tmp: Path) -> Built:
    # A declared 1x3x2**20x2**20 input downscaled 1024x: the output is small, the input the
    # check would draw at random is 12 TiB. Refused before numpy is asked for it.
    built = _model(tmp, models.resize_model((1.0, 1.0, 1 / 1024, 1 / 1024), x_shape=(1, 3, 2**20, 2**20)))
    return Built(built.model, built.names, reference=built.model)


@case("limit_env_malformed", "limits", USAGE, r"ONNXTOOL_MAX_OUTPUT_BYTES", commands=RUNNERS)
def _(tmp: Path) -> Built:
    built = _model(tmp, models.resize_model())
    return Built(built.model, ("ONNXTOOL_MAX_OUTPUT_BYTES",), env={"ONNXTOOL_MAX_OUTPUT_BYTES": "lots"})


@case("validate_factor_absurd", "limits", INVALID, r"limit|large|exceed", commands=frozenset({"validate"}))
def _(tmp: Path) -> Built:
    # A model whose scales are already a graph input, swept at a factor nobody means.
    model = models.resize_model(None)
    model.graph.node[-1].input[:] = ["x", "", "scales"]
    model.graph.input.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]))
    built = _model(tmp, model)
    return Built(built.model, ("model.onnx",), reference=built.model, extra=("--factors", "100000"))


# --------------------------------------------------------------------------- output paths


def _valid_input(tmp: Path) -> Path:
    return write(models.resize_model(), tmp / "in" / "model.onnx")


SAME_FILE = r"input|same file|overwrite|in-place|itself"
WITH_INPUT = frozenset({"make-dynamic-scale", "swap-plugin", "validate-junit"})


@case("output_is_input", "output", USAGE, SAME_FILE, commands=WITH_INPUT)
def _(tmp: Path) -> Built:
    model = _valid_input(tmp)
    return Built(model, ("model.onnx",), output=model)


@case("output_is_input_other_spelling", "output", USAGE, SAME_FILE, commands=WITH_INPUT)
def _(tmp: Path) -> Built:
    model = _valid_input(tmp)
    (tmp / "in" / "sub").mkdir()
    return Built(model, ("model.onnx",), output=tmp / "in" / "sub" / ".." / "." / "model.onnx")


@case("output_is_symlink_to_input", "output", USAGE, SAME_FILE, commands=WITH_INPUT)
def _(tmp: Path) -> Built:
    model = _valid_input(tmp)
    link = tmp / "out" / "link.onnx"
    link.parent.mkdir()
    os.symlink(model, link)
    return Built(model, ("model.onnx", "link.onnx"), output=link)


@case(
    "output_is_input_external_data",
    "output",
    USAGE,
    SAME_FILE + r"|data",
    commands=frozenset({"make-dynamic-scale", "swap-plugin"}),
)
def _(tmp: Path) -> Built:
    # Writing the new model over the input's own weights file would destroy the input.
    built, raw = _external(tmp, "weights.bin", data_at="weights.bin")
    return Built(built.model, ("weights.bin", "model.onnx"), output=tmp / "in" / "weights.bin")


@case(
    "output_folder_missing",
    "output",
    USAGE,
    r"folder|director|does not exist|not exist|missing|no such",
    commands=WRITERS,
)
def _(tmp: Path) -> Built:
    model = _valid_input(tmp)
    return Built(model, ("nowhere", "result.onnx"), output=tmp / "nowhere" / "result.onnx")


@case("output_is_directory", "output", USAGE, r"director|folder|not a (regular )?file", commands=WRITERS)
def _(tmp: Path) -> Built:
    model = _valid_input(tmp)
    target = tmp / "out" / "result.onnx"
    target.mkdir(parents=True)
    return Built(model, ("result.onnx",), output=target)


@case("output_parent_is_file", "output", USAGE, r"folder|director|not a|no such|does not exist", commands=WRITERS)
def _(tmp: Path) -> Built:
    model = _valid_input(tmp)
    blocker = tmp / "out" / "blocker"
    blocker.parent.mkdir()
    blocker.write_bytes(b"a file, not a folder\n")
    return Built(model, ("blocker", "result.onnx"), output=blocker / "result.onnx")


def unwritable_folder(tmp: Path) -> Optional[Path]:
    """A folder this process cannot create files in, or None if there is none to be had.

    As a normal user a 0555 folder will do; root ignores modes, but not a read-only
    file system such as ``/sys``.
    """
    if os.geteuid() != 0:
        folder = tmp / "readonly"
        folder.mkdir(exist_ok=True)
        folder.chmod(0o555)
        return folder
    probe = Path("/sys") / f"onnxtool-probe-{os.getpid()}"
    try:
        probe.write_bytes(b"")
    except OSError:
        return Path("/sys")
    probe.unlink()
    return None


@case("output_folder_not_writable", "output", USAGE, r"writ|permission|denied|read-only", commands=WRITERS)
def _(tmp: Path) -> Built:
    import pytest

    model = _valid_input(tmp)
    folder = unwritable_folder(tmp)
    if folder is None:
        pytest.skip("no unwritable folder on this machine (root on a writable /sys)")
    return Built(model, ("result.onnx", folder.name), output=folder / "result.onnx")


@case(
    "in_place_and_output",
    "output",
    USAGE,
    r"in-place|--output|-o\b|both|together|conflict|exclusive|not both",
    commands=frozenset({"make-dynamic-scale", "swap-plugin"}),
)
def _(tmp: Path) -> Built:
    model = _valid_input(tmp)
    return Built(
        model, ("model.onnx", "--in-place", "--output", "-o"), output=tmp / "in" / "other.onnx", extra=("--in-place",)
    )


# --------------------------------------------------------------------------- hostile option values

VALIDATE = frozenset({"validate"})


def _with_args(tmp: Path, names: tuple[str, ...], *extra: str) -> Built:
    return Built(_valid_input(tmp), names, extra=extra)


for _label, _value, _problem in [
    ("nan", "nan", r"nan|finite"),
    ("zero", "0", r"zero|positive|> ?0|<= ?0"),
    ("negative", "-2", r"negative|positive|<= ?0"),
    ("text", "three", r"number|three"),
    ("absurd_exponent", "1e400", r"inf|finite|large|limit"),
]:
    case(f"validate_factors_{_label}", "options", INVALID, _problem, commands=VALIDATE)(
        lambda tmp, value=_value: _with_args(tmp, ("--factors", "factor", value), "--factors", value)
    )


def _npy_case(name: str, problem: str, write_npy: Callable[[Path], None]) -> None:
    def build(tmp: Path) -> Built:
        npy = tmp / "data" / "x.npy"
        npy.parent.mkdir(parents=True, exist_ok=True)
        write_npy(npy)
        return _with_args(tmp, ("x.npy",), "--input", f"x={npy}")

    case(name, "options", INVALID, problem, commands=VALIDATE)(build)


class _PickleBomb:
    """Unpickling it creates a file: np.load(allow_pickle=True) would run it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _write_pickle_bomb(npy: Path) -> None:
    array = np.empty(1, dtype=object)
    array[0] = _PickleBomb(npy.parent / "PWNED")  # inside tmp: the tree snapshot would see it
    np.save(npy, array, allow_pickle=True)


_npy_case("input_npy_missing", NOT_FOUND, lambda npy: None)
_npy_case("input_npy_not_npy", r"npy|not a|cannot read|format|pars", lambda npy: npy.write_bytes(b"not numpy\n"))
_npy_case("input_npy_pickle_bomb", r"pickle|object|dtype|not allowed", _write_pickle_bomb)
_npy_case(
    "input_npy_wrong_shape",
    r"shape|rank|dimension|expects|does not fit",
    lambda npy: np.save(npy, np.zeros((2, 2), dtype=np.float32)),
)

SWAP = frozenset({"swap-plugin"})


def _spec_case(name: str, problem: str, text: Optional[str]) -> None:
    def build(tmp: Path) -> Built:
        spec = tmp / "specs" / "plugin.toml"
        spec.parent.mkdir(parents=True, exist_ok=True)
        if text is not None:
            spec.write_text(text)
        return _with_args(tmp, ("plugin.toml",), "--spec", str(spec))

    case(name, "options", INVALID, problem, commands=SWAP)(build)


_spec_case("plugin_spec_missing", NOT_FOUND, None)
_spec_case("plugin_spec_not_toml", r"toml|pars|invalid|expected", "[plugin\nop_type = DynamicTRTResize ]]\n")
_spec_case("plugin_spec_no_fields", r"missing|required|field|key|match|op_type", "[unrelated]\nanswer = 42\n")


# --------------------------------------------------------------------------- special files


@case("fifo", "special", INVALID, NOT_REGULAR, subprocess_only=True)
def _(tmp: Path) -> Built:
    path = tmp / "in" / "pipe.onnx"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # open() for reading blocks until a writer comes: none will
    return Built(path, ("pipe.onnx",))


@case("dev_zero", "special", INVALID, NOT_REGULAR, subprocess_only=True)
def _(tmp: Path) -> Built:
    (tmp / "in").mkdir(parents=True)
    return Built(Path("/dev/zero"), ("/dev/zero",))  # read() never ends


@case(
    "sparse_over_2gib",
    "special",
    INVALID,
    r"2 ?G|too large|too big|larger than|limit|" + NOT_ONNX,
    subprocess_only=True,
)
def _(tmp: Path) -> Built:
    path = tmp / "in" / "huge.onnx"
    path.parent.mkdir(parents=True)
    with open(path, "wb") as handle:  # sparse: no disk used; no ONNX file can be this big inline
        handle.write(valid_bytes()[:64])
        handle.truncate(2 * 1024**3 + 4096)
    return Built(path, ("huge.onnx",))


CASE_NAMES = [c.name for c in CASES]
assert len(set(CASE_NAMES)) == len(CASE_NAMES), "duplicate case names"
