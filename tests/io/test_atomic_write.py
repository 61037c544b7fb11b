"""Atomic writes, proven by killing the writer: SIGKILL or SIGTERM mid-write leaves the previous output intact.

A child process saves a large model (a 384 MiB initializer) with ``io.save_model`` over an
output that already holds a valid model; the parent watches the folder, and as soon as a
temporary file is being filled, kills the child with SIGKILL (nothing can be cleaned up
by the victim: no ``finally``, no ``atexit``). Then:

* the previous output has the same bytes as before;
* whatever the dead writer left is recognisable as an onnxtool temp file of a dead process,
  and the next save into that folder removes it, so no stray temp file survives;
* a temp file of a process that is still alive is never touched (it may be mid-write);
* SIGTERM, which can be caught, leaves no temp file at all and still ends the writer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphsurgeon_tools.io import load_model, save_model

TEMP_MARK = "onnxtool-tmp"  # every temp file save_model makes carries this in its name
BIG_BYTES = 384 * 1024**2

_CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from graphsurgeon_tools.io import save_model

    out, nbytes = sys.argv[1], int(sys.argv[2])
    weight = numpy_helper.from_array(np.full(nbytes // 4, 0.5, dtype=np.float32), "big")
    node = helper.make_node("Add", ["x", "big"], ["y"])
    graph = helper.make_graph([node], "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [nbytes // 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [nbytes // 4])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    print("ready", flush=True)
    save_model(model, out)
    print("saved", flush=True)
    """
)


def _small_model(value: float) -> onnx.ModelProto:
    weight = numpy_helper.from_array(np.full((4,), value, dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [weight],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _kill_mid_write(folder: Path, out: Path, sig: int = signal.SIGKILL) -> tuple[list[Path], int]:
    """Start the writer, send ``sig`` while a temp file is being filled; return (strays, its pid)."""
    before = {p.name for p in folder.iterdir()}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(out), str(BIG_BYTES)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            new = [p for p in folder.iterdir() if p.name not in before]
            # Past the first MiB and not yet complete: the kill lands in the middle of the data.
            if any(1024**2 < p.stat().st_size < BIG_BYTES for p in new if p.exists()):
                break
            if child.poll() is not None:
                pytest.fail(f"writer finished before it could be killed: {child.stderr.read()}")
            time.sleep(0.0005)
        else:
            pytest.fail("no temp file appeared in 120 s")
        os.kill(child.pid, sig)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -sig, child.stderr.read()
    return [p for p in folder.iterdir() if p.name not in before], child.pid


@pytest.mark.slow
def test_sigkill_mid_write_keeps_previous_output_and_leaves_no_stray(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    out = folder / "model.onnx"
    save_model(_small_model(1.0), out)
    previous = out.read_bytes()

    strays, pid = _kill_mid_write(folder, out)

    assert out.read_bytes() == previous, "the previous output was modified by a killed write"
    assert numpy_helper.to_array(onnx.load(out).graph.initializer[0]).tolist() == [1.0] * 4
    for stray in strays:
        # SIGKILL cannot be caught, so a temp may survive the victim; it must say whose it is.
        assert stray.name.startswith(".") and TEMP_MARK in stray.name and str(pid) in stray.name, stray.name

    # The next save into the folder (any file) sweeps temps of dead writers.
    save_model(_small_model(2.0), folder / "other.onnx")
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx", "other.onnx"]
    assert out.read_bytes() == previous


@pytest.mark.slow
def test_sigterm_mid_write_removes_its_temp_and_still_dies_of_the_signal(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    out = folder / "model.onnx"
    save_model(_small_model(1.0), out)
    previous = out.read_bytes()

    strays, _ = _kill_mid_write(folder, out, signal.SIGTERM)

    assert strays == [], "a SIGTERMed writer left its temp file behind"
    assert out.read_bytes() == previous


def test_temp_of_a_live_writer_is_left_alone(tmp_path: Path) -> None:
    """Cleanup must not race a concurrent writer: only temps of dead processes go."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        live_temp = tmp_path / f".model.onnx.{TEMP_MARK}-{sleeper.pid}-abc123"
        dead_temp = tmp_path / f".model.onnx.{TEMP_MARK}-{dead.pid}-def456"
        live_temp.write_bytes(b"half a model")
        dead_temp.write_bytes(b"half a model")
        unrelated = tmp_path / ".model.onnx.swp"  # not ours: never touched whatever its name says
        unrelated.write_bytes(b"editor state")

        save_model(_small_model(3.0), tmp_path / "model.onnx")

        assert live_temp.exists(), "a live writer's temp file was deleted"
        assert not dead_temp.exists(), "a dead writer's temp file survived the next save"
        assert unrelated.exists()
        assert load_model(tmp_path / "model.onnx").graph.initializer[0].name == "w"
    finally:
        sleeper.kill()
        sleeper.wait()
