"""Fuzzing with hypothesis: random valid Resize/Upsample graphs, and byte-level mutations of models.

Laws:

* ``make_dynamic_scale`` either refuses with an :class:`OnnxToolError`, or returns a model
  that passes the full checker and, fed the original factors, gives ONNX Runtime outputs
  identical (bit for bit) to the original's; running it again changes nothing.
* ``swap_plugin`` either refuses, or its plugin model (run through ``make_session``) matches
  the original within the plugin tolerance (rtol 1e-4, atol 1e-5), and ``--reverse`` of it
  gives the original outputs exactly.
* A mutated model file (bits flipped, bytes inserted, deleted, overwritten, truncated) fed
  to ``onnxtool inspect`` / ``make-dynamic-scale`` never gets exit code 4 (internal error)
  nor an exception out of ``main``.

Random graphs: Resize at opsets 10-19 and Upsample 7/9; scales from an initializer, a
Constant, an Identity of either, a foldable Mul/Concat subgraph, or a graph input (already
dynamic), or sizes instead; every mode, coordinate_transformation_mode, nearest_mode, cubic
coefficient, exclude_outside and antialias the op version has; ranks 3-5; one or two sites.
A generated model the original ONNX Runtime cannot run (its own limits, e.g. cubic on 5-D)
is rejected with ``assume`` and does not count as an example.

Bounded and reproducible: ``derandomize=True``, ``deadline=None``, fixed example counts
(the whole module takes about a minute on two cores). Each test records how many examples
it ran as the ``fuzz_examples`` property (JUnit XML) and in the terminal summary.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.errors import OnnxToolError

FLOAT = TensorProto.FLOAT
COUNTS: Counter = Counter()  # examples run per test, reported via record_property

_SETTINGS = dict(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    database=None,
)

SPATIAL_SCALES = [0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0]


# --------------------------------------------------------------------------- random graphs


def _coordinate_modes(opset: int, mode: str) -> list[str]:
    modes = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
    if opset in (11, 12) and mode == "nearest":
        modes.append("tf_half_pixel_for_nn")
    if opset >= 19:
        modes.append("half_pixel_symmetric")
    return modes


@st.composite
def site_specs(draw: Any, op: str, opset: int, rank: int) -> dict[str, Any]:
    """One Resize/Upsample site: its mode, attributes, scales and where they come from."""
    modes = ["nearest", "linear"]
    if op == "Resize" and opset >= 11 and rank == 4:
        modes.append("cubic")  # ORT runs cubic on 2-D/4-D only
    mode = draw(st.sampled_from(modes))
    spatial = [draw(st.sampled_from(SPATIAL_SCALES)) for _ in range(rank - 2)]
    if all(s == 1.0 for s in spatial):
        spatial[-1] = 2.0  # a site that resizes nothing is not what we are fuzzing
    spec: dict[str, Any] = {"mode": mode, "scales": [1.0, 1.0, *spatial], "attrs": {}}
    if op == "Upsample":
        spec["source"] = "attribute" if opset < 9 else draw(st.sampled_from(["initializer", "constant", "identity"]))
        return spec
    sources = ["initializer", "constant", "identity", "mul_fold", "concat_fold", "graph_input"]
    if opset >= 11:
        sources.append("sizes")
    spec["source"] = draw(st.sampled_from(sources))
    if opset >= 11:
        ctm = draw(st.sampled_from(_coordinate_modes(opset, mode)))
        spec["attrs"]["coordinate_transformation_mode"] = ctm
        if mode == "nearest":
            spec["attrs"]["nearest_mode"] = draw(
                st.sampled_from(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
            )
        if mode == "cubic":
            spec["attrs"]["cubic_coeff_a"] = draw(st.sampled_from([-0.75, -0.5]))
            spec["attrs"]["exclude_outside"] = draw(st.integers(0, 1))
    if opset >= 18 and mode != "nearest":
        spec["attrs"]["antialias"] = draw(st.integers(0, 1))
    return spec


@st.composite
def resize_models(draw: Any) -> onnx.ModelProto:
    """A valid model with one or two Resize/Upsample sites (chained, with a Relu between)."""
    op = draw(st.sampled_from(["Resize", "Resize", "Resize", "Upsample"]))
    opset = draw(st.integers(10, 19)) if op == "Resize" else draw(st.sampled_from([7, 8, 9]))
    rank = draw(st.integers(3, 5))
    shape = [draw(st.integers(1, 2)), draw(st.integers(1, 3))] + [draw(st.integers(2, 5)) for _ in range(rank - 2)]
    n_sites = draw(st.integers(1, 2))
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    inputs = [helper.make_tensor_value_info("x", FLOAT, shape)]
    current, dims = "x", list(shape)
    built: dict[str, dict[str, Any]] = {}  # node name -> what the generator made (for the inspect law)
    for index in range(n_sites):
        spec = draw(site_specs(op, opset, rank))
        out = f"r{index}"
        scales_name = _scales_producer(spec, index, nodes, inits, inputs)
        if spec["source"] == "sizes":
            sizes = [int(np.floor(d * s)) or 1 for d, s in zip(dims, spec["scales"])]
            sizes_t = numpy_helper.from_array(np.asarray(sizes, dtype=np.int64), f"sizes_{index}")
            inits.append(sizes_t)
            roi = _empty(f"roi_{index}", inits) if opset < 13 else ""
            empty_scales = _empty(f"noscales_{index}", inits) if opset < 13 else ""
            args = [current, roi, empty_scales, sizes_t.name]
            new_dims = sizes
        else:
            if op == "Upsample" and opset < 9:
                args = [current]
            elif op == "Upsample" or opset == 10:
                args = [current, scales_name]
            else:
                args = [current, _empty(f"roi_{index}", inits) if opset < 13 else "", scales_name]
            new_dims = [int(np.floor(d * s)) for d, s in zip(dims, spec["scales"])]
        assume(all(d >= 1 for d in new_dims))
        attrs = dict(spec["attrs"])
        if op == "Upsample" and opset < 9:
            attrs["scales"] = spec["scales"]
        nodes.append(helper.make_node(op, args, [out], name=f"up{index}", mode=spec["mode"], **attrs))
        built[f"up{index}"] = {
            "source": spec["source"],
            "scales": spec["scales"],
            "mode": spec["mode"],
            "sizes": new_dims if spec["source"] == "sizes" else None,
        }
        current, dims = out, new_dims
        if index + 1 < n_sites:
            nodes.append(helper.make_node("Relu", [current], [f"relu{index}"], name=f"relu{index}"))
            current = f"relu{index}"
    outputs = [helper.make_tensor_value_info(current, FLOAT, [f"d{i}" for i in range(rank)])]
    graph = helper.make_graph(nodes, "fuzz", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="fuzz")
    model.ir_version = min(model.ir_version, 8)  # the IR version every ORT and onnx here accepts
    model.doc_string = json.dumps({"sites": built, "feeds": {}})  # the generator's notes travel with the model
    return model


def _empty(name: str, inits: list) -> str:
    inits.append(numpy_helper.from_array(np.zeros((0,), dtype=np.float32), name))
    return name


def _scales_producer(spec: dict, index: int, nodes: list, inits: list, inputs: list) -> str:
    """Emit whatever makes the scales tensor for ``spec['source']``; return its name."""
    source, values = spec["source"], np.asarray(spec["scales"], dtype=np.float32)
    name = f"scales_{index}"
    if source in ("attribute", "sizes"):
        return ""
    if source == "initializer":
        inits.append(numpy_helper.from_array(values, name))
    elif source == "constant":
        nodes.append(
            helper.make_node("Constant", [], [name], name=f"const_{index}", value=numpy_helper.from_array(values, name))
        )
    elif source == "identity":
        inits.append(numpy_helper.from_array(values, f"{name}_src"))
        nodes.append(helper.make_node("Identity", [f"{name}_src"], [name], name=f"ident_{index}"))
    elif source == "mul_fold":  # scales = half * 2, folded by the pass
        inits.append(numpy_helper.from_array(values / 2, f"{name}_half"))
        nodes.append(
            helper.make_node(
                "Constant",
                [],
                [f"{name}_two"],
                name=f"two_{index}",
                value=numpy_helper.from_array(np.asarray(2.0, dtype=np.float32), "two"),
            )
        )
        nodes.append(helper.make_node("Mul", [f"{name}_half", f"{name}_two"], [name], name=f"mul_{index}"))
    elif source == "concat_fold":  # scales = Concat([1, 1], spatial), as exporters write them
        inits.append(numpy_helper.from_array(values[:2], f"{name}_head"))
        nodes.append(
            helper.make_node(
                "Constant",
                [],
                [f"{name}_tail"],
                name=f"tail_{index}",
                value=numpy_helper.from_array(values[2:], "tail"),
            )
        )
        nodes.append(helper.make_node("Concat", [f"{name}_head", f"{name}_tail"], [name], name=f"cat_{index}", axis=0))
    elif source == "graph_input":
        inputs.append(helper.make_tensor_value_info(name, FLOAT, [len(values)]))
    return name


def _feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded data for x, and the already-dynamic scales inputs at their intended values."""
    feeds = {}
    for value in model.graph.input:
        if value.name == "x":
            shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
            feeds["x"] = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return feeds


def _run_ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in feeds.items() if k in wanted})


def _original_run(model: onnx.ModelProto, original_scales: dict[str, np.ndarray]) -> Optional[list[np.ndarray]]:
    try:
        onnx.checker.check_model(model, full_check=True)
        return _run_ort(model, {**_feeds(model), **original_scales})
    except Exception:
        return None  # the generator made something ORT cannot run: not an example


def _given_scales(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """For graph-input scales, feed the value the generator meant (kept in the doc string)."""
    return {k: np.asarray(v, dtype=np.float32) for k, v in _doc_feeds(model).items()}


def _doc_feeds(model: onnx.ModelProto) -> dict[str, list[float]]:
    return json.loads(model.doc_string)["feeds"]


@st.composite
def models_with_feeds(draw: Any) -> onnx.ModelProto:
    model = draw(resize_models())
    # Graph-input scales: feed [1, 1, 2, 2]-style values matching the input's length.
    feeds = {}
    for value in model.graph.input:
        if value.name.startswith("scales_"):
            length = value.type.tensor_type.shape.dim[0].dim_value
            spatial = [draw(st.sampled_from([1.5, 2.0, 3.0])) for _ in range(length - 2)]
            feeds[value.name] = [1.0, 1.0, *spatial]
    notes = json.loads(model.doc_string)
    notes["feeds"] = feeds
    model.doc_string = json.dumps(notes)
    return model


def _as_text(data: bytes) -> str:
    """The model as text for a failure report; the printer itself chokes on some mutants."""
    try:
        return onnx.printer.to_text(onnx.ModelProto.FromString(data))
    except Exception as exc:  # noqa: BLE001 - a report helper must not fail the example
        return f"(not printable: {type(exc).__name__}) {data[:200]!r}"


def _count(request: pytest.FixtureRequest, key: str, examples: int, **outcomes: int) -> None:
    COUNTS[key] += examples
    request.node.user_properties.append(("fuzz_examples", examples))
    for name, value in outcomes.items():
        request.node.user_properties.append((f"fuzz_{name}", value))


# --------------------------------------------------------------------------- the laws


def test_make_dynamic_scale_rewrites_exactly_or_refuses(request: pytest.FixtureRequest) -> None:
    from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
    from graphsurgeon_tools.resize import find_resize_sites

    tally: Counter = Counter()

    @settings(max_examples=300, **_SETTINGS)
    @given(model=models_with_feeds(), factor=st.booleans(), shared=st.booleans(), from_sizes=st.booleans())
    def law(model: onnx.ModelProto, factor: bool, shared: bool, from_sizes: bool) -> None:
        given_scales = _given_scales(model)
        expected = _original_run(model, given_scales)
        assume(expected is not None)
        note(onnx.printer.to_text(model))
        tally["examples"] += 1
        original_sites = {s.node_name: s for s in find_resize_sites(model)}
        before = model.SerializeToString()
        try:
            result = make_dynamic_scale(model, factor=factor, shared=shared, from_sizes=from_sizes, check=False)
        except OnnxToolError:
            tally["refused"] += 1
            return
        assert model.SerializeToString() == before, "the pass modified its input"
        if not result.changed:
            tally["unchanged"] += 1
            constant = {name for name, s in original_sites.items() if s.has_constant_scales}
            assert constant <= {s.node for s in result.skipped}, "a constant site was neither rewritten nor skipped"
            return
        tally["rewritten"] += 1
        onnx.checker.check_model(result.model, full_check=True)
        feeds = {**_feeds(model), **given_scales}
        for site in result.rewritten:
            original = original_sites[site.node]
            if original.scales is not None:  # from a constant: the pass must report it truthfully
                np.testing.assert_allclose(site.original_scales, original.scales, rtol=0, atol=0)
            feeds[site.new_input] = np.asarray(site.fed_value, dtype=np.float32)
        got = _run_ort(result.model, feeds)
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)  # fed the original factor: identical, not close
        again = make_dynamic_scale(result.model, factor=factor, shared=shared, from_sizes=from_sizes, check=False)
        assert not again.changed, "make_dynamic_scale is not idempotent"

    law()
    _count(request, "make_dynamic_scale", tally["examples"], **{k: v for k, v in tally.items() if k != "examples"})
    assert tally["examples"] >= 50, tally  # the generator must mostly make runnable models
    assert tally["rewritten"] >= 25, tally  # and the pass must mostly rewrite them


def _swap_plugin_refusing_what_it_leaves(model: onnx.ModelProto, **keywords: Any) -> Any:
    """swap_plugin, and when a forward call swaps nothing, every site it found is refused with a real code.

    The law below calls this instead of carrying the check itself: its source seeds hypothesis's
    derandomized examples, so the examples stay those the law always ran."""
    from graphsurgeon_tools.passes.swap_plugin import swap_plugin
    from graphsurgeon_tools.resize import find_resize_sites

    result = swap_plugin(model, **keywords)
    if not keywords.get("reverse") and not result.changed:
        refused = {s.node: s.code for s in result.skipped}
        sites = {s.node_name for s in find_resize_sites(model)}
        assert sites <= set(refused), f"sites neither swapped nor refused: {sorted(sites - set(refused))}"
        assert all(code and code != "unclassified" for code in refused.values()), refused
    return result


def test_swap_plugin_matches_original_or_refuses(request: pytest.FixtureRequest) -> None:
    from graphsurgeon_tools.runtime import make_session

    swap_plugin = _swap_plugin_refusing_what_it_leaves

    tally: Counter = Counter()

    @settings(max_examples=100, **_SETTINGS)
    @given(model=models_with_feeds(), signature=st.sampled_from(["scales", "size-tensor"]), keep_constant=st.booleans())
    def law(model: onnx.ModelProto, signature: str, keep_constant: bool) -> None:
        given_scales = _given_scales(model)
        expected = _original_run(model, given_scales)
        assume(expected is not None)
        note(onnx.printer.to_text(model))
        tally["examples"] += 1
        try:
            result = swap_plugin(model, signature=signature, keep_constant=keep_constant)
        except OnnxToolError:
            tally["refused"] += 1
            return
        if not result.changed:
            tally["unchanged"] += 1
            return
        tally["swapped"] += 1
        feeds = {**_feeds(model), **given_scales}
        for item in result.new_inputs:
            feeds[item["name"]] = np.asarray(item["value"], dtype=np.float32)
        session = make_session(result.model)
        names = {i.name for i in session.get_inputs()}
        got = session.run(None, {k: v for k, v in feeds.items() if k in names})
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        back = swap_plugin(result.model, reverse=True)
        for a, b in zip(_run_ort(back.model, feeds), expected):
            np.testing.assert_array_equal(a, b)

    law()
    _count(request, "swap_plugin", tally["examples"], **{k: v for k, v in tally.items() if k != "examples"})
    assert tally["examples"] >= 40, tally
    assert tally["swapped"] >= 20, tally


_SOURCE_REPORTED = {
    "initializer": "initializer",
    "constant": "constant",
    "identity": "identity",
    "mul_fold": "folded",
    "concat_fold": "folded",
    "graph_input": "graph_input",
    "attribute": "attribute",
    "sizes": "absent",
}


def test_find_resize_sites_reports_what_was_built(request: pytest.FixtureRequest) -> None:
    """Discovery (what `inspect` prints): every site, its mode, its scales and their true source."""
    from graphsurgeon_tools.resize import find_resize_sites

    tally: Counter = Counter()

    @settings(max_examples=300, **_SETTINGS)
    @given(model=resize_models())
    def law(model: onnx.ModelProto) -> None:
        built = json.loads(model.doc_string)["sites"]
        sites = find_resize_sites(model)
        tally["examples"] += 1
        tally["sites"] += len(sites)
        assert [s.node_name for s in sites] == list(built)
        for site in sites:
            made = built[site.node_name]
            assert site.mode == made["mode"]
            assert site.scales_source.value == _SOURCE_REPORTED[made["source"]], (site.node_name, made)
            if made["source"] == "sizes":
                assert site.sizes_source.value == "initializer" and list(site.sizes) == made["sizes"]
            elif made["source"] == "graph_input":
                assert not site.has_constant_scales
            else:
                assert site.has_constant_scales and list(site.scales) == made["scales"], (site.scales, made)

    law()
    _count(request, "find_resize_sites", tally["examples"], sites=tally["sites"])
    assert tally["examples"] >= 100, tally


# --------------------------------------------------------------------------- byte mutations


def _seed_models() -> list[bytes]:
    from hostile import models

    return [
        models.weighted_model().SerializeToString(),
        models.resize_model(source="constant", opset=11).SerializeToString(),
        models.upsample7_model((1.0, 1.0, 2.0, 2.0)).SerializeToString(),
        models.resize_model(opset=10, mode="linear").SerializeToString(),
    ]


SEEDS = _seed_models()


@st.composite
def mutated_models(draw: Any) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "overwrite", "truncate"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[pos : pos + draw(st.integers(1, 16))]
        elif kind == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=8))
            data[pos : pos + len(chunk)] = chunk
        else:
            del data[pos:]
    return bytes(data)


@pytest.mark.parametrize("command", ["inspect", "make-dynamic-scale"])
def test_mutated_models_never_crash(command: str, request: pytest.FixtureRequest, capsys, monkeypatch) -> None:
    from graphsurgeon_tools.cli import main

    monkeypatch.delenv("ONNXTOOL_DEBUG", raising=False)
    # A mutation can turn 8x8 into 8x2**40: the output-size limit must refuse it, not ORT.
    monkeypatch.setenv("ONNXTOOL_MAX_OUTPUT_BYTES", "64M")
    tally: Counter = Counter()

    with tempfile.TemporaryDirectory(prefix="onnxtool-fuzz-") as folder:
        path, out = Path(folder) / "mutant.onnx", Path(folder) / "out.onnx"

        @settings(max_examples=300 if command == "inspect" else 150, **_SETTINGS)
        @given(data=mutated_models())
        def law(data: bytes) -> None:
            path.write_bytes(data)
            argv = [command, str(path)] + (["-o", str(out)] if command != "inspect" else [])
            capsys.readouterr()
            code = main(argv)  # an exception escaping main fails the test by itself
            err = capsys.readouterr().err
            tally["examples"] += 1
            tally[f"exit_{code}"] += 1
            assert code != 4, f"internal error on a mutated model: {err.strip()}"
            assert code in (0, 1, 2, 3), code
            if code:
                assert len([line for line in err.splitlines() if line.strip()]) == 1, err
                assert "Traceback" not in err
            assert path.read_bytes() == data, "the input file was modified"

        law()
    _count(request, f"mutations_{command}", tally["examples"], **{k: v for k, v in tally.items() if k != "examples"})
    assert tally["examples"] >= 100, tally


# Structured mutations: the file still parses, so the damage reaches the checks, the
# discovery and the passes instead of stopping at the protobuf decoder.
_OP_TYPES = ["Resize", "Upsample", "Relu", "Identity", "Constant", "FooBar", ""]
_MODES = ["nearest", "linear", "cubic", "bilinear", "bogus", ""]
_CTMS = [
    "half_pixel",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
    "half_pixel_symmetric",
    "tf_half_pixel_for_nn",
    "bogus",
]
_ODD_FLOATS = [float("nan"), float("inf"), -float("inf"), 0.0, -1.0, 1e-30, 1e30, 1.0, 2.0, 0.5, 3.0]
_ODD_DIMS = [0, 1, 2, 7, 2**20, 2**31, 2**40]


@st.composite
def field_mutated_models(draw: Any) -> bytes:
    model = onnx.ModelProto.FromString(draw(st.sampled_from(SEEDS)))
    graph = model.graph
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["dim", "op_type", "input", "attr", "tensor", "opset", "values", "drop"]))
        if kind == "dim":
            values = list(graph.input) + list(graph.output)
            dims = [d for v in values for d in v.type.tensor_type.shape.dim]
            if dims:
                dim = draw(st.sampled_from(dims))
                if draw(st.booleans()):
                    dim.dim_value = draw(st.sampled_from(_ODD_DIMS))
                else:
                    dim.dim_param = draw(st.sampled_from(["N", "", "x"]))
        elif kind == "op_type" and graph.node:
            draw(st.sampled_from(list(graph.node))).op_type = draw(st.sampled_from(_OP_TYPES))
        elif kind == "input" and graph.node:
            node = draw(st.sampled_from(list(graph.node)))
            names = [n for n in node.input] + ["", "ghost", "x", "y"]
            if node.input:
                node.input[draw(st.integers(0, len(node.input) - 1))] = draw(st.sampled_from(names))
            else:
                node.input.append(draw(st.sampled_from(names)))
        elif kind == "attr" and graph.node:
            node = draw(st.sampled_from(list(graph.node)))
            name = draw(
                st.sampled_from(
                    [
                        "mode",
                        "coordinate_transformation_mode",
                        "nearest_mode",
                        "cubic_coeff_a",
                        "exclude_outside",
                        "antialias",
                        "axes",
                        "scales",
                        "extrapolation_value",
                    ]
                )
            )
            value: Any = {
                "mode": lambda: draw(st.sampled_from(_MODES)),
                "coordinate_transformation_mode": lambda: draw(st.sampled_from(_CTMS)),
                "nearest_mode": lambda: draw(st.sampled_from(["floor", "ceil", "round_prefer_ceil", "bogus"])),
                "cubic_coeff_a": lambda: draw(st.sampled_from(_ODD_FLOATS)),
                "exclude_outside": lambda: draw(st.integers(-1, 2)),
                "antialias": lambda: draw(st.integers(-1, 2)),
                "axes": lambda: draw(st.lists(st.integers(-6, 6), max_size=5)),
                "scales": lambda: draw(st.lists(st.sampled_from(_ODD_FLOATS), min_size=1, max_size=5)),
                "extrapolation_value": lambda: draw(st.sampled_from(_ODD_FLOATS)),
            }[name]()
            kept = [a for a in node.attribute if a.name != name]
            del node.attribute[:]
            node.attribute.extend(kept)
            if value != []:
                node.attribute.append(helper.make_attribute(name, value))
        elif kind == "tensor" and graph.initializer:
            tensor = draw(st.sampled_from(list(graph.initializer)))
            what = draw(st.sampled_from(["dtype", "dims", "short", "long"]))
            if what == "dtype":
                tensor.data_type = draw(st.integers(0, 25))
            elif what == "dims":
                tensor.dims.append(draw(st.sampled_from(_ODD_DIMS[:4])))
            elif what == "short":
                tensor.raw_data = tensor.raw_data[: len(tensor.raw_data) // 2]
            else:
                tensor.raw_data = tensor.raw_data + b"\0" * 4
        elif kind == "opset":
            model.opset_import[0].version = draw(st.sampled_from([1, 6, 7, 9, 10, 11, 13, 18, 19, 22, 999]))
        elif kind == "values":
            for tensor in graph.initializer:
                if tensor.name == "scales" and tensor.data_type == TensorProto.FLOAT:
                    count = max(1, len(tensor.raw_data) // 4)
                    values = [draw(st.sampled_from(_ODD_FLOATS)) for _ in range(count)]
                    tensor.raw_data = np.asarray(values, dtype=np.float32).tobytes()
        elif kind == "drop":
            target = draw(st.sampled_from(["node", "input", "output", "initializer"]))
            field = {
                "node": graph.node,
                "input": graph.input,
                "output": graph.output,
                "initializer": graph.initializer,
            }[target]
            if len(field):
                del field[draw(st.integers(0, len(field) - 1))]
    return model.SerializeToString()


@pytest.mark.parametrize("command", ["inspect", "make-dynamic-scale", "swap-plugin", "validate"])
def test_field_mutated_models_never_crash(command: str, request: pytest.FixtureRequest, capsys, monkeypatch) -> None:
    from graphsurgeon_tools.cli import main

    monkeypatch.delenv("ONNXTOOL_DEBUG", raising=False)
    monkeypatch.setenv("ONNXTOOL_MAX_OUTPUT_BYTES", "64M")
    tally: Counter = Counter()

    with tempfile.TemporaryDirectory(prefix="onnxtool-fuzz-") as folder:
        path, out = Path(folder) / "mutant.onnx", Path(folder) / "out.onnx"

        @settings(max_examples=150, **_SETTINGS)
        @given(data=field_mutated_models())
        def law(data: bytes) -> None:
            path.write_bytes(data)
            argv = {
                "inspect": ["inspect", str(path)],
                "make-dynamic-scale": ["make-dynamic-scale", str(path), "-o", str(out)],
                "swap-plugin": ["swap-plugin", str(path), "-o", str(out)],
                "validate": ["validate", str(path), "--reference", str(path)],
            }[command]
            note(_as_text(data))
            capsys.readouterr()
            code = main(argv)
            err = capsys.readouterr().err
            tally["examples"] += 1
            tally[f"exit_{code}"] += 1
            assert code != 4, f"internal error on a mutated model: {err.strip()}"
            assert code in (0, 1, 2, 3), code
            if code in (2, 3):  # a user error: one line (exit 1 is a report on stdout)
                assert len([line for line in err.splitlines() if line.strip()]) == 1, err
            assert path.read_bytes() == data, "the input file was modified"

        law()
    _count(
        request, f"field_mutations_{command}", tally["examples"], **{k: v for k, v in tally.items() if k != "examples"}
    )
    assert tally["examples"] >= 100, tally
