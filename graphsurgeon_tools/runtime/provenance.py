"""The evidence record: what actually ran when a report compared models.

::

    with recording() as ran:          # validate, a pass's built-in check, the demo
        ... sessions are made and run ...
    evidence_record(ran, models=[("candidate", path_or_bytes), ("reference", ...)],
                    torch_reference=True)
      -> {"versions": {onnxtool, python, onnx, onnxruntime, numpy, torch},
          "plugin_kernels": [{"kind": "compiled-library", "path", "sha256"}
                             | {"kind": "onnxruntime-extensions", "backend": "cpp", "path", "sha256"}
                             | {"kind": "onnxruntime-extensions", "backend": "onnx.reference", "slow": true}],
          "torch_op": {"path", "sha256", "source"} | None,   # when a PyTorch reference ran
          "models": [{"role", "path", "sha256", "bytes"}]}
    evidence_lines(record) -> ["evidence: ...", "warning: slow fallback ..."]   # the text form

Sessions report what they use as it happens (:func:`note_kernel`, called by
:mod:`.session` when it registers the compiled library and by :mod:`.kernels` when the
bridge's kernel runs), into every recording open at that moment. This is the ONE evidence
builder: validate's report (text, JSON, JUnit properties), the passes' built-in check and the
demo all call :func:`evidence_record`.

Requires: nothing at import. Ensures: a record that is JSON-ready (strings, numbers, lists,
dicts); a model's sha256 is of the file's bytes when it came from a path, of the serialized
bytes that ran otherwise (``path`` None). Does NOT build anything (the torch op's status is
the PyTorch side's ``status("torch-op")``, which only reads) and does not import torch.
Recordings are process-wide: two threads recording at once both see each other's kernels.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import platform
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from graphsurgeon_tools import __version__
from graphsurgeon_tools.extensions import status

__all__ = [
    "Ran",
    "evidence_lines",
    "evidence_record",
    "file_sha256",
    "kernel_text",
    "note_kernel",
    "recording",
    "recording_open",
    "torch_op",
    "versions",
]

#: The packages whose versions every record (and ``onnxtool doctor``) names, by distribution name.
PACKAGES = (
    "onnxtool",
    "onnx",
    "onnxruntime",
    "onnxruntime-extensions",
    "onnxsim",
    "onnx-graphsurgeon",
    "numpy",
    "torch",
)

SLOW_FALLBACK = "DynamicTRTResize ran on the onnx.reference fallback (pure Python, slow; `onnxtool doctor` says why)"


@dataclass(eq=False)  # each recording is its own: closing one must never close an equal-looking other
class Ran:
    """What one recording saw: the plugin kernels, each once, in the order they were first used."""

    kernels: list[dict[str, Any]] = field(default_factory=list)

    def add(self, facts: dict[str, Any]) -> None:
        if facts not in self.kernels:
            self.kernels.append(facts)


_lock = threading.Lock()
_open: list[Ran] = []


@contextlib.contextmanager
def recording() -> Iterator[Ran]:
    """Collect every plugin kernel used while the block runs (nested recordings all collect)."""
    ran = Ran()
    with _lock:
        _open.append(ran)
    try:
        yield ran
    finally:
        with _lock:
            _open.remove(ran)


def recording_open() -> bool:
    """Whether any recording is open (callers skip gathering facts nobody will read)."""
    return bool(_open)


def note_kernel(kind: str, **facts: Any) -> None:
    """Tell the open recordings that a plugin kernel ran (``kind``: compiled-library, onnxruntime-extensions)."""
    with _lock:
        if not _open:
            return
        targets = list(_open)
    entry = {"kind": kind, **facts}
    for ran in targets:
        ran.add(entry)


_hashes: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Union[str, os.PathLike]) -> Optional[str]:
    """sha256 of a file's bytes (cached per path, size and mtime); None when it cannot be read."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = (os.fspath(path), stat.st_size, stat.st_mtime_ns)
    if key not in _hashes:
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError:
            return None
        _hashes[key] = digest.hexdigest()
    return _hashes[key]


def versions() -> dict[str, Optional[str]]:
    """Installed versions of python and :data:`PACKAGES` (None: not installed). Imports nothing."""
    found: dict[str, Optional[str]] = {"python": platform.python_version(), "onnxtool": __version__}
    for name in PACKAGES[1:]:  # onnxtool: the code running, which an editable install may not have re-registered
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _model_entry(role: str, model: Any) -> dict[str, Any]:
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.is_file():  # a named reference (torch:srcnn, a module): no file to hash
            return {"role": role, "path": None, "sha256": None, "bytes": None, "source": str(model)}
        return {"role": role, "path": str(path), "sha256": file_sha256(path), "bytes": _size(path)}
    if isinstance(model, (bytes, bytearray)):
        blob = bytes(model)
    elif hasattr(model, "SerializeToString"):
        blob = model.SerializeToString()
    else:
        return {"role": role, "path": None, "sha256": None, "bytes": None, "source": str(model)}
    return {"role": role, "path": None, "sha256": hashlib.sha256(blob).hexdigest(), "bytes": len(blob)}


def _size(path: Path) -> Optional[int]:
    try:
        return path.stat().st_size
    except OSError:
        return None


def torch_op() -> Optional[dict[str, Any]]:
    """The torch op's library as the PyTorch side reports it (path, sha256, source); None without it."""
    try:
        found = status("torch-op")
    except Exception:  # a status reporter must never end a report; the record says it could not tell
        return {"available": False, "reason": "the PyTorch side could not report its op"}
    if found is None:
        return None
    data = as_dict(found)
    return {key: data.get(key) for key in ("available", "path", "sha256", "source", "reason") if key in data}


def as_dict(value: Any) -> dict[str, Any]:
    """A status object (a dataclass, or a dict) as a plain dict with string paths."""
    data = dataclasses.asdict(value) if dataclasses.is_dataclass(value) else dict(value)
    return {key: (str(item) if isinstance(item, Path) else item) for key, item in data.items()}


def evidence_record(
    ran: Ran, *, models: Sequence[tuple[str, Any]] = (), torch_reference: bool = False
) -> dict[str, Any]:
    """The evidence of one report: versions, the plugin kernels ``ran`` saw, the torch op, the models' hashes.

    ``models``: (role, path | bytes | ModelProto) per model compared (roles: candidate, reference).
    ``torch_reference``: a PyTorch reference ran, so the torch op behind it is named."""
    kernels = [dict(entry) for entry in ran.kernels]
    return {
        "versions": versions(),
        "plugin_kernels": kernels,
        "slow_fallback": any(entry.get("backend") == "onnx.reference" for entry in kernels),
        "torch_op": torch_op() if torch_reference else None,
        "models": [_model_entry(role, model) for role, model in models],
    }


def _short(sha: Optional[str]) -> str:
    return "sha256 ?" if not sha else f"sha256 {sha[:16]}"


def kernel_text(entry: dict[str, Any]) -> str:
    """One plugin kernel in words: which implementation, where, and its hash."""
    if entry.get("kind") == "compiled-library":
        return f"compiled ONNX Runtime library {entry.get('path')} ({_short(entry.get('sha256'))})"
    backend = entry.get("backend")
    if backend == "onnx.reference":
        return "onnxruntime-extensions bridge -> onnx.reference fallback (slow)"
    if entry.get("path"):
        return f"onnxruntime-extensions bridge -> C++ op {entry.get('path')} ({_short(entry.get('sha256'))})"
    return f"onnxruntime-extensions bridge -> {backend}"


def _model_text(entry: dict[str, Any]) -> str:
    if entry.get("source") and not entry.get("sha256"):
        return f"{entry['role']} {entry['source']}"
    return f"{entry['role']} {entry.get('path') or '(in memory)'} {_short(entry.get('sha256'))}"


def evidence_lines(record: Optional[dict[str, Any]]) -> list[str]:
    """The record in words, for text reports: versions and kernels on one line, the models' hashes, and a
    warning line when the slow fallback ran."""
    if not record:
        return []
    found = record.get("versions", {})
    names = ("onnxtool", "onnx", "onnxruntime", "numpy", "torch")
    parts = [f"{name} {found.get(name) or 'not installed'}" for name in names]
    kernels = record.get("plugin_kernels") or []
    lines = [f"evidence: {', '.join(parts)}"]
    if kernels:
        lines.append("  plugin kernel: " + "; ".join(kernel_text(entry) for entry in kernels))
    op = record.get("torch_op")
    if op:
        if op.get("path"):
            lines.append(f"  torch op: {op['path']} ({_short(op.get('sha256'))})")
        else:
            lines.append(f"  torch op: unavailable ({op.get('reason') or 'unknown'})")
    models = record.get("models") or []
    if models:
        lines.append("  models: " + ", ".join(_model_text(entry) for entry in models))
    if record.get("slow_fallback"):
        why = next((entry.get("reason") for entry in kernels if entry.get("backend") == "onnx.reference"), "")
        lines.append(f"warning: {SLOW_FALLBACK}" + (f": {why}" if why else ""))
    return lines
