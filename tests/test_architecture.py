"""The shape of graphsurgeon_tools, as tests: dependency direction, no circles, no torch, small
modules, ruff-clean code, imports deferred only for a reason, and a test tree that mirrors the
packages.

* The import-linter contracts in pyproject.toml ([tool.importlinter]): layers
  cli -> validation -> check/passes -> resize -> core -> io -> errors; no import of
  ``exporters`` or ``torch`` from graphsurgeon_tools (grimp reads function-level imports too);
  no import circle between sibling modules at any depth. One test per contract, so a failure
  names the rule and lint-imports' report names the import.
* A static AST scan that finds every ``import``/``from ... import`` and every
  ``importlib.import_module("...")``/``__import__("...")`` of exporters or torch anywhere in a
  module (module level, inside functions, under ``if``), without importing anything: the
  PyTorch side plugs in through graphsurgeon_tools.extensions, so no lazy import is needed.
* No module outside a pass imports that pass's internal modules (every package under passes/,
  a new one too: no contract to add), but the ones named in SHARED_PASS_MODULES.
* No module over 500 lines.
* Every test module sits in a folder that mirrors a package (tests/passes/swap_plugin/ ->
  graphsurgeon_tools/passes/swap_plugin/, tests/exporters/ -> exporters/, tests/ -> the top-level
  modules), or in one of the few cross-cutting suites named, with the reason, in CROSS_CUTTING.
* Tests that run the onnxtool command (the run_cli fixture, cli.main/app, typer's CliRunner) live
  under tests/cli/ (or in a cross-cutting suite).
* Function-level imports (outside cli/): of our own modules, and of onnxruntime, onnx_graphsurgeon,
  onnxsim, onnx.reference or torch, only with ``# deferred: <reason>`` naming that dependency or
  an import cycle; and in fresh processes, ``import graphsurgeon_tools``, the CLI and ``--help``
  load none of those (nor onnx or numpy), a pass run without its check none of those, nor (API or
  command) any module of the built-in check's packages (graphsurgeon_tools.check, .runtime).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "graphsurgeon_tools"
FORBIDDEN = ("exporters", "torch")
MAX_LINES = 500


def _lint_imports(contract: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("lint-imports")
    if not script.exists():
        pytest.fail("lint-imports is missing: install the [dev] extra (import-linter)")
    return subprocess.run(
        [str(script), "--config", str(ROOT / "pyproject.toml"), "--contract", contract, "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("contract", ["layers", "no-torch", "acyclic"])
def test_import_contract_holds(contract: str) -> None:
    done = _lint_imports(contract)
    assert done.returncode == 0, (
        f"import-linter contract {contract!r} broken:\n{done.stdout[-6000:]}{done.stderr[-2000:]}"
    )


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _forbidden_imports(source: str, label: str) -> list[str]:
    """``label:line imports what`` for every import of exporters/torch in ``source``, at any depth."""
    found = []
    for node in ast.walk(ast.parse(source, filename=label)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__", "find_spec"):
                names = [node.args[0].value]
        for name in names:
            if name.split(".")[0] in FORBIDDEN:
                found.append(f"{label}:{node.lineno} imports {name}")
    return found


def test_no_module_imports_exporters_or_torch_even_lazily() -> None:
    found = [
        line
        for path in _modules()
        for line in _forbidden_imports(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, (
        "graphsurgeon_tools must reach the PyTorch side through graphsurgeon_tools.extensions:\n" + "\n".join(found)
    )


def test_the_scan_sees_function_level_and_dynamic_imports() -> None:
    source = (
        "import os\n"
        "def f():\n"
        "    import torch.nn\n"
        "    if True:\n"
        "        from exporters.demo import run_demo\n"
        "    importlib.import_module('torch')\n"
        "    from torchvision import ops\n"  # another package that merely starts with 'torch'
    )
    assert _forbidden_imports(source, "probe.py") == [
        "probe.py:3 imports torch.nn",
        "probe.py:5 imports exporters.demo",
        "probe.py:6 imports torch",
    ]


#: The modules of a pass that code outside it may import besides its package (the public face):
#: make-dynamic-scale's layouts, which swap-plugin's "sizes" form reuses.
SHARED_PASS_MODULES = {"graphsurgeon_tools.passes.make_dynamic_scale.layouts"}


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _pass_internal_imports(source: str, module: str, is_package: bool, passes: list[str]) -> list[str]:
    """``module:line imports what`` for every import (at any depth, relative ones resolved) of a
    module inside ``graphsurgeon_tools.passes.<p>`` from outside that pass, but the shared ones."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]  # a name may be a submodule
        for target in targets:
            parts = target.split(".")
            if len(parts) < 4 or parts[:2] != ["graphsurgeon_tools", "passes"] or parts[2] not in passes:
                continue
            owner, internal = ".".join(parts[:3]), ".".join(parts[:4])
            folder = PACKAGE / "passes" / parts[2]
            is_module = (folder / f"{parts[3]}.py").is_file() or (folder / parts[3] / "__init__.py").is_file()
            inside = module == owner or module.startswith(owner + ".")
            if is_module and not inside and internal not in SHARED_PASS_MODULES:
                found.append(f"{module}:{node.lineno} imports {internal}")
    return sorted(set(found))


def _passes() -> list[str]:
    return sorted(p.name for p in (PACKAGE / "passes").iterdir() if (p / "__init__.py").is_file())


def test_no_module_imports_a_pass_internals() -> None:
    """Every package under passes/ - a new one too, with no contract to add - is reached from outside
    only through the package itself (``from graphsurgeon_tools.passes.set_factor import set_factor``),
    never ``passes.set_factor.rule``: shared pieces belong in resize/, core/ or check/."""
    passes = _passes()
    assert {"make_dynamic_scale", "set_factor", "swap_plugin"} <= set(passes)
    found = [
        line
        for path in _modules()
        for line in _pass_internal_imports(
            path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py", passes
        )
    ]
    assert not found, "a pass's internals imported from outside it:\n" + "\n".join(found)


def test_the_pass_internals_scan_sees_every_spelling() -> None:
    source = (
        "from graphsurgeon_tools.passes.set_factor import set_factor\n"  # the public face: fine
        "from graphsurgeon_tools.passes.make_dynamic_scale.layouts import gate\n"  # declared shared: fine
        "def f():\n"
        "    from graphsurgeon_tools.passes.set_factor import rule\n"
        "    import graphsurgeon_tools.passes.swap_plugin.check\n"
        "    from ..set_factor.rule import bake\n"
    )
    found = _pass_internal_imports(source, "graphsurgeon_tools.passes.zoom.plan", False, _passes())
    assert found == [
        "graphsurgeon_tools.passes.zoom.plan:4 imports graphsurgeon_tools.passes.set_factor.rule",
        "graphsurgeon_tools.passes.zoom.plan:5 imports graphsurgeon_tools.passes.swap_plugin.check",
        "graphsurgeon_tools.passes.zoom.plan:6 imports graphsurgeon_tools.passes.set_factor.rule",
    ]
    inside = "from graphsurgeon_tools.passes.set_factor.rule import bake\nfrom .rule import Plan\n"
    assert _pass_internal_imports(inside, "graphsurgeon_tools.passes.set_factor", True, _passes()) == []


def test_no_module_is_over_500_lines() -> None:
    sizes = {str(p.relative_to(ROOT)): sum(1 for _ in p.open(encoding="utf-8")) for p in _modules()}
    big = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: " + ", ".join(
        f"{name} ({lines})" for name, lines in sorted(big.items(), key=lambda item: -item[1])
    )


def test_every_user_error_class_is_importable_from_the_package_top() -> None:
    import importlib
    import inspect
    import pkgutil

    import graphsurgeon_tools
    from graphsurgeon_tools.errors import OnnxToolError

    found = set()
    for info in pkgutil.walk_packages(graphsurgeon_tools.__path__, "graphsurgeon_tools."):
        if ".cli" in info.name:
            continue
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, OnnxToolError) and value.__module__.startswith("graphsurgeon_tools"):
                found.add(value)
    assert len(found) >= 10, sorted(cls.__name__ for cls in found)  # the walk really saw the error tree
    missing = sorted(cls.__name__ for cls in found if getattr(graphsurgeon_tools, cls.__name__, None) is not cls)
    assert not missing, f"user error classes not exported from graphsurgeon_tools: {missing}"


# ------------------------------------------------------------------ style: ruff

STYLED = ["graphsurgeon_tools", "exporters", "tests", "benchmarks", "examples", "setup.py"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("ruff")
    if not script.exists():
        pytest.fail("ruff is missing: install the [dev] extra")
    return subprocess.run([str(script), *args, *STYLED], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_code_is_ruff_clean() -> None:
    done = _ruff("check", "--output-format", "concise")
    assert done.returncode == 0, f"ruff check finds:\n{done.stdout[-6000:]}{done.stderr[-2000:]}"


def test_the_code_is_ruff_formatted() -> None:
    done = _ruff("format", "--check")
    assert done.returncode == 0, (
        f"ruff format would change these files (run `ruff format .`):\n{done.stdout[-6000:]}{done.stderr[-2000:]}"
    )


# ------------------------------------------------------------------ the test tree mirrors the packages

TESTS = ROOT / "tests"
#: Test folders that mirror no package, and why each cuts across the packages.
CROSS_CUTTING = {
    "hostile": "hostile inputs run through every command and the API at once (one corpus, every face)",
    "fuzz": "generated models and arguments thrown at the passes, the checks and the CLI together",
    "realmodels": "real projects' models (transformers, diffusers, PaddleOCR) through whole flows: "
    "rewrite, swap, validate, lint",
    "packaging": "the built wheel and sdist installed and run as a user runs them, not a module of the source",
}


def _mirrored_package(folder: Path) -> Path | None:
    """The package a test folder mirrors (tests/X/Y -> graphsurgeon_tools/X/Y, tests/exporters/Y ->
    exporters/Y), or None when it mirrors none. tests/ itself mirrors graphsurgeon_tools' top-level modules
    (errors, extensions, inspection, profiles ...) and holds the whole-repository checks (this file, examples/)."""
    parts = folder.relative_to(TESTS).parts
    if not parts:
        return PACKAGE
    base = ROOT / "exporters" if parts[0] == "exporters" else PACKAGE / parts[0]
    package = base.joinpath(*parts[1:])
    return package if (package / "__init__.py").is_file() else None


def test_every_test_module_sits_in_a_folder_that_mirrors_a_package() -> None:
    misplaced = sorted(
        str(path.relative_to(ROOT))
        for path in TESTS.rglob("test_*.py")
        if path.parent.relative_to(TESTS).parts[:1] not in [(name,) for name in CROSS_CUTTING]
        and _mirrored_package(path.parent) is None
    )
    assert not misplaced, (
        "test modules in folders that mirror no package (tests/<subpackage>/... mirrors "
        "graphsurgeon_tools/<subpackage>/..., tests/exporters/... mirrors exporters/...; "
        f"cross-cutting suites: {sorted(CROSS_CUTTING)}):\n" + "\n".join(misplaced)
    )


def test_the_cross_cutting_suites_exist_and_mirror_no_package() -> None:
    for name in CROSS_CUTTING:
        assert list((TESTS / name).glob("test_*.py")), f"tests/{name} holds no tests: drop it from CROSS_CUTTING"
        assert _mirrored_package(TESTS / name) is None, f"tests/{name} mirrors a package: drop it from CROSS_CUTTING"


def test_the_mirror_rule_sees_a_misplaced_folder() -> None:
    assert _mirrored_package(TESTS / "passes" / "swap_plugin") == PACKAGE / "passes" / "swap_plugin"
    assert _mirrored_package(TESTS / "exporters") == ROOT / "exporters"
    assert _mirrored_package(TESTS / "passes" / "no_such_pass") is None
    assert _mirrored_package(TESTS / "helpers") is None


def _runs_the_command(path: Path) -> list[str]:
    """The test functions in ``path`` that run the ``onnxtool`` command in process: they take the ``run_cli``
    fixture, or call graphsurgeon_tools.cli's ``main``/``app`` or typer's CliRunner."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    entries = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in ("graphsurgeon_tools.cli", "typer.testing")
        for alias in node.names
        if alias.name in ("main", "app", "CliRunner")
    }
    return [
        fn.name
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef)
        and fn.name.startswith("test")
        and (
            "run_cli" in {a.arg for a in fn.args.args}
            or any(
                isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in entries for c in ast.walk(fn)
            )
        )
    ]


def test_command_line_tests_live_under_tests_cli() -> None:
    elsewhere = {
        str(path.relative_to(ROOT)): names
        for path in sorted(TESTS.rglob("test_*.py"))
        if path.parent.relative_to(TESTS).parts[:1] not in [("cli",), *[(name,) for name in CROSS_CUTTING]]
        and (names := _runs_the_command(path))
    }
    assert not elsewhere, f"tests that run the onnxtool command belong under tests/cli/: {elsewhere}"


def test_the_command_scan_sees_each_way_of_running_the_command(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "from typer.testing import CliRunner\n"
        "from graphsurgeon_tools.cli import app, main as run\n"
        "def test_fixture(run_cli):\n    run_cli('inspect')\n"
        "def test_main():\n    assert run(['inspect']) == 2\n"
        "def test_runner():\n    CliRunner().invoke(app, ['inspect'])\n"
        "def test_api(save_model_file):\n    assert app is not None\n"
    )
    assert _runs_the_command(probe) == ["test_fixture", "test_main", "test_runner"]


# --- Function-level imports: only where a heavy or optional dependency (or a cycle) needs them ---------

SCANNED = [PACKAGE, ROOT / "exporters"]
OWN = ("graphsurgeon_tools", "exporters")
#: What a fast path must not load: `import graphsurgeon_tools`, `onnxtool --help`, a pass's no-check run.
HEAVY = ("onnxruntime", "onnx_graphsurgeon", "onnxsim", "onnx.reference", "torch")
#: A `# deferred:` reason names one of these (or an import cycle, with its modules).
REASONS = (*HEAVY, "onnx-graphsurgeon", "cycle")


def _deferred_reason(line: str) -> str:
    return line.partition("# deferred:")[2].strip() if "# deferred:" in line else ""


def _undeferred_imports(source: str, label: str) -> list[str]:
    """``label:line`` for every import of our own modules (or of a HEAVY one) inside a function or
    method whose last line lacks ``# deferred: <reason>`` naming a heavy dependency or a cycle."""
    lines = source.splitlines()
    found: list[str] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, True)
                continue
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                if isinstance(child, ast.Import):
                    names = [alias.name for alias in child.names]
                else:
                    names = ["." if child.level else (child.module or "")]
                own = any(n == "." or n.split(".")[0] in OWN for n in names)
                heavy = any(n == h or n.startswith(h + ".") for n in names for h in HEAVY)
                reason = _deferred_reason(lines[child.end_lineno - 1])
                if (own or heavy) and not any(word in reason for word in REASONS):
                    found.append(f"{label}:{child.lineno} {ast.get_source_segment(source, child)}")
            visit(child, in_function)

    visit(ast.parse(source, filename=label), False)
    return found


def test_function_level_imports_are_deferred_with_a_reason() -> None:
    # Our own modules import each other at the top; only a heavy third-party import (at its one point
    # of use) or a genuine cycle keeps an import inside a function, and says which. The CLI is exempt:
    # its command modules import the library inside the command so that `--help` stays fast.
    found = [
        line
        for folder in SCANNED
        for path in sorted(folder.rglob("*.py"))
        if "__pycache__" not in path.parts and "cli" not in path.relative_to(ROOT).parts
        for line in _undeferred_imports(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, (
        "function-level imports without '# deferred: <heavy dependency or cycle>' (move them to "
        "the top of the module, or say why they must wait):\n" + "\n".join(found)
    )


def test_the_deferred_scan_sees_methods_nesting_and_multi_line_imports() -> None:
    source = (
        "import onnx\nfrom graphsurgeon_tools.errors import UsageError\n"
        "def f():\n    from graphsurgeon_tools.io import load_model\n"
        "class C:\n    def m(self):\n        if True:\n            import exporters.ops\n"
        "def g():\n    from graphsurgeon_tools.core import (\n        graph,\n    )\n"
        "def h():\n    import onnxruntime\n    from onnx.reference import ReferenceEvaluator  # deferred: onnx.reference\n"
        "def k():\n    from graphsurgeon_tools.runtime import session  # deferred: onnxruntime\n"
        "def n():\n    from graphsurgeon_tools.io import save_model  # deferred: it is faster\n"
        "def r():\n    from . import sibling\n"
    )
    found = [line.split(" ", 1)[0] for line in _undeferred_imports(source, "m.py")]
    assert found == ["m.py:4", "m.py:8", "m.py:10", "m.py:14", "m.py:19", "m.py:21"]


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(sorted(m for m in {HEAVY + ('numpy', 'onnx')!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def test_the_package_and_the_cli_help_load_nothing_heavy() -> None:
    # Not even onnx or numpy: `import graphsurgeon_tools` resolves its names lazily, and `--help`
    # imports each command's library code only when the command runs.
    assert _loaded_after("import graphsurgeon_tools") == []
    assert _loaded_after("import graphsurgeon_tools.cli") == []
    help_run = "from graphsurgeon_tools.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    assert _loaded_after(help_run) == []


#: Every pass package imported, then each pass run with check=False on a small model: make-dynamic-scale,
#: swap-plugin forward (both signatures) and reverse, set-factor on the dynamic result.
PASSES_WITHOUT_CHECK = "\n".join(
    [
        "import importlib, pkgutil",
        "import graphsurgeon_tools.passes as passes",
        "for info in pkgutil.iter_modules(passes.__path__):",
        "    if info.ispkg:",
        "        importlib.import_module(f'graphsurgeon_tools.passes.{info.name}')",
        "from onnx import TensorProto, helper",
        "from graphsurgeon_tools import make_dynamic_scale, set_factor, swap_plugin",
        "x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 8, 8])",
        "y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 3, 16, 16])",
        "inits = [helper.make_tensor('roi', TensorProto.FLOAT, [0], []),",
        "         helper.make_tensor('s', TensorProto.FLOAT, [4], [1, 1, 2, 2])]",
        "node = helper.make_node('Resize', ['x', 'roi', 's'], ['y'], name='up', mode='nearest')",
        "model = helper.make_model(helper.make_graph([node], 'g', [x], [y], inits),",
        "                          opset_imports=[helper.make_opsetid('', 13)])",
        "dynamic = make_dynamic_scale(model, layout='factor', check=False).model",
        "plugin = swap_plugin(model, check=False)",
        "assert plugin.rewritten",
        "assert swap_plugin(model, signature='sizes', check=False).rewritten",
        "assert swap_plugin(plugin.model, reverse=True, check=False).rewritten",
        "assert set_factor(dynamic, sites={'up': 3}, check=False).model is not None",
    ]
)


def test_a_pass_without_its_check_loads_nothing_heavy() -> None:
    # None of the passes may pay for onnxruntime, onnx_graphsurgeon, onnxsim, onnx.reference or torch.
    loaded = _loaded_after(PASSES_WITHOUT_CHECK)
    assert not [m for m in loaded if m in HEAVY], loaded


def test_a_pass_without_its_check_loads_none_of_the_check_machinery(tmp_path: Path) -> None:
    # The built-in check's modules (graphsurgeon_tools.check.*: equivalence, feeds, sessions, steps, ...) and
    # the runtime's (sessions, the ORT library, kernels, provenance) were ~9 ms of imports on every --no-check
    # command. The passes reach them through the two packages' lazy faces, when a check runs: the API with
    # check=False and each rewrite command with --no-check import the packages and none of their modules.
    model, dynamic, plugin = (tmp_path / name for name in ("m.onnx", "dynamic.onnx", "plugin.onnx"))
    commands = [
        ["make-dynamic-scale", model, "-o", dynamic],
        ["swap-plugin", model, "-o", plugin],
        ["swap-plugin", plugin, "--reverse", "-o", tmp_path / "resize.onnx"],
        ["set-factor", dynamic, "--all", "3", "-o", tmp_path / "baked.onnx"],
    ]
    probe = "\n".join(
        [
            "import sys",
            PASSES_WITHOUT_CHECK,
            "from onnx import save",
            f"save(model, {str(model)!r})",
            "from graphsurgeon_tools.cli import main",
            *(f"assert main({[*map(str, args), '--no-check']!r}) == 0, {args[0]!r}" for args in commands),
            "print(sorted(m for m in sys.modules if m.startswith(('graphsurgeon_tools.check', "
            "'graphsurgeon_tools.runtime'))))",
        ]
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "baked.onnx").is_file() and (tmp_path / "resize.onnx").is_file()
    loaded = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert loaded == ["graphsurgeon_tools.check", "graphsurgeon_tools.runtime"], loaded


def test_a_rewrite_command_loads_no_pydantic(tmp_path: Path) -> None:
    # typer 0.29 imports pydantic and builds a TypeAdapter per option of the command it runs (+55 ms
    # on every command, a sixth of a 2,000-site make-dynamic-scale); pyproject.toml caps typer below
    # it. A typer that brings pydantic back onto the command path fails here, not in a benchmark.
    model = tmp_path / "m.onnx"
    probe = "\n".join(
        [
            "import sys",
            "from onnx import TensorProto, helper, save",
            "x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 8, 8])",
            "y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 3, 16, 16])",
            "s = helper.make_tensor('s', TensorProto.FLOAT, [4], [1, 1, 2, 2])",
            "node = helper.make_node('Resize', ['x', '', 's'], ['y'], name='up', mode='nearest')",
            "graph = helper.make_graph([node], 'g', [x], [y], [s])",
            f"save(helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)]), {str(model)!r})",
            "from graphsurgeon_tools.cli import main",
            f"code = main(['make-dynamic-scale', {str(model)!r}, '-o', {str(tmp_path / 'out.onnx')!r}, '--no-check'])",
            "assert code == 0, code",
            "print(sorted(m for m in sys.modules if m == 'pydantic' or m.startswith('pydantic')))",
        ]
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out.onnx").is_file()
    assert ast.literal_eval(done.stdout.strip().splitlines()[-1]) == []
