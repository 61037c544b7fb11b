"""Every command lint suggests, pasted as it is printed into a shell, works on the file it names.

For each model of a small corpus (the README's ``make-dynamic-scale`` output among them) the
test runs ``onnxtool lint --json``, pastes each finding's ``command`` into ``bash`` exactly as
printed (the console script, a subprocess), and asserts: exit 0, the file the finding says
it ``writes`` exists, and linting that file no longer breaks the finding's rule at its node.
Findings without a command are those no rewrite of this tool fixes; the corpus checks that
such findings (a float input of the user's own) get none, and that the names written never
stack suffixes (``.dynamic.dynamic``).

Also here: the error that names commands (swap-plugin ``--signature sizes`` refused with
``sizes-not-hw``: rewrite with make-dynamic-scale --layout sizes first) works on the model it was
given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from lint import lint_models as m  # tests/lint/lint_models.py (tests/ is on sys.path, see conftest.py)

from graphsurgeon_tools.io.names import printable, shell_quote
from graphsurgeon_tools.lint import lint_model

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_NO_LOOKUP = m.plugin("", second="float[4] s", body_inputs="X, s")  # MMDeploy-style node without fields


def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("ONNXTOOL_DEBUG", None)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _written_by_onnxtool(run_cli, folder: Path, model: onnx.ModelProto, *flags: str) -> Path:
    """``onnxtool make-dynamic-scale original.onnx FLAGS``: the file the README's tour lints."""
    original = folder / "original.onnx"
    onnx.save(model, original)
    result = run_cli("make-dynamic-scale", original, "--json", "--no-check", *flags)
    assert result.code == 0, result.err
    written = folder / "original.dynamic.onnx"  # the report shows the name escaped where it is not UTF-8
    assert json.loads(result.out)["output"] == printable(written)
    return written


CORPUS = {
    # the README: make-dynamic-scale's float scales input, which TensorRT refuses
    "readme-dynamic": lambda run_cli, d: _written_by_onnxtool(
        run_cli, d, m.constant_scales("1.0, 1.0, 3.0, 3.0", attrs='mode="cubic"')
    ),
    "factor-form": lambda run_cli, d: _written_by_onnxtool(
        run_cli, d, m.constant_scales("1.0, 1.0, 2.0, 2.0", attrs='mode="linear"'), "--factor"
    ),
    "fractional-scale": lambda run_cli, d: _written_by_onnxtool(
        run_cli, d, m.constant_scales("1.0, 1.0, 1.5, 1.5", attrs='mode="linear"')
    ),
    "plugin-without-lookup-fields": lambda run_cli, d: _save(d / "plugin.onnx", PLUGIN_NO_LOOKUP),
    "users-own-float-input": lambda run_cli, d: _save(d / "own.onnx", m.resize(inputs="float[4] s")),
    # a folder and file name that are not UTF-8, with a space and a quote: the command names the same bytes
    "non-utf8-name": lambda run_cli, d: _written_by_onnxtool(
        run_cli, _mkdir(d / os.fsdecode(b"it's \xff")), m.constant_scales("1.0, 1.0, 2.0, 2.0")
    ),
}
#: (case, rule) pairs that must come with a command: the test cannot pass by suggesting nothing.
MUST_SUGGEST = {
    ("readme-dynamic", "trt-shape-input-integer"),
    ("readme-dynamic", "trt-scale-arithmetic"),
    ("factor-form", "trt-shape-input-integer"),
    ("fractional-scale", "trt-shape-input-integer"),
    ("plugin-without-lookup-fields", "trt-plugin-lookup-attributes"),
    ("non-utf8-name", "trt-shape-input-integer"),
}
MUST_NOT_SUGGEST = {("users-own-float-input", "trt-shape-input-integer")}


def _mkdir(folder: Path) -> Path:
    folder.mkdir()
    return folder


def _save(path: Path, model: onnx.ModelProto) -> Path:
    onnx.save(model, path)
    return path


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_each_suggested_command_pasted_as_printed_works_on_the_file_named(case, run_cli, tmp_path):
    model = CORPUS[case](run_cli, tmp_path)
    result = run_cli("lint", model, "--json")
    assert result.code in (0, 1), result.err
    findings = json.loads(result.out)["findings"]
    suggested = {(case, f["rule"]) for f in findings if f["command"]}
    assert {pair for pair in MUST_SUGGEST if pair[0] == case} <= suggested, findings
    assert not suggested & MUST_NOT_SUGGEST, findings
    ran: dict[str, subprocess.CompletedProcess] = {}
    for finding in findings:
        command = finding["command"]
        if not command:
            assert finding["fix"] is None
            continue
        assert "OUT.onnx" not in command
        assert shell_quote(model) in command  # the exact bytes of the file linted, as a shell word
        if command not in ran:  # several findings may share one fix
            ran[command] = _shell(command, tmp_path)
        done = ran[command]
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        written = model.with_name(Path(finding["writes"]).name)
        if printable(model) != str(model):  # the report shows a non-UTF-8 name escaped; the file has its bytes
            assert finding["writes"] == printable(written)
        else:
            assert Path(finding["writes"]) == written
        assert written.is_file() and written != model, finding
        for suffix in ("dynamic", "sizes", "factor", "plugin", "resize"):
            assert f".{suffix}.{suffix}." not in written.name, written
        after = lint_model(written, "tensorrt")
        assert (finding["rule"], finding["node"]) not in {(f.rule, f.node) for f in after.findings}, (
            f"{command} left {finding['rule']} at {finding['node']}: {after.to_dict()}"
        )
        assert not after.failed or finding["severity"] != "error", after.to_dict()
        onnx.checker.check_model(onnx.load(written), full_check=True)


def test_the_sizes_not_hw_error_s_advice_works_on_the_model_it_was_given(run_cli, tmp_path):
    dynamic = _written_by_onnxtool(run_cli, tmp_path, m.constant_scales("1.0, 1.0, 2.0, 2.0", attrs='mode="linear"'))
    refused = run_cli("swap-plugin", dynamic, "--signature", "sizes", "--no-check")
    assert refused.code == 3 and "[sizes-not-hw]" in refused.err, refused.err  # the error names the rewrite:
    assert "--layout sizes" in refused.err  # make-dynamic-scale --layout sizes first, then --signature sizes
    command = (
        f"onnxtool make-dynamic-scale {dynamic} --layout sizes && "
        f"onnxtool swap-plugin {dynamic.with_name('original.sizes.onnx')} --signature sizes"
    )
    done = _shell(command, tmp_path)
    assert done.returncode == 0, done.stderr
    plugin = tmp_path / "original.sizes.plugin.onnx"
    assert "swapped" in done.stdout and plugin.is_file(), done.stdout
    assert not lint_model(plugin, "tensorrt").failed


def test_the_readme_tour_lint_fix_pasted_in_the_same_folder_makes_the_model_pass(tmp_path):
    """README, literally: export srcnn, make-dynamic-scale, lint (relative names, one folder), then the fix."""
    pytest.importorskip("torch")
    tour = _shell("onnxtool export srcnn && onnxtool make-dynamic-scale srcnn_static.onnx --no-check", tmp_path)
    assert tour.returncode == 0, tour.stderr
    linted = _shell("onnxtool lint srcnn_static.dynamic.onnx --target tensorrt --json || test $? -eq 1", tmp_path)
    findings = json.loads(linted.stdout)["findings"]
    (error,) = [f for f in findings if f["severity"] == "error"]
    assert error["rule"] == "trt-shape-input-integer"
    assert error["command"] == "onnxtool make-dynamic-scale srcnn_static.dynamic.onnx --layout sizes"
    assert error["writes"] == "srcnn_static.sizes.onnx"
    fixed = _shell(error["command"], tmp_path)
    assert fixed.returncode == 0 and "nothing to rewrite" not in fixed.stdout, fixed.stdout + fixed.stderr
    assert "check passed" in fixed.stdout  # the built-in ONNX Runtime check ran on the pasted command
    after = _shell("onnxtool lint srcnn_static.sizes.onnx --target tensorrt", tmp_path)
    assert after.returncode == 0, after.stdout
    assert sorted(p.name for p in tmp_path.glob("*.onnx")) == [
        "srcnn_static.dynamic.onnx",
        "srcnn_static.onnx",
        "srcnn_static.sizes.onnx",
    ]
