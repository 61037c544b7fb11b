"""Every example's README commands run, and every model they make is a valid, runnable ONNX file.

For each ``examples/NN_name/README.md``: copy the folder to a temporary directory, run
its fenced ``bash``/``sh`` blocks in order (``bash -euo pipefail``, the venv's ``bin``
first on PATH so ``onnxtool`` and ``python`` resolve to this install), then check each
``.onnx`` file it produced with ``onnx.checker`` (full check) and ONNX Runtime
(``make_session``, so DynamicTRTResize plugin models run too). Models whose custom ops
exist only as TensorRT plugins (no ORT kernel anywhere) get the checker only.
Blocks in other languages (``text``, ``yaml``, ``python``) are for reading, not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("[0-9][0-9]_*") if (p / "README.md").is_file())
FENCE = re.compile(r"^```(?:bash|sh)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
SCRIPT = re.compile(r"\bpython3?\s+([\w./-]+\.py)\b")
STANDARD_DOMAINS = ("", "ai.onnx")
RUNNABLE_CUSTOM_OPS = {"DynamicTRTResize"}  # graphsurgeon_tools.runtime has a kernel for these


def blocks(readme: Path) -> list[str]:
    return [match.group(1) for match in FENCE.finditer(readme.read_text(encoding="utf-8"))]


def check_model(path: Path) -> str:
    """Checker + one ORT run; returns what was checked (for failure messages)."""
    from graphsurgeon_tools.runtime import make_session
    from graphsurgeon_tools.validation.ports import model_ports

    onnx.checker.check_model(str(path), full_check=True)
    model = onnx.load(str(path))
    custom = {n.op_type for n in model.graph.node if n.domain not in STANDARD_DOMAINS}
    if custom - RUNNABLE_CUSTOM_OPS:
        return f"{path.name}: checker only (TensorRT-only ops {sorted(custom - RUNNABLE_CUSTOM_OPS)})"
    ports = model_ports(model, str(path))
    rng = np.random.default_rng(0)
    feeds = {}
    for data in ports.data_inputs:
        shape = [d if isinstance(d, int) else (1 if axis == 0 else 16) for axis, d in enumerate(data.shape)]
        feeds[data.name] = rng.random(shape).astype(data.dtype)
    x_shape = next(iter(feeds.values())).shape if feeds else ()
    for scale in ports.scale_inputs:
        feeds[scale.name] = scale.feed(2.0, x_shape)
    outputs = make_session(path).run(None, feeds)
    for value in outputs:
        if np.issubdtype(np.asarray(value).dtype, np.floating):
            assert np.isfinite(value).all(), f"{path.name}: non-finite output"
    return f"{path.name}: checker + ORT"


def test_every_example_has_commands_for_cli_and_api() -> None:
    assert [p.name[:2] for p in EXAMPLES] == [f"{n:02d}" for n in range(1, len(EXAMPLES) + 1)]  # numbered, no gaps
    assert len(EXAMPLES) >= 7
    for example in EXAMPLES:
        text = "\n".join(blocks(example / "README.md"))
        assert text.strip(), f"{example.name}: no bash block"
        assert "onnxtool " in text, f"{example.name}: no CLI command"
        scripts = SCRIPT.findall(text)
        assert scripts, f"{example.name}: no Python (API) script"
        for script in scripts:
            assert (example / script).is_file(), f"{example.name}: README runs {script}, which does not exist"


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(example: Path, tmp_path: Path) -> None:
    work = tmp_path / example.name
    shutil.copytree(
        example,
        work,
        ignore=shutil.ignore_patterns("*.onnx", "*.onnx.data", "__pycache__", "*.png", "*.xml", "*.npy", "*.json"),
    )
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("ONNXTOOL_DEBUG", None)
    before = {p.name for p in work.rglob("*.onnx")}
    for index, block in enumerate(blocks(work / "README.md")):
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block], cwd=work, env=env, capture_output=True, text=True, timeout=400
        )
        assert proc.returncode == 0, (
            f"{example.name} block {index} exited {proc.returncode}:\n{block}\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
        )
    produced = sorted(p for p in work.rglob("*.onnx") if p.name not in before)
    assert produced, f"{example.name} made no ONNX model"
    checked = [check_model(path) for path in produced]
    assert checked


# ------------------------------------------------------------------ README and docs/ commands

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ANY_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def shown_commands(page: Path) -> list[str]:
    """Every ``onnxtool ...`` line in the page's fenced blocks (a ``$ `` prompt stripped)."""
    found = []
    for block in ANY_FENCE.findall(page.read_text(encoding="utf-8")):
        block = re.sub(r"\\\n\s*", " ", block)  # a shell line continued with a backslash is one command
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("onnxtool "):
                found.append(line.split("  #")[0].split(" # ")[0].strip())
    return found


def test_readme_is_the_entry_page_and_links_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) < 8 * 1024, "README.md is the entry page: keep the reference in docs/"
    for page in DOCS[1:]:
        assert f"docs/{page.name}" in readme, f"README does not link {page.name}"


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_every_command_the_docs_show_exists_with_those_flags(page: Path) -> None:
    """The README and docs/ pages show commands on models a reader makes first; their runnable
    versions are the examples above. Here: each shown command and flag exists in the CLI."""
    import shlex

    import typer.main

    from graphsurgeon_tools.cli import app

    root = typer.main.get_command(app)
    shown = shown_commands(page)
    if page.name in ("README.md", "commands.md"):
        assert shown, f"{page.name} shows no onnxtool command"
    for line in shown:
        words = shlex.split(line.replace("...", ""))[1:]
        command, path = root, ["onnxtool"]
        while words and hasattr(command, "commands") and words[0] in command.commands:
            command = command.commands[words[0]]
            path.append(words.pop(0))
        if len(path) == 1:
            assert words[:1] in ([], ["--help"], ["-h"]), f"{page.name}: unknown command in {line!r}"
            continue
        known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)} | {"--help", "-h"}
        for word in words:
            if word.startswith("-") and not word.lstrip("-").replace(".", "").isdigit():
                flag = word.split("=", 1)[0]
                assert flag in known, f"{page.name}: {' '.join(path)} has no {flag} (shown in {line!r})"
