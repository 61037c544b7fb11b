"""The pass contract (passes/base.py): one result shape, one selector, one failure policy,
and the cost rule: one full checker run and one site discovery per pass run."""

from __future__ import annotations

import golden
import numpy as np
import onnx
import onnx.numpy_helper
import pytest

from graphsurgeon_tools.core import checker, output_types
from graphsurgeon_tools.errors import CheckFailedError, UsageError
from graphsurgeon_tools.passes.base import PassResult, Skip, select
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.resize import sites as resize_sites

COMMON_KEYS = {
    "pass",
    "changed",
    "rewritten",
    "skipped",
    "new_inputs",
    "declared_inputs",
    "removed_nodes",
    "notes",
    "timings",
    "check",
}


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the full ONNX checker and Resize-site discovery run. The full checker's inference
    counts wherever it runs: inside ``check_model(full_check=True)`` or as the strict, type-checking
    shape inference a pass shares with its shape refresh (then only the structural checker follows)."""
    seen = {"checker": 0, "discovery": 0}
    check_model, find = onnx.checker.check_model, resize_sites.find_resize_sites
    infer_shapes = onnx.shape_inference.infer_shapes

    def counting_check(model, full_check=False, *args, **kwargs):
        seen["checker"] += bool(full_check)
        return check_model(model, full_check, *args, **kwargs)

    def counting_inference(model, check_type=False, strict_mode=False, data_prop=False):
        seen["checker"] += bool(check_type and strict_mode and not data_prop)
        return infer_shapes(model, check_type, strict_mode, data_prop)

    def counting_find(model, **kwargs):
        seen["discovery"] += 1
        return find(model, **kwargs)

    monkeypatch.setattr(onnx.checker, "check_model", counting_check)
    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", counting_inference)
    monkeypatch.setattr(resize_sites, "find_resize_sites", counting_find)
    return seen


@pytest.mark.parametrize("signature", ["scales", "size-tensor"])
def test_swap_plugin_on_constant_scales_checks_once_and_finds_sites_once(counts, signature) -> None:
    model = golden.resize_model(13, scales=(1.0, 1.0, 2.0, 2.0))
    counts.update(checker=0, discovery=0)  # golden's builder checks what it builds
    result = swap_plugin(model, signature=signature)
    assert result.changed and result.new_inputs  # make-dynamic-scale's rewrite ran inside
    assert counts == {"checker": 1, "discovery": 1}


def test_make_dynamic_scale_checks_once_and_finds_sites_once(counts) -> None:
    model = golden.fpn_model(factors=(2.0, 4.0))
    counts.update(checker=0, discovery=0)
    result = make_dynamic_scale(model, check=False)
    assert result.changed
    assert counts == {"checker": 1, "discovery": 1}


def _relu_resize_chain(length: int = 30, read_output: bool = False) -> onnx.ModelProto:
    """x -> Relu x length -> Resize(constant scales) -> y: no op that makes the shared inference unprovable.
    ``read_output``: y is also read by a node (a Relu to a second output)."""
    value = onnx.helper.make_tensor_value_info
    nodes = [onnx.helper.make_node("Relu", [f"a{i}" if i else "x"], [f"a{i + 1}"]) for i in range(length)]
    nodes.append(onnx.helper.make_node("Resize", [f"a{length}", "", "s"], ["y"], mode="nearest", name="up"))
    outputs = [value("y", onnx.TensorProto.FLOAT, [1, 3, 16, 16])]
    if read_output:
        nodes.append(onnx.helper.make_node("Relu", ["y"], ["y2"]))
        outputs.append(value("y2", onnx.TensorProto.FLOAT, [1, 3, 16, 16]))
    graph = onnx.helper.make_graph(
        nodes,
        "chain",
        [value("x", onnx.TensorProto.FLOAT, [1, 3, 8, 8])],
        outputs,
        [onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")],
    )
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])


@pytest.mark.parametrize("read_output", [False, True])
def test_one_inference_serves_the_shape_refresh_and_the_full_check(counts, monkeypatch, read_output) -> None:
    """make-dynamic-scale re-infers its output shapes after the rewrite; where provable, that one
    inference is the full checker's own and the contract runs the structural checker after it. The
    written model is byte for byte the one the two separate calls give, and passes the full checker."""

    full_checks = []
    counting = onnx.checker.check_model

    def spy(model, full_check=False, *args, **kwargs):
        full_checks.append(full_check)
        return counting(model, full_check, *args, **kwargs)

    monkeypatch.setattr(onnx.checker, "check_model", spy)
    shared = make_dynamic_scale(_relu_resize_chain(read_output=read_output), check=False)
    assert counts["checker"] == 1
    # an output another node reads: its declared dims reach that node in the full check only
    assert full_checks.count(True) == (1 if read_output else 0)
    onnx.checker.check_model(shared.model, full_check=True)
    monkeypatch.setattr(output_types, "_shareable", lambda model, data: False)  # the two calls, as before
    counts.update(checker=0)
    unshared = make_dynamic_scale(_relu_resize_chain(read_output=read_output), check=False)
    assert counts["checker"] == 1
    assert shared.model.SerializeToString() == unshared.model.SerializeToString()
    assert shared.to_dict() | {"timings": None} == unshared.to_dict() | {"timings": None}


def test_nothing_to_do_still_checks_the_input_once(counts) -> None:
    model = make_dynamic_scale(golden.resize_model(13), check=False).model
    counts.update(checker=0, discovery=0)
    assert not make_dynamic_scale(model, check=False).changed
    assert counts == {"checker": 1, "discovery": 1}


def test_every_pass_reports_the_same_keys() -> None:
    dyn = make_dynamic_scale(golden.resize_model(13)).to_dict()
    swap = swap_plugin(golden.resize_model(13)).to_dict()
    assert COMMON_KEYS <= set(dyn) and COMMON_KEYS <= set(swap)
    assert dyn["pass"] == "make-dynamic-scale" and swap["pass"] == "swap-plugin"
    assert swap["swapped"] == swap["rewritten"] and swap["changed"] is True


def test_a_failed_check_is_returned_and_raised_on_request() -> None:
    class Outputs:
        passed, name, max_abs_diff, mismatched = False, "y", 0.5, 3

    class Check:
        passed, outputs = False, [Outputs()]

        def to_dict(self):
            return {"passed": False}

    result = PassResult(model=onnx.ModelProto(), rewritten=["x"], check=Check())
    assert result.failed and result.to_dict()["check"] == {"passed": False}
    with pytest.raises(CheckFailedError, match=r"output 'y' max \|diff\| 0.5 \(3 elements; 1 output\(s\) differ\)"):
        result.raise_if_failed()
    assert PassResult(model=onnx.ModelProto()).raise_if_failed().failed is False


def test_the_one_selector_keeps_order_and_names_what_is_there() -> None:
    items = [("a1", "out_a1"), ("b1", "out_b1"), ("a2", "out_a2")]
    assert select(items, ["a*"], lambda i: i, what="Resize") == [items[0], items[2]]
    assert select(items, ["out_b1", "a2"], lambda i: i, what="Resize") == [items[1], items[2]]
    assert select(items, None, lambda i: i, what="Resize") == items
    with pytest.raises(UsageError, match=r"nodes=\['zz\*'\] matches no Resize node \(candidates: 'a1', 'b1', 'a2'\)"):
        select(items, ["zz*"], lambda i: i, what="Resize")


def test_skips_carry_the_reason_a_rule_refused() -> None:
    result = make_dynamic_scale(golden.resize_model(13, source="graph_input"), check=False)
    assert not result.changed
    (skip,) = result.skipped
    assert isinstance(skip, Skip) and "already come from graph input" in skip.reason
    assert skip.to_dict() == {
        "node": skip.node,
        "op_type": "Resize",
        "reason": skip.reason,
        "code": skip.code,
        "fix": None,
    }


def test_an_onnx_graphsurgeon_graph_comes_back_as_a_graph() -> None:
    gs = pytest.importorskip("onnx_graphsurgeon")
    graph = gs.import_onnx(golden.resize_model(13))
    result = make_dynamic_scale(graph, check=False)
    assert isinstance(result.model, gs.Graph)
    assert [i.name for i in result.model.inputs][-1] == "scales"
    swapped = swap_plugin(gs.import_onnx(golden.resize_model(13)))
    assert isinstance(swapped.model, gs.Graph)
    assert any(node.op == "DynamicTRTResize" for node in swapped.model.nodes)


# --------------------------------------------------------------------------- the wrapper in force


def _pass_packages() -> list[str]:
    """Every pass: a package under graphsurgeon_tools/passes/ (a new one is covered without an edit here)."""
    import pkgutil

    from graphsurgeon_tools import passes

    return sorted(info.name for info in pkgutil.iter_modules(passes.__path__) if info.ispkg)


@pytest.mark.parametrize("package", _pass_packages())
def test_each_pass_has_one_options_object_equal_to_its_functions_keywords(package: str) -> None:
    """passes/<p>/ exposes the function <p> and one Pass subclass whose Options are that function's keywords."""
    import dataclasses
    import importlib
    import inspect

    from graphsurgeon_tools.passes.base import Pass

    module = importlib.import_module(f"graphsurgeon_tools.passes.{package}")
    (options,) = [
        v.Options for v in vars(module).values() if isinstance(v, type) and issubclass(v, Pass) and v is not Pass
    ]
    keywords = {
        name: (p.annotation, p.default)
        for name, p in inspect.signature(getattr(module, package)).parameters.items()
        if name != "model"
    }
    fields = {f.name: (f.type, f.default) for f in dataclasses.fields(options)}
    assert keywords == fields
    with pytest.raises(dataclasses.FrozenInstanceError):
        options().check = False


def test_the_passes_are_found() -> None:  # the discovery above cannot pass by finding nothing
    assert {"make_dynamic_scale", "set_factor", "swap_plugin"} <= set(_pass_packages())


def _pass_with(hook: str):
    from graphsurgeon_tools.passes.make_dynamic_scale import MakeDynamicScale

    class Broken(MakeDynamicScale):
        pass

    def fail(self, *args):
        raise KeyError("oops")

    setattr(Broken, hook, fail)
    return Broken()


def test_a_stray_exception_in_requires_is_a_precondition_error() -> None:
    from graphsurgeon_tools.errors import ExitCode, PreconditionError

    with pytest.raises(PreconditionError, match="make-dynamic-scale: the input model: KeyError") as caught:
        _pass_with("requires")(golden.resize_model(13))
    assert caught.value.exit_code == ExitCode.INVALID_INPUT


def test_a_stray_exception_in_ensures_is_a_postcondition_error() -> None:
    from graphsurgeon_tools.errors import PostconditionError

    with pytest.raises(PostconditionError, match="make-dynamic-scale: the output model: KeyError"):
        _pass_with("ensures")(golden.resize_model(13))


def test_a_pass_declared_not_in_place_that_changes_the_callers_model_is_refused() -> None:
    from graphsurgeon_tools.errors import PostconditionError
    from graphsurgeon_tools.passes.make_dynamic_scale import DynamicScaleOptions, MakeDynamicScale

    class Liar(MakeDynamicScale):
        owned = False

        @property
        def in_place(self) -> bool:  # declares "never changes the caller's model" ...
            return False

        def call(self, model):
            result = MakeDynamicScale.call(self, model)
            model.CopyFrom(result.model)  # ... and changes it
            result.model = model
            return result

    model = golden.resize_model(13)
    with pytest.raises(PostconditionError, match="declared not in place but changed the caller's model"):
        Liar(DynamicScaleOptions(check=False))(model)


@pytest.mark.parametrize("run", [make_dynamic_scale, swap_plugin])
def test_one_bad_model_gets_the_same_error_from_every_pass(tmp_path, run) -> None:
    from graphsurgeon_tools.errors import PreconditionError

    model = golden.resize_model(13)
    weight = onnx.numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    weight.raw_data = weight.raw_data[:10]
    model.graph.initializer.append(weight)
    path = tmp_path / "short.onnx"
    onnx.save(model, path)
    with pytest.raises(PreconditionError) as caught:
        run(path)
    text = str(caught.value)
    assert text == f"{path} fails the ONNX checker: tensor 'w' holds 10 bytes but its shape [4, 4] needs 64"


@pytest.mark.parametrize("run", [make_dynamic_scale, swap_plugin])
def test_a_model_only_strict_shape_inference_rejects_is_refused_by_every_pass(tmp_path, run) -> None:
    """The full check is the structural checker AND strict shape inference: a model the first lets
    through (an Add of 3 and 4 channels, upstream of the site: no rewrite can make it fit) is
    refused with the checker's words (exit 3), and nothing is written."""
    from graphsurgeon_tools.errors import ExitCode, PreconditionError

    nodes = [onnx.helper.make_node("Add", ["x", "y"], ["t"]), onnx.helper.make_node("Resize", ["t", "", "s"], ["out"])]
    value = onnx.helper.make_tensor_value_info
    graph = onnx.helper.make_graph(
        nodes,
        "g",
        [value("x", onnx.TensorProto.FLOAT, [1, 3, 8, 8]), value("y", onnx.TensorProto.FLOAT, [1, 4, 8, 8])],
        [value("out", onnx.TensorProto.FLOAT, [1, 3, 16, 16])],
        [onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)  # the structural checker lets it through ...
    with pytest.raises(onnx.shape_inference.InferenceError, match="Incompatible dimensions"):
        onnx.checker.check_model(model, full_check=True)  # ... strict inference does not
    path = tmp_path / "add.onnx"
    onnx.save(model, path)
    with pytest.raises(PreconditionError, match="fails the ONNX checker: .*Incompatible dimensions") as caught:
        run(path, check=False)
    assert caught.value.exit_code == ExitCode.INVALID_INPUT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.onnx"]


def test_swap_plugin_checks_once_where_make_dynamic_scale_shares_its_inference(counts) -> None:
    """swap-plugin rewrites on after make-dynamic-scale's step: the step's shape refresh stays the
    lenient inference (the full check's would stand for a model that is not written)."""
    result = swap_plugin(_relu_resize_chain(), check=False)
    assert result.changed and result.new_inputs
    assert counts == {"checker": 1, "discovery": 1}


@pytest.fixture
def inference_reads(monkeypatch) -> list:
    """What each shape inference that describes sites was handed (a ModelProto, or weightless bytes)."""
    from graphsurgeon_tools.resize import site_inputs

    read: list = []
    infer = checker.inferred_copy

    def spy(model, input_shapes=None):
        read.append(model)
        return infer(model, input_shapes)

    monkeypatch.setattr(checker, "inferred_copy", spy)
    monkeypatch.setattr(site_inputs, "inferred_copy", spy)
    return read


@pytest.mark.parametrize("inline", [False, True], ids=["as-handed-in", "inlined"])
@pytest.mark.parametrize("run", [make_dynamic_scale, swap_plugin])
def test_site_discovery_infers_from_the_structural_checks_bytes_while_the_model_is_the_one_handed_in(
    tmp_path, inference_reads, run, inline
) -> None:
    """The shape inference that describes the sites reads the bytes the structural check serialized
    (one serialization less) on the proto the pass was handed; a model the pass made from it (inlined
    functions) is inferred from itself."""
    from hostile import nested

    model = nested.function_model(calls=2) if inline else _relu_resize_chain()
    path = tmp_path / "in.onnx"
    onnx.save(model, path)
    result = run(path, check=False, inline_functions=inline)
    assert result.changed and inference_reads
    if inline:
        assert all(isinstance(seen, onnx.ModelProto) for seen in inference_reads)
    else:
        assert inference_reads[0] == checker.weightless_bytes(onnx.load(path))


def test_swap_plugin_infers_from_the_structural_checks_bytes_when_it_works_on_a_copy(inference_reads) -> None:
    """A ModelProto handed in is copied (not in place); the copy serializes as the proto it copies, so
    site discovery still reads the structural check's bytes, and the caller's proto stays as it was."""
    model = _relu_resize_chain()
    given = model.SerializeToString()
    result = swap_plugin(model, check=False)
    assert result.changed and result.model is not model
    assert model.SerializeToString() == given
    assert inference_reads[0] == checker.weightless_bytes(model)
