"""Hostile inputs, second round (what is read is never written, nothing hangs, no internal error): every command x applicable case.

Cases live in tests/hostile/corpus_round2.py; the promises are :func:`hostile.harness.check_failure`'s
(exit code, one stderr line naming the file, no traceback, tmp tree unchanged). Cases that
could hang if mishandled (FIFOs, /dev/zero) run only in a subprocess with a timeout. Also here:
inputs that must simply work (non-UTF-8 names), SIGTERM/SIGHUP cleanup, warnings kept off
stderr, differing output counts, and the API face of the write guard.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from hostile import models
from hostile.corpus_round2 import CASES, SUCCESS_CASES, SuccessCase
from hostile.harness import (
    BY_ID,
    COMMANDS,
    ENV_VARS,
    Command,
    command_pairs,
    in_process,
    run_and_check,
    run_subprocess,
    snapshot,
)

PAIRS = command_pairs(CASES)
SUBPROCESS = [
    pytest.param(case, command, id=f"{case.name}-{command.id}")
    for case in CASES
    if case.subprocess_only
    for command in COMMANDS
    if case.expected_code(command.id) is not None
] + [
    pytest.param(next(c for c in CASES if c.name == name), BY_ID[command], id=f"{name}-{command}-subprocess")
    for name, command in [
        ("guard_data_files_shift", "make-dynamic-scale"),
        ("input_npy_scales_strings", "validate"),
        ("spec_deep_nesting", "swap-plugin"),
        ("output_symlink_loop", "swap-plugin"),
    ]
]


@pytest.mark.parametrize(("case", "command"), PAIRS)
def test_in_process(case, command: Command, tmp_path, available, capsys, monkeypatch) -> None:
    run_and_check(case, command, tmp_path, available, in_process(monkeypatch, capsys))


@pytest.mark.parametrize(("case", "command"), SUBPROCESS)
def test_subprocess(case, command: Command, tmp_path, available) -> None:
    run_and_check(case, command, tmp_path, available, run_subprocess)


def test_round2_corpus_size() -> None:
    assert len(CASES) + len(SUCCESS_CASES) >= 25, len(CASES)
    for case in CASES:
        assert any(case.expected_code(c.id) is not None for c in COMMANDS), case.name


# --------------------------------------------------------------------------- inputs that must simply work


def _success_argv(command: str, model: Path, good: Path) -> list[str]:
    out = model.with_name(model.stem + ".out.onnx")  # beside the input: its odd folder name too
    return {
        "inspect": ["inspect", str(model)],
        "inspect-json": ["inspect", str(model), "--json"],
        "make-dynamic-scale": ["make-dynamic-scale", str(model), "-o", str(out)],
        "swap-plugin": ["swap-plugin", str(model), "-o", str(out)],
        "validate": ["validate", str(model), "--reference", str(model)],
    }[command]


SUCCESS_PAIRS = [pytest.param(c, cmd, id=f"{c.name}-{cmd}") for c in SUCCESS_CASES for cmd in c.commands]


@pytest.mark.parametrize(("case", "command"), SUCCESS_PAIRS)
def test_odd_names_simply_work(case: SuccessCase, command: str, tmp_path, capsys, monkeypatch) -> None:
    model = case.build(tmp_path)
    good = models.write(models.resize_model(), tmp_path / "ref" / "reference.onnx")
    before = model.read_bytes()
    outcome = in_process(monkeypatch, capsys)(_success_argv(command, model, good), {})
    assert "Traceback" not in outcome.stderr + outcome.stdout
    assert (outcome.code, outcome.stderr) == (0, ""), outcome
    assert model.read_bytes() == before


@pytest.mark.parametrize("command", ["make-dynamic-scale", "validate", "inspect-json"])
def test_odd_names_in_a_subprocess(command: str, tmp_path) -> None:
    """The installed script prints the odd name: no UnicodeEncodeError on the way out."""
    case = next(c for c in SUCCESS_CASES if c.name == "non_utf8_folder_external_data")
    model = case.build(tmp_path)
    good = models.write(models.resize_model(), tmp_path / "ref" / "reference.onnx")
    script = Path(sys.executable).with_name("onnxtool")
    proc = subprocess.run(
        [str(script), *_success_argv(command, model, good)], capture_output=True, timeout=120, stdin=subprocess.DEVNULL
    )
    # The name's own bytes may come back as they are (like ls): decode them the way Python names them.
    out, err = (os.fsdecode(proc.stdout), os.fsdecode(proc.stderr))
    assert (proc.returncode, err) == (0, ""), (proc.returncode, out, err)
    assert "Traceback" not in out


# --------------------------------------------------------------------------- class 5: output counts


def test_output_counts_differ_is_a_failed_check_not_a_crash(tmp_path, capsys, monkeypatch) -> None:
    candidate = models.resize_model()
    candidate.graph.node.append(helper.make_node("Relu", ["y"], ["y2"], name="extra"))
    candidate.graph.output.append(helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["a", "b", "c", "d"]))
    cand = models.write(candidate, tmp_path / "in" / "two_outputs.onnx")
    ref = models.write(models.resize_model(), tmp_path / "ref" / "reference.onnx")
    for argv in (["validate", str(cand), "--reference", str(ref)], ["validate", str(ref), "--reference", str(cand)]):
        outcome = in_process(monkeypatch, capsys)(argv, {})
        assert "Traceback" not in outcome.stderr + outcome.stdout
        assert outcome.code == 1, outcome
        assert len([line for line in outcome.stderr.splitlines() if line.strip()]) <= 1, outcome
        assert "output" in outcome.stdout, outcome


# --------------------------------------------------------------------------- class 6: warnings, signals


def test_numpy_warnings_never_reach_stderr(tmp_path) -> None:
    """float64 data beyond float32's range: the cast overflows (numpy RuntimeWarning)."""
    model = models.write(models.resize_model(), tmp_path / "in" / "model.onnx")
    npy = tmp_path / "data" / "x.npy"
    npy.parent.mkdir()
    np.save(npy, np.full(models.X_SHAPE, 1e300, dtype=np.float64))
    outcome = run_subprocess(["validate", str(model), "--reference", str(model), "--input", f"x={npy}"], {})
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert "Warning" not in outcome.stderr and len(lines) <= 1, outcome
    assert outcome.code in (0, 1, 3), outcome


_WARNING_COMMAND = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    from graphsurgeon_tools.io import load
    real = load.load_model
    def noisy(*args, **kwargs):
        np.float32(1e30) * np.float32(1e30)  # RuntimeWarning: overflow
        warnings.warn("something a library says", UserWarning)
        return real(*args, **kwargs)
    load.load_model = noisy
    import graphsurgeon_tools.io as io
    io.load_model = noisy
    from graphsurgeon_tools.cli import main
    main(sys.argv[1:])
""")


@pytest.mark.parametrize("debug", ["", "1"])
def test_library_warnings_stay_off_stderr_unless_debugging(debug: str, tmp_path) -> None:
    model = models.write(models.resize_model(), tmp_path / "in" / "model.onnx")
    env = {**os.environ, "ONNXTOOL_DEBUG": debug}
    proc = subprocess.run(
        [sys.executable, "-c", _WARNING_COMMAND, "inspect", str(model)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc
    assert ("Warning" in proc.stderr) == bool(debug), proc.stderr


_SLOW_SAVE = textwrap.dedent("""
    import sys, time
    from graphsurgeon_tools.io import atomic
    real = atomic.write_temp
    def slow(folder, name, data, made):
        tmp = real(folder, name, data, made)
        print("TEMP", tmp, flush=True)
        time.sleep(60)
        return tmp
    atomic.write_temp = slow
    import graphsurgeon_tools.io.save as save
    save.write_temp = slow
    from graphsurgeon_tools.cli import main
    main(sys.argv[1:])
""")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_mid_save_removes_the_temp_file(signum: int, tmp_path) -> None:
    model = models.write(models.resize_model(), tmp_path / "in" / "model.onnx")
    out = tmp_path / "out" / "result.onnx"
    out.parent.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_SAVE, "make-dynamic-scale", str(model), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("TEMP "), (line, proc.stderr.read() if proc.poll() is not None else "")
        temp = Path(line.split(" ", 1)[1].strip())
        assert temp.exists()
        proc.send_signal(signum)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not temp.exists(), f"temp file left behind after signal {signum}"
    assert sorted(p.name for p in out.parent.iterdir()) == []
    assert "Traceback" not in proc.stderr.read()


# --------------------------------------------------------------------------- class 1: the API face


def test_api_save_refuses_a_data_file_the_model_reads(tmp_path) -> None:
    from graphsurgeon_tools import load_model, save_model
    from graphsurgeon_tools.errors import UsageError
    from hostile.corpus_round2 import _two_data_files

    path = _two_data_files(tmp_path / "in", "out.onnx.1.data", "z.bin")
    before = snapshot(tmp_path)
    with pytest.raises(UsageError, match="out.onnx.1.data"):
        save_model(load_model(path), tmp_path / "in" / "out.onnx")
    assert snapshot(tmp_path) == before


def test_api_save_in_place_still_works(tmp_path) -> None:
    from graphsurgeon_tools import load_model, save_model
    from hostile.corpus_round2 import _external_model

    path = _external_model(tmp_path / "in", name="m.onnx", data_name="m.onnx.data")
    save_model(load_model(path), path)
    assert load_model(path).graph.node


def test_api_reads_are_tracked_in_a_scope(tmp_path) -> None:
    from graphsurgeon_tools.errors import UsageError
    from graphsurgeon_tools.io import load_model, tracking_reads, write_bytes_atomic

    path = models.write(models.resize_model(), tmp_path / "model.onnx")
    os.link(path, tmp_path / "alias.onnx")
    with tracking_reads():
        load_model(path)
        with pytest.raises(UsageError, match="model.onnx"):
            write_bytes_atomic(b"<xml/>", tmp_path / "alias.onnx")
    write_bytes_atomic(b"<xml/>", tmp_path / "other.xml")  # outside the scope nothing is remembered


# --------------------------------------------------------------------------- the API face of every case


def _arg(built, flag: str):
    extra = list(built.extra)
    values = [extra[i + 1] for i, item in enumerate(extra[:-1]) if item == flag]
    return values[-1] if values else None


def _api_call(case, built, good: Path):
    """What a pipeline would call for this case: the same files through the Python API."""
    from graphsurgeon_tools import load_model, save_model, swap_plugin, validate
    from graphsurgeon_tools.validation import write_junit

    spec, npy, reference = _arg(built, "--spec"), _arg(built, "--input"), _arg(built, "--reference")
    inputs = dict([npy.split("=", 1)]) if npy else None
    if case.group == "spec":
        return lambda: swap_plugin(built.model, spec=spec)
    if case.group == "npy":
        return lambda: validate(built.model, built.reference or built.model, inputs=inputs)
    if case.group == "plugin":
        if "--reverse" in built.extra:
            return lambda: swap_plugin(built.model, reverse=True)
        return lambda: validate(built.model, "onnx-reference")
    if case.group == "names" and built.output is None:
        return lambda: load_model(built.model)
    if "validate-junit" in case.commands:
        return lambda: write_junit(validate(built.model, reference or good, inputs=inputs), built.output)

    def load_and_save():
        from graphsurgeon_tools.plugins import load_spec

        model = load_model(built.model)
        if spec:
            load_spec(spec)
        save_model(model, built.output)

    return load_and_save


API_CASES = [pytest.param(c, id=c.name) for c in CASES if not c.subprocess_only]


@pytest.mark.parametrize("case", API_CASES)
def test_api_raises_one_line_user_errors_inside_a_scope(case, tmp_path, monkeypatch) -> None:
    """Inside tracking_reads() (what the CLI opens per command) the API refuses every case the same way."""
    from graphsurgeon_tools.errors import OnnxToolError
    from graphsurgeon_tools.io import tracking_reads

    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    built = case.build(tmp_path)
    for name, value in built.env.items():
        monkeypatch.setenv(name, value)
    good = models.write(models.resize_model(), tmp_path / "ref" / "reference.onnx")
    before = snapshot(tmp_path)
    with tracking_reads(), pytest.raises(OnnxToolError) as info:
        _api_call(case, built, good)()
    message = str(info.value)
    assert "\n" not in message.strip(), message
    assert info.value.exit_code == case.code, (info.value.exit_code, message)
    assert snapshot(tmp_path) == before
