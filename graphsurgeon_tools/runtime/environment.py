"""``onnxtool doctor``: what is installed, what would run, where things are built, what is missing.

``doctor() -> DoctorReport`` (``report.to_dict()`` is ``onnxtool doctor --json``)::

    versions       onnxtool, python, onnx, onnxruntime, onnxruntime-extensions, onnxsim, numpy, torch
    torch_op       the kernel behind the PyTorch side's resize op: the compiled C++ op (path, sha256),
                   "built on first use" (where), or unavailable (why, and the command that fixes it)
    plugin_kernel  what runs DynamicTRTResize in ONNX Runtime, in the order make_session tries:
                   onnxtool's compiled library (path, sha256) | the onnxruntime-extensions bridge
                   backed by the C++ op | the onnx.reference fallback (pure Python, slow)
    locations      where each compiled part is built and cached (and the ORT headers)
    missing        one entry per missing piece: what, and the ONE command that provides it

Requires: nothing beyond the base install (torch is never imported: its version is read from
the installed distribution). Ensures: nothing is built, fetched, written or loaded; a part that
is not built yet but can be is reported as "built on first use". Does NOT decide for one model:
a plugin node in another domain than ``trt.plugins`` always takes the bridge.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from graphsurgeon_tools.extensions import status
from graphsurgeon_tools.runtime import ort_library
from graphsurgeon_tools.runtime.build_cache import build_root
from graphsurgeon_tools.runtime.provenance import as_dict, versions

__all__ = ["DoctorReport", "doctor"]

TORCH_FIX = "pip install 'onnxtool[torch]'"
EXTENSIONS_FIX = "pip install onnxruntime-extensions"


@dataclass(frozen=True)
class DoctorReport:
    """What ``onnxtool doctor`` found (see the module docstring for the fields)."""

    versions: dict[str, Optional[str]]
    torch_op: dict[str, Any]
    plugin_kernel: dict[str, Any]
    locations: dict[str, Optional[str]]
    missing: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Everything the README promises runs here, at full speed."""
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "versions": dict(self.versions),
            "torch_op": dict(self.torch_op),
            "plugin_kernel": dict(self.plugin_kernel),
            "locations": dict(self.locations),
            "missing": [dict(item) for item in self.missing],
        }


def _state(data: dict[str, Any]) -> str:
    if data.get("available"):
        return "compiled"
    return "built on first use" if data.get("buildable") else "unavailable"


def _fix_of(reason: str) -> str:
    """The one command a status reason ends with (``...: apt-get install g++``, ``... `CMD` ...``)."""
    if reason.count("`") >= 2:
        return reason.rsplit("`", 2)[-2]
    return reason.rsplit(": ", 1)[-1] if ": " in reason else reason


def _torch_op(missing: list[dict[str, str]]) -> dict[str, Any]:
    if not _installed("torch"):
        missing.append({"what": "torch (PyTorch references, export, demo, the C++ op)", "fix": TORCH_FIX})
        return {
            "state": "unavailable",
            "available": False,
            "reason": f"torch is not installed: {TORCH_FIX}",
            "fix": TORCH_FIX,
        }
    try:
        found = status("torch-op")
    except Exception as exc:  # the doctor reports; it must not fail on what it examines
        found = {"available": False, "reason": f"{type(exc).__name__}: {exc}"}
    if found is None:
        missing.append({"what": "the PyTorch side of onnxtool (exporters)", "fix": TORCH_FIX})
        return {
            "state": "unavailable",
            "available": False,
            "reason": "the PyTorch side is not installed",
            "fix": TORCH_FIX,
        }
    data = as_dict(found)
    data["state"] = _state(data)
    if data["state"] != "compiled":
        data["fix"] = _fix_of(str(data.get("reason") or ""))
    if data["state"] == "unavailable":
        missing.append({"what": "the torch op (the C++ resize op behind PyTorch references)", "fix": data["fix"]})
    return data


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it: as good as not installed
        return False


def _ort_library() -> dict[str, Any]:
    """The compiled ONNX Runtime library's state (``ort_library.status()``), read without building."""
    data = as_dict(ort_library.status())
    data["state"] = _state(data)
    if data["state"] != "compiled":
        data["fix"] = _fix_of(str(data.get("reason") or ""))
    return data


def _plugin_kernel(torch_op: dict[str, Any], missing: list[dict[str, str]]) -> dict[str, Any]:
    library = _ort_library()
    forced = os.environ.get("ONNXTOOL_RUNTIME_FALLBACK", "") not in ("", "0")
    bridge = _installed("onnxruntime_extensions")
    if torch_op.get("state") in ("compiled", "built on first use"):
        backend = {
            "backend": "cpp",
            "path": torch_op.get("path"),
            "sha256": torch_op.get("sha256"),
            "state": torch_op["state"],
        }
    else:
        backend = {"backend": "onnx.reference", "slow": True}
    bridge_entry = {
        "kind": "onnxruntime-extensions",
        "installed": bridge,
        **(backend if not forced else {"backend": "onnx.reference", "slow": True}),
    }
    if forced:
        runs = {**bridge_entry, "reason": "forced by ONNXTOOL_RUNTIME_FALLBACK=1"}
    elif library.get("state") in ("compiled", "built on first use"):
        runs = {"kind": "compiled-library", **library}
    else:
        runs = {**bridge_entry, "reason": f"the compiled ONNX Runtime library is unavailable: {library.get('reason')}"}
        if library.get("fix"):
            missing.append({"what": "onnxtool's compiled ONNX Runtime library", "fix": library["fix"]})
        if not bridge:
            missing.append({"what": "onnxruntime-extensions (the plugin bridge)", "fix": EXTENSIONS_FIX})
    return {"runs": runs, "compiled_library": library, "bridge": bridge_entry}


def doctor() -> DoctorReport:
    """What is here and what would run; builds, fetches and writes nothing (see the module docstring)."""
    missing: list[dict[str, str]] = []
    found = versions()
    if not _installed("torch"):  # installed metadata but not importable: say what an import would find
        found["torch"] = None
    torch_op = _torch_op(missing)
    kernel = _plugin_kernel(torch_op, missing)
    headers = ort_library.header_dir()
    root, origin = build_root()
    locations = {
        "package": str(Path(__file__).resolve().parents[1]),
        "build_root": f"{root} ({origin})",
        "torch_op_build_dir": torch_op.get("build_dir"),
        "ort_library_build_dir": kernel["compiled_library"].get("build_dir"),
        "ort_headers": str(headers) if headers else None,
    }
    return DoctorReport(versions=found, torch_op=torch_op, plugin_kernel=kernel, locations=locations, missing=missing)
