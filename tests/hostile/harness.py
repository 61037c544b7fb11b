"""Run an onnxtool command on a hostile case and check everything the contract promises.

The promises (DESIGN.md, "Contracts"): the documented exit code; exactly one line on
stderr that names the problem and the file; no traceback; the input byte-for-byte
unchanged; a pre-existing output left intact; no stray files (temp files) left behind.
One snapshot of the whole tmp tree, before and after, checks the last three at once.

What every hostile suite shares: :func:`command_pairs` (the parameters: each case x each command
it applies to), :func:`in_process` (a runner through ``graphsurgeon_tools.cli.main``, beside
:func:`run_subprocess`, the installed script) and :func:`run_and_check` (prepare, run, check every
promise). The ``available`` fixture (tests/hostile/conftest.py) is the set of registered commands.
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional

import pytest

from graphsurgeon_tools.cli import main
from hostile import models
from hostile.corpus import Built, Case

_HASH_LIMIT = 64 * 1024**2  # bigger files (the sparse 2 GiB case) are compared by size and mtime
#: What a case may set in the environment; cleared before each in-process run so no case leaks into the next.
ENV_VARS = ("ONNXTOOL_DEBUG", "ONNXTOOL_MAX_OUTPUT_BYTES")


@dataclass(frozen=True)
class Command:
    """One way of invoking a command on a case: which argument the case's model goes to."""

    id: str  # test id; also what corpus.Case.commands lists
    cli: str  # the command name registered on the typer app
    argv: Callable[[Built, Path, Path], list[str]]  # (built, good_model, output) -> arguments

    def args(self, built: Built, good: Path, output: Path) -> list[str]:
        return [self.cli, *self.argv(built, good, output), *built.extra]


def _out(built: Built, output: Path) -> list[str]:
    return ["-o", str(built.output or output)]


COMMANDS = [
    Command("inspect", "inspect", lambda b, good, out: [str(b.model)]),
    # CI parses stdout of --json runs: on failure it must hold no half-written report.
    Command("inspect-json", "inspect", lambda b, good, out: [str(b.model), "--json"]),
    Command("make-dynamic-scale", "make-dynamic-scale", lambda b, good, out: [str(b.model), *_out(b, out)]),
    Command("swap-plugin", "swap-plugin", lambda b, good, out: [str(b.model), *_out(b, out)]),
    Command("validate", "validate", lambda b, good, out: [str(b.model), "--reference", str(b.reference or good)]),
    Command("validate-reference", "validate", lambda b, good, out: [str(good), "--reference", str(b.model)]),
    Command(
        "validate-junit",
        "validate",
        lambda b, good, out: [str(b.model), "--reference", str(good), "--junit", str(b.output or out)],
    ),
    Command("export", "export", lambda b, good, out: ["srcnn", *_out(b, out)]),
]
COMMAND_IDS = [c.id for c in COMMANDS]
BY_ID = {c.id: c for c in COMMANDS}


def registered_commands() -> set[str]:
    """Command names registered on the typer app (run_and_check fails a command missing from them)."""
    import typer.main

    from graphsurgeon_tools.cli import app

    return set(typer.main.get_command(app).commands)


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under root: kind plus content hash (files), link target (symlinks)."""
    state: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            info = path.lstat()
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                state[rel] = ("dir", info.st_mode & 0o7777)
            elif not path.is_file():
                state[rel] = ("special", info.st_mode)
            elif info.st_size > _HASH_LIMIT:
                state[rel] = ("big", info.st_size, info.st_mtime_ns)
            else:
                state[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return state


def describe_changes(before: dict, after: dict) -> str:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    return f"added={added} removed={removed} changed={changed}"


@dataclass
class Setup:
    """A case built in tmp, plus the harness's own valid reference and pre-existing output."""

    built: Built
    good: Path  # a valid model outside the case's folder, for validate's other side
    output: Path  # where a writing command is told to write
    previous_output: Optional[bytes]  # what was at output before (must still be there)


def prepare(case: Case, tmp: Path) -> Setup:
    built = case.build(tmp)
    good = models.write(models.resize_model(), tmp / "ref" / "reference.onnx")
    if built.output is not None:
        return Setup(built, good, built.output, None)
    # A valid previous result sits where the command will write: a failure must not touch it.
    output = tmp / "out" / "previous.onnx"
    previous = models.write(models.resize_model((1.0, 1.0, 3.0, 3.0)), output).read_bytes()
    return Setup(built, good, output, previous)


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


def run_subprocess(argv: list[str], env: dict[str, str], timeout: float = 30) -> Outcome:
    """Run the installed console script, as a user would; cap its memory so a bug cannot take the box."""
    script = Path(sys.executable).with_name("onnxtool")
    command = (
        [str(script)] if script.exists() else [sys.executable, "-c", "from graphsurgeon_tools.cli import main; main()"]
    )

    def limit_memory() -> None:
        cap = 3 * 1024**3  # two workers x this must fit beside everyone else on the box
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    full_env = {**os.environ, **env}
    full_env.pop("ONNXTOOL_DEBUG", None)
    try:
        proc = subprocess.run(
            command + argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
            preexec_fn=limit_memory,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"onnxtool {' '.join(argv)} hung for {timeout} s (killed)") from exc
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def check_failure(
    case: Case, command: Command, setup: Setup, outcome: Outcome, expected: int, before: dict, after: dict
) -> None:
    """Every promise for a refused input, with a message that says which one broke."""
    argv = " ".join(command.args(setup.built, setup.good, setup.output))
    context = f"[{case.name} / {command.id}] onnxtool {argv}\nstderr: {outcome.stderr!r}"
    assert "Traceback" not in outcome.stderr + outcome.stdout, f"traceback reached the user\n{context}"
    if "--json" in argv.split():
        assert not outcome.stdout.strip(), f"--json printed a report although the command failed\n{context}"
    assert outcome.code == expected, f"exit code {outcome.code}, expected {expected}\n{context}"
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected exactly one line on stderr, got {len(lines)}\n{context}"
    line = lines[0]
    assert any(name in line for name in setup.built.names), f"the message names none of {setup.built.names}\n{context}"
    assert re.search(case.problem, line, re.IGNORECASE), (
        f"the message does not state the problem (/{case.problem}/)\n{context}"
    )
    assert before == after, f"files changed on failure: {describe_changes(before, after)}\n{context}"
    if setup.previous_output is not None:
        assert setup.output.read_bytes() == setup.previous_output, f"previous output modified\n{context}"


def command_pairs(cases: Iterable[Case]) -> list:
    """``pytest.param(case, command)`` for every command each case applies to (its expected code is
    known), leaving out the cases that are only safe in a subprocess."""
    return [
        pytest.param(case, command, id=f"{case.name}-{command.id}")
        for case in cases
        for command in COMMANDS
        if case.expected_code(command.id) is not None and not case.subprocess_only
    ]


def in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """A runner ``(argv, env) -> Outcome`` through ``graphsurgeon_tools.cli.main`` in this process, with
    only the case's own environment set (fast; :func:`run_subprocess` is what proves no traceback leaks)."""

    def run(argv: list[str], env: dict[str, str]) -> Outcome:
        for name in ENV_VARS:
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        code = main(argv)
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


def run_and_check(case: Case, command: Command, tmp: Path, available: set[str], runner: Callable[..., Outcome]) -> None:
    """Prepare ``case`` under ``tmp``, run ``command`` on it with ``runner`` and check every promise
    (:func:`check_failure`). A command that is not registered, or that is a ``raise NotImplementedError``
    stub (exit 4), fails: neither is a reason to skip."""
    assert command.cli in available, f"`onnxtool {command.cli}` is not a registered command"
    setup = prepare(case, tmp)
    argv = command.args(setup.built, setup.good, setup.output)
    before = snapshot(tmp)
    outcome = runner(argv, dict(setup.built.env))
    assert not (outcome.code == 4 and "NotImplementedError" in outcome.stderr), (
        f"`onnxtool {command.cli}` is a placeholder (NotImplementedError): {outcome.stderr[-500:]}"
    )
    check_failure(case, command, setup, outcome, case.expected_code(command.id), before, snapshot(tmp))
