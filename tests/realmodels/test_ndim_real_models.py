"""3-D, 1-D and run-time-sizes real models through every command, as a TensorRT user runs them.

Models built by their projects' own code with random weights, tiny so the run stays fast:

* ``segresnet3d``: MONAI ``SegResNet(spatial_dims=3, upsample_mode="nontrainable")`` on 1x1x16x16x16
  (a trilinear Resize on (N, C, D, H, W)), TorchScript opset 17 and dynamo opset 18;
* ``basicunet1d``: MONAI ``BasicUNet(spatial_dims=1, upsample="nontrainable")`` on 1x1x32 (four linear
  align_corners Resizes on (N, C, L)), TorchScript opset 17 (the dynamo exporter decomposes 1-D
  linear interpolation into gathers: no Resize to rewrite);
* ``recompute``: ``F.interpolate(scale_factor=2, recompute_scale_factor=True)`` exported with dynamic
  axes (run-time sizes round(dim * 2)), TorchScript opset 17 and dynamo opset 18.

Every model goes through ``inspect``, ``make-dynamic-scale --layout`` scales/factor/sizes,
``swap-plugin --signature`` scales/size-tensor/sizes, ``validate`` of each written model against
the original and against the unmodified torch module (``python:ndim_nets.py:NAME``), ``lint --target tensorrt`` (and lint's own fix applied to the file it names) and
``swap-plugin --reverse``. Each command either does its work (exit 0, something rewritten, the
check passed) or fails with the reason and a code (exit 3): never exit 4, never "nothing to
rewrite" with exit 0 while a site was refused.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from realmodels.flow import cli

torch = pytest.importorskip("torch", reason="needs the realmodels extra (pip install -e '.[realmodels]')")
monai = pytest.importorskip("monai", reason="needs the realmodels extra (pip install -e '.[realmodels]')")

# (model, exporter-opset) -> the outcome each command must have: 0 done, 3 refused with this code.
CASES = (
    "segresnet3d/torchscript-17",
    "segresnet3d/dynamo-18",
    "basicunet1d/torchscript-17",
    "recompute/torchscript-17",
    "recompute/dynamo-18",
)
REFUSED = {  # (case pattern prefix, command) -> the code of the up-front refusal
    ("segresnet3d", "swap-plugin:size-tensor"): "size-tensor-rank",  # MMDeploy's plugin is 4-D only
    ("basicunet1d", "swap-plugin:size-tensor"): "size-tensor-rank",
    ("recompute", "swap-plugin:scales"): "sizes-driven",  # out/in, not the scale: the size-tensor/sizes forms
}


NETS = Path(__file__).with_name("ndim_nets.py")


def _build(name: str):
    from realmodels import ndim_nets

    shape, dynamic = ndim_nets.EXAMPLES[name]
    torch.manual_seed(1)
    return getattr(ndim_nets, name)(), torch.randn(*shape), dynamic


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ndim_real")
    paths: dict[str, Path] = {}
    modules: dict[str, tuple] = {}

    def get(case: str) -> Path:
        if case not in paths:
            name, label = case.split("/")
            exporter, opset = label.split("-")
            if name not in modules:
                modules[name] = _build(name)
            module, example, dynamic = modules[name]
            path = folder / f"{name}.{label}.onnx"
            kwargs: dict = {}
            if dynamic and exporter == "dynamo":
                kwargs["dynamic_shapes"] = {"x": {a: torch.export.Dim(n, min=4, max=256) for a, n in dynamic.items()}}
            elif dynamic:
                kwargs["dynamic_axes"] = {"input": dynamic}
            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    module,
                    (example,),
                    str(path),
                    dynamo=exporter == "dynamo",
                    opset_version=int(opset),
                    input_names=["input"],
                    output_names=["output"],
                    **kwargs,
                )
            paths[case] = path
        return paths[case]

    return get


def _run(*args: object) -> tuple[int, dict, str]:
    code, out, err = cli(*args)
    try:
        report = json.loads(out) if out.strip() else {}
    except json.JSONDecodeError:
        report = {}
    return code, report, err


def _expected_refusal(case: str, command: str) -> str | None:
    return next((code for (prefix, cmd), code in REFUSED.items() if case.startswith(prefix) and cmd == command), None)


@pytest.mark.parametrize("case", CASES)
def test_every_command_does_its_work_or_fails_with_the_reason(exported, case: str, tmp_path, record_property) -> None:
    original = exported(case)
    outcomes: dict[str, str] = {}

    code, report, err = _run("inspect", original, "--json")
    assert code == 0 and report["sites"], err
    spatial = len(report["sites"][0]["input_shape"] or [0, 0, 0, 0]) - 2
    outcomes["inspect"] = f"0 ({len(report['sites'])} site(s))"

    written: dict[str, Path] = {}
    for layout in ("scales", "factor", "sizes"):
        out = tmp_path / f"{layout}.onnx"
        code, report, err = _run("make-dynamic-scale", original, "--layout", layout, "-o", out, "--json")
        assert code == 0, f"--layout {layout}: exit {code}: {err}"
        assert report["rewritten"] and report["check"]["passed"] is True, report
        assert all(
            i["shape"] == ([spatial] if layout != "scales" or case.startswith("recompute") else [spatial + 2])
            for i in report["new_inputs"]
        ), report["new_inputs"]
        written[f"layout {layout}"] = out
        outcomes[f"make-dynamic-scale --layout {layout}"] = f"0 ({len(report['rewritten'])} rewritten, check passed)"

    for signature in ("scales", "size-tensor", "sizes"):
        out = tmp_path / f"plugin-{signature}.onnx"
        code, report, err = _run("swap-plugin", original, "--signature", signature, "-o", out, "--json")
        refused = _expected_refusal(case, f"swap-plugin:{signature}")
        if refused is not None:
            assert code == 3 and f"[{refused}]" in err and not out.exists(), f"exit {code}: {err}"
            assert err.count("\n") == 1 and "Traceback" not in err
            outcomes[f"swap-plugin --signature {signature}"] = f"3 ({refused})"
            continue
        assert code == 0, f"--signature {signature}: exit {code}: {err}"
        assert report["rewritten"] and report["check"]["passed"] is True, report
        written[f"plugin {signature}"] = out
        outcomes[f"swap-plugin --signature {signature}"] = f"0 ({len(report['rewritten'])} swapped, check passed)"

    name = case.split("/")[0]
    code, report, err = _run("validate", original, "-r", f"python:{NETS}:{name}", "--json")
    assert code == 0, f"validate the export against its module: exit {code}: {err} {report.get('factors')}"
    outcomes["validate original vs module"] = f"0 ({report['counts']['compared']} compared)"
    for what, path in written.items():
        code, report, err = _run("validate", path, "-r", original, "--json")
        assert code == 0, f"validate {what}: exit {code}: {err} {report.get('factors')}"
        assert report["counts"]["compared"] >= 1
        outcomes[f"validate {what}"] = f"0 ({report['counts']['compared']} compared)"
        code, report, err = _run("validate", path, "-r", f"python:{NETS}:{name}", "--json")
        assert code == 0, f"validate {what} against the module: exit {code}: {err} {report.get('factors')}"
        outcomes[f"validate {what} vs module"] = f"0 ({report['counts']['compared']} compared)"
        code, report, err = _run("lint", path, "--target", "tensorrt", "--json")
        float_input = what == "layout scales"  # TensorRT refuses a float shape input: the rule says so
        assert code == (1 if float_input else 0), f"lint {what}: exit {code}: {err}"
        outcomes[f"lint {what}"] = f"{code}" + (" (trt-shape-input-integer, as documented)" if float_input else "")
        if float_input:  # lint's fix, applied to the very file lint named, then linted again
            fix = next(f["fix"] for f in report["findings"] if f["rule"] == "trt-shape-input-integer")
            fixed = tmp_path / "fixed.onnx"
            code, done, err = _run(
                "make-dynamic-scale", path, "--layout", fix["keywords"]["layout"], "-o", fixed, "--json"
            )
            assert code == 0 and done["check"]["passed"] is True, f"lint's fix: exit {code}: {err}"
            code, _, err = _run("lint", fixed, "--target", "tensorrt", "--json")
            assert code == 0, f"lint after its fix: exit {code}: {err}"
            outcomes["lint's fix on the scales model"] = "0 (then lint 0)"
        if what.startswith("plugin"):
            back = tmp_path / f"{what.replace(' ', '-')}.resize.onnx"
            code, report, err = _run("swap-plugin", path, "--reverse", "-o", back, "--json")
            assert code == 0 and report["rewritten"] and report["check"]["passed"] is True, f"exit {code}: {err}"
            outcomes[f"reverse {what}"] = "0 (round trip checked)"
    record_property("outcomes", outcomes)
