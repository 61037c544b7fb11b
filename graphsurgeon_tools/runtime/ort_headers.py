"""Where the ONNX Runtime C API headers that build the compiled op library come from.

``find_headers(fetch) -> (folder | None, why)`` and ``header_dir()`` (never fetches). In order:

1. ``$ONNXRUNTIME_INCLUDE_DIR`` (a folder holding ``onnxruntime_c_api.h``, or its
   ``onnxruntime/`` subfolder);
2. ``<build_root>/ort_headers/include`` (an earlier fetch);
3. with ``fetch=True`` only: a fetch of Debian's ``libonnxruntime-dev`` from the suite after
   bookworm (``trixie``: ORT_API_VERSION 21), with apt run on a PRIVATE state, cache and source
   list under ``ort_headers/apt`` naming the Debian mirror the machine already uses.

Requires: nothing beyond the standard library (the wheel build hook imports it bare); apt-get
and dpkg-deb for a fetch. Ensures: a returned folder holds ``onnxruntime_c_api.h``; a failure
comes back as one line saying why, never as an exception. Does NOT touch the system's apt
configuration or package database, copy headers into the repository, or build anything
(:mod:`graphsurgeon_tools.runtime.ort_library` does).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

from graphsurgeon_tools.runtime.build_cache import build_root

__all__ = ["BUILD_COMMAND", "api_version", "find_headers", "header_dir", "header_dir_in", "headers_dir"]

#: The command that fetches the headers and builds the library (``make setup`` runs it).
BUILD_COMMAND = "python -m graphsurgeon_tools.runtime.ort_library build"
# The suite after bookworm: its libonnxruntime-dev (1.21) carries the C API header
# and the C++ wrappers at ORT_API_VERSION 21; the installed onnxruntime (>= 1.21)
# still serves that API version.
DEBIAN_SUITE = "trixie"
DEBIAN_PACKAGE = "libonnxruntime-dev"
DEFAULT_MIRROR = "http://deb.debian.org/debian"


def headers_dir() -> Path:
    """Where fetched headers live: ``<build_root>/ort_headers``."""
    return build_root()[0] / "ort_headers"


def header_dir_in(root: Path) -> Optional[Path]:
    """``root`` or the subfolder of it that holds ``onnxruntime_c_api.h``; None when none does."""
    for candidate in (root, root / "onnxruntime", root / "usr" / "include" / "onnxruntime"):
        if (candidate / "onnxruntime_c_api.h").is_file():
            return candidate
    return None


def api_version(include: Path) -> str:
    """ORT_API_VERSION of the headers in ``include`` ("?" when the header does not say)."""
    text = (include / "onnxruntime_c_api.h").read_text(errors="replace")
    found = re.search(r"#define\s+ORT_API_VERSION\s+(\d+)", text)
    return found.group(1) if found else "?"


def debian_mirror() -> str:
    """The Debian archive URI the machine's own apt sources name (deb822 or one-line form)."""
    files = [
        Path("/etc/apt/sources.list"),
        *sorted(Path("/etc/apt/sources.list.d").glob("*.sources")),
        *sorted(Path("/etc/apt/sources.list.d").glob("*.list")),
    ]
    for path in files:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        uris = re.findall(r"^\s*URIs:\s*(\S+)", text, re.MULTILINE)
        uris += re.findall(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)", text, re.MULTILINE)
        for uri in uris:
            if re.search(r"/debian/?$", uri):
                return uri.rstrip("/")
    return DEFAULT_MIRROR


def _fetch_headers() -> tuple[Optional[Path], str]:
    """Download and unpack libonnxruntime-dev into ``<build_root>/ort_headers`` with apt on a private state."""
    apt_get, dpkg_deb = shutil.which("apt-get"), shutil.which("dpkg-deb")
    if apt_get is None or dpkg_deb is None:
        return (
            None,
            "no ONNX Runtime headers: set ONNXRUNTIME_INCLUDE_DIR (apt-get/dpkg-deb are not here to fetch libonnxruntime-dev)",
        )
    state = headers_dir() / "apt"
    for sub in ("state/lists/partial", "cache/archives/partial", "etc/sources.list.d", "etc/preferences.d"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "etc" / "sources.list").write_text("")
    keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
    signed = f"Signed-By: {keyring}\n" if Path(keyring).is_file() else ""
    (state / "etc" / "sources.list.d" / "onnxtool.sources").write_text(
        f"Types: deb\nURIs: {debian_mirror()}\nSuites: {DEBIAN_SUITE}\nComponents: main\n{signed}"
    )
    user = "root" if os.geteuid() == 0 else None
    options = [
        "-o",
        f"Dir::State={state / 'state'}",
        "-o",
        f"Dir::Cache={state / 'cache'}",
        "-o",
        f"Dir::Etc::SourceList={state / 'etc' / 'sources.list'}",
        "-o",
        f"Dir::Etc::SourceParts={state / 'etc' / 'sources.list.d'}",
        "-o",
        f"Dir::Etc::Preferences={state / 'etc' / 'preferences'}",
        "-o",
        f"Dir::Etc::PreferencesParts={state / 'etc' / 'preferences.d'}",
        "-o",
        "Debug::NoLocking=1",
        "-qq",
    ]
    if user:  # root would hand downloads to the _apt user, who cannot write into .build
        options += ["-o", f"APT::Sandbox::User={user}"]
    with tempfile.TemporaryDirectory(prefix="onnxtool-ort-headers-") as tmp:
        steps = [
            [apt_get, *options, "update"],
            [apt_get, *options, "download", DEBIAN_PACKAGE],
        ]
        for step in steps:
            try:
                done = subprocess.run(step, cwd=tmp, capture_output=True, text=True, timeout=300)
            except (OSError, subprocess.SubprocessError) as exc:
                return None, f"fetching {DEBIAN_PACKAGE} ({DEBIAN_SUITE}) failed: {exc}"
            if done.returncode != 0:
                last = (done.stderr or done.stdout).strip().splitlines()
                return (
                    None,
                    f"fetching {DEBIAN_PACKAGE} ({DEBIAN_SUITE}) with apt failed: {last[-1] if last else done.returncode}",
                )
        debs = sorted(Path(tmp).glob(f"{DEBIAN_PACKAGE}_*.deb"))
        if not debs:
            return None, f"apt downloaded no {DEBIAN_PACKAGE} package from {DEBIAN_SUITE}"
        unpacked = Path(tmp) / "x"
        done = subprocess.run([dpkg_deb, "-x", str(debs[0]), str(unpacked)], capture_output=True, text=True)
        include = header_dir_in(unpacked)
        if done.returncode != 0 or include is None:
            return None, f"{debs[0].name} holds no onnxruntime_c_api.h"
        target = headers_dir() / "include"
        staging = headers_dir() / f"include.{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(include, staging)
        (staging / "SOURCE").write_text(f"{debs[0].name} from {debian_mirror()} {DEBIAN_SUITE}\n")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    shutil.rmtree(state, ignore_errors=True)  # ~10 MB of package lists, useless once unpacked
    return target, ""


def find_headers(fetch: bool) -> tuple[Optional[Path], str]:
    """The headers' folder, in the module docstring's order, and "" ; or None and why, in one line.
    Only ``fetch=True`` may go to the network (and write under :func:`headers_dir`)."""
    env = os.environ.get("ONNXRUNTIME_INCLUDE_DIR")
    if env:
        found = header_dir_in(Path(env).expanduser())
        return found, "" if found is not None else f"ONNXRUNTIME_INCLUDE_DIR={env} holds no onnxruntime_c_api.h"
    cached = header_dir_in(headers_dir() / "include")
    if cached is not None:
        return cached, ""
    if not fetch:
        return None, f"ONNX Runtime headers not fetched yet: run `{BUILD_COMMAND}` (or set ONNXRUNTIME_INCLUDE_DIR)"
    return _fetch_headers()


def header_dir() -> Optional[Path]:
    """The folder holding ``onnxruntime_c_api.h`` (and the C++ wrappers) that builds use; never fetches."""
    return find_headers(fetch=False)[0]
